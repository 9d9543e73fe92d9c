// `automaticallyMergesChangesFromParent` on contexts made on a store (Core Data's view context):
// every other context's save to the same store object is taken in on the merging context's own
// queue (main queue, private queue), its auto-merging children hear of it, and the saver never
// merges its own save. Batch requests and other store objects on the same file are not merged
// automatically, and a confined context takes the saves in only on its own thread.

import Dispatch
import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct AutoMergeTests {
    /// Runs `check` on `c`'s queue until it holds (true) or 10 s pass (false).
    static func eventually(
        _ c: ManagedObjectContext, _ check: @escaping @Sendable () throws -> Bool
    ) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try await c.perform(check) { return true }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        return false
    }

    /// The price `c` holds for `id` (read on its queue).
    static func price(_ c: ManagedObjectContext, _ id: ObjectID) throws -> Int? {
        try c.performAndWait { try c.object(with: id).get("price", as: Int.self) }
    }

    @Test func aRootContextTakesInItsSiblingsSavesOnItsOwnQueue() async throws {
        let s = try ContextQueueTests.store()
        let ids = try ContextQueueTests.seed(s, 3)
        let view = ManagedObjectContext(store: s, concurrency: .mainQueue)
        view.automaticallyMergesChangesFromParent = true
        let other = ManagedObjectContext(store: s, concurrency: .privateQueue)
        other.automaticallyMergesChangesFromParent = true
        let plain = ManagedObjectContext(store: s, concurrency: .privateQueue)
        let bg = ManagedObjectContext(store: s, concurrency: .privateQueue)
        bg.automaticallyMergesChangesFromParent = true
        let child = ManagedObjectContext(parent: view, concurrency: .privateQueue)
        child.automaticallyMergesChangesFromParent = true
        let viewNotes = Heard()
        let bgNotes = Heard()
        let tokens = [view.observe(viewNotes.append), bg.observe(bgNotes.append)]
        try await view.perform {
            for id in ids { _ = try view.existingObject(with: id).get("price", as: Int.self) }
            try view.object(with: ids[2]).setValue("mine", forKey: "name")
            try view.processPendingChanges()
        }
        for c in [other, plain, child] { #expect(try Self.price(c, ids[0]) == 0) }
        let before = viewNotes.changes.count

        try await bg.perform {
            try bg.object(with: ids[0]).setValue(100, forKey: "price")
            try bg.object(with: ids[2]).setValue(200, forKey: "price")
            try bg.delete(try bg.object(with: ids[1]))
            try bg.save()
        }
        // The main-queue context, its child and the private sibling take the save in.
        #expect(try await Self.eventually(view) { try view.object(with: ids[0]).get("price", as: Int.self) == 100 })
        #expect(try await Self.eventually(other) { try other.object(with: ids[0]).get("price", as: Int.self) == 100 })
        #expect(try await Self.eventually(child) { try child.object(with: ids[0]).get("price", as: Int.self) == 100 })
        let merged = try #require(viewNotes.changes.dropFirst(before).first)
        #expect(Set(merged.updated) == [ids[0], ids[2]] && merged.deleted == [ids[1]])
        let state = try await view.perform { () throws(StoreError) in
            let x2 = try view.object(with: ids[2])
            let x1 = view.registeredObjects.contains { $0.objectID == ids[1] }
            return (try x2.get("name", as: String.self), try x2.get("price", as: Int.self), x2.isUpdated, x1)
        }
        // The unsaved edit stays on top of the merged price; the deleted object left.
        #expect(state == ("mine", 200, true, false))
        // A context without the flag keeps what it read (snapshot isolation).
        #expect(try Self.price(plain, ids[0]) == 0)
        // The saver never merges its own save: nothing changed in it after its did-save.
        let afterSave = bgNotes.all.drop { if case .didSave = $0 { false } else { true } }.dropFirst()
        #expect(bgNotes.all.contains { if case .didSave = $0 { true } else { false } } && afterSave.isEmpty)
        // The view's save meets no conflict: the merge read the new version.
        try await view.perform { try view.save() }
        let reader = ManagedObjectContext(store: s)
        let stored = try reader.existingObject(with: ids[2])
        #expect(try stored.get("name", as: String.self) == "mine" && stored.get("price", as: Int.self) == 200)
        _ = tokens
    }

    @Test func batchRequestsAndOtherStoreObjectsAreNotMergedAutomatically() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-automerge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let s1 = try PersistentStore(model: try Fixtures.itemsModel(), path: path)
        let s2 = try PersistentStore(path: path)
        let ids = try ContextQueueTests.seed(s1, 3)
        let view = ManagedObjectContext(store: s1, concurrency: .privateQueue)
        view.automaticallyMergesChangesFromParent = true
        try await view.perform {
            for id in ids { _ = try view.existingObject(with: id).get("price", as: Int.self) }
        }
        let bg = ManagedObjectContext(store: s1)
        var raise = try BatchUpdateRequest("Item", predicate: "price == 0")
        raise.propertiesToUpdate = ["price": .constant(.integer(7))]
        let batch = try bg.execute(raise)
        #expect(batch.objectIDs == [ids[0]])
        // Another store object on the same file (as another process would be).
        let elsewhere = ManagedObjectContext(store: s2)
        try elsewhere.existingObject(with: ids[1]).setValue(50, forKey: "price")
        try elsewhere.save()
        // A save through the view's own store object is merged, after the two above.
        try bg.existingObject(with: ids[2]).setValue(9, forKey: "price")
        try bg.save()
        #expect(try await Self.eventually(view) { try view.object(with: ids[2]).get("price", as: Int.self) == 9 })
        #expect(try Self.price(view, ids[0]) == 0 && Self.price(view, ids[1]) == 1)
        // Batch results stay a manual merge, as in Core Data.
        try await view.perform { try view.mergeChanges(from: batch) }
        #expect(try Self.price(view, ids[0]) == 7)
    }

    @Test func aConfinedContextTakesSiblingSavesInOnlyOnItsOwnThread() async throws {
        let s = try ContextQueueTests.store()
        let ids = try ContextQueueTests.seed(s, 2)
        let view = ManagedObjectContext(store: s)
        view.automaticallyMergesChangesFromParent = true
        let notes = Heard()
        let token = view.observe(notes.append)
        let x = try view.existingObject(with: ids[0])
        #expect(try x.get("price", as: Int.self) == 0)
        let bg = ManagedObjectContext(store: s, concurrency: .privateQueue)
        try await bg.perform {
            try bg.object(with: ids[0]).setValue(100, forKey: "price")
            try bg.save()
        }
        // The saver's thread did not touch the confined context: it only collected the save.
        #expect(try x.get("price", as: Int.self) == 0 && notes.changes.isEmpty)
        try view.processPendingChanges()
        #expect(try x.get("price", as: Int.self) == 100)
        #expect(notes.changes.map(\.updated) == [[ids[0]]])
        // A save takes in what was saved since first, so an edit of another property is no conflict.
        try x.setValue("mine", forKey: "name")
        try await bg.perform {
            try bg.object(with: ids[0]).setValue(300, forKey: "price")
            try bg.save()
        }
        try view.save()
        let stored = try ManagedObjectContext(store: s).existingObject(with: ids[0])
        #expect(try stored.get("name", as: String.self) == "mine" && stored.get("price", as: Int.self) == 300)
        // With the flag off again nothing is collected.
        view.automaticallyMergesChangesFromParent = false
        let y = try view.existingObject(with: ids[1])
        #expect(try y.get("price", as: Int.self) == 1)
        try await bg.perform {
            try bg.object(with: ids[1]).setValue(5, forKey: "price")
            try bg.save()
        }
        try view.processPendingChanges()
        #expect(try y.get("price", as: Int.self) == 1 && view.siblingSaves.isEmpty)
        token.cancel()
    }

    @Test func theStoreHoldsMergingContextsWeakly() throws {
        let s = try ContextQueueTests.store()
        weak var gone: ManagedObjectContext?
        do {
            let c = ManagedObjectContext(store: s, concurrency: .privateQueue)
            c.automaticallyMergesChangesFromParent = true
            gone = c
        }
        #expect(gone == nil)
        // Saves after it went tell nobody, and do not fail.
        #expect(try ContextQueueTests.seed(s, 2).count == 2)
    }

    @Test func concurrentSaversAllReachTheMainQueueContext() async throws {
        let s = try ContextQueueTests.store()
        let workers = 4
        let rounds = 10
        let ids = try ContextQueueTests.seed(s, workers)
        let view = ManagedObjectContext(store: s, concurrency: .mainQueue)
        view.automaticallyMergesChangesFromParent = true
        try await view.perform { for id in ids { _ = try view.existingObject(with: id).get("price", as: Int.self) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<workers {
                group.addTask {
                    let saver = ManagedObjectContext(store: s, concurrency: .privateQueue)
                    for r in 1...rounds {
                        try await saver.perform {
                            try saver.object(with: ids[w]).setValue(w * 1000 + r, forKey: "price")
                            try saver.save()
                        }
                        // The view reads while the saves arrive.
                        _ = try await view.perform { try view.object(with: ids[w]).get("price", as: Int.self) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let want = (0..<workers).map { $0 * 1000 + rounds }
        #expect(
            try await Self.eventually(view) {
                try ids.map { try view.object(with: $0).get("price", as: Int.self) } == want
            })
    }
}
