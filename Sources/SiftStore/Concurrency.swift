// Where a context's work runs. Core Data's contexts run on a private serial queue or the main queue
// and take work through `perform`; Sift adds the confined context (the default: used directly from
// one thread at a time, no hop), which is what a script, a command-line tool or a test wants.
// Objects stay with their context: `ManagedObject` is not `Sendable`, and `perform` returns only
// `Sendable` results, so Swift 6 rejects handing an object to another thread at compile time.

import Dispatch
import Foundation

extension ManagedObjectContext {
    /// Where a context's work runs.
    ///
    /// ```swift
    /// let writer = ManagedObjectContext(store: store, concurrency: .privateQueue)
    /// let count = try await writer.perform { try writer.count(for: FetchRequest("Item")) }
    /// ```
    public enum ConcurrencyType: Sendable, Hashable, CaseIterable {
        /// Used directly by one thread (or task) at a time; `perform` runs the work at once on
        /// the caller. The default, and the fastest: no hop.
        case confined
        /// The context's own serial queue: every use goes through `perform` or `performAndWait`.
        case privateQueue
        /// The main actor (the main queue): used from `@MainActor` code or through `perform`.
        case mainQueue
    }

    /// Tells the queue of a `.privateQueue` context that it is running, so that
    /// `performAndWait` from inside its own work runs at once instead of waiting for itself.
    static let queueOwner = DispatchSpecificKey<ObjectIdentifier>()
    /// Marks the main queue (where the main actor runs). Not `Thread.isMainThread`: once the
    /// main thread hands its queue to Dispatch (`dispatch_main`, as an async `main` does on
    /// Linux), main-queue work may run on another thread.
    private static let mainQueueMark: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
    nonisolated(unsafe) private static var queueCounter = 0

    static func makeQueue() -> DispatchQueue {
        counterLock.lock()
        queueCounter += 1
        let n = queueCounter
        counterLock.unlock()
        return DispatchQueue(label: "sift.context.\(n)")
    }

    /// Whether the caller is already where this context's work runs.
    var isOnOwnQueue: Bool {
        switch concurrencyType {
        case .confined: true
        case .mainQueue: DispatchQueue.getSpecific(key: Self.mainQueueMark) == true
        case .privateQueue: DispatchQueue.getSpecific(key: Self.queueOwner) == ObjectIdentifier(self)
        }
    }

    /// Runs `body` where the context's work runs (its queue, the main actor, or at once for a
    /// confined context) and returns its result. Work submitted by one caller runs in order, one
    /// piece at a time. The result must be `Sendable`: return IDs, values or counts, never objects.
    ///
    /// ```swift
    /// let background = ManagedObjectContext(store: store, concurrency: .privateQueue)
    /// let id = try await background.perform {
    ///     let item = try background.insert("Item")
    ///     try item.setValue("imported", forKey: "name")
    ///     try background.save()
    ///     return item.objectID
    /// }
    /// let same = try main.object(with: id)   // resolved in another context
    /// ```
    public func perform<T: Sendable, E: Error>(
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E>
        switch concurrencyType {
        case .confined:
            result = Result(catching: body)
        case .mainQueue:
            result = await MainActor.run { Result(catching: body) }
        case .privateQueue:
            result = await withCheckedContinuation { continuation in
                queue!.async { continuation.resume(returning: Result(catching: body)) }
            }
        }
        return try result.get()
    }

    /// Runs `body` where the context's work runs and waits for it (at once when the caller is
    /// already there, so it may be nested in `perform`).
    ///
    /// ```swift
    /// let n = try background.performAndWait { try background.count(for: FetchRequest("Item")) }
    /// ```
    public func performAndWait<T: Sendable, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try waitOnQueue(body)
    }
}

extension ManagedObjectContext {
    /// Runs `body` where this context's work runs and waits, for the store's own calls from one
    /// context into a related one (a child reading through its parent, a push into the parent).
    /// Unlike `performAndWait` it may hand back objects: callers use them only to copy state
    /// inside their own context. Calls go up a parent chain only, so they never wait in a circle
    /// unless the caller blocks an ancestor's queue waiting for a descendant (as in Core Data).
    func onQueue<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T { try waitOnQueue(body) }

    /// Runs `body` where this context's work runs and waits for it: at once when the caller is
    /// already there (or the context is confined), else synchronously on its queue. The one
    /// way `performAndWait` and the store's own calls between contexts hop.
    private func waitOnQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if concurrencyType == .confined || isOnOwnQueue { return try body() }
        let result: Result<T, E> = withoutActuallyEscaping(body) { (body) -> Result<T, E> in
            nonisolated(unsafe) let work = body
            nonisolated(unsafe) var out: Result<T, E>?
            let run = { out = Result(catching: work) }
            if concurrencyType == .mainQueue {
                DispatchQueue.main.sync(execute: run)
            } else {
                queue!.sync(execute: run)
            }
            return out!
        }
        return try result.get()
    }

    /// Runs `body` where this context's work runs: at once for a confined context or when the
    /// caller is already there, else later on its queue (the store telling a child of its
    /// parent's saves never waits for the child).
    func enqueue(_ body: @escaping @Sendable () -> Void) {
        if concurrencyType == .confined || isOnOwnQueue { return body() }
        if concurrencyType == .mainQueue {
            DispatchQueue.main.async(execute: body)
        } else {
            queue!.async(execute: body)
        }
    }
}

/// Objects belong to their context's thread: handing one to another thread is refused at compile
/// time (pass its `objectID` and resolve it there with `object(with:)`).
@available(*, unavailable, message: "a managed object belongs to its context; pass its objectID instead")
extension ManagedObject: Sendable {}
