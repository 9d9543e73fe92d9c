// Transformable attributes on disk: every kind of value survives a save and a fetch from a real
// store file exactly (an integer 1 apart from a double 1.0, NaN, dates, data, nested values), in
// `ValueCodec`'s binary form; the JSON text earlier versions stored still reads as it always did
// and is rewritten in the binary form when saved again; a damaged document is an error.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct TransformableStorageTests {
    static let values: [Value] = [
        .integer(1), .double(1), .double(-0.0), .double(.nan), .double(.infinity), .integer(.min), .integer(.max),
        .bool(true), .bool(false), .string("1"), .string(""), .string(String(repeating: "ü", count: 100_000)),
        .decimal(Decimal(string: "0.1")!), .date(Date(timeIntervalSinceReferenceDate: 0.25)), .data(Data([0, 1, 255])),
        .array([.integer(1), .double(1), .null, .array([.integer(2), .string("x")]), .dictionary(["k": .double(2)])]),
        .dictionary([
            "int": .integer(1), "double": .double(1), "nested": .dictionary(["d": .date(.distantPast)]), "none": .null,
        ]),
    ]

    /// The same bytes in `ValueCodec`'s form (so the same kinds, to the bit); a dictionary's
    /// members key by key, since its order is its own.
    static func same(_ a: Value, _ b: Value) -> Bool {
        if case .dictionary(let x) = a, case .dictionary(let y) = b {
            return x.count == y.count
                && x.allSatisfy { k, v in y[k].map { ValueCodec.encode($0) == ValueCodec.encode(v) } ?? false }
        }
        return ValueCodec.encode(a) == ValueCodec.encode(b)
    }

    /// The Person table and its `settings` column, to read and write the stored bytes directly.
    static func settingsColumn(_ model: ManagedObjectModel) throws -> (table: String, column: String) {
        let person = try #require(model.resolved["Person"])
        let column = try #require(person.attributes.first { $0.name == "settings" }?.column)
        return (PersistentStore.q(person.table), PersistentStore.q(column))
    }

    @Test func everyKindSurvivesASaveAndAFetchFromAFile() throws {
        let path = Fixtures.temporaryPath()
        let model = try Fixtures.companyModel()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            for (i, v) in Self.values.enumerated() {
                let p = try c.insert("Person")
                try p.setValue("p\(i)", forKey: "name")
                try p.setValue(v, forKey: "settings")
            }
            try c.save()
        }
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        for (i, v) in Self.values.enumerated() {
            let p = try #require(try c.fetch(try FetchRequest("Person", predicate: "name == 'p\(i)'")).first)
            let back = try #require(p["settings"])
            #expect(Self.same(back, v), "\(v) came back as \(back)")
        }
        // The column holds the binary form: a tag byte first (3 an integer, 4 a double), not JSON.
        let (table, column) = try Self.settingsColumn(model)
        let first = try store.query("SELECT \(column) FROM \(table) WHERE name IN ('p0', 'p1') ORDER BY name")
        #expect(first == [[.blob(ValueCodec.encode(.integer(1)))], [.blob(ValueCodec.encode(.double(1)))]])
    }

    @Test func jsonFromEarlierVersionsStillReadsAndIsRewritten() throws {
        let path = Fixtures.temporaryPath()
        let model = try Fixtures.companyModel()
        let (table, column) = try Self.settingsColumn(model)
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            for name in ["blob", "text", "damaged"] {
                let p = try c.insert("Person")
                try p.setValue(name, forKey: "name")
                try p.setValue(0, forKey: "settings")
            }
            try c.save()
            // What JSONSerialization wrote for a transformable before the binary form.
            let json = #"{"a":1,"b":1.5,"d":{"$date":978307200},"l":[true,null,"s"],"x":{"$data":"AAH/"}}"#
            _ = try c.store.query("UPDATE \(table) SET \(column) = ? WHERE name = 'blob'", [.blob(Array(json.utf8))])
            _ = try c.store.query("UPDATE \(table) SET \(column) = ? WHERE name = 'text'", [.text("[1, 2.5]")])
            _ = try c.store.query("UPDATE \(table) SET \(column) = ? WHERE name = 'damaged'", [.blob([3, 1, 0])])
        }
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        func settings(_ name: String) throws -> ManagedObject {
            try #require(try c.fetch(try FetchRequest("Person", predicate: "name == '\(name)'")).first)
        }
        let old = try settings("blob")
        let expected: Value = .dictionary([
            "a": .integer(1), "b": .double(1.5), "d": .date(Date(timeIntervalSinceReferenceDate: 0)),
            "l": .array([.bool(true), .null, .string("s")]), "x": .data(Data([0, 1, 255])),
        ])
        #expect(Self.same(try #require(old["settings"]), expected), "\(old["settings"] ?? .null)")
        #expect(Self.same(try #require(try settings("text")["settings"]), .array([.integer(1), .double(2.5)])))
        // Bytes neither form reads are nil, as unreadable JSON always was.
        #expect(try settings("damaged")["settings"] == .null)
        // Saved again, the old value is written in the binary form.
        try old.setValue(old["settings"], forKey: "settings")
        try old.setValue(7, forKey: "age")
        try c.save()
        let rows = try store.query("SELECT \(column) FROM \(table) WHERE name = 'blob'")
        guard case .blob(let bytes)? = rows.first?.first else {
            Issue.record("not a BLOB: \(rows)")
            return
        }
        #expect(bytes.first == ValueCodec.Tag.dictionary.rawValue)
        #expect(Self.same(try ValueCodec.decode(bytes), expected))
    }

    @Test func aDamagedDocumentIsAnErrorNotNil() throws {
        let path = Fixtures.temporaryPath()
        let model = try DocumentEntityTests.model()
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
            try c.insert("Person").setDocument(.dictionary(["name": .string("Ann")]))
            try c.save()
            _ = try c.store.query(
                "UPDATE \(PersistentStore.q(try #require(model.resolved["Person"]).table)) SET Z_DOC = ?",
                [.blob([8, 9])])
        }
        let c = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        #expect { _ = try c.fetch(FetchRequest("Person")).first?.document } throws: { error in
            (error as? StoreError)?.kind == .sqlite && "\(error)".contains("unreadable")
        }
    }
}
