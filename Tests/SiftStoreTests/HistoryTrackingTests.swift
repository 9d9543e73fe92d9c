// Persistent history turned off and on (`setHistoryTracking`: recording stops, the transactions go,
// the file remembers it, other store objects on the file stop recording, tokens keep growing when
// it comes back) and tombstones (the values of attributes marked
// `preservesValueInHistoryOnDeletion` recorded with a delete, by saves, cascades and batch deletes).

import Foundation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct HistoryTrackingTests {
    /// Item (name and added kept after deletion, price and note not) owned by Owner (name kept),
    /// whose delete cascades to its items.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Item",
                    attributes: [
                        AttributeDescription("name", .string, preservesValueInHistoryOnDeletion: true),
                        AttributeDescription("price", .integer64),
                        AttributeDescription("added", .date, preservesValueInHistoryOnDeletion: true),
                        AttributeDescription("note", .string),
                    ],
                    relationships: [RelationshipDescription("owner", to: "Owner", inverse: "items")]),
                EntityDescription(
                    "Owner",
                    attributes: [AttributeDescription("name", .string, preservesValueInHistoryOnDeletion: true)],
                    relationships: [
                        RelationshipDescription(
                            "items", to: "Item", toMany: true, inverse: "owner", deleteRule: .cascade)
                    ]),
                EntityDescription("Plain", attributes: [AttributeDescription("name", .string)]),
            ])
    }

    /// The number of rows in `table`.
    static func count(_ s: PersistentStore, _ table: String) throws -> Int64? {
        if case .integer(let n)? = try s.connection.query("SELECT count(*) FROM \(table)").first?.first { return n }
        return nil
    }

    @Test func turningTrackingOffStopsRecordingAndForgetsTheHistory() throws {
        let path = Fixtures.temporaryPath("history-off.sqlite")
        let s = try PersistentStore(model: try Fixtures.itemsModel(), path: path, historyTracking: true)
        let other = try PersistentStore(path: path)  // another store object on the file, tracking
        let c = ManagedObjectContext(store: s)
        let x = try c.insert("Item")
        try x.setValue(1, forKey: "price")
        try c.save()
        try x.setValue(2, forKey: "price")
        try c.save()
        let before = try s.history(after: nil)
        #expect(before.count == 2 && other.tracksHistory)

        try s.setHistoryTracking(false)
        #expect(!s.tracksHistory)
        for attempt in [{ _ = try s.history(after: nil) }, { _ = try s.purgeHistory(before: Date()) }] {
            #expect {
                try attempt()
            } throws: {
                ($0 as? StoreError)?.kind == .invalidOperation && "\($0)".contains("does not track history")
            }
        }
        #expect(try Self.count(s, "ATRANSACTION") == 0 && Self.count(s, "ACHANGE") == 0)
        try x.setValue(3, forKey: "price")
        try c.save()
        // The other store object still believed it tracked: its next save finds out and records nothing.
        let o = ManagedObjectContext(store: other)
        try o.existingObject(with: x.objectID).setValue("there", forKey: "name")
        try o.save()
        #expect(!other.tracksHistory)
        #expect(try Self.count(s, "ATRANSACTION") == 0)
        // Turning it off again changes nothing; the file remembers it is off.
        try s.setHistoryTracking(false)
        #expect(try !PersistentStore(path: path).tracksHistory)

        // On again: an empty history whose tokens follow the old ones.
        try s.setHistoryTracking(true)
        #expect(try s.tracksHistory && s.history(after: nil).isEmpty)
        try c.refresh(x, mergeChanges: false)  // the other store object saved it since
        try x.setValue(4, forKey: "price")
        try c.save()
        let after = try s.history(after: nil)
        #expect(after.count == 1 && after[0].token > before[1].token)
        #expect(after[0].changes == [HistoryChange(objectID: x.objectID, kind: .update, updatedKeys: ["price"])])
        // Reading the history tells the other store object it is on again.
        #expect(try other.history(after: nil).map(\.token) == [after[0].token] && other.tracksHistory)
        #expect(try PersistentStore(path: path).tracksHistory)
    }

    @Test func anInMemoryStoreTurnsTrackingOnLater() throws {
        let s = try PersistentStore.inMemory(model: try Fixtures.itemsModel())
        #expect(!s.tracksHistory)
        try s.setHistoryTracking(true)
        let c = ManagedObjectContext(store: s)
        let x = try c.insert("Item")
        try c.save()
        #expect(
            try s.history(after: nil).map(\.changes) == [
                [HistoryChange(objectID: x.objectID, kind: .insert, updatedKeys: [])]
            ])
    }

    @Test func aDeleteKeepsThePreservedValuesAsTheStoreHeldThem() throws {
        let s = try PersistentStore.inMemory(model: try Self.model(), historyTracking: true)
        let c = ManagedObjectContext(store: s)
        let added = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
        let owner = try c.insert("Owner")
        try owner.setValue("Ann", forKey: "name")
        let items = try (0..<3).map { i in
            let o = try c.insert("Item")
            try o.setValue("i\(i)", forKey: "name")
            try o.setValue(i, forKey: "price")
            try o.setValue("secret", forKey: "note")
            if i == 0 { try o.setValue(added, forKey: "added") }
            try o.setValue(owner, forKey: "owner")
            return o
        }
        let plain = try c.insert("Plain")
        try plain.setValue("p", forKey: "name")
        try c.save()
        #expect(try s.history(after: nil)[0].changes.allSatisfy { $0.tombstone == nil })

        // An unsaved edit before the delete: the tombstone has what the store held.
        try items[0].setValue("edited", forKey: "name")
        try c.delete(items[0])
        try c.delete(plain)
        try c.save()
        let first = try #require(try s.history(after: nil).last).changes
        let gone = try #require(first.first { $0.objectID == items[0].objectID })
        #expect(gone.kind == .delete)
        #expect(gone.tombstone == ["name": .string("i0"), "added": .date(added)])
        // An entity with no preserved attribute keeps only the ID.
        #expect(first.first { $0.objectID == plain.objectID }?.tombstone == nil)

        // A cascade: the owner and its remaining items, each with its own values (nil ones too).
        try items[1].setValue(nil, forKey: "name")
        try c.save()
        try c.delete(owner)
        try c.save()
        let cascade = try #require(try s.history(after: nil).last).changes
        let kept = Dictionary(uniqueKeysWithValues: cascade.map { ($0.objectID, $0.tombstone) })
        #expect(kept[owner.objectID] == ["name": .string("Ann")])
        #expect(kept[items[1].objectID] == ["name": .null, "added": .null])
        #expect(kept[items[2].objectID] == ["name": .string("i2"), "added": .null])
        #expect(cascade.allSatisfy { $0.kind == .delete })
    }

    @Test func batchDeletesRecordTombstonesAndUpdatesDoNot() throws {
        let s = try PersistentStore.inMemory(model: try Self.model(), historyTracking: true)
        let c = ManagedObjectContext(store: s)
        let items = try (0..<3).map { i -> ManagedObject in
            let o = try c.insert("Item")
            try o.setValue("b\(i)", forKey: "name")
            try o.setValue(i, forKey: "price")
            return o
        }
        try c.save()
        let ids = items.map(\.objectID)
        var raise = BatchUpdateRequest("Item")
        raise.propertiesToUpdate = ["name": .constant(.string("renamed"))]
        _ = try c.execute(raise)
        #expect(
            try s.history(after: nil).last?.changes.allSatisfy { $0.kind == .update && $0.tombstone == nil } == true)
        _ = try c.execute(try BatchDeleteRequest("Item", predicate: "price >= 1"))
        let deleted = try #require(try s.history(after: nil).last).changes
        #expect(Set(deleted.map(\.objectID)) == [ids[1], ids[2]])
        // The values the batch update stored, not the ones the context saved.
        #expect(
            deleted.map(\.tombstone) == [
                ["name": .string("renamed"), "added": .null], ["name": .string("renamed"), "added": .null],
            ])
    }

    @Test func theModelFileKeyIsReadAndWrittenOnlyWhenSet() throws {
        let json = """
            {"entities": [{"name": "Item", "attributes": [
                {"name": "name", "type": "string", "preservesValueInHistoryOnDeletion": true},
                {"name": "price", "type": "integer64", "preservesValueInHistoryOnDeletion": false},
                {"name": "note", "type": "string"}]}]}
            """
        let model = try ManagedObjectModel(json: Data(json.utf8))
        let attributes = try #require(model.entity(named: "Item")).attributes
        #expect(attributes.map(\.preservesValueInHistoryOnDeletion) == [true, false, false])
        #expect(model.jsonString.components(separatedBy: "preservesValueInHistoryOnDeletion").count == 2)
        #expect(try ManagedObjectModel(json: Data(model.jsonString.utf8)) == model)
    }

    @Test func historyTablesFromBeforeTombstonesGainTheColumn() throws {
        let path = Fixtures.temporaryPath("history-old.sqlite")
        do {
            let s = try PersistentStore(model: try Self.model(), path: path, historyTracking: true)
            // As a store made before tombstones: the change table without the column.
            try s.connection.execute("ALTER TABLE ACHANGE DROP COLUMN ZTOMBSTONE")
        }
        let s = try PersistentStore(path: path)
        let c = ManagedObjectContext(store: s)
        let o = try c.insert("Owner")
        try o.setValue("Bo", forKey: "name")
        try c.save()
        try c.delete(o)
        try c.save()
        #expect(try s.history(after: nil).last?.changes.first?.tombstone == ["name": .string("Bo")])
    }
}
