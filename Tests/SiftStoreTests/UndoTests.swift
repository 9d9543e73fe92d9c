// Undo and redo (issue 29): a context has no undo manager by default; given one, it records
// attribute edits, relationship changes, inserts and deletes (delete rules included), grouped per
// `processPendingChanges` or per explicit group, and undoes and redoes them a group at a time.
// After a save an undo is an ordinary edit that the next save writes.

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct UndoTests {
    /// Owner ←→ items (cascade from the owner), Item.owner nullify; Person ←→ Person (one-to-one).
    static func model() throws -> ManagedObjectModel {
        try Fixtures.itemsModel(
            itemsRule: .cascade,
            more: [
                EntityDescription(
                    "Person", attributes: [AttributeDescription("name", .string)],
                    relationships: [RelationshipDescription("partner", to: "Person", inverse: "partner")])
            ])
    }

    /// A context with an undo manager over a new store.
    static func context() throws -> (ManagedObjectContext, SiftUndoManager, PersistentStore) {
        let s = try PersistentStore.inMemory(model: try model())
        let c = ManagedObjectContext(store: s)
        let u = SiftUndoManager()
        c.undoManager = u
        return (c, u, s)
    }

    func stored(_ s: PersistentStore, _ predicate: String = "TRUEPREDICATE") throws -> [String] {
        let c = ManagedObjectContext(store: s)
        return try c.fetch(FetchRequest("Item", predicate: predicate)).compactMap {
            try $0.get("name", as: String.self)
        }
        .sorted()
    }

    @Test func aContextHasNoUndoManagerByDefault() throws {
        let s = try PersistentStore.inMemory(model: try Self.model())
        let c = ManagedObjectContext(store: s)
        #expect(c.undoManager == nil)
        let x = try c.insert("Item")
        try c.processPendingChanges()
        try c.undo()  // nothing to undo with: the insert stays
        #expect(c.insertedObjects == [x])
    }

    @Test func attributeEditsUndoAndRedoPerEvent() throws {
        let (c, u, _) = try Self.context()
        let x = try c.insert("Item")
        try x.setValue("a", forKey: "name")
        try c.processPendingChanges()
        try x.setValue("b", forKey: "name")
        try x.setValue(7, forKey: "price")
        try c.processPendingChanges()
        #expect(u.canUndo && !u.canRedo)
        try u.undo()
        #expect(try x.get("name", as: String.self) == "a" && x.get("price", as: Int.self) == nil)
        #expect(u.canRedo)
        try u.redo()
        #expect(try x.get("name", as: String.self) == "b" && x.get("price", as: Int.self) == 7)
        try u.undo()
        try u.undo()  // the first group: the insert and its name
        #expect(c.insertedObjects.isEmpty && !c.hasChanges)
        try u.redo()
        let back = try #require(c.insertedObjects.first)
        #expect(back === x && x.isInserted)
        #expect(try x.get("name", as: String.self) == "a")
        // A new edit after undoing clears the redo stack.
        try u.undo()
        #expect(u.canRedo)
        let y = try c.insert("Item")
        try y.setValue("new", forKey: "name")
        #expect(!u.canRedo)
    }

    @Test func explicitGroupsUndoTogether() throws {
        let (c, u, s) = try Self.context()
        let a = try c.insert("Item")
        let b = try c.insert("Item")
        try a.setValue("a", forKey: "name")
        try b.setValue("b", forKey: "name")
        try c.save()
        u.removeAllActions()
        u.beginUndoGrouping()
        try a.setValue(1, forKey: "price")
        try c.processPendingChanges()  // inside an explicit group: no event boundary
        u.beginUndoGrouping()
        try b.setValue(2, forKey: "price")
        u.endUndoGrouping()
        #expect(u.groupingLevel == 1)
        u.endUndoGrouping()
        try u.undo()
        #expect(try a.get("price", as: Int.self) == nil && b.get("price", as: Int.self) == nil)
        try u.redo()
        try c.save()
        #expect(try stored(s, "price > 0") == ["a", "b"])
    }

    @Test func deletesComeBackWithTheirRelationshipsAndCascades() throws {
        let (c, u, s) = try Self.context()
        let (owner, items) = try Fixtures.ownedItems(c, 2)
        try c.save()
        u.removeAllActions()
        // Deleting the owner cascades to its items (at processPendingChanges).
        try c.delete(owner)
        try c.processPendingChanges()
        #expect(c.deletedObjects == Set(items + [owner]))
        try u.undo()
        #expect(c.deletedObjects.isEmpty)
        #expect(Set(try owner.get("items", as: [ManagedObject].self) ?? []) == Set(items))
        #expect(try items[0].get("owner", as: ManagedObject.self) === owner)
        try c.save()
        #expect(try stored(s) == ["i0", "i1"])
        // An item alone: nullify takes it out of the owner's items; undo puts it back.
        try c.delete(items[1])
        try c.processPendingChanges()
        #expect(try owner.get("items", as: [ManagedObject].self) == [items[0]])
        try u.undo()
        #expect(Set(try owner.get("items", as: [ManagedObject].self) ?? []) == Set(items))
        #expect(!c.hasChanges || c.deletedObjects.isEmpty)
    }

    @Test func aStolenDestinationGoesBackToItsPartner() throws {
        let (c, u, _) = try Self.context()
        let first = try c.insert("Owner")
        let second = try c.insert("Owner")
        let item = try c.insert("Item")
        try first.add(item, to: "items")
        try c.processPendingChanges()
        try second.add(item, to: "items")  // the item leaves `first`
        try c.processPendingChanges()
        #expect(try first.get("items", as: [ManagedObject].self) == [])
        try u.undo()
        #expect(try item.get("owner", as: ManagedObject.self) === first)
        #expect(try first.get("items", as: [ManagedObject].self) == [item])
        #expect(try second.get("items", as: [ManagedObject].self) == [])
        // One-to-one: taking a partner leaves the previous one alone; undo restores both pairs.
        let ann = try c.insert("Person")
        let bob = try c.insert("Person")
        let cy = try c.insert("Person")
        try ann.setValue(bob, forKey: "partner")
        try c.processPendingChanges()
        try cy.setValue(bob, forKey: "partner")
        try c.processPendingChanges()
        #expect(try ann.get("partner", as: ManagedObject.self) == nil)
        try u.undo()
        #expect(try ann.get("partner", as: ManagedObject.self) === bob)
        #expect(try bob.get("partner", as: ManagedObject.self) === ann)
        #expect(try cy.get("partner", as: ManagedObject.self) == nil)
    }

    @Test func undoAfterASaveIsAnOrdinaryEdit() throws {
        let (c, u, s) = try Self.context()
        let x = try c.insert("Item")
        try x.setValue("x", forKey: "name")
        try x.setValue(1, forKey: "price")
        try c.save()
        try x.setValue(5, forKey: "price")
        try c.save()
        try u.undo()
        #expect(try x.isUpdated && x.get("price", as: Int.self) == 1)
        try c.save()
        #expect(try stored(s, "price == 1") == ["x"])
        // Undoing a saved delete inserts the object again, with its values, as a new row.
        try c.delete(x)
        try c.save()
        #expect(try stored(s).isEmpty)
        try u.undo()
        #expect(x.isInserted && x.objectID.isTemporaryID)
        try c.save()
        #expect(try stored(s, "price == 1") == ["x"])
        // Undoing the saved insert of an object deletes it.
        let y = try c.insert("Item")
        try y.setValue("y", forKey: "name")
        try c.save()
        try u.undo()
        #expect(y.isDeleted)
        try c.save()
        #expect(try stored(s) == ["x"])
    }

    @Test func limitsDisablingAndRollback() throws {
        let (c, u, _) = try Self.context()
        u.levelsOfUndo = 2
        let x = try c.insert("Item")
        for p in 1...4 {
            try x.setValue(p, forKey: "price")
            try c.processPendingChanges()
        }
        try u.undo()
        try u.undo()
        #expect(!u.canUndo)  // only two groups kept
        #expect(try x.get("price", as: Int.self) == 2)
        u.disableUndoRegistration()
        try x.setValue(9, forKey: "price")
        try c.processPendingChanges()
        u.enableUndoRegistration()
        #expect(!u.canUndo)
        try x.setValue(10, forKey: "price")
        #expect(u.canUndo)
        c.rollback()
        #expect(!u.canUndo && !u.canRedo)
    }
}
