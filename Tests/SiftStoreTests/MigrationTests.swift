// Inferred migration (issue 32): for each kind of change, a store filled under the old model is
// opened with the new one and `migration: .inferred`, and every object's values and relationships
// are compared with what the change predicts from the objects read before; a predicate fetch
// agrees with memory afterwards. Changes that cannot be inferred are refused together, before the
// file is touched; a row breaking a new rule rolls the whole migration back; a dry run changes
// nothing.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftStoreTestSupport
import Testing

@testable import SiftStore

/// Objects by entity, then key, then property → its value as a string (relationships as keys).
typealias StoreSnapshot = [String: [Int64: [String: String]]]

enum MigrationSupport {
    static func model(_ entities: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(json: Data("{\"entities\": [\(entities)]}".utf8))
    }

    /// People and pets: Person(name required, age int16, score float, nick, pets ↔ Pet.owner,
    /// best → Pet); a person without an age, one without pets, a pet without an owner.
    static let people = """
        {"name": "Person", "attributes": [
            {"name": "name", "type": "string", "optional": false},
            {"name": "age", "type": "integer16"},
            {"name": "score", "type": "float"},
            {"name": "nick", "type": "string"}],
         "relationships": [
            {"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner"},
            {"name": "best", "destination": "Pet"}]},
        {"name": "Pet", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "owner", "destination": "Person", "inverse": "pets"}]}
        """

    /// A store at a new path made with `old` and filled with people and pets.
    static func peopleStore(_ old: ManagedObjectModel) throws -> String {
        let path = Fixtures.temporaryPath()
        let store = try PersistentStore(model: old, path: path)
        let c = ManagedObjectContext(store: store)
        var pets: [ManagedObject] = []
        for name in ["Rex", "Tom", "Kit", "Bob"] {
            let p = try c.insert("Pet")
            try p.setValue(name, forKey: "name")
            pets.append(p)
        }
        let rows: [(String, Int?, Double, String?, [Int], Int?)] = [
            ("Ann", 31, 1.5, "an", [0, 1], 1), ("Bo", nil, 2.25, nil, [2], 2), ("Cy", 7, 0.1, "c", [], nil),
        ]
        for (name, age, score, nick, owned, best) in rows {
            let o = try c.insert("Person")
            try o.setValue(name, forKey: "name")
            try o.setValue(age, forKey: "age")
            try o.setValue(score, forKey: "score")
            try o.setValue(nick, forKey: "nick")
            try o.setValue(owned.map { pets[$0] }, forKey: "pets")
            try o.setValue(best.map { pets[$0] }, forKey: "best")
        }
        try c.save()
        return path
    }

    /// The people store's model, a store made with it, and the store's snapshot.
    static func peopleAndSnapshot() throws -> (old: ManagedObjectModel, path: String, before: StoreSnapshot) {
        let old = try model(people)
        let path = try peopleStore(old)
        return (old, path, try snapshot(try PersistentStore(model: old, path: path)))
    }

    /// The key of the person named `name` in `snapshot`.
    static func key(of name: String, in snapshot: StoreSnapshot) throws -> Int64 {
        try #require(snapshot["Person"]?.first { $0.value["name"] == show(.string(name)) }?.key)
    }

    static func show(_ v: Value) -> String {
        switch v {
        case .object(let o as ManagedObject): "#\(o.objectID.primaryKey ?? -1)"
        case .set(let items): "{" + items.map(show).sorted().joined(separator: ",") + "}"
        case .array(let items): "[" + items.map(show).joined(separator: ",") + "]"
        default: "\(v)"
        }
    }

    /// Every object of `store` with every stored property.
    static func snapshot(_ store: PersistentStore) throws -> StoreSnapshot {
        let c = ManagedObjectContext(store: store)
        var out: StoreSnapshot = [:]
        for e in store.model.entities {
            let r = store.model.resolved[e.name]!
            var objects: [Int64: [String: String]] = [:]
            for o in try c.fetch(FetchRequest(e.name)) where o.entityName == e.name {
                var values: [String: String] = [:]
                for key in r.attributes.map(\.name) + r.relationships.map(\.name) {
                    values[key] = show(try o.value(forKey: key))
                }
                objects[o.objectID.primaryKey!] = values
            }
            out[e.name] = objects
        }
        return out
    }

    /// The snapshot of the store at `path` made with `old`, then the store opened with `new`
    /// (migrated) and its snapshot.
    static func migrate(_ path: String, _ old: ManagedObjectModel, to new: ManagedObjectModel) throws -> (
        before: StoreSnapshot, store: PersistentStore, after: StoreSnapshot
    ) {
        let before = try snapshot(try PersistentStore(model: old, path: path))
        let store = try PersistentStore(model: new, path: path, migration: .inferred)
        #expect(try store.rows("PRAGMA integrity_check", []) == [[.text("ok")]])
        // The same tables, indexes and triggers as a store made with the new model.
        let fresh = try PersistentStore(model: new, path: Fixtures.temporaryPath())
        #expect(try schema(store) == schema(fresh))
        return (before, store, try snapshot(store))
    }

    /// Every table, index and trigger of `store`: type, name, table, SQL.
    static func schema(_ store: PersistentStore) throws -> [[SQLValue]] {
        try store.rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name", [])
    }

    /// `predicate` fetched from `store` and evaluated in memory over every object of `entity`
    /// give the same objects.
    static func expectFetchAgreesWithMemory(_ store: PersistentStore, _ entity: String, _ predicate: String) throws {
        let c = ManagedObjectContext(store: store)
        let p = try SiftPredicate(format: predicate, arguments: [])
        let fetched = Set(try c.fetch(FetchRequest(entity, predicate: p)).map(\.objectID))
        var memory = Set<ObjectID>()
        for o in try c.fetch(FetchRequest(entity)) where try p.evaluate(with: o) { memory.insert(o.objectID) }
        #expect(fetched == memory, "\(entity) where \(predicate)")
        #expect(!memory.isEmpty, "\(entity) where \(predicate) matches nothing, so it proves nothing")
    }

    /// The error opening `path` with `model` and `.inferred` throws.
    static func refusal(_ path: String, _ model: ManagedObjectModel) -> StoreError? {
        do throws(StoreError) {
            _ = try PersistentStore(model: model, path: path, migration: .inferred)
            return nil
        } catch { return error }
    }

    /// `snapshot` with `transform` applied to every object of `entity`.
    static func mapping(
        _ snapshot: StoreSnapshot, _ entity: String, _ transform: (inout [String: String]) -> Void
    ) -> StoreSnapshot {
        var out = snapshot
        for (k, var v) in out[entity] ?? [:] {
            transform(&v)
            out[entity]![k] = v
        }
        return out
    }
}

@Suite struct MigrationTests {
    typealias M = MigrationSupport

    @Test func theDefaultStillRefusesAnotherModel() throws {
        let old = try M.model(M.people)
        let path = try M.peopleStore(old)
        let new = try M.model(
            M.people.replacingOccurrences(
                of: #"{"name": "nick", "type": "string"}"#,
                with: #"{"name": "nick", "type": "string"}, {"name": "phone", "type": "string"}"#))
        #expect(throws: StoreError.self) { _ = try PersistentStore(model: new, path: path) }
        do { _ = try PersistentStore(model: new, path: path) } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.message.contains("attribute 'Person.phone' was added"))
        }
    }

    @Test func addedAttributesTakeTheirDefaultOrNil() throws {
        let old = try M.model(M.people)
        let new = try M.model(
            M.people.replacingOccurrences(
                of: #"{"name": "nick", "type": "string"}"#,
                with:
                    #"{"name": "nick", "type": "string"}, {"name": "phone", "type": "string"}, {"name": "level", "type": "integer32", "optional": false, "default": 3}"#
            ))
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        let expected = M.mapping(before, "Person") {
            $0["phone"] = M.show(.null)
            $0["level"] = M.show(.integer(3))
        }
        #expect(after == expected)
        try M.expectFetchAgreesWithMemory(store, "Person", "level == 3 AND phone == nil AND age > 10")
    }

    /// `M.people` with `replacements` (each text → its replacement) made.
    static func people(_ replacements: [(String, String)]) throws -> ManagedObjectModel {
        var text = M.people
        for (a, b) in replacements {
            precondition(text.contains(a), "\(a) is not in the model")
            text = text.replacingOccurrences(of: a, with: b)
        }
        return try M.model(text)
    }

    @Test func removedAndRenamedAttributesKeepTheOthers() throws {
        let old = try M.model(M.people)
        let new = try Self.people([
            (#"{"name": "nick", "type": "string"}"#, ""), (#""type": "float"},"#, #""type": "float"}"#),
            (#"{"name": "score""#, #"{"name": "rating", "renamingIdentifier": "score""#),
        ])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        #expect(
            after
                == M.mapping(before, "Person") {
                    $0["rating"] = $0.removeValue(forKey: "score")
                    $0["nick"] = nil
                })
        try M.expectFetchAgreesWithMemory(store, "Person", "rating > 1")
    }

    @Test func integersAndFloatsWiden() throws {
        let old = try M.model(M.people)
        let new = try Self.people([(#""integer16""#, #""integer64""#), (#""float""#, #""double""#)])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        #expect(after == before)
        try M.expectFetchAgreesWithMemory(store, "Person", "age >= 7 AND score < 2")
    }

    @Test func scalarsBecomeStrings() throws {
        let old = try M.model(M.people)
        let new = try Self.people([(#""integer16""#, #""string""#), (#""float""#, #""string""#)])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        let strings: [String: (String?, String)] = ["Ann": ("31", "1.5"), "Bo": (nil, "2.25"), "Cy": ("7", "0.1")]
        #expect(
            after
                == M.mapping(before, "Person") {
                    let name = $0["name"]
                    let (age, score) = strings.first { M.show(.string($0.key)) == name }!.value
                    $0["age"] = M.show(age.map(Value.string) ?? .null)
                    $0["score"] = M.show(.string(score))
                })
        try M.expectFetchAgreesWithMemory(store, "Person", "age BEGINSWITH '3' OR score == '0.1'")
    }

    @Test func optionalityChangesAndNilsGetTheDefault() throws {
        let old = try M.model(M.people)
        let new = try Self.people([
            (#""string", "optional": false}"#, #""string"}"#),
            (#""integer16"}"#, #""integer16", "optional": false, "default": 0}"#),
        ])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        #expect(
            after == M.mapping(before, "Person") { if $0["age"] == M.show(.null) { $0["age"] = M.show(.integer(0)) } })
        try M.expectFetchAgreesWithMemory(store, "Person", "age == 0")
    }

    @Test func renamedEntityKeepsItsObjectsAndLinks() throws {
        let old = try M.model(M.people)
        let new = try Self.people([
            (#""destination": "Pet""#, #""destination": "Animal""#),
            (#"{"name": "Pet","#, #"{"name": "Animal", "renamingIdentifier": "Pet","#),
        ])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        var expected = before
        expected["Animal"] = expected.removeValue(forKey: "Pet")
        #expect(after == expected)
        try M.expectFetchAgreesWithMemory(store, "Person", "ANY pets.name == 'Kit'")
        try M.expectFetchAgreesWithMemory(store, "Animal", "owner.name == 'Ann'")
    }

    @Test func toOneBecomesToManyAndBack() throws {
        let old = try M.model(M.people)
        let toMany = try Self.people([
            (
                #"{"name": "best", "destination": "Pet"}"#,
                #"{"name": "bests", "renamingIdentifier": "best", "destination": "Pet", "toMany": true}"#
            ),
            (
                #"{"name": "owner", "destination": "Person", "inverse": "pets"}"#,
                #"{"name": "owner", "destination": "Person", "inverse": "pets", "toMany": true}"#
            ),
        ])
        let path = try M.peopleStore(old)
        let (before, store, after) = try M.migrate(path, old, to: toMany)
        let sets = M.mapping(
            M.mapping(before, "Person") {
                let best = $0.removeValue(forKey: "best")!
                $0["bests"] = best == M.show(.null) ? "{}" : "{\(best)}"
            }, "Pet"
        ) { $0["owner"] = $0["owner"] == M.show(.null) ? "{}" : "{\($0["owner"]!)}" }
        #expect(after == sets)
        try M.expectFetchAgreesWithMemory(store, "Person", "bests.@count == 1")
        try M.expectFetchAgreesWithMemory(store, "Pet", "ANY owner.name == 'Bo'")
        withExtendedLifetime(store) {}
        let back = try Self.people([
            (
                #"{"name": "best", "destination": "Pet"}"#,
                #"{"name": "best", "renamingIdentifier": "bests", "destination": "Pet"}"#
            )
        ])
        let (_, again, restored) = try M.migrate(path, toMany, to: back)
        #expect(restored == before)
        try M.expectFetchAgreesWithMemory(again, "Person", "best.name == 'Kit'")
    }

    @Test func aToManyHoldingSeveralCannotBecomeToOne() throws {
        let (old, path, before) = try M.peopleAndSnapshot()
        let new = try Self.people([
            (
                #"{"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner"}"#,
                #"{"name": "pets", "destination": "Pet", "inverse": "owner"}"#
            )
        ])
        let error = try #require(M.refusal(path, new))
        let ann = try M.key(of: "Ann", in: before)
        #expect(error.kind == .validation)
        #expect(error.failures.map(\.objectID?.primaryKey) == [ann])
        #expect(error.failures.first?.message == "Person \(ann) 'pets': holds several objects, and is now to-one")
        #expect(try M.snapshot(try PersistentStore(model: old, path: path)) == before)
    }

    @Test func unorderedBecomesOrderedAndBack() throws {
        let old = try M.model(M.people)
        let path = try M.peopleStore(old)
        let ordered = try Self.people([
            (#""toMany": true, "inverse": "owner"}"#, #""toMany": true, "ordered": true, "inverse": "owner"}"#)
        ])
        let (before, store, after) = try M.migrate(path, old, to: ordered)
        // Numbered by key: the set's members in key order.
        #expect(after == M.mapping(before, "Person") { $0["pets"] = "[" + $0["pets"]!.dropFirst().dropLast() + "]" })
        try M.expectFetchAgreesWithMemory(store, "Person", "pets.@count == 2")
        withExtendedLifetime(store) {}
        let (_, _, restored) = try M.migrate(path, ordered, to: old)
        #expect(restored == before)
    }

    @Test func entitiesAndRelationshipsComeAndGo() throws {
        let old = try M.model(M.people)
        let new = try Self.people([
            (#"{"name": "best", "destination": "Pet"}"#, #"{"name": "toys", "destination": "Toy", "toMany": true}"#),
            (
                #"{"name": "Pet","#,
                #"{"name": "Toy", "attributes": [{"name": "kind", "type": "string"}]}, {"name": "Pet","#
            ),
        ])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        var expected = M.mapping(before, "Person") {
            $0["best"] = nil
            $0["toys"] = "{}"
        }
        expected["Toy"] = [:]
        #expect(after == expected)
        let c = ManagedObjectContext(store: store)
        let toy = try c.insert("Toy")
        try toy.setValue("ball", forKey: "kind")
        let ann = try #require(c.fetch(try FetchRequest("Person", predicate: "name == 'Ann'")).first)
        try ann.setValue([toy], forKey: "toys")
        try c.save()
        try M.expectFetchAgreesWithMemory(store, "Person", "ANY toys.kind == 'ball'")

    }

    @Test func anEntityJoinsAHierarchy() throws {
        let old = try M.model(M.people)
        let new = try Self.people([
            (
                #"{"name": "Pet","#,
                #"{"name": "Thing", "abstract": true, "attributes": [{"name": "label", "type": "string"}]}, {"name": "Pet", "parent": "Thing","#
            )
        ])
        let (before, store, after) = try M.migrate(try M.peopleStore(old), old, to: new)
        var expected = M.mapping(before, "Pet") { $0["label"] = M.show(.null) }
        expected["Thing"] = [:]
        #expect(after == expected)
        try M.expectFetchAgreesWithMemory(store, "Thing", "owner.name == 'Ann'")
    }

    @Test func aRowBreakingANewRuleRollsTheMigrationBack() throws {
        let (old, path, before) = try M.peopleAndSnapshot()
        let strict = try Self.people([(#""integer16"}"#, #""integer16", "min": 10}"#)])
        let error = try #require(M.refusal(path, strict))
        let cy = try M.key(of: "Cy", in: before)
        #expect(error.kind == .validation)
        #expect(error.failures.map(\.objectID?.primaryKey) == [cy])
        #expect(error.failures.first?.constraint == .minValue)
        #expect(error.message == "the migration fails: Person \(cy) 'age': 7 is below the minimum 10.0")
        #expect(try M.snapshot(try PersistentStore(model: old, path: path)) == before)

        let loose = try Self.people([(#""integer16"}"#, #""integer16", "min": 5, "max": 40}"#)])
        let (_, store, after) = try M.migrate(path, old, to: loose)
        #expect(after == before)
        try M.expectFetchAgreesWithMemory(store, "Person", "age BETWEEN {5, 40}")
    }

    @Test func everyChangeThatCannotBeInferredIsListedAndNothingIsTouched() throws {
        let old = try M.model(M.people)
        let path = try M.peopleStore(old)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let new = try Self.people([
            (
                #"{"name": "name", "type": "string", "optional": false}"#,
                #"{"name": "name", "type": "integer32", "optional": false}"#
            ),
            (
                #"{"name": "nick", "type": "string"}"#,
                #"{"name": "nick", "type": "string"}, {"name": "code", "type": "string", "optional": false}"#
            ),
            (#""integer16"}"#, #""integer16", "optional": false}"#),
        ])
        let error = try #require(M.refusal(path, new))
        #expect(error.kind == .modelMismatch)
        #expect(
            error.failures.map(\.message) == [
                "attribute 'Person.name' changed type from string to integer32",
                "attribute 'Person.age' became required without a default value",
                "attribute 'Person.code' was added as required without a default value",
            ])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aNewDerivedAttributeIsNotInferred() throws {
        // Its stored rows would need the expression computed: refused, the file untouched.
        let old = try M.model(M.people)
        let path = try M.peopleStore(old)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let new = try Self.people([
            (
                #"{"name": "nick", "type": "string"}"#,
                #"{"name": "nick", "type": "string"}, {"name": "shout", "type": "string", "derivationExpression": "uppercase:(nick)"}"#
            )
        ])
        let error = try #require(M.refusal(path, new))
        #expect(
            error.failures.map(\.message) == [
                "attribute 'Person.shout' is derived from uppercase:(nick) (new): an inferred migration does not compute derived values yet"
            ])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aDryRunChangesNothingAndSaysWhatWouldFail() throws {
        let (old, path, before) = try M.peopleAndSnapshot()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let strict = try Self.people([(#""integer16"}"#, #""integer16", "min": 10}"#)])
        let report = try PersistentStore.migrate(path: path, through: [strict], dryRun: true)
        #expect(report.changes == ["attribute 'Person.age' changed its validation rules (checked against every row)"])
        #expect(report.failures.map(\.constraint) == [.minValue])
        #expect(report.steps.contains { $0.summary == "check every Person.age against its new rules" })
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try M.snapshot(try PersistentStore(model: old, path: path)) == before)
    }

    static let clubs = """
        {"name": "Person", "attributes": [
            {"name": "name", "type": "string"}, {"name": "tags", "type": "string", "collection": true},
            {"name": "price", "type": "decimal"}],
         "relationships": [{"name": "clubs", "destination": "Club", "toMany": true, "inverse": "members"}]},
        {"name": "Club", "attributes": [{"name": "title", "type": "string"}],
         "relationships": [{"name": "members", "destination": "Person", "toMany": true, "inverse": "clubs", "allowsNil": true}]}
        """

    @Test func collectionsDecimalsAndManyToManysSurviveARenumbering() throws {
        let old = try M.model(Self.clubs)
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: old, path: path))
            let chess = try c.insert("Club")
            try chess.setValue("chess", forKey: "title")
            let go = try c.insert("Club")
            try go.setValue("go", forKey: "title")
            for (name, tags, clubs) in [("Ann", ["a", "b"], [chess, go]), ("Bo", [], [go]), ("Cy", ["c"], [])] {
                let o = try c.insert("Person")
                try o.setValue(name, forKey: "name")
                try o.setValue(tags, forKey: "tags")
                try o.setValue(Decimal(string: "0.1")!, forKey: "price")
                try o.setValue(clubs, forKey: "clubs")
            }
            try c.save()
        }
        // A new first entity: every entity number changes.
        let new = try M.model(
            #"{"name": "Aardvark", "attributes": [{"name": "x", "type": "integer32"}]}, "# + Self.clubs)
        let (before, store, after) = try M.migrate(path, old, to: new)
        var expected = before
        expected["Aardvark"] = [:]
        #expect(after == expected)
        try M.expectFetchAgreesWithMemory(store, "Person", "ANY tags == 'b' AND price == 0.1")
        try M.expectFetchAgreesWithMemory(store, "Club", "members.@count == 2")
        try M.expectFetchAgreesWithMemory(store, "Club", "members.@count == 1")
    }

    @Test func newCountBoundsAndUniquenessAreCheckedOnEveryRow() throws {
        let (old, path, before) = try M.peopleAndSnapshot()
        let new = try Self.people([
            (#""toMany": true, "inverse": "owner"}"#, #""toMany": true, "inverse": "owner", "maxCount": 1}"#),
            (#"{"name": "Pet", "attributes""#, #"{"name": "Pet", "uniquenessConstraints": [["kind"]], "attributes""#),
            (
                #"[{"name": "name", "type": "string"}],"#,
                #"[{"name": "name", "type": "string"}, {"name": "kind", "type": "string", "default": "dog"}],"#
            ),
        ])
        let error = try #require(M.refusal(path, new))
        let ann = try M.key(of: "Ann", in: before)
        #expect(error.kind == .validation)
        #expect(error.failures.map(\.constraint) == [.maxCount, .uniqueness])
        #expect(error.failures.first?.objectID?.primaryKey == ann)
        #expect(error.failures.last?.entity == "Pet")
        #expect(try M.snapshot(try PersistentStore(model: old, path: path)) == before)
    }

    @Test func persistentHistoryFollowsRenumberedEntitiesAndMovedKeys() throws {
        let old = try M.model(M.people)
        let path = Fixtures.temporaryPath()
        do {
            let store = try PersistentStore(model: old, path: path, historyTracking: true)
            let c = ManagedObjectContext(store: store)
            let rex = try c.insert("Pet")
            try rex.setValue("Rex", forKey: "name")
            let ann = try c.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            try c.save()
            try ann.setValue(3, forKey: "age")
            try ann.setValue([rex], forKey: "pets")
            try c.save()
        }
        // A new first entity renumbers the others; Person gains a key before `age` and loses `nick`.
        let new = try M.model(
            #"{"name": "Aardvark", "attributes": [{"name": "x", "type": "integer32"}]}, "#
                + M.people.replacingOccurrences(
                    of: #"{"name": "age", "type": "integer16"}"#,
                    with:
                        #"{"name": "title", "type": "string"}, {"name": "years", "renamingIdentifier": "age", "type": "integer16"}"#
                ).replacingOccurrences(
                    of: #"{"name": "nick", "type": "string"}"#, with: #"{"name": "x", "type": "string"}"#))
        let store = try PersistentStore(model: new, path: path, migration: .inferred)
        let history = try store.history(after: nil)
        #expect(
            history.map { $0.changes.map { "\($0.objectID.entityName) \($0.kind)" }.sorted() } == [
                ["Person insert", "Pet insert"], ["Person update", "Pet update"],
            ])
        let update = try #require(history.last?.changes.first { $0.objectID.entityName == "Person" })
        #expect(update.updatedKeys == ["years", "pets"])
    }

    @Test func documentEntitiesKeepTheirDocumentsAndTables() throws {
        let documents = DocumentEntityTests.description()
        let tag = EntityDescription("Tag", attributes: [AttributeDescription("name", .string)])
        let old = try ManagedObjectModel(entities: [EntityDescription("Person", document: documents), tag])
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: old, path: path))
            for d in DocumentEntityTests.people { try c.insert("Person").setDocument(d) }
            try c.insert("Tag").setValue("t", forKey: "name")
            try c.save()
        }
        var tag2 = tag
        tag2.attributes.append(AttributeDescription("rank", .integer32, defaultValue: .integer(1)))
        // Tag first: the document entity's number changes too.
        let new = try ManagedObjectModel(entities: [tag2, EntityDescription("Person", document: documents)])
        let store = try PersistentStore(model: new, path: path, migration: .inferred)
        #expect(try M.schema(store) == M.schema(try PersistentStore(model: new, path: Fixtures.temporaryPath())))
        let c = ManagedObjectContext(store: store)
        let read = try c.fetch(FetchRequest("Person")).compactMap(\.document)
        #expect(read.count == DocumentEntityTests.people.count)
        for d in DocumentEntityTests.people { #expect(read.contains { $0.isIdentical(to: d) }, "\(d)") }
        for p in ["address.city == 'Oslo'", "ANY kids.age == 3", "kids.@count == 0", "tags == 'x'"] {
            try M.expectFetchAgreesWithMemory(store, "Person", p)
        }
        try M.expectFetchAgreesWithMemory(store, "Tag", "rank == 1 AND name == 't'")
    }

    @Test func anEntityLeavesItsHierarchy() throws {
        let old = try M.model(
            #"""
            {"name": "Animal", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "Dog", "parent": "Animal", "attributes": [{"name": "barks", "type": "boolean"}]}
            """#)
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: old, path: path))
            for (name, dog) in [("Rex", true), ("Tom", false), ("Kit", true)] {
                let o = try c.insert(dog ? "Dog" : "Animal")
                try o.setValue(name, forKey: "name")
                if dog { try o.setValue(name == "Rex", forKey: "barks") }
            }
            try c.save()
        }
        let new = try M.model(
            #"""
            {"name": "Animal", "attributes": [{"name": "name", "type": "string"}]},
            {"name": "Dog", "attributes": [{"name": "name", "type": "string"}, {"name": "barks", "type": "boolean"}]}
            """#)
        let (before, store, after) = try M.migrate(path, old, to: new)
        #expect(after == before)
        #expect(after["Dog"]?.count == 2)
        try M.expectFetchAgreesWithMemory(store, "Dog", "barks == YES")
        // Dogs are no longer animals.
        #expect(try ManagedObjectContext(store: store).count(for: FetchRequest("Animal")) == 1)
    }

    @Test func mixedAttributesKeepEveryShape() throws {
        let v = AttributeDescription("v", .mixed, shapes: MixedShapes(scalar: true, date: true, array: .scalar))
        let old = try ManagedObjectModel(entities: [EntityDescription("R", attributes: [v])])
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: old, path: path))
            let values: [Value] = [
                .integer(1), .string("a"), .date(Date(timeIntervalSince1970: 5)), .array([.integer(2), .string("b")]),
                .null,
            ]
            for x in values { try c.insert("R").setValue(x, forKey: "v") }
            try c.save()
        }
        let new = try ManagedObjectModel(entities: [
            EntityDescription("R", attributes: [AttributeDescription("w", .string, defaultValue: .string("-")), v])
        ])
        let (before, store, after) = try M.migrate(path, old, to: new)
        #expect(after == M.mapping(before, "R") { $0["w"] = M.show(.string("-")) })
        for p in ["v == 'a'", "v == 1", "v == nil"] {
            try M.expectFetchAgreesWithMemory(store, "R", p)
        }
    }
}
