// To-many relationships that allow nil (`allowsNil`), as JSON arrays that are null or missing:
// nil stays apart from an empty collection in memory, through saves, in fresh contexts and in SQL
// (the count column the lowering reads for `== nil` and `@count`), and the count column follows
// every write to the links: saves, inverse changes, deletes, batch deletes and rollbacks.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct NilToManyTests {
    static func model(kidsDelete: DeleteRule = .cascade) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Parent", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription(
                        "kids", to: "Kid", toMany: true, ordered: true, inverse: "parent",
                        deleteRule: kidsDelete, allowsNil: true)
                ]),
            EntityDescription(
                "Kid", attributes: [AttributeDescription("age", .integer64)],
                relationships: [RelationshipDescription("parent", to: "Parent", inverse: "kids")]),
        ])
    }

    func parent(_ c: ManagedObjectContext, _ name: String, kids ages: [Int]?) throws -> ManagedObject {
        let p = try c.insert("Parent")
        try p.setValue(name, forKey: "name")
        if let ages {
            var kids: [ManagedObject] = []
            for a in ages {
                let k = try c.insert("Kid")
                try k.setValue(a, forKey: "age")
                kids.append(k)
            }
            try p.setValue(kids, forKey: "kids")
        }
        return p
    }

    /// The stored count column of every parent, by name.
    func counts(_ store: PersistentStore) throws -> [String: Int64?] {
        var out: [String: Int64?] = [:]
        for row in try store.rows("SELECT name, \"kids@count\" FROM Parent", []) {
            guard case .text(let name) = row[0] else { continue }
            if case .integer(let n) = row[1] { out[name] = n } else { out[name] = .some(nil) }
        }
        return out
    }

    /// Names of the parents a fetch with `predicate` returns, sorted.
    func names(_ c: ManagedObjectContext, _ predicate: String) throws -> [String] {
        try c.fetch(try FetchRequest("Parent", predicate: predicate)).map { try $0.get("name", as: String.self) ?? "" }
            .sorted()
    }

    @Test func nilAndEmptyStayApartInMemory() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let p = try c.insert("Parent")
        #expect(p["kids"] == .null)  // starts nil, as a missing JSON array
        try p.setValue([ManagedObject](), forKey: "kids")
        #expect(p["kids"]?.collectionElements?.isEmpty == true)
        let k = try c.insert("Kid")
        try k.setValue(p, forKey: "parent")  // through the inverse
        #expect(p["kids"]?.collectionElements?.count == 1)
        try k.setValue(nil, forKey: "parent")
        #expect(p["kids"]?.collectionElements?.isEmpty == true)  // emptied, not nil
        try p.add(k, to: "kids")
        try p.setValue(nil, forKey: "kids")
        #expect(p["kids"] == .null)
        #expect(k["parent"] == .null)  // the inverse follows
        #expect(try SiftPredicate("kids == nil").evaluate(with: p))
        // A relationship that does not allow nil is never nil.
        let plain = try ManagedObjectModel(entities: [
            EntityDescription("A", relationships: [RelationshipDescription("bs", to: "B", toMany: true, inverse: "a")]),
            EntityDescription("B", relationships: [RelationshipDescription("a", to: "A", inverse: "bs")]),
        ])
        let c2 = ManagedObjectContext(store: try PersistentStore.inMemory(model: plain))
        let a = try c2.insert("A")
        try a.setValue(nil, forKey: "bs")
        #expect(a["bs"]?.collectionElements?.isEmpty == true)
    }

    @Test func savedAndReadBackInAFreshContext() throws {
        let path = Fixtures.temporaryPath()
        let store = try PersistentStore(model: Self.model(), path: path)
        let c = ManagedObjectContext(store: store)
        _ = try parent(c, "none", kids: nil)
        _ = try parent(c, "empty", kids: [])
        _ = try parent(c, "two", kids: [3, 12])
        try c.save()
        let expected: [String: Int64?] = ["none": nil, "empty": 0, "two": 2]
        #expect(try counts(store) == expected)

        let c2 = ManagedObjectContext(store: try PersistentStore(model: Self.model(), path: path))
        let byName = Dictionary(
            uniqueKeysWithValues: try c2.fetch(FetchRequest("Parent")).map {
                (try $0.get("name", as: String.self)!, $0)
            })
        #expect(byName["none"]?["kids"] == .null)
        #expect(byName["empty"]?["kids"]?.collectionElements?.isEmpty == true)
        #expect(byName["two"]?["kids"]?.collectionElements?.count == 2)
        // In SQL: the count column answers nil and @count, with no residual.
        for (p, expected) in [
            ("kids == nil", ["none"]), ("kids != nil", ["empty", "two"]), ("kids.@count == 0", ["empty"]),
            ("NOT (kids.@count > 1)", ["empty", "none"]), ("ANY kids.age < 5", ["two"]),
        ] {
            #expect(try names(c2, p) == expected, "\(p)")
            #expect(try c2.explain(FetchRequest("Parent", predicate: p)).residualPredicate == nil, "\(p)")
        }
        // A prefetch leaves a nil relationship nil.
        var r = FetchRequest("Parent")
        r.relationshipKeyPathsForPrefetching = ["kids"]
        let c3 = ManagedObjectContext(store: c2.store)
        let prefetched = try c3.fetch(r)
        #expect(prefetched.filter { $0["kids"] == .null }.count == 1)
        #expect(prefetched.compactMap { $0["kids"]?.collectionElements?.count }.sorted() == [0, 2])
    }

    @Test func theCountFollowsEveryChange() throws {
        let store = try PersistentStore.inMemory(model: Self.model(kidsDelete: .nullify))
        let c = ManagedObjectContext(store: store)
        let a = try parent(c, "a", kids: [1, 2, 3])
        let b = try parent(c, "b", kids: nil)
        try c.save()
        // A kid moves from a to b (b becomes a collection), one kid is deleted.
        let kids = try a.get("kids", as: [ManagedObject].self)!
        try kids[0].setValue(b, forKey: "parent")
        try c.delete(kids[1])
        try c.save()
        #expect(try counts(store) == ["a": 1, "b": 1])
        // Another context adds to a without a touching its own copy of a's list.
        let other = ManagedObjectContext(store: store)
        let k = try other.insert("Kid")
        try k.setValue(try other.object(with: a.objectID), forKey: "parent")
        try other.save()
        #expect(try counts(store) == ["a": 2, "b": 1])
        // A save of a that does not touch its kids keeps the stored count.
        try a.setValue("a2", forKey: "name")
        try c.save()
        #expect(try counts(store) == ["a2": 2, "b": 1])
        // Batch delete: the count column follows without loading anything.
        let result = try c.execute(try BatchDeleteRequest("Kid", predicate: "parent.name == 'a2'"))
        #expect(result.count == 2)
        #expect(try counts(store) == ["a2": 0, "b": 1])
        // Back to nil, and rollback returns to the committed collection.
        try b.setValue(nil, forKey: "kids")
        #expect(b["kids"] == .null)
        c.rollback()
        #expect(b["kids"]?.collectionElements?.count == 1)
        try b.setValue(nil, forKey: "kids")
        try c.save()
        let expected: [String: Int64?] = ["a2": 0, "b": nil]
        #expect(try counts(store) == expected)
        #expect(try names(ManagedObjectContext(store: store), "kids == nil") == ["b"])
    }

    @Test func pendingChangesTakePart() throws {
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: Self.model()))
        let a = try parent(c, "a", kids: [1])
        _ = try parent(c, "b", kids: nil)
        try c.save()
        _ = try parent(c, "c", kids: [])
        try a.setValue(nil, forKey: "kids")
        #expect(try names(c, "kids == nil") == ["a", "b"])
        #expect(try names(c, "kids.@count == 0") == ["c"])
        #expect(try c.count(for: FetchRequest("Parent", predicate: "kids != nil")) == 1)
    }

    @Test func modelRules() throws {
        #expect(throws: ModelError.self) {
            try ManagedObjectModel(entities: [
                EntityDescription("A", relationships: [RelationshipDescription("b", to: "B", allowsNil: true)]),
                EntityDescription("B"),
            ])
        }
        // The option is part of the model file and of its hash.
        let m = try Self.model()
        #expect(m.jsonString.contains("\"allowsNil\" : true"))
        #expect(try ManagedObjectModel(json: Data(m.jsonString.utf8)).versionHash == m.versionHash)
        var entities = m.entities
        entities[0].relationships[0].allowsNil = false
        #expect(try ManagedObjectModel(entities: entities).versionHash != m.versionHash)
        // Many-to-many: the join table's rows are counted.
        let mm = try ManagedObjectModel(entities: [
            EntityDescription(
                "T", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("tags", to: "Tag", toMany: true, inverse: "ts", allowsNil: true)
                ]),
            EntityDescription(
                "Tag", relationships: [RelationshipDescription("ts", to: "T", toMany: true, inverse: "tags")]),
        ])
        let store = try PersistentStore.inMemory(model: mm)
        let c = ManagedObjectContext(store: store)
        let t = try c.insert("T")
        try t.setValue("t", forKey: "name")
        let tags = try (0..<3).map { _ in try c.insert("Tag") }
        try t.setValue(tags, forKey: "tags")
        try c.save()
        try c.delete(tags[0])
        try c.save()
        let fresh = ManagedObjectContext(store: store)
        #expect(try fresh.fetch(try FetchRequest("T", predicate: "tags.@count == 2")).count == 1)
        #expect(try fresh.explain(try FetchRequest("T", predicate: "tags.@count == 2")).sql.contains("tags@count"))
    }
}
