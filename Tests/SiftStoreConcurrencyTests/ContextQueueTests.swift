// Contexts on queues and merging other contexts' saves (issue 29): `perform` runs work where the
// context's work runs (its own serial queue, the main actor, or at once for a confined context),
// `performAndWait` nests without waiting for itself, and `mergeChanges(fromContextDidSave:)` and
// `mergeChanges(from:)` bring held objects up to date — deleted ones report `isDeleted` and refuse
// to be read instead of answering old values.

import Dispatch
import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct ContextQueueTests {
    static func store() throws -> PersistentStore {
        try PersistentStore.inMemory(model: try Fixtures.itemsModel())
    }

    /// Saves `n` items named "i0"… with price = index, in a new context; returns their IDs.
    static func seed(_ s: PersistentStore, _ n: Int) throws -> [ObjectID] {
        let c = ManagedObjectContext(store: s)
        let items = try (0..<n).map { i in
            let o = try c.insert("Item")
            try o.setValue("i\(i)", forKey: "name")
            try o.setValue(i, forKey: "price")
            return o
        }
        try c.save()
        return items.map(\.objectID)
    }

    @Test func performRunsOnThePrivateQueueAndReturnsIDs() async throws {
        let s = try Self.store()
        let background = ManagedObjectContext(store: s, concurrency: .privateQueue)
        #expect(background.concurrencyType == .privateQueue)
        let (id, onQueue, onMain) = try await background.perform {
            let item = try background.insert("Item")
            try item.setValue("imported", forKey: "name")
            try background.save()
            return (
                item.objectID, background.isOnOwnQueue,
                ManagedObjectContext(store: s, concurrency: .mainQueue).isOnOwnQueue
            )
        }
        #expect(onQueue && !onMain)
        #expect(!id.isTemporaryID)
        let reader = ManagedObjectContext(store: s)
        #expect(try reader.existingObject(with: id).get("name", as: String.self) == "imported")
        // Outside its queue the caller is not on it.
        #expect(!background.isOnOwnQueue)
    }

    @Test func performAndWaitNestsInsidePerform() async throws {
        let s = try Self.store()
        _ = try Self.seed(s, 3)
        let background = ManagedObjectContext(store: s, concurrency: .privateQueue)
        let counts = try await background.perform {
            // Waiting for its own queue from inside its own work would never return.
            let inner = try background.performAndWait { try background.count(for: FetchRequest("Item")) }
            return (inner, try background.count(for: FetchRequest("Item", predicate: "price > 0")))
        }
        #expect(counts == (3, 2))
        let outer = try background.performAndWait { try background.count(for: FetchRequest("Item")) }
        #expect(outer == 3)
    }

    @Test func workOnOnePrivateContextRunsOnePieceAtATime() async throws {
        let s = try Self.store()
        let id = try Self.seed(s, 1)[0]
        let context = ManagedObjectContext(store: s, concurrency: .privateQueue)
        let rounds = 200
        // Each piece reads, then writes the price + 1: interleaved pieces would lose increments.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<rounds {
                group.addTask {
                    try await context.perform {
                        let o = try context.object(with: id)
                        let p = try o.get("price", as: Int.self) ?? 0
                        try o.setValue(p + 1, forKey: "price")
                    }
                }
            }
            try await group.waitForAll()
        }
        try await context.perform { try context.save() }
        let reader = ManagedObjectContext(store: s)
        #expect(try reader.existingObject(with: id).get("price", as: Int.self) == rounds)
    }

    @Test func mainQueueContextRunsOnTheMainThread() async throws {
        let s = try Self.store()
        let main = ManagedObjectContext(store: s, concurrency: .mainQueue)
        let onMain = try await main.perform {
            _ = try main.insert("Item")
            return main.isOnOwnQueue
        }
        #expect(onMain)
        // The main actor's work runs where the context's does; a detached task's does not.
        #expect(await MainActor.run { main.isOnOwnQueue })
        #expect(await Task.detached { main.isOnOwnQueue }.value == false)
        let pending = await main.perform { main.insertedObjects.count }
        #expect(pending == 1)
        // From a background thread, performAndWait hops to the main queue and waits.
        let fromBackground = await Task.detached { main.performAndWait { (main.isOnOwnQueue, main.hasChanges) } }
            .value
        #expect(fromBackground == (true, true))
    }

    @Test func confinedPerformRunsAtOnce() async throws {
        let s = try Self.store()
        let c = ManagedObjectContext(store: s)
        #expect(c.concurrencyType == .confined)
        let n = try await c.perform { () throws(StoreError) -> Int in
            _ = try c.insert("Item")
            return c.insertedObjects.count
        }
        #expect(n == 1)
        // Typed throws pass through perform and performAndWait.
        do {
            _ = try c.performAndWait { () throws(StoreError) -> Int in
                _ = try c.insert("Nope")
                return 0
            }
            Issue.record("inserting an unknown entity went through")
        } catch {
            #expect(error.kind == .unknownEntity)
        }
    }

    /// The seeds' stack across queues: a private writer owns the store, the main-queue context
    /// is its child, and private workers (children of the main one) insert at the same time.
    @Test func theThreeLayerStackAcrossQueues() async throws {
        let s = try Self.store()
        let writer = ManagedObjectContext(store: s, concurrency: .privateQueue)
        let main = ManagedObjectContext(parent: writer, concurrency: .mainQueue)
        let workers = 4
        let perWorker = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for w in 0..<workers {
                group.addTask {
                    let worker = ManagedObjectContext(parent: main, concurrency: .privateQueue)
                    try await worker.perform { () throws(StoreError) in
                        for i in 0..<perWorker {
                            let o = try worker.insert("Item")
                            try o.setValue("w\(w)-\(i)", forKey: "name")
                            try o.setValue(i, forKey: "price")
                        }
                        try worker.save()  // into main, on the main queue
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = workers * perWorker
        let inMain = try await main.perform { () throws(StoreError) in
            (main.insertedObjects.count, try main.count(for: FetchRequest("Item", predicate: "price < 10")))
        }
        #expect(inMain == (total, workers * 10))
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 0)
        try await main.perform { () throws(StoreError) in try main.save() }  // into the writer
        #expect(await writer.perform { writer.insertedObjects.count } == total)
        try await writer.perform { () throws(StoreError) in try writer.save() }
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == total)
        // The writer's save renamed main's objects on main's queue: no temporary ID is left.
        let temporary = await main.perform { main.registeredObjects.filter(\.objectID.isTemporaryID).count }
        #expect(temporary == 0)
    }

    // MARK: Merging saves

    @Test func mergingADidSaveUpdatesDeletesAndKeepsUnsavedEdits() throws {
        let s = try Self.store()
        let ids = try Self.seed(s, 4)
        let a = ManagedObjectContext(store: s)
        let b = ManagedObjectContext(store: s)
        let heard = Heard()
        let token = b.observe(heard.append)
        // A holds all four: 0 and 1 read, 2 edited (name), 3 read.
        let held = try ids.map { try a.existingObject(with: $0) }
        try held[2].setValue("mine", forKey: "name")
        // B: 0's price and 2's price change, 1 is deleted, one is inserted.
        let b0 = try b.existingObject(with: ids[0])
        let b1 = try b.existingObject(with: ids[1])
        let b2 = try b.existingObject(with: ids[2])
        try b0.setValue(100, forKey: "price")
        try b2.setValue(200, forKey: "price")
        try b.delete(b1)
        _ = try b.insert("Item")
        try b.save()
        token.cancel()
        let note = try #require(heard.didSave)
        #expect(note.updatedKeys[ids[0]] == ["price"] && note.updatedKeys[ids[2]] == ["price"])
        #expect(Set(note.deleted) == [ids[1]] && note.inserted.count == 1)

        // Before the merge, A still answers its old values (Core Data's snapshot isolation).
        #expect(try held[0].get("price", as: Int.self) == 0)
        let seen = Heard()
        let watch = a.observe(seen.append)
        try a.mergeChanges(fromContextDidSave: note)
        watch.cancel()
        #expect(try held[0].get("price", as: Int.self) == 100)
        // 2 keeps A's unsaved name on top of B's saved price, and A's save is no conflict.
        #expect(try held[2].get("name", as: String.self) == "mine")
        #expect(try held[2].get("price", as: Int.self) == 200)
        #expect(held[2].isUpdated)
        // 1 is gone: it says so, and reading it is an error rather than its old values.
        #expect(held[1].isDeleted)
        #expect(!a.registeredObjects.contains(held[1]))
        do {
            _ = try held[1].get("name", as: String.self)
            Issue.record("a merged-away object answered")
        } catch {
            #expect(error.kind == .objectNotFound)
            #expect(error.message.contains("was deleted"))
        }
        #expect(throws: StoreError.self) { try held[1].setValue("x", forKey: "name") }
        #expect(seen.all.count == 1)
        if case .objectsDidChange(let c)? = seen.all.first {
            #expect(c.deleted == [ids[1]] && Set(c.updated) == [ids[0], ids[2]])
        }
        try a.save()
        let reader = ManagedObjectContext(store: s)
        let stored = try reader.existingObject(with: ids[2])
        #expect(try stored.get("name", as: String.self) == "mine" && stored.get("price", as: Int.self) == 200)
        #expect(try reader.count(for: FetchRequest("Item")) == 4)
    }

    @Test func aDeletionMergedOverUnsavedEditsIsAConflictNotALoss() throws {
        let s = try Self.store()
        let id = try Self.seed(s, 1)[0]
        let a = ManagedObjectContext(store: s)
        let b = ManagedObjectContext(store: s)
        let x = try a.existingObject(with: id)
        try x.setValue("edited", forKey: "name")
        try b.delete(try b.existingObject(with: id))
        let heard = Heard()
        let token = b.observe(heard.append)
        try b.save()
        token.cancel()
        try a.mergeChanges(fromContextDidSave: try #require(heard.didSave))
        // The edit is kept; the save then meets the deletion and says so.
        #expect(!x.isDeleted && x.isUpdated)
        do {
            try a.save()
            Issue.record("the save of an edit to a deleted row went through")
        } catch {
            #expect(error.kind == .mergeConflict)
            #expect(error.conflicts.map(\.objectID) == [id])
        }
    }

    @Test func relationshipsDropObjectsMergedAwayAsDeleted() throws {
        let s = try Self.store()
        let setup = ManagedObjectContext(store: s)
        let (owner, items) = try Fixtures.ownedItems(setup, 3)
        try setup.save()
        let a = ManagedObjectContext(store: s)
        let heldOwner = try a.existingObject(with: owner.objectID)
        #expect(try heldOwner.get("items", as: [ManagedObject].self)?.count == 3)
        // An item A never touched on its own side, read through the owner's to-many only.
        let b = ManagedObjectContext(store: s)
        try b.delete(try b.existingObject(with: items[1].objectID))
        let heard = Heard()
        let token = b.observe(heard.append)
        try b.save()
        token.cancel()
        try a.mergeChanges(fromContextDidSave: try #require(heard.didSave))
        let left = try #require(try heldOwner.get("items", as: [ManagedObject].self))
        #expect(Set(left.map(\.objectID)) == [items[0].objectID, items[2].objectID])
        #expect(try a.existingObject(with: items[0].objectID).get("owner", as: ManagedObject.self) === heldOwner)
        // A to-one read with its row (a key, no object yet) that names a row merged away reads nil,
        // even when the change set names only the deletion.
        let e = ManagedObjectContext(store: s)
        let heldItem = try e.existingObject(with: items[2].objectID)
        try e.mergeChanges(fromContextDidSave: ChangeSet(deleted: [owner.objectID]))
        #expect(try heldItem.get("owner", as: ManagedObject.self) == nil)
    }

    @Test func mergingABatchDeleteMarksHeldObjectsDeleted() throws {
        let s = try Self.store()
        let ids = try Self.seed(s, 5)
        let c = ManagedObjectContext(store: s)
        let held = try ids.map { try c.existingObject(with: $0) }
        let result = try c.execute(try BatchDeleteRequest("Item", predicate: "price >= 3"))
        #expect(result.count == 2)
        // Before the merge the objects still hold their last values (the batch bypassed the context).
        #expect(!held[3].isDeleted)
        try c.mergeChanges(from: result)
        #expect(held[3].isDeleted && held[4].isDeleted && !held[2].isDeleted)
        #expect(throws: StoreError.self) { try held[4].get("price", as: Int.self) }
        #expect(try c.fetch(FetchRequest("Item")).count == 3)
        #expect(try held[2].get("price", as: Int.self) == 2)
    }

    @Test func mergingABatchDeleteRefreshesNullifiedHolders() throws {
        let s = try Self.store()
        let setup = ManagedObjectContext(store: s)
        let owner = try setup.insert("Owner")
        let item = try setup.insert("Item")
        try item.setValue(owner, forKey: "owner")
        try setup.save()
        let c = ManagedObjectContext(store: s)
        let heldItem = try c.existingObject(with: item.objectID)
        #expect(try heldItem.get("owner", as: ManagedObject.self) != nil)
        let result = try c.execute(BatchDeleteRequest("Owner"))
        #expect(result.nullified == [item.objectID])
        try c.mergeChanges(from: result)
        #expect(try heldItem.get("owner", as: ManagedObject.self) == nil)
        // The nullify raised the item's version; the merge read it, so an edit saves cleanly.
        try heldItem.setValue("after", forKey: "name")
        try c.save()
    }
}
