// The inferred changes the first migration tests left out: Boolean, double, decimal, UUID and URI
// attributes becoming strings (each value written as it reads), a new minimum count on a to-many
// (every row checked: one holding fewer fails the migration, by object; none, and it migrates),
// and attributes moving up to a parent entity and down to a sub-entity with their values.

import Foundation
import SiftEvaluation
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct MigrationConversionTests {
    typealias M = MigrationSupport

    static let things = """
        {"name": "Thing", "attributes": [{"name": "label", "type": "string"},
            {"name": "flag", "type": "boolean"}, {"name": "ratio", "type": "double"},
            {"name": "price", "type": "decimal"}, {"name": "tag", "type": "uuid"}, {"name": "link", "type": "uri"}]}
        """

    @Test func booleansDoublesDecimalsUUIDsAndURIsBecomeStrings() throws {
        let old = try M.model(Self.things)
        let path = Fixtures.temporaryPath()
        let rows: [(String, Bool?, Double?, String?, String?, String?)] = [
            ("a", true, 0.1, "12.345", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "https://example.com/a?b=1"),
            ("b", false, -2.5e-7, "0.1", "00000000-0000-0000-0000-000000000001", "file:///tmp/x"),
            ("c", nil, nil, nil, nil, nil),
        ]
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: old, path: path))
            for (label, flag, ratio, price, tag, link) in rows {
                let o = try c.insert("Thing")
                try o.setValue(label, forKey: "label")
                try o.setValue(flag, forKey: "flag")
                try o.setValue(ratio, forKey: "ratio")
                try o.setValue(price.flatMap { Decimal(string: $0) }, forKey: "price")
                try o.setValue(tag.flatMap { UUID(uuidString: $0) }, forKey: "tag")
                try o.setValue(link.flatMap { URL(string: $0) }, forKey: "link")
            }
            try c.save()
        }
        var text = Self.things
        for t in ["boolean", "double", "decimal", "uuid", "uri"] {
            text = text.replacingOccurrences(of: #""type": "\#(t)""#, with: #""type": "string""#)
        }
        let (before, store, after) = try M.migrate(path, old, to: try M.model(text))
        let expected = M.mapping(before, "Thing") { v in
            let row = rows.first { M.show(.string($0.0)) == v["label"] }!
            let strings: [String: String?] = [
                "flag": row.1.map { "\($0)" }, "ratio": row.2.map { "\($0)" }, "price": row.3,
                "tag": row.4, "link": row.5,
            ]
            for (key, s) in strings { v[key] = M.show(s.map(Value.string) ?? .null) }
        }
        #expect(after == expected)
        #expect(after["Thing"]?.values.contains { $0["ratio"] == M.show(.string("-2.5e-07")) } == true)
        for p in [
            "flag == 'true'", "price == '0.1' AND ratio BEGINSWITH '-'", "tag ENDSWITH '5F'", "link BEGINSWITH 'file:'",
            "flag == nil",
        ] {
            try M.expectFetchAgreesWithMemory(store, "Thing", p)
        }
    }

    static let teams = """
        {"name": "Team", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "members", "destination": "Player", "toMany": true, "inverse": "team"}]},
        {"name": "Player", "attributes": [{"name": "name", "type": "string"}],
         "relationships": [{"name": "team", "destination": "Team", "inverse": "members"}]}
        """

    /// A store of teams with `sizes[i]` players each; the team keys, in order.
    static func teamStore(_ model: ManagedObjectModel, sizes: [Int]) throws -> (path: String, keys: [Int64]) {
        let path = Fixtures.temporaryPath()
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        var teams: [ManagedObject] = []
        for (i, n) in sizes.enumerated() {
            let t = try c.insert("Team")
            try t.setValue("t\(i)", forKey: "name")
            for j in 0..<n {
                let p = try c.insert("Player")
                try p.setValue("p\(i)\(j)", forKey: "name")
                try p.setValue(t, forKey: "team")
            }
            teams.append(t)
        }
        try c.save()
        return (path, teams.map { $0.objectID.primaryKey! })
    }

    @Test func aNewMinimumCountIsCheckedAgainstEveryRow() throws {
        let old = try M.model(Self.teams)
        let new = try M.model(
            Self.teams.replacingOccurrences(of: #""toMany": true,"#, with: #""toMany": true, "minCount": 2,"#))
        // Teams of 3, 1 and 0 players: the last two fail, each by its key, and nothing changes.
        let (path, keys) = try Self.teamStore(old, sizes: [3, 1, 0])
        let before = try M.snapshot(try PersistentStore(model: old, path: path))
        let error = try #require(M.refusal(path, new))
        #expect(error.kind == .validation)
        #expect(Set(error.failures.compactMap(\.objectID?.primaryKey)) == Set(keys[1...]))
        #expect(error.failures.allSatisfy { $0.constraint == .minCount && $0.keys == ["members"] })
        #expect(error.failures.first?.message.hasSuffix("'members': holds fewer than the minimum 2 objects") == true)
        #expect(try M.snapshot(try PersistentStore(model: old, path: path)) == before)
        // Teams of 2 and 4: every row keeps the rule, and the store migrates.
        let (ok, _) = try Self.teamStore(old, sizes: [2, 4])
        let (was, store, after) = try M.migrate(ok, old, to: new)
        #expect(after == was)
        try M.expectFetchAgreesWithMemory(store, "Team", "members.@count >= 3")
    }

    /// Animal and its sub-entity Dog; `up` declares `age` on Animal, else on Dog.
    static func animals(ageOnParent up: Bool) -> String {
        let age = #"{"name": "age", "type": "integer32"}"#
        return """
            {"name": "Animal", "attributes": [{"name": "name", "type": "string"}\(up ? ", " + age : "")]},
            {"name": "Dog", "parent": "Animal", "attributes": [{"name": "barks", "type": "boolean"}\(up ? "" : ", " + age)]}
            """
    }

    @Test func attributesMoveUpAndDownTheHierarchy() throws {
        let down = try M.model(Self.animals(ageOnParent: false))
        let up = try M.model(Self.animals(ageOnParent: true))
        let path = Fixtures.temporaryPath()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: down, path: path))
            for (name, age) in [("Rex", 3), ("Kit", 9)] {
                let d = try c.insert("Dog")
                try d.setValue(name, forKey: "name")
                try d.setValue(age, forKey: "age")
            }
            try c.insert("Animal").setValue("Tom", forKey: "name")
            try c.save()
        }
        // Up: dogs keep their ages; the other animals' is nil.
        let (before, store, after) = try M.migrate(path, down, to: up)
        #expect(after == M.mapping(before, "Animal") { $0["age"] = M.show(.null) })
        try M.expectFetchAgreesWithMemory(store, "Animal", "age > 5 OR age == nil")
        withExtendedLifetime(store) {}
        // Down again: dogs keep their ages, the other animals lose theirs.
        let c = ManagedObjectContext(store: store)
        let tom = try #require(c.fetch(try FetchRequest("Animal", predicate: "name == 'Tom'")).first)
        try tom.setValue(40, forKey: "age")
        try c.save()
        let (_, again, restored) = try M.migrate(path, up, to: down)
        #expect(restored == before)
        try M.expectFetchAgreesWithMemory(again, "Dog", "age == 3")
    }
}
