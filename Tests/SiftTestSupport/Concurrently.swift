// Running one piece of work on many threads at once, for the thread-safety suites. Each run's
// result goes to a slot of its own, written without any lock: a lock taken between runs would
// order one thread's work after another's, and ThreadSanitizer would then see no race in code
// that has one. The only synchronisation is the final join of `concurrentPerform`.

import Dispatch

/// Runs `body` on `threads` threads at once, `rounds` times on each, and returns every result
/// (thread by thread), rethrowing the first error.
///
/// ```swift
/// let counts = try concurrently(threads: 8) { _ in try predicate.count(in: shared) }
/// ```
public func concurrently<T>(
    threads: Int = 8, rounds: Int = 3,
    _ body: @escaping @Sendable (_ thread: Int) throws -> T
) throws -> [T] {
    let slots = Slots<Result<T, any Error>>(count: threads * rounds)
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        for round in 0..<rounds { slots.set(thread * rounds + round, Result { try body(thread) }) }
    }
    return try slots.take().map { try $0.get() }
}

/// Results written by several threads, each to its own index, then read after they all joined.
private final class Slots<Element>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element?>
    private let count: Int

    init(count: Int) {
        self.count = count
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil, count: count)
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    func set(_ i: Int, _ value: Element) { storage[i] = value }

    func take() -> [Element] { (0..<count).map { storage[$0]! } }
}
