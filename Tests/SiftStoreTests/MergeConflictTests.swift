// Optimistic locking and merge policies: two contexts on one store never silently overwrite each
// other's saves. The lost update of issue 29 (A saves a price, B saves a name it read before that)
// under every policy, an edit to a row another context deleted, and a stale object after a batch
// update; on the code before versions were compared, each of these saved without an error.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct MergeConflictTests {
    /// A store with one saved item (name "orig", price 1) in context A, and B's copy of it read.
    func twoContexts(_ policy: MergePolicy) throws -> (
        a: ManagedObjectContext, x: ManagedObject, b: ManagedObjectContext, xb: ManagedObject, s: PersistentStore
    ) {
        let s = try PersistentStore.inMemory(model: try Fixtures.itemsModel())
        let a = ManagedObjectContext(store: s)
        let b = ManagedObjectContext(store: s)
        b.mergePolicy = policy
        let x = try a.insert("Item")
        try x.setValue("orig", forKey: "name")
        try x.setValue(1, forKey: "price")
        try a.save()
        let xb = try b.existingObject(with: x.objectID)
        #expect(try xb.get("name", as: String.self) == "orig")
        return (a, x, b, xb, s)
    }

    /// The issue's scenario up to B's save: A saved price 100 after B read the row, and B renamed
    /// its stale copy. Returns B's context and object, and the store.
    func lostUpdate(_ policy: MergePolicy) throws -> (ManagedObjectContext, ManagedObject, PersistentStore) {
        let (a, x, b, xb, s) = try twoContexts(policy)
        try x.setValue(100, forKey: "price")
        try a.save()
        try xb.setValue("renamed", forKey: "name")
        return (b, xb, s)
    }

    /// The conflicts `context`'s save reports (it must fail with `merge-conflict`).
    func conflicts(saving context: ManagedObjectContext) throws -> [MergeConflict] {
        do {
            try context.save()
        } catch {
            #expect(error.kind == .mergeConflict && error.id == "merge-conflict")
            #expect(error.failures.count == error.conflicts.count)
            return error.conflicts
        }
        Issue.record("the save went through")
        return []
    }

    /// The stored name and price of `id`, read by a fresh context.
    func stored(_ s: PersistentStore, _ id: ObjectID) throws -> (String?, Int?) {
        let c = ManagedObjectContext(store: s)
        let o = try c.existingObject(with: id)
        return try withExtendedLifetime(c) { (try o.get("name", as: String.self), try o.get("price", as: Int.self)) }
    }

    @Test func errorPolicyRefusesTheLostUpdateAndWritesNothing() throws {
        let (b, xb, s) = try lostUpdate(.error)
        #expect(b.mergePolicy == .error)
        let list = try conflicts(saving: b)
        let c = try #require(list.first)
        #expect(list.count == 1)
        #expect(c.objectID == xb.objectID && c.changedKeys == ["name"] && !c.isDeleted)
        #expect(c.snapshot == ["name": .string("orig"), "price": .integer(1)])
        #expect(c.stored == ["name": .string("orig"), "price": .integer(100)])
        #expect(c.versions.read == 0 && c.versions.stored == 1)
        #expect(c.description.contains("changed here: name"))
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "orig" && price == 100)
        // The context keeps its change.
        #expect(try b.hasChanges && (xb.get("name", as: String.self)) == "renamed")
    }

    @Test func objectTrumpKeepsBothChanges() throws {
        let (b, xb, s) = try lostUpdate(.mergeByPropertyObjectTrump)
        try b.save()
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "renamed" && price == 100)
        #expect(try xb.get("price", as: Int.self) == 100)
        // The merged object is current: its next save needs no merge.
        b.mergePolicy = .error
        try xb.setValue(7, forKey: "price")
        try b.save()
        #expect(try stored(s, xb.objectID).1 == 7)
    }

    @Test func storeTrumpKeepsTheStoredChangeOnABothSidedConflict() throws {
        let (b, xb, s) = try lostUpdate(.mergeByPropertyStoreTrump)
        try xb.setValue(5, forKey: "price")  // changed on both sides: the store's 100 wins
        try b.save()
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "renamed" && price == 100)
        #expect(try xb.get("price", as: Int.self) == 100)
    }

    @Test func objectTrumpWinsABothSidedConflict() throws {
        let (b, xb, s) = try lostUpdate(.mergeByPropertyObjectTrump)
        try xb.setValue(5, forKey: "price")
        try b.save()
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "renamed" && price == 5)
    }

    @Test func overwriteWritesTheWholeObject() throws {
        let (b, xb, s) = try lostUpdate(.overwrite)
        try b.save()
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "renamed" && price == 1)
    }

    @Test func rollbackDiscardsTheConflictingChangesOnly() throws {
        let (b, xb, s) = try lostUpdate(.rollback)
        let other = try b.insert("Item")
        try other.setValue("new", forKey: "name")
        try b.save()
        let (name, price) = try stored(s, xb.objectID)
        #expect(name == "orig" && price == 100)
        #expect(try xb.get("name", as: String.self) == "orig" && (try xb.get("price", as: Int.self)) == 100)
        #expect(!b.hasChanges)
        #expect(try stored(s, other.objectID).0 == "new")
    }

    /// B edits a row A deleted.
    func editOfDeleted(_ policy: MergePolicy) throws -> (ManagedObjectContext, ManagedObject, PersistentStore) {
        let (a, x, b, xb, s) = try twoContexts(policy)
        try a.delete(x)
        try a.save()
        try xb.setValue("renamed", forKey: "name")
        return (b, xb, s)
    }

    @Test func editOfARowDeletedElsewhereIsAConflict() throws {
        let (b, xb, s) = try editOfDeleted(.error)
        let c = try #require(try conflicts(saving: b).first)
        #expect(c.objectID == xb.objectID && c.stored == nil && c.versions.stored == nil)
        #expect(c.changedKeys == ["name"])
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 0)
    }

    @Test func deletedRowUnderEachMergingPolicy() throws {
        // Store trump and rollback: the delete stands and the object leaves the context.
        for policy in [MergePolicy.mergeByPropertyStoreTrump, .rollback] {
            let (b, _, s) = try editOfDeleted(policy)
            try b.save()
            #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 0)
            #expect(!b.hasChanges)
        }
        // Object trump and overwrite: the object's row is written again.
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .overwrite] {
            let (b, xb, s) = try editOfDeleted(policy)
            try b.save()
            let (name, price) = try stored(s, xb.objectID)
            #expect(name == "renamed" && price == 1)
        }
    }

    @Test func deleteOfARowChangedElsewhere() throws {
        let (a, x, b, xb, s) = try twoContexts(.error)
        try x.setValue(2, forKey: "price")
        try a.save()
        try b.delete(xb)
        #expect(try conflicts(saving: b).first?.isDeleted == true)
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 1)
        b.mergePolicy = .rollback
        try b.save()
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 1)
        #expect(try !xb.isDeleted && (xb.get("price", as: Int.self)) == 2)
        try b.delete(xb)
        try b.save()  // now current: the delete goes through
        #expect(try ManagedObjectContext(store: s).count(for: FetchRequest("Item")) == 0)
    }

    @Test func staleObjectCannotUndoABatchUpdate() throws {
        let (a, x, _, _, s) = try twoContexts(.error)
        _ = try x.get("price", as: Int.self)
        var raise = BatchUpdateRequest("Item")
        raise.propertiesToUpdate = ["price": .constant(.integer(50))]
        #expect(try a.execute(raise).count == 1)
        try x.setValue("renamed", forKey: "name")
        #expect(try conflicts(saving: a).first?.stored?["price"] == .integer(50))
        #expect(try stored(s, x.objectID).1 == 50)
        a.mergePolicy = .mergeByPropertyObjectTrump
        try a.save()
        let (name, price) = try stored(s, x.objectID)
        #expect(name == "renamed" && price == 50)
    }

    @Test func eachSaveRaisesTheVersion() throws {
        // Saves of one property after another: each writes its change and raises the row's version.
        let (a, x, _, _, s) = try twoContexts(.error)
        try x.setValue(2, forKey: "price")
        try a.save()
        try x.setValue("again", forKey: "name")
        try a.save()
        let (name, price) = try stored(s, x.objectID)
        #expect(name == "again" && price == 2)
        let c = ManagedObjectContext(store: s)
        #expect(try c.existingObject(with: x.objectID).version == 2 && x.version == 2)
    }

    @Test func toOneChangesMergeByPropertyAndEveryConflictIsListed() throws {
        let (a, x, b, xb, s) = try twoContexts(.error)
        let y = try a.insert("Item")
        try y.setValue("second", forKey: "name")
        let ann = try a.insert("Owner")
        try ann.setValue("ann", forKey: "name")
        try a.save()
        let yb = try b.existingObject(with: y.objectID)
        // A gives both items an owner; B renames both (its owner's to-many changes are not a conflict).
        try x.setValue(ann, forKey: "owner")
        try y.setValue(ann, forKey: "owner")
        try a.save()
        try xb.setValue("renamed", forKey: "name")
        try yb.setValue("renamed too", forKey: "name")
        let list = try conflicts(saving: b)
        #expect(Set(list.map(\.objectID)) == [x.objectID, y.objectID])
        b.mergePolicy = .mergeByPropertyObjectTrump
        try b.save()
        let c = ManagedObjectContext(store: s)
        let stored = try c.existingObject(with: x.objectID)
        #expect(try stored.get("name", as: String.self) == "renamed")
        #expect(try (stored.get("owner", as: ManagedObject.self))?.objectID == ann.objectID)
        #expect(try (xb.get("owner", as: ManagedObject.self))?.objectID == ann.objectID)
        // B gives it another owner while A renames: store trump keeps both.
        let bob = try b.insert("Owner")
        try b.save()
        try xb.setValue(bob, forKey: "owner")
        try x.setValue("from a", forKey: "name")
        a.mergePolicy = .mergeByPropertyObjectTrump  // A's x is stale too (B saved it)
        try a.save()
        #expect(try x.get("name", as: String.self) == "from a" && (x.get("owner", as: ManagedObject.self)) === ann)
        b.mergePolicy = .mergeByPropertyStoreTrump
        try b.save()
        let fresh = ManagedObjectContext(store: s)
        let again = try fresh.existingObject(with: x.objectID)
        #expect(try again.get("name", as: String.self) == "from a")
        #expect(try (again.get("owner", as: ManagedObject.self))?.objectID == bob.objectID)
    }
}
