// An asynchronous fetch handed out batch by batch, so a big result streams through a bounded
// number of objects: the matching IDs are read first (the total, and the order with pending
// changes merged in), then each `next()` reads one batch's rows, registers them and hands the
// objects over. Before reading the next batch (and at the end) the context lets go of the last
// two batches' objects that nothing else holds any more (Registry.swift's `forgetUnreferenced`):
// a consumer that drops each batch keeps about one batch of objects alive, where `fetch` would
// hold the whole result. The ID list stays for the whole stream (tens of bytes a row, against
// hundreds for an object: StoreBench part 9); paging the IDs too is not built. Cancellation is checked before each batch and
// once its rows are read, before any is registered: a cancelled batch registers nothing.

import Foundation

extension ManagedObjectContext {
    /// The matching objects of `request`, as an `AsyncSequence` of arrays of at most
    /// `fetchBatchSize` objects (`AsynchronousFetchRequest.defaultBatchSize` when it has none), in
    /// the order `fetch(_:)` returns them. The context keeps only the objects someone still
    /// holds (or that have unsaved changes): drop each batch when done with it and about one
    /// batch of objects stays alive however many rows match (the matching IDs, read first, are
    /// kept until the end: tens of bytes a row). Progress (the `Progress`, the progress
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
        /// The matching IDs, once read.
        private var ids: [ObjectID]?
        /// How many IDs were handed out.
        private var start = 0
        /// The primary keys of the last two batches handed out, let go of before the next one when
        /// no one holds them (two: a consumer may keep one batch while it takes the next).
        private var recent: [[Int64]] = []
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
            let ids: [ObjectID]
            if let known = self.ids {
                ids = known
            } else {
                let r = request.fetchRequest
                ids = try await context.perform { () throws(StoreError) in try context.fetchObjectIDs(r) }
                self.ids = ids
                request.report(completed: 0, total: ids.count)
            }
            guard start < ids.count else { return nil }
            try request.checkCancellation()
            let batch = Array(ids[start..<Swift.min(ids.count, start + request.batchSize)])
            let rows = try await context.perform { () throws(StoreError) in try context.unloadedRows(batch) }
            try request.checkCancellation()
            let objects: [Object] = try context.registered(AsyncFetchRows(ids: batch, rows: rows), request)
            recent = [recent.last ?? [], batch.compactMap { $0.primaryKey }]
            start += batch.count
            request.report(completed: start, total: ids.count)
            return objects
        }
    }
}
