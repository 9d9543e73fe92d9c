// The smaller things of issue 28, through the public API only (no @testable import): `isFault`
// shows which objects of a fetch with a batch size are still faults, and `object(with:)` on a
// temporary ID whose object was saved since (or given a permanent ID) returns that object, where
// it used to say the context had not made the ID.

import Foundation
import SiftEvaluation
import SiftStore
import Testing

@Suite struct SmallThingsTests {
    /// A store holding items i0…i4, saved.
    static func items() throws -> PersistentStore {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string)])
        ])
        let store = try PersistentStore.inMemory(model: model)
        let c = ManagedObjectContext(store: store)
        for i in 0..<5 { try c.insert("Item").setValue("i\(i)", forKey: "name") }
        try c.save()
        return store
    }

    @Test func batchedFaultsAreObservableThroughIsFault() throws {
        let c = ManagedObjectContext(store: try Self.items())
        var request = FetchRequest("Item", sortDescriptors: [try SiftSortDescriptor("name")])
        request.fetchBatchSize = 2
        let items = try c.fetch(request)
        #expect(items.count == 5)
        #expect(items.allSatisfy { $0.isFault })
        #expect(try items[2].get("name", as: String.self) == "i2")
        // The touched object's batch (i2, i3) is read; the others are still faults.
        #expect(items.map(\.isFault) == [true, true, false, false, true])
        // Without a batch size, a fetch reads every row.
        #expect(try c.fetch(FetchRequest("Item")).allSatisfy { !$0.isFault })
    }

    @Test func aSavedObjectsTemporaryIDStillFindsIt() throws {
        let store = try Self.items()
        let c = ManagedObjectContext(store: store)
        let item = try c.insert("Item")
        let temporary = item.objectID
        #expect(temporary.isTemporaryID)
        try c.save()
        #expect(!item.objectID.isTemporaryID)
        #expect(try c.object(with: temporary) === item)
        #expect(try c.existingObject(with: temporary) === item)
        // Given a permanent ID before any save, likewise.
        let early = try c.insert("Item")
        let earlyTemporary = early.objectID
        try c.obtainPermanentIDs(for: [early])
        #expect(try c.object(with: earlyTemporary) === early)
        // Another context never had an object with that ID: not found, saying so.
        let other = ManagedObjectContext(store: store)
        #expect { _ = try other.object(with: temporary) } throws: { error in
            guard let e = error as? StoreError else { return false }
            return e.kind == .objectNotFound && e.message.contains("none unsaved has it")
        }
        // After a reset the saved object is read again from its row, under its permanent ID.
        try item.setValue("saved", forKey: "name")
        try c.save()
        c.reset()
        let again = try c.object(with: temporary)
        #expect(again.objectID == item.objectID && again !== item)
        #expect(try again.get("name", as: String.self) == "saved")
    }

    @Test func aChildFindsItsObjectByTheTemporaryIDAfterItsParentSaves() throws {
        let parent = ManagedObjectContext(store: try Self.items())
        let child = ManagedObjectContext(parent: parent)
        let x = try child.insert("Item")
        try x.setValue("x", forKey: "name")
        let temporary = x.objectID
        try child.save()
        try parent.save()
        #expect(!x.objectID.isTemporaryID)
        #expect(try child.object(with: temporary) === x)
        #expect(try parent.object(with: temporary).objectID == x.objectID)
    }
}
