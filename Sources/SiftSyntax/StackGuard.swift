// Deep trees on small stacks. Every recursive walk over a syntax tree (parsing, printing,
// comparing, compiling, lowering) nests one call per level, and a predicate may nest
// `PredicateSyntax.maximumDepth` levels; in a debug build one level of the parser alone takes
// kilobytes, so no frame-shrinking makes a thousand levels fit the 512 KB of a secondary thread.
// Instead the walks call `StackGuard.ensure` at their recursion points: while the current thread
// has room it just runs the body; when fewer than `redZone` bytes are left it hands the body to a
// thread with a large stack and waits for it (the technique of Rust's `stacker` crate). Shallow
// trees, and deep ones on the main thread's 8 MB, never leave their thread.
//
// Two things keep the move cheap and bounded. The large-stack threads are long-lived workers kept
// in a small pool, so a move costs two semaphore hand-offs instead of creating a thread (and a
// body that runs low again on a worker moves on to another worker, never to itself). And the room
// left is measured on the real stack even under AddressSanitizer, whose use-after-return
// detection puts locals on a heap "fake stack": such an address is translated back to the real
// stack through ASan's interface, where before every check failed and each parse started a chain
// of threads (libFuzzer ran out of memory with thousands of them waiting).

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps recursive walks over deep trees from overflowing the stack of the thread they run on.
///
/// ```swift
/// func depth(_ p: PredicateSyntax) -> Int {
///     StackGuard.ensure {
///         if case .not(let inner) = p.kind { return 1 + depth(inner) }
///         return 1
///     }
/// }
/// ```
package enum StackGuard {
    /// Bytes of stack a guarded step may use before the next check: one level of the largest
    /// walk in a debug build (the parser's fallback from a parenthesised predicate to an
    /// expression, measured above 128 KB at the limit) with a margin.
    package static let redZone = 192 * 1024
    /// The stack of each worker thread a body moves to when its thread runs low. Only the touched
    /// part of it is ever backed by memory.
    package static let largeStackSize = 16 << 20
    /// How many workers wait for the next move once their body has returned; any more stop.
    package static let idleWorkers = 4

    /// How many worker threads have been started so far: one per move that found every worker
    /// busy, so it stays small however many moves there are.
    package static var workersStarted: Int { Worker.startedCount }

    /// Runs `body` here when the thread has more than `redZone` bytes of stack left, else on a
    /// worker thread with a `largeStackSize` stack, blocking this one until it returns.
    @inline(__always)
    package static func ensure<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if hasRoom(below: lowWater) { return try body() }
        return try onLargeStack(body)
    }

    /// The current thread's stack as `hasRoom(below:)` needs it: its lowest address (`base`),
    /// the lowest a walk may reach before moving (`low`, `redZone` above the base) and the
    /// address just past its top.
    package struct Limits: Sendable {
        let base: UInt
        let low: UInt
        let top: UInt
    }

    /// The current thread's `Limits`, worked out once per thread. Walks that check often read it
    /// once and test `hasRoom(below:)` themselves.
    package static var lowWater: Limits {
        if let cached = pthread_getspecific(key) { return cached.load(as: Limits.self) }
        let limits = currentLimits()
        if let slot = malloc(MemoryLayout<Limits>.size) {
            slot.initializeMemory(as: Limits.self, to: limits)
            pthread_setspecific(key, slot)
        }
        return limits
    }

    /// Whether the current frame lies above `lowWater.low` on this thread's stack (stacks grow
    /// down). Only an address off the stack (ASan's fake stack) takes the slower path.
    @inline(__always)
    package static func hasRoom(below lowWater: Limits) -> Bool {
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        if here > lowWater.low && here < lowWater.top { return true }
        return hasRoomOffStack(here, lowWater)
    }

    /// `hasRoom(below:)` when `here` is not between the low-water mark and the top: below the mark
    /// on this stack there is no room; off this stack it is a fake-stack frame, measured by the
    /// real frame ASan keeps for it. When nothing can be measured, the body runs here.
    @inline(never)
    private static func hasRoomOffStack(_ here: UInt, _ limits: Limits) -> Bool {
        if here >= limits.base && here < limits.top { return false }
        guard let real = realFrame(of: here) else { return true }
        return real > limits.low && real < limits.top
    }

    /// Runs `body` on a worker thread with a large stack and waits for it. `body` runs on one
    /// thread at a time (this one is blocked meanwhile), so it may use what the caller owns,
    /// including memory on the caller's stack.
    @inline(never)
    package static func onLargeStack<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = withoutActuallyEscaping(body) { body in
            let handoff = Handoff<T, E>(body)
            let worker = Worker.take()
            worker.run { handoff.run() }
            Worker.give(worker)
            return handoff.result!
        }
        return try result.get()
    }

    /// The body and its result, carried to the worker and back. The caller waits for the worker,
    /// so nothing here is touched by two threads at once.
    private final class Handoff<T, E: Error>: @unchecked Sendable {
        /// Dropped as soon as it has run: `withoutActuallyEscaping` checks that nothing holds it
        /// when the caller resumes.
        var body: (() throws(E) -> T)?
        var result: Result<T, E>?
        init(_ body: @escaping () throws(E) -> T) { self.body = body }

        /// Calls the body and lets go of it before returning, so no reference remains when the
        /// worker signals the caller.
        @inline(never)
        func run() {
            let body = self.body!
            self.body = nil
            do throws(E) { result = .success(try body()) } catch { result = .failure(error) }
        }
    }

    /// A thread with a `largeStackSize` stack that runs one job at a time: `run` hands it a job
    /// and waits; between jobs it waits in the pool (at most `idleWorkers` of them do).
    private final class Worker: @unchecked Sendable {
        private let wake = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)
        /// The next job; nil when woken tells the thread to stop.
        private var job: (() -> Void)?

        /// Workers waiting for a job, and how many were ever started; both guarded by `lock`.
        nonisolated(unsafe) private static var idle: [Worker] = []
        nonisolated(unsafe) private static var started = 0
        private static let lock = NSLock()

        static var startedCount: Int {
            lock.lock()
            defer { lock.unlock() }
            return started
        }

        /// An idle worker, or a new one when all are busy.
        static func take() -> Worker {
            lock.lock()
            let worker = idle.popLast()
            lock.unlock()
            return worker ?? start()
        }

        /// Puts `worker` back in the pool, or stops its thread when enough are idle already.
        static func give(_ worker: Worker) {
            lock.lock()
            let keep = idle.count < StackGuard.idleWorkers
            if keep { idle.append(worker) }
            lock.unlock()
            if !keep { worker.wake.signal() }
        }

        private static func start() -> Worker {
            lock.lock()
            started += 1
            lock.unlock()
            let worker = Worker()
            let thread = Thread { worker.loop() }
            thread.stackSize = StackGuard.largeStackSize
            thread.start()
            return worker
        }

        /// Runs `job` on this worker's thread and returns once it has.
        func run(_ job: @escaping () -> Void) {
            self.job = job
            wake.signal()
            done.wait()
        }

        private func loop() {
            while true {
                wake.wait()
                guard runJob() else { return }
                done.signal()
            }
        }

        /// Runs the job handed over, letting go of it before `done` is signalled; false when
        /// there was none (the thread is to stop).
        @inline(never)
        private func runJob() -> Bool {
            guard let job else { return false }
            self.job = nil
            job()
            return true
        }
    }

    /// One slot per thread for its `Limits` (a `malloc`ed copy, freed when the thread exits).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    /// The current thread's `Limits`, from the bounds the system gives for its stack.
    private static func currentLimits() -> Limits {
        let (base, size) = stackBounds() ?? fallbackBounds()
        let top = base + UInt(size)
        return Limits(base: base, low: min(base + UInt(redZone), top), top: top)
    }

    /// The current thread's stack: its lowest address and its size, when the system says.
    private static func stackBounds() -> (base: UInt, size: Int)? {
        #if canImport(Darwin)
            let top = UInt(bitPattern: pthread_get_stackaddr_np(pthread_self()))
            let size = pthread_get_stacksize_np(pthread_self())
            return (top - UInt(size), size)
        #else
            var attributes = pthread_attr_t()
            guard let getattr = getattrNP, getattr(pthread_self(), &attributes) == 0 else { return nil }
            defer { pthread_attr_destroy(&attributes) }
            var address: UnsafeMutableRawPointer?
            var size = 0
            guard pthread_attr_getstack(&attributes, &address, &size) == 0, let address else { return nil }
            return (UInt(bitPattern: address), size)
        #endif
    }

    /// When the stack cannot be queried: assume Swift's smallest default, 512 KB below here, and
    /// a top far enough above.
    private static func fallbackBounds() -> (base: UInt, size: Int) {
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        return (here - 512 * 1024, 1 << 20)
    }

    /// The real stack address of the frame ASan placed at `address` on the current thread's fake
    /// stack; nil without ASan, or when `address` is no fake-stack frame.
    private static func realFrame(of address: UInt) -> UInt? {
        guard let current = asanCurrentFakeStack, let translate = asanAddressIsInFakeStack,
            let fakeStack = current(),
            let real = translate(fakeStack, UnsafeMutableRawPointer(bitPattern: address), nil, nil)
        else { return nil }
        return UInt(bitPattern: real)
    }

    /// ASan's `__asan_get_current_fake_stack` and `__asan_addr_is_in_fake_stack`
    /// (sanitizer/asan_interface.h), present only in a process with the ASan runtime.
    private typealias CurrentFakeStack = @convention(c) () -> UnsafeMutableRawPointer?
    private typealias AddressIsInFakeStack =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
            UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        ) -> UnsafeMutableRawPointer?
    private static let asanCurrentFakeStack: CurrentFakeStack? = symbol("__asan_get_current_fake_stack")
    private static let asanAddressIsInFakeStack: AddressIsInFakeStack? = symbol("__asan_addr_is_in_fake_stack")

    /// A C function of the running process looked up by name.
    private static func symbol<F>(_ name: String) -> F? {
        #if canImport(Darwin)
            let handle = RTLD_DEFAULT
        #else
            let handle: UnsafeMutableRawPointer? = nil
        #endif
        guard let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: F.self)
    }

    #if !canImport(Darwin)
        /// glibc's and musl's `pthread_getattr_np`, which the C module map hides (it wants
        /// `_GNU_SOURCE`): looked up once by name, with the C calling convention.
        private typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        private static let getattrNP: GetAttr? = symbol("pthread_getattr_np")
    #endif
}
