// Streaming an asynchronous fetch batch by batch: the batches together are the synchronous
// fetch's result, and the context holds about one batch of objects at a time when the consumer
// drops each one (counted, not timed: the registered objects after each batch), while uniquing,
// unsaved changes and held objects survive. Progress as an AsyncSequence: the total, one element
// per batch, the end; ending with `CancellationError` when the fetch is cancelled in the middle.

import Foundation
import SiftEvaluation
import SiftStore
import Testing

@Suite struct AsyncFetchStreamingTests {
    @Test func batchesAreTheFetchAndTheContextHoldsAboutOneBatch() async throws {
        let context = ManagedObjectContext(store: try AsyncFetchTests.store(items: 20_000))
        let request = try AsyncFetchTests.sorted(batch: 1_000)
        // The synchronous fetch's IDs, from another context (this one must start empty).
        let expected = try ManagedObjectContext(store: context.store).fetchObjectIDs(request)
        #expect(expected.count == 17_800)
        var seen: [ObjectID] = []
        var registered: [Int] = []
        for try await batch in context.batches(for: AsynchronousFetchRequest(request)) {
            #expect(batch.count <= 1_000)
            seen += batch.map(\.objectID)
            registered.append(context.registeredObjects.count)
        }
        #expect(seen == expected)
        #expect(registered.count == 18)
        // Each batch alone: the ones before it were let go of once the loop dropped them.
        #expect(registered.allSatisfy { $0 <= 1_000 }, "registered after each batch: \(registered)")
        #expect(context.registeredObjects.count == 0)
    }

    @Test func heldAndChangedObjectsStayUniqued() async throws {
        let store = try AsyncFetchTests.store(items: 5_000)
        var request = FetchRequest("Item")
        request.fetchBatchSize = 500
        request.sortDescriptors = [try SiftSortDescriptor("name")]
        let context = ManagedObjectContext(store: store)
        var kept: [ManagedObject] = []
        var edited: ObjectID?
        var batches = 0
        for try await batch in context.batches(for: AsynchronousFetchRequest(request)) {
            batches += 1
            if batches == 2 { kept = batch }
            if batches == 4 {
                try batch[7].setValue("renamed", forKey: "name")
                edited = batch[7].objectID
            }
        }
        #expect(batches == 10)
        // The held batch and the edited object stay; everything else went.
        #expect(context.registeredObjects.count == 501)
        for o in kept { #expect(try context.object(with: o.objectID) === o) }
        let id = try #require(edited)
        #expect(context.hasChanges)
        #expect(try context.object(with: id).get("name", as: String.self) == "renamed")
        // A fetch after the stream sees the edit, and the objects it makes read their rows again.
        let renamed = try context.fetch(try FetchRequest("Item", predicate: "name == 'renamed'"))
        #expect(renamed.map(\.objectID) == [id])
        let all = try context.fetch(request)
        #expect(all.count == 5_000 && all[500..<1_000].elementsEqual(kept, by: ===))
    }

    @Test func progressUpdatesCountEachBatchThenEnd() async throws {
        let store = try AsyncFetchTests.store(items: 2_500)
        let context = ManagedObjectContext(store: store)
        var request = AsynchronousFetchRequest(try AsyncFetchTests.sorted(batch: 1_000))
        let updates = request.progressUpdates()
        let items = try await context.fetch(request)
        #expect(items.count == 2_225)
        var steps: [FetchProgress] = []
        for try await step in updates { steps.append(step) }
        #expect(steps == [0, 1_000, 2_000, 2_225].map { FetchProgress(completed: $0, total: 2_225) })
        // A one-pass form reports once, at its end; the batches report as they are handed out.
        var counting = AsynchronousFetchRequest(FetchRequest("Item"))
        let countSteps = counting.progressUpdates()
        #expect(try await context.count(for: counting) == 2_500)
        var counted: [FetchProgress] = []
        for try await step in countSteps { counted.append(step) }
        #expect(counted == [FetchProgress(completed: 2_500, total: 2_500)])
        var streamed = AsynchronousFetchRequest(try AsyncFetchTests.sorted(batch: 1_000))
        let streamSteps = streamed.progressUpdates()
        var handedOut: [Int] = []
        for try await batch in context.batches(for: streamed) { handedOut.append(batch.count) }
        var told: [Int] = []
        for try await step in streamSteps { told.append(step.completed) }
        #expect(handedOut == [1_000, 1_000, 225] && told == [0, 1_000, 2_000, 2_225])
    }

    @Test func cancellingInTheMiddleEndsTheUpdatesWithTheCancellation() async throws {
        let store = try AsyncFetchTests.store(items: 10_000)
        let context = ManagedObjectContext(store: store)
        var request = AsynchronousFetchRequest(FetchRequest("Item"), progress: Progress(totalUnitCount: 0))
        let updates = request.progressUpdates()
        var batches = 0
        await #expect(throws: CancellationError.self) {
            for try await _ in context.batches(for: request) {
                batches += 1
                if batches == 3 { request.progress?.cancel() }
            }
        }
        #expect(batches == 3)
        var told: [Int] = []
        await #expect(throws: CancellationError.self) {
            for try await step in updates { told.append(step.completed) }
        }
        #expect(told == [0, 1_000, 2_000, 3_000])
        // Nothing of the cancelled batch was registered, and the dropped batches went.
        #expect(context.registeredObjects.count == 0)
        // A task cancelled in the middle of `fetch` ends its updates the same way.
        var whole = AsynchronousFetchRequest(
            FetchRequest("Item"),
            progress: RecordingProgress { _, done in
                if done == 4_000 { withUnsafeCurrentTask { $0?.cancel() } }
            })
        let wholeUpdates = whole.progressUpdates()
        let fixed = whole
        let task = Task { try await context.fetch(fixed).count }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        var wholeTold: [Int] = []
        await #expect(throws: CancellationError.self) {
            for try await step in wholeUpdates { wholeTold.append(step.completed) }
        }
        #expect(wholeTold == [0, 1_000, 2_000, 3_000, 4_000])
        #expect(context.registeredObjects.count == 0)
    }

    @Test func aQueueContextRefusesTheBatches() async throws {
        let store = try AsyncFetchTests.store(items: 10)
        let background = ManagedObjectContext(store: store, concurrency: .privateQueue)
        var request = AsynchronousFetchRequest(FetchRequest("Item"))
        let updates = request.progressUpdates()
        await #expect(throws: StoreError.self) {
            for try await _ in background.batches(for: request) {}
        }
        await #expect(throws: StoreError.self) {
            for try await _ in updates {}
        }
    }
}
