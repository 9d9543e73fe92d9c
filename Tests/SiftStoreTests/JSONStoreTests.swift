// The JSON store: the schema inferred for each JSON shape, conflicting shapes left out, odd key
// names, values read back with their own storage classes, count columns, NFC, foreign keys.

import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax
import Testing

private func records(_ text: String) throws -> [JSONValue] {
    let reader = JSONReader(text)
    return try reader.parseSequence()
}

private func q(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

/// SQLite's plan for `sql`, one detail line per step.
private func queryPlan(_ store: JSONStore, _ sql: String, _ bindings: [SQLValue]) throws -> [String] {
    try store.query("EXPLAIN QUERY PLAN " + sql, bindings).map { row in
        if case .text(let t)? = row.last { return t }
        return ""
    }
}

/// One column of the root table, in record order.
private func rootColumn(_ store: JSONStore, _ column: String) throws -> [SQLValue] {
    let root = try #require(store.schema.entity(named: "Record"))
    return try store.query("SELECT \(q(column)) FROM \(q(root.table)) ORDER BY \(q(root.primaryKey))").map { $0[0] }
}

@Suite struct JSONStoreTests {
    @Test func scalarsKeepTheirStorageClasses() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"a": 1, "b": 2.5, "c": "x", "d": true}
                {"a": "str", "b": null, "d": false}
                {}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        #expect(root.attributes.map(\.name) == ["a", "b", "c", "d"])
        #expect(root.attributes.allSatisfy { $0.type == .any })
        #expect(root.relationships.isEmpty)
        #expect(try rootColumn(store, "a") == [.integer(1), .text("str"), .null])
        #expect(try rootColumn(store, "b") == [.double(2.5), .null, .null])
        #expect(try rootColumn(store, "c") == [.text("x"), .null, .null])
        #expect(try rootColumn(store, "d") == [.integer(1), .integer(0), .null])
        // The store's keys, given in record order from 1.
        #expect(try rootColumn(store, root.primaryKey) == [.integer(1), .integer(2), .integer(3)])
        #expect(store.unsupportedKeys.isEmpty)
    }

    @Test func datesBecomeDateColumns() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"t": {"$date": 5}, "u": {"$date": 1.5}}
                {"t": null, "u": {"$date": "no"}}
                {}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        let t = try #require(root.attribute(named: "t"))
        #expect(t.type == .date)
        #expect(t.encoding == .secondsSince1970)
        #expect(try rootColumn(store, t.column) == [.double(5), .null, .null])
        // A "$date" that is not a number is an ordinary object, so `u` mixes a date and an object:
        // a mixed key with a date column, a to-one relationship and a shape column.
        #expect(root.attribute(named: "u") == nil)
        let u = try #require(root.mixedKey(named: "u"))
        #expect(u.cases.map(\.tag) == [2, 3])
        #expect(u.cases[0].attribute?.type == .date)
        #expect(u.cases[1].relationship?.toOne != nil)
        #expect(try rootColumn(store, u.shapeColumn) == [.integer(2), .integer(3), .null])
        #expect(store.unsupportedKeys.isEmpty)
    }

    @Test func nestedObjectsAreToOneWithNullForeignKeys() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"addr": {"city": "Oslo", "geo": {"lat": 1}}}
                {"addr": null}
                {}
                {"addr": {"city": "Bergen"}}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        let addr = try #require(root.relationship(named: "addr"))
        guard case .toOne(let destination, let fk) = try addr.shape() else {
            Issue.record("not to-one")
            return
        }
        let address = try #require(store.schema.entity(named: destination))
        #expect(address.attribute(named: "city")?.type == .any)
        #expect(address.relationship(named: "geo")?.toOne != nil)
        let fks = try rootColumn(store, fk)
        #expect(fks[1] == .null && fks[2] == .null)
        let cities = try store.query(
            """
            SELECT a.\(q("city")) FROM \(q(root.table)) r LEFT JOIN \(q(address.table)) a
            ON a.\(q(address.primaryKey)) = r.\(q(fk)) ORDER BY r.\(q(root.primaryKey))
            """
        ).map { $0[0] }
        #expect(cities == [.text("Oslo"), .null, .null, .text("Bergen")])
    }

    @Test func arraysOfObjectsAreToManyWithCounts() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"kids": [{"n": 1}, {"n": 2}]}
                {"kids": []}
                {"kids": null}
                {}
                {"kids": [null, {"n": "x", "m": true}]}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        let kids = try #require(root.relationship(named: "kids"))
        guard case .toMany(let destination, let owner) = try kids.shape() else {
            Issue.record("not to-many")
            return
        }
        let count = try #require(kids.countColumn)
        #expect(try rootColumn(store, count) == [.integer(2), .integer(0), .null, .null, .integer(2)])
        let kid = try #require(store.schema.entity(named: destination))
        #expect(kid.attributes.map(\.name) == ["n", "m"])
        let rows = try store.query(
            "SELECT \(q(owner)), \(q("n")), \(q("m")) FROM \(q(kid.table)) ORDER BY \(q(kid.primaryKey))")
        #expect(
            rows == [
                [.integer(1), .integer(1), .null], [.integer(1), .integer(2), .null],
                [.integer(5), .null, .null], [.integer(5), .text("x"), .integer(1)],
            ])
    }

    @Test func arraysOfScalarsAreValueTablesWithCounts() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"tags": ["a", 1, null], "when": [{"$date": 3}], "none": []}
                {"tags": []}
                {"none": null}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        let tags = try #require(root.relationship(named: "tags"))
        guard case .values(let table) = try tags.shape() else {
            Issue.record("not values")
            return
        }
        #expect(table.type == .any)
        #expect(try rootColumn(store, try #require(tags.countColumn)) == [.integer(3), .integer(0), .null])
        let values = try store.query(
            "SELECT \(q(table.owner)), \(q(table.column)) FROM \(q(table.table)) ORDER BY rowid")
        #expect(values == [[.integer(1), .text("a")], [.integer(1), .integer(1)], [.integer(1), .null]])
        let when = try #require(root.relationship(named: "when")?.values)
        #expect(when.type == .date && when.encoding == .secondsSince1970)
        #expect(try store.query("SELECT \(q(when.column)) FROM \(q(when.table))") == [[.double(3)]])
        // Only empty arrays: a value table of type any.
        let none = try #require(root.relationship(named: "none"))
        #expect(none.values?.type == .any)
        #expect(try rootColumn(store, try #require(none.countColumn)) == [.integer(0), .null, .null])
    }

    @Test func conflictingShapesAreLeftOut() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"x": {"a": 1}, "y": [[1]], "z": [{"a": 1}], "o": {"p": 1}, "ok": 1}
                {"x": 3, "z": [2], "o": {"p": [1]}}
                """#))
        let root = try #require(store.schema.entity(named: "Record"))
        #expect(root.attribute(named: "ok") != nil)
        #expect(root.relationship(named: "y") == nil && root.mixedKey(named: "y") == nil)
        #expect(root.relationship(named: "z") == nil && root.mixedKey(named: "z") == nil)
        // Arrays of arrays, and arrays whose elements disagree, are the only conflicts left.
        #expect(Set(store.unsupportedKeys.keys) == ["y", "z"])
        #expect(store.unsupportedKeys["y"]?.contains("record 0") == true)
        #expect(store.unsupportedKeys["z"]?.contains("record 1") == true)
        #expect(store.unsupportedKeys["y"]?.contains("an array of arrays") == true)
        #expect(store.unsupportedKeys["z"]?.contains("mixing objects, dates and scalars") == true)
        // An object in one record and a number in another: a mixed key.
        let x = try #require(root.mixedKey(named: "x"))
        #expect(x.cases.map(\.tag) == [1, 3])
        #expect(try rootColumn(store, x.shapeColumn) == [.integer(3), .integer(1)])
        #expect(try rootColumn(store, try #require(x.cases[0].attribute?.column)) == [.null, .integer(3)])
        let o = try #require(root.relationship(named: "o")?.toOne)
        let p = try #require(store.schema.entity(named: o)?.mixedKey(named: "p"))
        #expect(p.cases.map(\.tag) == [1, 4])
        #expect(try rootColumn(store, "ok") == [.integer(1), .null])
    }

    @Test func recordsThatAreNotObjectsKeepTheirValues() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"a": 1} "s" 2.5 null [1, "x"] {"$date": 7} []
                """#))
        #expect(store.nonObjectRecords == [1, 2, 3, 4, 5, 6])
        let root = try #require(store.schema.entity(named: "Record"))
        let shape = try #require(root.selfShape)
        #expect(Set(shape.cases.map(\.tag)) == [1, 2, 3, 4])
        #expect(shape.cases.first { $0.tag == 3 }?.object == true)
        #expect(
            try rootColumn(store, shape.shapeColumn) == [
                .integer(3), .integer(1), .integer(1), .null, .integer(4), .integer(2), .integer(4),
            ])
        let value = try #require(shape.cases.first { $0.tag == 1 }?.attribute)
        #expect(try rootColumn(store, value.column) == [.null, .text("s"), .double(2.5), .null, .null, .null, .null])
        let array = try #require(shape.cases.first { $0.tag == 4 }?.relationship)
        #expect(
            try rootColumn(store, try #require(array.countColumn)) == [
                .null, .null, .null, .null, .integer(2), .null, .integer(0),
            ])
        #expect(try rootColumn(store, "a") == [.integer(1), .null, .null, .null, .null, .null, .null])
        // The SQL back-end answers SELF as memory does: lenient here, as memory raises on some
        // records for some of these (`ANY SELF` of an object), which strict SQL reports as memory does.
        let lowering = try SQLLowering(schema: store.schema, entity: "Record")
        for (format, expected) in [
            ("SELF == nil", [3]), ("SELF == 2.5", [2]), ("ANY SELF == 'x'", [4]),
            ("SELF == 's' OR a == 1", [0, 1]), ("SELF[0] == 1", [4]), ("SELF == {1, 'x'}", [4]),
        ] {
            let q = try lowering.select(try PredicateSyntax.parse(format), lenient: true)
            #expect(try store.recordIndices(sql: q.sql, bindings: q.bindings) == expected, "\(format): \(q)")
        }
        let strict = try lowering.select(try PredicateSyntax.parse("ANY SELF == 'x'"))
        let error = #expect(throws: StoreError.self) {
            try store.recordIndices(sql: strict.sql, bindings: strict.bindings)
        }
        #expect(error?.evaluationError?.id == "not-a-collection")
    }

    @Test func oddKeyNamesGetDistinctQuotedColumns() throws {
        let keys = [
            "id", "_id", "a b", "quo\"te", "dot.ted", "ünï", "Name", "name", "x@count", "x", "Record.kid", "kid", "",
        ]
        let fields = keys.enumerated().map { i, k -> String in
            let key = "\"" + k.replacingOccurrences(of: "\"", with: "\\\"") + "\""
            switch k {
            case "x": return key + ": [1, 2]"
            case "kid": return key + #": {"v": 1}"#
            case "Record.kid": return key + #": {"w": 2}"#
            default: return key + ": \(i)"
            }
        }
        let store = try JSONStore(records: try records("{" + fields.joined(separator: ", ") + "}"))
        let root = try #require(store.schema.entity(named: "Record"))
        let columns =
            root.attributes.map(\.column) + root.relationships.compactMap { $0.foreignKey ?? nil }
            + root.relationships.compactMap(\.countColumn) + [root.primaryKey]
        #expect(Set(columns.map { $0.lowercased() }).count == columns.count, "\(columns)")
        #expect(!keys.contains(root.primaryKey))
        for (i, k) in keys.enumerated() where !["x", "kid", "Record.kid"].contains(k) {
            let a = try #require(root.attribute(named: k), "\(k)")
            #expect(try rootColumn(store, a.column) == [.integer(Int64(i))], "\(k)")
        }
        #expect(try rootColumn(store, try #require(root.relationship(named: "x")?.countColumn)) == [.integer(2)])
        let tables = store.schema.entities.map(\.table)
        #expect(Set(tables.map { $0.lowercased() }).count == tables.count, "\(tables)")
    }

    @Test func textIsNFCNormalized() throws {
        let store = try JSONStore(records: try records("{\"s\": \"Jo\u{0065}\u{0301}\", \"t\": [\"e\u{0301}\"]}"))
        #expect(try rootColumn(store, "s") == [.text("Jo\u{e9}")])
        let rows = try store.query("SELECT hex(\(q("s"))) FROM \(q("Record"))")
        #expect(rows == [[.text("4A6FC3A9")]])
        let t = try #require(store.schema.entity(named: "Record")?.relationship(named: "t")?.values)
        #expect(try store.query("SELECT hex(value) FROM \(q(t.table))") == [[.text("C3A9")]])
    }

    @Test func recordIndicesRunsAQuery() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"name": "Jörg"} {"name": "anna"} {"name": "JOANNA"} 5 {"name": null}
                """#))
        #expect(store.nonObjectRecords == [3])
        let root = try #require(store.schema.entity(named: "Record"))
        let sql = "SELECT \(q(root.primaryKey)) FROM \(q(root.table)) WHERE sift_text(1, \(q("name")), ?, 3) ORDER BY 1"
        #expect(try store.recordIndices(sql: sql, bindings: [.text("jo")]) == [0, 2])
        #expect(
            try store.recordIndices(
                sql: "SELECT \(q(root.primaryKey)) FROM \(q(root.table)) ORDER BY 1 DESC", bindings: []) == [
                    4, 3, 2, 1, 0,
                ])
        #expect(throws: StoreError.self) { try store.recordIndices(sql: "SELECT 'a'", bindings: []) }
    }

    @Test func scalarAndForeignKeyColumnsAreIndexed() throws {
        let store = try JSONStore(records: try records(#"{"n": 1, "o": {"p": 2}, "k": [{"q": 1}], "v": [1]}"#))
        let root = try #require(store.schema.entity(named: "Record"))
        let plan = try queryPlan(store, "SELECT 1 FROM \(q(root.table)) WHERE \(q("n")) = ?", [.integer(1)])
        #expect(plan.contains { $0.contains("USING") && $0.contains("INDEX") }, "\(plan)")
        let kidName = try #require(root.relationship(named: "k")?.toMany)
        let kid = try #require(store.schema.entity(named: kidName))
        let owner = try #require(root.relationship(named: "k")?.foreignKey)
        let kidPlan = try queryPlan(store, "SELECT 1 FROM \(q(kid.table)) WHERE \(q(owner)) = ?", [.integer(0)])
        #expect(kidPlan.contains { $0.contains("INDEX") }, "\(kidPlan)")
        let v = try #require(root.relationship(named: "v")?.values)
        let valuePlan = try queryPlan(store, "SELECT 1 FROM \(q(v.table)) WHERE \(q(v.owner)) = ?", [.integer(0)])
        #expect(valuePlan.contains { $0.contains("INDEX") }, "\(valuePlan)")
    }

    /// The lowered subqueries over arrays find each row's elements through the owner's index:
    /// a full scan of the elements per row (an owner column without INTEGER affinity cannot use
    /// its index against an INTEGER key) made 20,000 records take minutes.
    @Test func arrayElementsAreSearchedByOwner() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"k": [{"q": 1}, {"q": 7}], "v": ["a", "b"]}
                {"k": [], "v": []}
                """#))
        let lowering = try SQLLowering(schema: store.schema, entity: "Record")
        for format in [
            "ANY k.q < 5", "k.@avg.q > 2", "SUBQUERY(k, $x, $x.q > 2).@count == 1", "ANY v == 'a'", "v.@count == 2",
        ] {
            let q = try lowering.select(try PredicateSyntax.parse(format))
            let plan = try queryPlan(store, q.sql, q.bindings)
            #expect(!plan.contains { $0.hasPrefix("SCAN") && !$0.hasPrefix("SCAN t0") }, "\(format): \(plan)")
            #expect(try store.recordIndices(sql: q.sql, bindings: q.bindings) == [0], "\(format)")
        }
    }

    @Test func keysThatAreAlwaysNullAreNullColumns() throws {
        let store = try JSONStore(records: try records(#"{"a": null, "b": null} {"b": 2}"#))
        let root = try #require(store.schema.entity(named: "Record"))
        #expect(root.attributes.map(\.name) == ["a", "b"])
        #expect(try rootColumn(store, "a") == [.null, .null])
        #expect(try rootColumn(store, "b") == [.null, .integer(2)])
    }

    @Test func deepNestingReachesEveryLevel() throws {
        let store = try JSONStore(
            records: try records(
                #"""
                {"a": {"b": [{"c": [1, 2], "d": {"e": "x"}}, {"c": null}]}}
                {"a": {"b": [{"c": [3]}]}}
                """#))
        let a = try #require(store.schema.entity(named: "Record")?.relationship(named: "a")?.toOne)
        let aEntity = try #require(store.schema.entity(named: a))
        let b = try #require(aEntity.relationship(named: "b"))
        let bName = try #require(b.toMany)
        let bEntity = try #require(store.schema.entity(named: bName))
        let c = try #require(bEntity.relationship(named: "c"))
        let cCount = try #require(c.countColumn)
        let counts = try store.query(
            "SELECT \(q(cCount)) FROM \(q(bEntity.table)) ORDER BY \(q(bEntity.primaryKey))")
        #expect(counts == [[.integer(2)], [.null], [.integer(1)]])
        let valueTable = try #require(c.values)
        let values = try store.query(
            "SELECT \(q(valueTable.owner)), \(q(valueTable.column)) FROM \(q(valueTable.table)) ORDER BY rowid")
        #expect(values == [[.integer(0), .integer(1)], [.integer(0), .integer(2)], [.integer(2), .integer(3)]])
        let dName = try #require(bEntity.relationship(named: "d")?.toOne)
        let dEntity = try #require(store.schema.entity(named: dName))
        #expect(try store.query("SELECT \(q("e")) FROM \(q(dEntity.table))") == [[.text("x")]])
        // The inferred schema survives its own JSON form.
        #expect(try Schema(json: store.schema.jsonString) == store.schema)
    }

    @Test func duplicateKeysLastWins() throws {
        let store = try JSONStore(records: try records(#"{"a": 1, "a": "two"}"#))
        #expect(try rootColumn(store, "a") == [.text("two")])
    }
}

@Suite struct JSONStoreRootConflictTests {
    /// Records that are arrays of arrays leave `SELF` out of the tables, and only that: the keys of
    /// the object records around them, before and after, still get their columns.
    @Test func keysAroundAConflictingRecordKeepTheirColumns() throws {
        let store = try JSONStore(records: try records(#"{"a": 1} [[1]] {"b": "x"} 5"#))
        let root = try #require(store.schema.entity(named: "Record"))
        #expect(root.attribute(named: "a") != nil)
        #expect(root.attribute(named: "b") != nil)
        #expect(store.unsupportedKeys["SELF"]?.contains("an array of arrays in record 1") == true)
        #expect(store.nonObjectRecords == [1, 3])
        #expect(try rootColumn(store, root.attribute(named: "b")!.column) == [.null, .null, .text("x"), .null])
    }
}
