// Asynchronous fetch: each async form gives what its synchronous form gives; progress counts rise
// to the total; cancelling the task or the progress in the middle of a 100,000-row fetch throws
// `CancellationError` at the next batch and leaves no object registered in the context.

import Foundation
import SiftEvaluation
import SiftStore
import SiftStoreTestSupport
import Synchronization
import Testing

/// A progress that records every completed count it is told and may run a hook on each.
final class RecordingProgress: Progress, @unchecked Sendable {
    private let log = Mutex<[Int64]>([])
    let hook: @Sendable (RecordingProgress, Int64) -> Void

    init(hook: @escaping @Sendable (RecordingProgress, Int64) -> Void = { _, _ in }) {
        self.hook = hook
        super.init(parent: nil, userInfo: nil)
    }

    var counts: [Int64] { log.withLock { $0 } }

    override var completedUnitCount: Int64 {
        get { super.completedUnitCount }
        set {
            super.completedUnitCount = newValue
            log.withLock { $0.append(newValue) }
            hook(self, newValue)
        }
    }
}

@Suite struct AsyncFetchTests {
    /// A store of `n` saved items: name "item i", price i % 100.
    /// A store of `n` items, in memory or (`file`) in a temporary file.
    static func store(items n: Int, file: Bool = false) throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Item", attributes: [AttributeDescription("name", .string), AttributeDescription("price", .integer64)])
        ])
        let store =
            file
            ? try PersistentStore(model: model, path: Fixtures.temporaryPath())
            : try PersistentStore.inMemory(model: model)
        let setup = ManagedObjectContext(store: store)
        for i in 0..<n {
            let item = try setup.insert("Item")
            try item.setValue("item \(i)", forKey: "name")
            try item.setValue(i % 100, forKey: "price")
        }
        try setup.save()
        return store
    }

    static func sorted(batch: Int) throws -> FetchRequest<ManagedObject> {
        var r = try FetchRequest("Item", predicate: "price > %@", 10)
        r.sortDescriptors = [try SiftSortDescriptor("price", ascending: false), try SiftSortDescriptor("name")]
        r.fetchBatchSize = batch
        return r
    }

    /// Progress counts never fall and end at the total they were told, after `reports` reports
    /// at least (a one-pass form, IDs or a count, reports once, when it is done).
    static func expectMonotonic(_ p: RecordingProgress, total: Int, reports: Int = 2) {
        #expect(p.counts.count >= reports)
        #expect(zip(p.counts, p.counts.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(p.counts.last == Int64(total) && p.totalUnitCount == Int64(total))
    }

    @Test func objectsEqualTheSynchronousFetchAndProgressRises() async throws {
        let store = try Self.store(items: 2_500)
        let request = try Self.sorted(batch: 300)
        let expected = try ManagedObjectContext(store: store).fetch(request).map(\.objectID)
        #expect(expected.count == 2_225)
        let context = ManagedObjectContext(store: store)
        let progress = RecordingProgress()
        let objects = try await context.fetch(AsynchronousFetchRequest(request, progress: progress))
        #expect(objects.map(\.objectID) == expected)
        #expect(objects.allSatisfy { !$0.isFault })
        #expect(try objects.first?.value(forKey: "price") == .integer(99))
        #expect(context.registeredObjects.count == expected.count)
        Self.expectMonotonic(progress, total: expected.count)
        // One report per batch of 300 after the total: 0, 300, …, 2,100, 2,225.
        #expect(progress.counts.count == 1 + (expected.count + 299) / 300)
    }

    @Test func idsCountAndDictionariesEqualTheSynchronousForms() async throws {
        let store = try Self.store(items: 1_000)
        let sync = ManagedObjectContext(store: store)
        var request = try Self.sorted(batch: 0)
        request.fetchLimit = 500
        let context = ManagedObjectContext(store: store)

        let idProgress = RecordingProgress()
        let ids = try await context.fetchObjectIDs(AsynchronousFetchRequest(request, progress: idProgress))
        #expect(ids == (try sync.fetchObjectIDs(request)) && ids.count == 500)
        Self.expectMonotonic(idProgress, total: 500, reports: 1)

        let countProgress = RecordingProgress()
        let n = try await context.count(for: AsynchronousFetchRequest(request, progress: countProgress))
        #expect(n == (try sync.count(for: request)) && n == 500)
        Self.expectMonotonic(countProgress, total: 500, reports: 1)

        request.propertiesToFetch = ["name", "price"]
        let rowProgress = RecordingProgress()
        let rows = try await context.fetchDictionaries(AsynchronousFetchRequest(request, progress: rowProgress))
        #expect(rows == (try sync.fetchDictionaries(request)))
        #expect(rows.count == 500 && rows.first?["price"] == .integer(99))
        Self.expectMonotonic(rowProgress, total: 500)

        var grouped = request
        grouped.propertiesToGroupBy = ["price"]
        grouped.aggregates = [FetchAggregate(name: "n", function: .count, keyPath: "")]
        grouped.fetchLimit = 3
        let groups = try await context.fetchDictionaries(AsynchronousFetchRequest(grouped))
        #expect(groups == (try sync.fetchDictionaries(grouped)))
        #expect(groups.count == 3 && groups.first?["n"] == .integer(10))
    }

    @Test func pendingChangesTakePartAsInTheSynchronousFetch() async throws {
        let store = try Self.store(items: 400)
        let context = ManagedObjectContext(store: store)
        let request = try Self.sorted(batch: 100)
        let fresh = try context.insert("Item")
        try fresh.setValue("new", forKey: "name")
        try fresh.setValue(50, forKey: "price")
        let cheap = try context.fetch(try FetchRequest("Item", predicate: "price == 99")).first!
        try cheap.setValue(1, forKey: "price")
        let expected = try context.fetch(request)
        #expect(expected.contains { $0 === fresh } && !expected.contains { $0 === cheap })
        let objects = try await context.fetch(AsynchronousFetchRequest(request))
        #expect(objects.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
        #expect(try cheap.value(forKey: "price") == .integer(1) && context.hasChanges)
    }

    @Test func queueContextsHandTheObjectsToAClosureOnTheirQueue() async throws {
        let store = try Self.store(items: 700)
        let request = try Self.sorted(batch: 250)
        let reader = ManagedObjectContext(store: store)
        let expected = try reader.fetch(request).map { try $0.value(forKey: "name") }
        let background = ManagedObjectContext(store: store, concurrency: .privateQueue)
        let names = try await background.fetch(AsynchronousFetchRequest(request)) { items in
            try items.map { try $0.value(forKey: "name") }
        }
        #expect(names == expected && names.count == 623)
        let ids = try await background.fetchObjectIDs(AsynchronousFetchRequest(request))
        #expect(ids.count == 623)
        // Returning the objects themselves would hand them off the queue: refused.
        await #expect(throws: StoreError.self) { _ = try await background.fetch(AsynchronousFetchRequest(request)) }
        let registered = await background.perform { background.registeredObjects.count }
        #expect(registered == 623)
    }

    @Test func cancellingTheTaskStopsAtTheNextBatchAndRegistersNothing() async throws {
        let store = try Self.store(items: 100_000)
        let context = ManagedObjectContext(store: store)
        let request = FetchRequest("Item")
        // Cancels the fetch's own task once 5,000 rows are read.
        let progress = RecordingProgress { _, done in
            if done == 5_000 { withUnsafeCurrentTask { $0?.cancel() } }
        }
        let task = Task { try await context.fetch(AsynchronousFetchRequest(request, progress: progress)).count }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        // The total, then 1,000 rows per batch up to the cancel: nothing read after it.
        #expect(progress.counts == [0] + (1...5).map { Int64($0 * 1_000) })
        #expect(progress.totalUnitCount == 100_000)
        #expect(context.registeredObjects.isEmpty && !context.hasChanges)
        // The context is unharmed: the same fetch, not cancelled, gives every row.
        let all = try await context.fetch(AsynchronousFetchRequest(request))
        #expect(all.count == 100_000 && context.registeredObjects.count == 100_000)
    }

    @Test func cancellingTheProgressCancelsTheFetch() async throws {
        let store = try Self.store(items: 20_000)
        let context = ManagedObjectContext(store: store, concurrency: .privateQueue)
        var request = FetchRequest("Item")
        request.fetchBatchSize = 2_000
        let progress = RecordingProgress { p, done in if done == 6_000 { p.cancel() } }
        await #expect(throws: CancellationError.self) {
            _ = try await context.fetch(AsynchronousFetchRequest(request, progress: progress)) { $0.count }
        }
        #expect(progress.counts == [0, 2_000, 4_000, 6_000])
        let registered = await context.perform { context.registeredObjects.count }
        #expect(registered == 0)
        // A progress cancelled before the fetch starts stops every form before any work.
        let cancelled = Progress(totalUnitCount: 0)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) {
            _ = try await context.count(for: AsynchronousFetchRequest(request, progress: cancelled))
        }
        await #expect(throws: CancellationError.self) {
            _ = try await context.fetchDictionaries(AsynchronousFetchRequest(request, progress: cancelled))
        }
        #expect(cancelled.totalUnitCount == 0)
    }
}
