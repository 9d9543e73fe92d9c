// Deep trees on small stacks. Every recursive walk over a syntax tree (parsing, printing,
// comparing, compiling, lowering) nests one call per level, and a predicate may nest
// `PredicateSyntax.maximumDepth` levels; in a debug build one level of the parser alone takes
// kilobytes, so no frame-shrinking makes a thousand levels fit the 512 KB of a secondary thread.
// Instead the walks call `StackGuard.ensure` at their recursion points: while the current thread
// has room it just runs the body; when fewer than `redZone` bytes are left it runs the body on a
// new thread with a large stack and waits for it (the technique of Rust's `stacker` crate). Shallow
// trees, and deep ones on the main thread's 8 MB, never pay for a thread.

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
public enum StackGuard {
    /// Bytes of stack a guarded step may use before the next check: one level of the largest
    /// walk in a debug build (the parser's fallback from a parenthesised predicate to an
    /// expression, measured above 128 KB at the limit) with a margin.
    public static let redZone = 192 * 1024
    /// The stack of a thread started when the current one runs low. Only the touched part of it
    /// is ever backed by memory.
    public static let largeStackSize = 16 << 20

    /// Runs `body` here when the thread has more than `redZone` bytes of stack left, else on a new
    /// thread with a `largeStackSize` stack, blocking this one until it returns.
    @inline(__always)
    public static func ensure<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if hasRoom(below: lowWater) { return try body() }
        return try onLargeStack(body)
    }

    /// The lowest address the current thread's stack may reach before `ensure` moves to a new
    /// thread (its stack's base plus `redZone`). Walks that check often read it once and test
    /// `hasRoom(below:)` themselves.
    public static var lowWater: UInt {
        if let cached = pthread_getspecific(key) { return UInt(bitPattern: cached) }
        let low = stackBase() + UInt(redZone)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: low))
        return low
    }

    /// Whether the current stack pointer is above `lowWater` (stacks grow down).
    @inline(__always)
    public static func hasRoom(below lowWater: UInt) -> Bool {
        var marker: UInt8 = 0
        return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) } > lowWater
    }

    /// Runs `body` on a new thread with a large stack and waits for it. `body` runs on one
    /// thread at a time (this one is blocked meanwhile), so it may use what the caller owns,
    /// including memory on the caller's stack.
    @inline(never)
    public static func onLargeStack<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        // A local's address is the stack pointer only when locals live on the stack: under
        // AddressSanitizer's use-after-return detection they live on a "fake stack" in the heap,
        // and every check would then fail and start a thread, whose checks fail too. When the
        // address is not on this thread's stack, nothing can be measured: run here.
        guard markerIsOnStack() else { return try body() }
        let result: Result<T, E> = withoutActuallyEscaping(body) { body in
            let handoff = Handoff<T, E>(body)
            let thread = Thread { handoff.run() }
            thread.stackSize = largeStackSize
            thread.start()
            handoff.done.wait()
            return handoff.result!
        }
        return try result.get()
    }

    /// The body and its result, carried to the new thread and back. The caller waits on `done`,
    /// so nothing here is touched by two threads at once.
    private final class Handoff<T, E: Error>: @unchecked Sendable {
        /// Dropped as soon as it has run: `withoutActuallyEscaping` checks that nothing holds it
        /// when the caller resumes (the thread object may outlive this call).
        var body: (() throws(E) -> T)?
        var result: Result<T, E>?
        let done = DispatchSemaphore(value: 0)
        init(_ body: @escaping () throws(E) -> T) { self.body = body }
        func run() {
            result = invoke()
            done.signal()
        }

        /// Calls the body and lets go of it before returning, so no reference remains when `run`
        /// signals the caller.
        @inline(never)
        private func invoke() -> Result<T, E> {
            let body = self.body!
            self.body = nil
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
    }

    /// Whether a local variable's address lies within the current thread's stack (see
    /// `onLargeStack`). Only asked on the slow path.
    private static func markerIsOnStack() -> Bool {
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        guard let (base, size) = stackBounds() else { return true }
        return here >= base && here < base + UInt(size)
    }

    /// One slot per thread for its `lowWater`; 0 (unset) until the thread first asks.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The lowest address of the current thread's stack.
    private static func stackBase() -> UInt {
        stackBounds()?.base ?? fallbackBase()
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

    #if !canImport(Darwin)
    /// glibc's and musl's `pthread_getattr_np`, which the C module map hides (it wants
    /// `_GNU_SOURCE`): looked up once by name, with the C calling convention.
    private typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
    private static let getattrNP: GetAttr? = {
        guard let symbol = dlsym(nil, "pthread_getattr_np") else { return nil }
        return unsafeBitCast(symbol, to: GetAttr.self)
    }()
    #endif

    /// When the stack cannot be queried: assume Swift's smallest default, 512 KB below here.
    private static func fallbackBase() -> UInt {
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        return here - 512 * 1024
    }
}
