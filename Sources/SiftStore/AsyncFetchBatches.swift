// An asynchronous fetch handed out batch by batch, so a big result streams through a bounded
// amount of memory. When SQL decides the whole request (no part judged in memory, no pending
// change in view, SQL's order) and the store is a file, the stream reads it through a cursor of
// its own: a second connection holding one read transaction (so the count and every batch see one
// snapshot of the store, whatever other contexts and processes save meanwhile) whose statement is
// stepped a batch at a time, so nothing is kept of the rows handed out before. Otherwise the
// matching IDs are read first (the total, and the order with pending changes merged in) and each
// batch reads its rows; that list stays for the whole stream (tens of bytes a row: StoreBench
// part 9). Before reading the next batch (and at the end) the context lets go of the last two
// batches' objects that nothing else holds any more (Registry.swift's `forgetUnreferenced`): a
// consumer that drops each batch keeps about one batch of objects alive, where `fetch` would hold
// the whole result. Cancellation is checked before each batch and once its rows are read, before
// any is registered: a cancelled batch registers nothing.

import Foundation
import SiftSQL
import SiftSQLite

extension ManagedObjectContext {
    /// The matching objects of `request`, as an `AsyncSequence` of arrays of at most
    /// `fetchBatchSize` objects (`AsynchronousFetchRequest.defaultBatchSize` when it has none), in
    /// the order `fetch(_:)` returns them. The context keeps only the objects someone still
    /// holds (or that have unsaved changes): drop each batch when done with it and about one
    /// batch of objects stays alive however many rows match. On a store file, when SQL decides
    /// the whole request, the batches come from one snapshot of the store, read through a cursor
    /// of the stream's own, and nothing of the rows handed out is kept; otherwise the matching
    /// IDs, read first, are kept until the end (tens of bytes a row). Progress (the `Progress`, the progress
    /// updates) counts the objects handed out. Throws `CancellationError` at the next batch when
    /// the task or the progress is cancelled, `StoreError` when a read fails; only for a confined
    /// context (a queue context's objects stay on its queue), else `.invalidOperation` at the
    /// first batch.
    ///
    /// ```swift
    /// var request = FetchRequest("Item")
    /// request.fetchBatchSize = 1_000
    /// var total = 0
    /// for try await batch in context.batches(for: AsynchronousFetchRequest(request)) {
    ///     total += batch.count   // process the batch; it is freed when the loop moves on
    /// }
    /// ```
    public func batches<Object>(for request: AsynchronousFetchRequest<Object>) -> FetchedBatches<Object> {
        FetchedBatches(context: self, request: request)
    }
}

/// The batches of an asynchronous fetch (`ManagedObjectContext.batches(for:)`): each element is
/// the next batch of objects; iterating it again runs the fetch again.
///
/// ```swift
/// for try await batch in context.batches(for: AsynchronousFetchRequest(FetchRequest("Item"))) {
///     print(batch.count)
/// }
/// ```
public struct FetchedBatches<Object: ManagedObject>: AsyncSequence {
    public typealias Element = [Object]
    let context: ManagedObjectContext
    let request: AsynchronousFetchRequest<Object>

    /// An iterator that starts the fetch at its first `next()`.
    public func makeAsyncIterator() -> Iterator { Iterator(context: context, request: request) }

    /// Reads and hands out one batch per `next()`.
    ///
    /// ```swift
    /// var batches = context.batches(for: AsynchronousFetchRequest(FetchRequest("Item"))).makeAsyncIterator()
    /// let first = try await batches.next()   // nil when nothing matches
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        let context: ManagedObjectContext
        let request: AsynchronousFetchRequest<Object>
        /// The matching IDs, once read (when the stream does not read through a cursor).
        private var ids: [ObjectID]?
        /// The stream's own read of the store, when SQL decides the whole request.
        private var cursor: StreamCursor?
        /// The number of objects the stream hands out in all.
        private var total = 0
        /// How many IDs were handed out.
        private var start = 0
        /// The IDs of the last two batches handed out, let go of before the next one when
        /// no one holds them (two: a consumer may keep one batch while it takes the next).
        private var recent: [[ObjectID]] = []
        private var finished = false

        init(context: ManagedObjectContext, request: AsynchronousFetchRequest<Object>) {
            self.context = context
            self.request = request
        }

        /// The next batch, nil after the last one.
        public mutating func next() async throws -> [Object]? { try await next(isolation: nil) }

        /// The next batch, nil after the last one; the objects are made where the caller runs
        /// (`for try await` passes its own isolation).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [Object]? {
            guard !finished else { return nil }
            // The batches handed out before, dropped since, go first, even when this one fails.
            if !recent.isEmpty {
                _ = context.registry.forgetUnreferenced(recent.flatMap { $0 })
            }
            do {
                let batch = try await nextBatch(isolation: actor)
                if batch == nil {
                    finished = true
                    request.finishUpdates(throwing: nil)
                }
                return batch
            } catch {
                finished = true
                request.finishUpdates(throwing: error)
                throw error
            }
        }

        private mutating func nextBatch(isolation actor: isolated (any Actor)?) async throws -> [Object]? {
            guard context.concurrencyType == .confined else {
                throw StoreError(
                    .invalidOperation,
                    "a \(context.concurrencyType) context's objects stay on its queue: use fetch(_:then:) to use them there"
                )
            }
            try request.checkCancellation()
            let context = context
            if ids == nil && cursor == nil {
                let r = request.fetchRequest
                let opened = try await context.perform { () throws(StoreError) in try context.streamCursor(r.untyped) }
                if let opened {
                    cursor = opened
                    total = opened.total
                } else {
                    ids = try await context.perform { () throws(StoreError) in try context.fetchObjectIDs(r) }
                    total = ids!.count
                }
                request.report(completed: 0, total: total)
            }
            let objects: [Object]
            if let cursor {
                let rows = try cursor.rows(request.batchSize)
                guard !rows.isEmpty else {
                    self.cursor = nil  // ends its read transaction
                    return nil
                }
                try request.checkCancellation()
                objects = try context.registered(rows, request)
            } else {
                let ids = ids ?? []
                guard start < ids.count else { return nil }
                try request.checkCancellation()
                let batch = Array(ids[start..<Swift.min(ids.count, start + request.batchSize)])
                let rows = try await context.perform { () throws(StoreError) in try context.unloadedRows(batch) }
                try request.checkCancellation()
                objects = try context.registered(AsyncFetchRows(ids: batch, rows: rows), request)
            }
            recent = [recent.last ?? [], objects.map(\.objectID).filter { !$0.isTemporaryID }]
            start += objects.count
            request.report(completed: start, total: total)
            return objects
        }
    }
}

/// A streamed fetch's own read of the store file: a connection of its own in one read transaction,
/// the count of the rows, then the statement stepped a batch at a time. Ending it (deinit) ends
/// the transaction and closes the connection. Used by one iterator at a time; the connection is
/// opened serialized, as the iterator may resume on another thread.
final class StreamCursor: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let statement: SQLiteStatement
    private let width: Int
    private var done = false
    /// The number of rows the statement gives.
    let total: Int

    init(store: PersistentStore, query: SQLQuery, width: Int) throws(StoreError) {
        do throws(SQLiteError) {
            connection = try store.openSideConnection()
            try connection.execute("BEGIN")
            let count = try connection.prepare("SELECT count(*) FROM (\(query.sql))")
            try count.bind(query.bindings)
            guard try count.step(), case .integer(let n) = count.column(0) else {
                throw SQLiteError(code: 1, message: "no count", sql: nil)
            }
            total = Int(n)
            try count.reset()
            statement = try connection.prepare(query.sql)
            try statement.bind(query.bindings)
            self.width = width
        } catch { throw error.storeError }
    }

    /// The next `n` rows at most (fewer at the end, none after it).
    func rows(_ n: Int) throws(StoreError) -> [[SQLValue]] {
        var out: [[SQLValue]] = []
        out.reserveCapacity(n)
        // Stepping a statement past its end would run it again from the start.
        guard !done else { return out }
        do throws(SQLiteError) {
            while out.count < n {
                guard try statement.step() else {
                    done = true
                    break
                }
                out.append((0..<width).map { statement.column($0) })
            }
        } catch { throw error.storeError }
        return out
    }

    deinit {
        try? statement.reset()
        try? connection.execute("COMMIT")
    }
}

extension ManagedObjectContext {
    /// A cursor over `request`'s rows when SQL decides the whole of it on a store file (nothing
    /// judged in memory, no pending change in view, the rows in SQL's order), else nil.
    func streamCursor(_ request: FetchRequest<ManagedObject>) throws(StoreError) -> StreamCursor? {
        guard store.path != nil else { return nil }
        let plan = try makePlan(request)
        guard plan.residual == nil, request.sortDescriptors.isEmpty || plan.sqlSort != nil,
            try dirtyObjects(request, plan) == nil
        else { return nil }
        let q = try query(plan, request, columns: plan.info.layout.columns, limited: true)
        return try StreamCursor(store: store, query: q, width: plan.info.layout.columns.count)
    }

    /// Registers the rows a cursor read and returns their objects in the rows' order, prefetched
    /// and typed as the synchronous fetch returns them.
    func registered<Object>(_ rows: [[SQLValue]], _ request: AsynchronousFetchRequest<Object>) throws(StoreError)
        -> [Object]
    {
        var objects: [Object] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            let o = try materialize(row: row)
            guard let typed = o as? Object else { throw Self.notAn(Object.self, o) }
            objects.append(typed)
        }
        try prefetch(request.fetchRequest.relationshipKeyPathsForPrefetching, for: objects)
        return objects
    }
}
