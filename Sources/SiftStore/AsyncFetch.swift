// Asynchronous fetch (Core Data's `NSAsynchronousFetchRequest`): a fetch that a task awaits, that
// reports its progress and stops when its task or its `Progress` is cancelled. It runs in steps:
// the matching IDs first (one SQL pass over the keys, which gives the total), then the rows in
// batches of `fetchBatchSize` (or `AsynchronousFetchRequest.defaultBatchSize`), checking for
// cancellation before each; only the last step, on the context's queue, registers objects. So a
// cancelled fetch registers nothing (except what a fetch judged in memory must register to find
// the IDs: objects with pending changes, or rows a residual predicate reads, all unchanged).
// The async forms take an `AsynchronousFetchRequest` rather than overloading `fetch(_:)`: an async
// overload of the same name would capture every synchronous call in async code. Progress goes to
// a `Progress` (Core Data's way) and to the request's progress updates, an `AsyncSequence` of
// counts that ends with the fetch (with its error when it fails). The batch by batch form is in
// AsyncFetchBatches.swift.

import Foundation
import SiftEvaluation
import SiftSQL

/// A fetch request to run asynchronously: awaited, reporting progress, cancellable.
///
/// ```swift
/// let progress = Progress()
/// let request = AsynchronousFetchRequest(FetchRequest("Item"), progress: progress)
/// let count = try await context.count(for: request)
/// // progress.completedUnitCount == progress.totalUnitCount; progress.cancel() stops a fetch
/// ```
public struct AsynchronousFetchRequest<Object: ManagedObject>: @unchecked Sendable {
    /// The rows read between two checks for cancellation when the request has no batch size.
    public static var defaultBatchSize: Int { 1_000 }
    /// The fetch to run.
    public var fetchRequest: FetchRequest<Object>
    /// Told the total (the number of matching objects) once it is known, then the rows read as
    /// each batch arrives; cancelling it cancels the fetch (which then throws `CancellationError`).
    /// A `Progress` is thread-safe; this is why the request is `@unchecked Sendable`.
    public var progress: Progress?
    /// Where the fetch reports its counts when ``progressUpdates()`` was asked for.
    private var updates: ProgressUpdates?

    /// Wraps `request`, with an optional progress to report to.
    ///
    /// ```swift
    /// let async = AsynchronousFetchRequest(FetchRequest(Employee.self))
    /// ```
    public init(_ request: FetchRequest<Object>, progress: Progress? = nil) {
        fetchRequest = request
        self.progress = progress
    }

    /// The progress of the next fetch run with this request, as an `AsyncSequence`: the total
    /// once it is known (`completed` 0), then one element per batch read, ending when the fetch
    /// returns, or with its error (`CancellationError`, a `StoreError`) when it throws. A form
    /// that reads in one pass (IDs, count) reports once, at its end. One stream per fetch: ask
    /// again for another fetch; a stream whose request is never run ends when the request goes.
    ///
    /// ```swift
    /// var request = AsynchronousFetchRequest(FetchRequest("Item"))
    /// let updates = request.progressUpdates()
    /// async let items = context.fetch(request)
    /// for try await step in updates { print(step.completed, "of", step.total ?? 0) }
    /// ```
    public mutating func progressUpdates() -> AsyncThrowingStream<FetchProgress, any Error> {
        let (stream, continuation) = AsyncThrowingStream<FetchProgress, any Error>.makeStream()
        updates = ProgressUpdates(continuation)
        return stream
    }

    var batchSize: Int {
        fetchRequest.fetchBatchSize > 0 ? fetchRequest.fetchBatchSize : Self.defaultBatchSize
    }

    /// Throws `CancellationError` when the task or the progress was cancelled.
    func checkCancellation() throws(CancellationError) {
        if Task.isCancelled || progress?.isCancelled == true { throw CancellationError() }
    }

    func report(completed: Int, total: Int) {
        updates?.continuation.yield(FetchProgress(completed: completed, total: total))
        guard let progress else { return }
        if progress.totalUnitCount != Int64(total) { progress.totalUnitCount = Int64(total) }
        progress.completedUnitCount = Int64(completed)
    }

    /// Runs a fetch with this request, then ends its progress updates: normally when it returns,
    /// with its error when it throws.
    func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            updates?.continuation.finish()
            return result
        } catch {
            updates?.continuation.finish(throwing: error)
            throw error
        }
    }

    /// Ends the progress updates with `error` (nil: normally).
    func finishUpdates(throwing error: (any Error)?) {
        updates?.continuation.finish(throwing: error)
    }
}

/// How far an asynchronous fetch has come: the objects (or rows) read, of the total.
///
/// ```swift
/// for try await step in updates where step.total != nil { print(step.completed, "/", step.total!) }
/// ```
public struct FetchProgress: Sendable, Hashable {
    /// The objects read so far.
    public var completed: Int
    /// The number of matching objects, when it is known (every form knows it before its first
    /// batch; nil is kept for forms that could not).
    public var total: Int?

    /// A step of `completed` of `total`.
    ///
    /// ```swift
    /// let half = FetchProgress(completed: 500, total: 1_000)
    /// ```
    public init(completed: Int, total: Int?) {
        self.completed = completed
        self.total = total
    }
}

/// The continuation of a request's progress updates, shared by the request's copies; the stream
/// ends when the last copy goes, if no fetch ended it before.
final class ProgressUpdates: Sendable {
    let continuation: AsyncThrowingStream<FetchProgress, any Error>.Continuation
    init(_ continuation: AsyncThrowingStream<FetchProgress, any Error>.Continuation) {
        self.continuation = continuation
    }
    deinit { continuation.finish() }
}

extension ManagedObjectContext {
    /// The matching objects, read in batches by a task that may be cancelled, as
    /// `fetch(_:)` returns them. Only for a confined context (the objects
    /// belong to the caller); a queue context's objects stay on its queue: use
    /// `fetch(_:then:)`, which hands them to a closure there. Throws `CancellationError`
    /// (nothing registered) when the task or the progress is cancelled, or a `StoreError`.
    ///
    /// ```swift
    /// let items = try await context.fetch(AsynchronousFetchRequest(FetchRequest("Item")))
    /// ```
    public func fetch<Object>(_ request: AsynchronousFetchRequest<Object>) async throws -> [Object] {
        guard concurrencyType == .confined else {
            throw StoreError(
                .invalidOperation,
                "a \(concurrencyType) context's objects stay on its queue: use fetch(_:then:) to use them there")
        }
        return try await request.reporting {
            let rows = try await readMatchingRows(request)
            try request.checkCancellation()
            return try registered(rows, request)
        }
    }

    /// Fetches the matching objects as `fetch(_:)` does,
    /// for any context, and runs `body` with them where the context's work runs (its queue);
    /// returns what `body` returns.
    ///
    /// ```swift
    /// let names = try await background.fetch(AsynchronousFetchRequest(FetchRequest("Item"))) { items in
    ///     try items.map { try $0.value(forKey: "name") }
    /// }
    /// ```
    public func fetch<Object, T: Sendable>(
        _ request: AsynchronousFetchRequest<Object>, then body: @escaping @Sendable ([Object]) throws -> T
    ) async throws -> T {
        try await request.reporting {
            let rows = try await readMatchingRows(request)
            try request.checkCancellation()
            return try await perform { () throws -> T in try body(try self.registered(rows, request)) }
        }
    }

    /// The IDs of the matching objects, as `fetchObjectIDs(_:)`; the
    /// keys are read in one pass, so cancellation is checked before and after it.
    ///
    /// ```swift
    /// let ids = try await context.fetchObjectIDs(AsynchronousFetchRequest(FetchRequest("Item")))
    /// ```
    public func fetchObjectIDs<Object>(_ request: AsynchronousFetchRequest<Object>) async throws -> [ObjectID] {
        try await request.reporting {
            try request.checkCancellation()
            let r = request.fetchRequest
            let ids = try await perform { () throws(StoreError) in try self.fetchObjectIDs(r) }
            try request.checkCancellation()
            request.report(completed: ids.count, total: ids.count)
            return ids
        }
    }

    /// The number of matching objects, as `count(for:)`; cancellation
    /// is checked before and after the count.
    ///
    /// ```swift
    /// let n = try await context.count(for: AsynchronousFetchRequest(FetchRequest("Item")))
    /// ```
    public func count<Object>(for request: AsynchronousFetchRequest<Object>) async throws -> Int {
        try await request.reporting {
            try request.checkCancellation()
            let r = request.fetchRequest
            let n = try await perform { () throws(StoreError) in try self.count(for: r) }
            try request.checkCancellation()
            request.report(completed: n, total: n)
            return n
        }
    }

    /// The dictionaries of the matching objects, as `fetchDictionaries(_:)`:
    /// the rows are read in batches (cancellation checked before each), then the dictionaries
    /// computed from them on the context's queue.
    ///
    /// ```swift
    /// let rows = try await context.fetchDictionaries(AsynchronousFetchRequest(FetchRequest("Item")))
    /// ```
    public func fetchDictionaries<Object>(_ request: AsynchronousFetchRequest<Object>) async throws
        -> [[String: Value]]
    {
        var unlimited = request
        // Groups and distinct rows read every match before the limit applies.
        if request.fetchRequest.propertiesToGroupBy != nil || request.fetchRequest.returnsDistinctResults {
            unlimited.fetchRequest.fetchLimit = nil
            unlimited.fetchRequest.fetchOffset = 0
        }
        let all = unlimited
        return try await request.reporting {
            let rows = try await readMatchingRows(all)
            try request.checkCancellation()
            let r = request.fetchRequest
            return try await perform { () throws(StoreError) in
                _ = try self.registered(rows, all)
                return try self.fetchDictionaries(r)
            }
        }
    }
}

/// The rows an asynchronous fetch read, by ID, to be registered at its end.
struct AsyncFetchRows: Sendable {
    var ids: [ObjectID] = []
    var rows: [[SQLValue]] = []
}

extension ManagedObjectContext {
    /// The matching IDs, then the rows of those not loaded here yet, a batch at a time, with the
    /// progress told the total first and each batch after; registers nothing.
    func readMatchingRows<Object>(_ request: AsynchronousFetchRequest<Object>) async throws -> AsyncFetchRows {
        try request.checkCancellation()
        let r = request.fetchRequest
        var out = AsyncFetchRows()
        out.ids = try await perform { () throws(StoreError) in try self.fetchObjectIDs(r) }
        let total = out.ids.count
        request.report(completed: 0, total: total)
        var start = 0
        while start < total {
            try request.checkCancellation()
            let batch = Array(out.ids[start..<min(total, start + request.batchSize)])
            out.rows += try await perform { () throws(StoreError) in try self.unloadedRows(batch) }
            start += batch.count
            request.report(completed: start, total: total)
        }
        return out
    }

    /// The rows of the IDs among `ids` not registered here with their row read, one query per
    /// entity (its columns are the ones `materialize` reads).
    func unloadedRows(_ ids: [ObjectID]) throws(StoreError) -> [[SQLValue]] {
        var byEntity: [String: [Int64]] = [:]
        var order: [String] = []
        for id in ids {
            guard let pk = id.primaryKey else { continue }
            if let o = registry.permanent(pk, id.names.space), !o.isFault { continue }
            if byEntity[id.entityName] == nil { order.append(id.entityName) }
            byEntity[id.entityName, default: []].append(pk)
        }
        var rows: [[SQLValue]] = []
        for name in order { rows += try self.rows(of: byEntity[name]!, in: try store.info(name).layout) }
        return rows
    }

    /// Registers the rows an asynchronous fetch read and returns its objects in the order of its
    /// IDs, prefetched and typed as the synchronous fetch returns them.
    func registered<Object>(_ read: AsyncFetchRows, _ request: AsynchronousFetchRequest<Object>) throws(StoreError)
        -> [Object]
    {
        for row in read.rows { _ = try materialize(row: row) }
        var objects: [Object] = []
        objects.reserveCapacity(read.ids.count)
        for id in read.ids {
            let o = try object(with: id)
            guard let typed = o as? Object else { throw Self.notAn(Object.self, o) }
            objects.append(typed)
        }
        try prefetch(request.fetchRequest.relationshipKeyPathsForPrefetching, for: objects)
        return objects
    }
}
