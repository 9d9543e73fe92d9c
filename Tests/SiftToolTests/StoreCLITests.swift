// `sift store` run as a subprocess on real SQLite files in temporary directories: model inference
// (types chosen, notes), create + import + query against `sift filter` on the same file (the
// store's output must be filter's, up to what the store cannot keep: a null and a missing key are
// both nil), all-or-nothing imports that name the failing record, predicate errors with carets,
// batch update and delete, dictionary fetches (properties, distinct, groups, aggregates) and
// --explain.

import Foundation
import SiftJSON
import Testing

@testable import SiftTool

private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
private let peopleFile = root.appendingPathComponent("Samples/people.json").path

/// A temporary directory for one test's files, removed when the test ends.
private final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sift-store-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let p = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        return p
    }

    /// infer-model, create and import `data`; returns the store's path.
    func store(from data: String, name: String = "db.sqlite", expectInserted: Int? = nil) throws -> String {
        let model = try runSift(["store", "infer-model", data])
        try #require(model.status == 0, "\(model.stderr)")
        let modelFile = try write(name + ".model.json", model.stdout)
        let db = path(name)
        let created = try runSift(["store", "create", db, "--model", modelFile])
        try #require(created.status == 0, "\(created.stderr)")
        let imported = try runSift(["store", "import", db, "Record", data])
        try #require(imported.status == 0, "\(imported.stderr)")
        if let expectInserted { #expect(imported.stdout == "\(expectInserted)\n") }
        return db
    }
}

/// NDJSON with every null object member dropped (recursively): the store keeps no difference
/// between a null and a missing key, and prints nil as missing.
private func withoutNulls(_ ndjson: String) throws -> String {
    func strip(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let members): return .object(members.filter { $0.1 != .null }.map { ($0.0, strip($0.1)) })
        case .array(let items): return .array(items.map(strip))
        default: return v
        }
    }
    return try ndjson.split(separator: "\n").map { try strip(JSONReader.parse(String($0))).text + "\n" }.joined()
}

/// The entities of a printed model, by name: attribute name → (type, collection), relationship
/// name → (destination, to-many, inverse, delete rule).
private struct ModelSummary {
    var attributes: [String: [String: (type: String, collection: Bool)]] = [:]
    var relationships: [String: [String: (destination: String, toMany: Bool, inverse: String?, deleteRule: String)]] =
        [:]

    init(_ json: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let entities = try #require(object["entities"] as? [[String: Any]])
        for e in entities {
            let name = try #require(e["name"] as? String)
            var attrs: [String: (String, Bool)] = [:]
            for a in e["attributes"] as? [[String: Any]] ?? [] {
                attrs[a["name"] as! String] = (a["type"] as! String, a["collection"] as? Bool ?? false)
            }
            var rels: [String: (String, Bool, String?, String)] = [:]
            for r in e["relationships"] as? [[String: Any]] ?? [] {
                rels[r["name"] as! String] = (
                    r["destination"] as! String, r["toMany"] as? Bool ?? false,
                    r["inverse"] as? String, r["deleteRule"] as? String ?? "nullify"
                )
            }
            attributes[name] = attrs
            relationships[name] = rels
        }
    }
}

/// Records that disagree in the ways real files do: keys missing in some records and null in
/// others, integers beside doubles, numbers beside strings, nested objects with their own missing
/// keys, arrays of objects and of scalars, dates. Key order is the same in every record.
private let messy = """
    {"id": 1, "v": 1, "code": 7, "when": {"$date": 1700000000}, "geo": {"lat": 59.9, "city": "Oslo"}, "items": [{"sku": "a", "qty": 2}], "tags": ["x", "y"], "ok": true}
    {"id": 2, "v": 1.0, "code": "A7", "when": {"$date": 0.5}, "geo": null, "items": [], "tags": [], "ok": false}
    {"id": 3, "v": 2.5, "geo": {"city": "Bergen"}, "items": [{"sku": "b"}, {"sku": "c", "qty": 10, "note": "rush"}], "tags": ["y"]}
    {"id": 4, "code": null, "when": null, "geo": {}, "items": [{"qty": 1}], "tags": null, "ok": null}
    {"id": 5, "v": -3, "code": 12.75, "items": [{"sku": "a", "qty": 5}], "tags": ["z", "x"], "ok": true}

    """

@Suite struct StoreCLITests {
    // MARK: infer-model

    @Test func inferModelChoosesTypesAndExplainsDisagreements() throws {
        let scratch = try Scratch()
        let data = try scratch.write(
            "mixed.ndjson",
            """
            {"n": 1, "x": 1, "d": 2.5, "s": "a", "b": true, "t": {"$date": 5}, "mix": 1, "flag": true, "tags": ["a"], "o": {"k": 1}, "rows": [{"q": 1}], "nums": [1, 2], "none": null}
            {"n": 2, "x": 1.5, "d": 3.0, "s": "b", "b": false, "mix": "one", "flag": 0, "tags": "b", "o": null, "rows": [{"q": 2.5, "r": "x"}], "nums": [3.5]}
            {"n": 3, "rows": null}
            """)
        let r = try runSift(["store", "infer-model", data])
        #expect(r.status == 0, "\(r.stderr)")
        let m = try ModelSummary(r.stdout)
        let record = try #require(m.attributes["Record"])
        #expect(record["n"]?.type == "integer64")
        #expect(record["x"]?.type == "dynamic")  // 1 beside 1.5: each keeps its kind
        #expect(record["d"]?.type == "double")
        #expect(record["s"]?.type == "string")
        #expect(record["b"]?.type == "boolean")
        #expect(record["t"]?.type == "date")
        #expect(record["mix"]?.type == "dynamic")  // numbers beside strings
        #expect(record["flag"]?.type == "mixed")  // booleans beside numbers
        #expect(record["tags"]?.type == "mixed")  // arrays beside strings
        #expect(record["none"]?.type == "dynamic")  // null everywhere: nil, and queryable in SQL
        #expect(record["nums"]?.type == "dynamic" && record["nums"]?.collection == true)
        #expect(record["tags"]?.collection == false)
        let rels = try #require(m.relationships["Record"])
        #expect(
            rels["o"]?.destination == "Record_o" && rels["o"]?.toMany == false && rels["o"]?.deleteRule == "cascade")
        #expect(
            rels["rows"]?.destination == "Record_rows" && rels["rows"]?.toMany == true
                && rels["rows"]?.deleteRule == "cascade")
        #expect(r.stdout.contains("\"allowsNil\" : true"), "\(r.stdout)")
        // The relationships back: to-many from a nested object's entity, to-one from an array's.
        #expect(m.relationships["Record_o"]?["owner"]?.toMany == true)
        #expect(m.relationships["Record_o"]?["owner"]?.inverse == "o")
        #expect(m.relationships["Record_rows"]?["owner"]?.toMany == false)
        #expect(m.relationships["Record_rows"]?["owner"]?.deleteRule == "nullify")
        #expect(m.attributes["Record_rows"]?["q"]?.type == "dynamic")
        #expect(m.attributes["Record_rows"]?["r"]?.type == "string")
        // One note per key decided, naming the record where the second kind appears.
        let notes = r.stderr.split(separator: "\n").map(String.init)
        #expect(notes.allSatisfy { $0.hasPrefix("note: key '") }, "\(r.stderr)")
        #expect(
            notes.contains(
                "note: key 'tags': arrays in some records, strings in others (record 1); stored as mixed (each value kept as it is, and queried in SQL by its shape)"
            ), "\(r.stderr)")
        #expect(
            notes.contains {
                $0.hasPrefix(
                    "note: key 'mix': integers in some records, strings in others (record 1); stored as dynamic")
            }, "\(r.stderr)")
        #expect(
            notes.contains {
                $0.hasPrefix(
                    "note: key 'flag': booleans in some records, integers in others (record 1); stored as mixed")
            }, "\(r.stderr)")
        #expect(
            notes.contains {
                $0.hasPrefix(
                    "note: key 'x': integers in some records, non-integer numbers in others (record 1); stored as dynamic"
                )
            }, "\(r.stderr)")
        #expect(notes.contains { $0.hasPrefix("note: key 'rows.q': ") && $0.contains("dynamic") }, "\(r.stderr)")
        // An array of objects missing or null in some records: a to-many that allows nil, no note.
        #expect(!notes.contains { $0.contains("key 'rows':") }, "\(r.stderr)")
        #expect(notes.contains { $0.hasPrefix("note: key 'none': ") }, "\(r.stderr)")
        #expect(
            !notes.contains { $0.contains("key 'n'") || $0.contains("key 'd'") || $0.contains("key 'o'") },
            "\(r.stderr)")
        // The model it prints is one a store accepts.
        let modelFile = try scratch.write("m.json", r.stdout)
        let created = try runSift(["store", "create", scratch.path("db.sqlite"), "--model", modelFile])
        #expect(created.status == 0, "\(created.stderr)")
        let imported = try runSift(["store", "import", scratch.path("db.sqlite"), "Record", data])
        #expect(imported.status == 0 && imported.stdout == "3\n", "\(imported.stderr)")
    }

    @Test func inferModelTakesAnyKeyAsAPropertyName() throws {
        let scratch = try Scratch()
        let data = try scratch.write(
            "odd.json",
            #"[{"ok": 1, "a": 1, "x\"; DROP TABLE Record; --": 1}, {"ok": 2, "first name": "Ann", "A": 2, "nested thing": {"Z_x": 1}}]"#
        )
        let r = try runSift(["store", "infer-model", data])
        #expect(r.status == 0, "\(r.stderr)")
        let m = try ModelSummary(r.stdout)
        let record = try #require(m.attributes["Record"])
        #expect(record["first name"]?.type == "string")
        #expect(record["a"]?.type == "integer64" && record["A"]?.type == "integer64")
        // Entity names stay identifiers: the key's other characters become '_'.
        #expect(m.attributes["Record_nested_thing"]?["Z_x"]?.type == "integer64", "\(r.stdout)")
        // The model is one a store accepts, and the odd keys query through SQL as in memory.
        let modelFile = try scratch.write("m.json", r.stdout)
        let db = scratch.path("db.sqlite")
        #expect(try runSift(["store", "create", db, "--model", modelFile]).status == 0)
        let imported = try runSift(["store", "import", db, "Record", data])
        #expect(imported.status == 0 && imported.stdout == "2\n", "\(imported.stderr)")
        // A key no record has is an error (the inferred model knows every key it saw); see
        // StoreKeyCLITests.
        for p in [
            #"#"first name" == 'Ann'"#, "A == 2", "a == 1", #"#"nested thing".Z_x == 1"#,
            #"#"x\"; DROP TABLE Record; --" == 1"#, "ok == 2",
        ] {
            let store = try runSift(["store", "query", db, "Record", p])
            let filter = try runSift(["filter", p, data])
            #expect(
                store.status == 0 && store.stdout == filter.stdout && store.stdout.contains("ok"),
                "\(p): \(store.stderr)\n\(store.stdout)\n\(filter.stdout)")
        }
        let notObject = try runSift(["store", "infer-model", "-"], stdin: "{\"a\": 1}\n[1]\n")
        #expect(notObject.status == 1)
        #expect(notObject.stderr.contains("record 1 is not a JSON object"), "\(notObject.stderr)")
        let named = try runSift(["store", "infer-model", "--entity", "Person", "-"], stdin: #"{"a": {"b": 1}}"#)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("\"Person_a\""), "\(named.stdout)")
    }

    /// Keys whose records say little (null everywhere, empty arrays only, arrays of objects that
    /// are null or missing in some records) are inferred as types SQL reads, and every query on
    /// them prints what `sift filter` prints, with nothing left to memory.
    @Test func sparseKeysQueryInSQLAsInMemory() throws {
        let scratch = try Scratch()
        let data = try scratch.write(
            "sparse.ndjson",
            """
            {"id": 1, "nothing": null, "empty": [], "nulls": [null], "rows": [{"q": 1}, {"q": 2}]}
            {"id": 2, "empty": [], "rows": []}
            {"id": 3, "nothing": null, "empty": null, "nulls": [null, null], "rows": null}
            {"id": 4}
            """)
        let r = try runSift(["store", "infer-model", data])
        #expect(r.status == 0, "\(r.stderr)")
        let m = try ModelSummary(r.stdout)
        #expect(m.attributes["Record"]?["nothing"]?.type == "dynamic")
        #expect(
            m.attributes["Record"]?["empty"]?.type == "dynamic" && m.attributes["Record"]?["empty"]?.collection == true)
        #expect(
            m.attributes["Record"]?["nulls"]?.type == "dynamic" && m.attributes["Record"]?["nulls"]?.collection == true)
        let modelFile = try scratch.write("m.json", r.stdout)
        let db = scratch.path("db.sqlite")
        #expect(try runSift(["store", "create", db, "--model", modelFile]).status == 0)
        let imported = try runSift(["store", "import", db, "Record", data])
        #expect(imported.status == 0, "\(imported.stderr)")
        // The store leaves nils out of what it prints and `sift filter` prints records as read, so
        // the records are compared by their ids.
        func ids(_ out: String) -> [String] {
            out.split(separator: "\n").map { line in
                String(line.split(separator: ",")[0].filter { $0.isNumber })
            }
        }
        for p in [
            "nothing == nil", "nothing != nil", "empty == nil", "empty.@count == 0", "NOT (empty.@count == 0)",
            "nulls.@count == 2",
            "ANY nulls == nil", "rows == nil", "rows != nil", "rows.@count == 0", "NOT (rows.@count > 1)",
            "ANY rows.q == 2",
            "rows.@sum.q == 3", "SUBQUERY(rows, $r, $r.q > 1).@count == 0",
        ] {
            let store = try runSift(["store", "query", db, "Record", p, "--sort", "id"])
            let filter = try runSift(["filter", p, data])
            #expect(
                store.status == 0 && filter.status == 0 && ids(store.stdout) == ids(filter.stdout),
                "\(p): \(store.stderr)\n\(store.stdout)\n\(filter.stdout)")
            let explained = try runSift(["store", "query", db, "Record", p, "--explain"])
            #expect(explained.stdout.contains("residual: none"), "\(p): \(explained.stdout)")
        }
    }

    /// `infer-model --document`: records of any shape become one document entity; imported and
    /// queried, every predicate gives `sift filter`'s records, in SQL, and documents print back
    /// as they were read.
    /// A page (`--limit`, `--offset`) of a query memory raises on past the page: the error,
    /// as `sift filter` gives it, and nothing printed (LimitedFetchErrorTests for the library).
    @Test func aPageRaisesWhereMemoryRaisesPastIt() throws {
        let scratch = try Scratch()
        let data = try scratch.write("r.ndjson", "{\"age\":1}\n{\"age\":2}\n{\"name\":\"x\"}\n{\"age\":5}\n")
        let model = try runSift(["store", "infer-model", data])
        let db = scratch.path("db.sqlite")
        #expect(try runSift(["store", "create", db, "--model", try scratch.write("m.json", model.stdout)]).status == 0)
        #expect(try runSift(["store", "import", db, "Record", data]).status == 0)
        let filter = try runSift(["filter", "(age + 4) >= 6", data])
        #expect(filter.status == 1 && filter.stderr.contains("+ needs numbers, got nil"), "\(filter.stderr)")
        for page in [
            ["--limit", "1"], ["--limit", "0"], ["--offset", "1", "--limit", "1"], ["--count", "--limit", "1"],
        ] {
            let r = try runSift(["store", "query", db, "Record", "(age + 4) >= 6"] + page)
            #expect(r.status == 1 && r.stdout.isEmpty, "\(page): \(r.stdout)")
            #expect(r.stderr.contains("Record 3: 1:1: error: + needs numbers, got nil"), "\(page): \(r.stderr)")
        }
    }

    @Test func documentModelsTakeAnyJSON() throws {
        let scratch = try Scratch()
        let data = try scratch.write(
            "messy.ndjson",
            """
            {"id": 1, "mix": "a", "kids": [{"n": 1}, null], "x": 1.0, "deep": [[1]]}
            {"id": 2, "mix": {"city": "Oslo"}, "kids": null, "x": 1}
            {"id": 3, "mix": [1, 2], "kids": [], "when": {"$date": 5}}
            {"id": 4}
            """)
        let r = try runSift(["store", "infer-model", "--document", data])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"document\""), "\(r.stdout)")
        #expect(r.stderr.contains("note: key 'deep': an array of arrays"), "\(r.stderr)")
        let modelFile = try scratch.write("m.json", r.stdout)
        let db = scratch.path("db.sqlite")
        #expect(try runSift(["store", "create", db, "--model", modelFile]).status == 0)
        let imported = try runSift(["store", "import", db, "Record", data])
        #expect(imported.status == 0 && imported.stdout == "4\n", "\(imported.stderr)")
        // Documents print as they were read (null keys and 1.0 included).
        let all = try runSift(["store", "query", db, "Record", "--sort", "id"])
        let read = try runSift(["filter", "TRUEPREDICATE", data])
        #expect(all.stdout == read.stdout, "\(all.stdout)\n\(read.stdout)")
        // (Key paths into `mix` raise in memory on the record where it is a string: no answer to compare.)
        for p in [
            "mix == 'a'", "mix == nil", "kids == nil", "kids.@count == 2", "ANY kids.n == 1",
            "ANY kids.n == nil", "kids[LAST].n == nil", "x == 1", "when > CAST(0, 'NSDate')", "NOT (x == 1)",
        ] {
            let store = try runSift(["store", "query", db, "Record", p, "--sort", "id"])
            let filter = try runSift(["filter", p, data])
            #expect(
                store.status == 0 && filter.status == 0 && store.stdout == filter.stdout,
                "\(p): \(store.stderr)\n\(store.stdout)\n\(filter.stdout)")
            let explained = try runSift(["store", "query", db, "Record", p, "--explain"])
            #expect(explained.stdout.contains("residual: none"), "\(p): \(explained.stdout)")
        }
        // A record the model's shapes lack is refused, naming it; nothing is imported.
        let bad = try scratch.write("bad.json", #"[{"id": 5}, {"id": 6, "zip": "0150"}]"#)
        let refused = try runSift(["store", "import", db, "Record", bad])
        #expect(
            refused.status == 1 && refused.stderr.contains("record 1") && refused.stderr.contains("'zip'"),
            "\(refused.stderr)")
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "4\n")
    }

    // MARK: Round trips against sift filter

    static let peoplePredicates = [
        "TRUEPREDICATE",
        "age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] \"sao\"",
        "address.city == nil",
        "address == nil OR address.city ==[c] 'paris'",
        "email != 'ana.souza@example.com'",
        "age != 41",
        "age == nil OR age > 50",
        "NOT (address.city == 'Paris')",
        "kids.@count == 0",
        "kids.@count >= 2 AND kids.@avg.age < 10",
        "ALL kids.age > 5",
        "NONE kids.age < 10",
        "SUBQUERY(kids, $k, $k.age > 5 AND $k.name BEGINSWITH 'L').@count >= 1",
        "tags CONTAINS 'remote' OR 'design' IN tags",
        "name LIKE[cd] '*o*' AND name MATCHES '[A-Z].*'",
        "score BETWEEN {60, 80} AND active == YES",
        "score * 2 - kids.@count > 150",
    ]

    @Test func peopleRoundTripMatchesFilter() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile, expectInserted: 30)
        var nonEmpty = 0
        for p in Self.peoplePredicates {
            let store = try runSift(["store", "query", db, "Record", p])
            let filter = try runSift(["filter", p, peopleFile])
            #expect(store.status == 0 && filter.status == 0, "\(p): \(store.stderr)")
            #expect(store.stdout == (try withoutNulls(filter.stdout)), "\(p)")
            if !filter.stdout.isEmpty { nonEmpty += 1 }
        }
        // Not vacuous: most predicates select someone.
        #expect(nonEmpty >= 15)
        // --count runs COUNT(*) in SQL, not the fetch.
        for p in Self.peoplePredicates.enumerated().filter({ $0.offset % 3 == 1 }).map(\.element) {
            let count = try runSift(["store", "query", db, "Record", p, "--count"])
            let filter = try runSift(["filter", p, peopleFile, "--count"])
            #expect(count.status == 0 && count.stdout == filter.stdout, "\(p): \(count.stderr)")
        }
        for p in Self.peoplePredicates.prefix(3) {
            for sort in [["--sort", "name[cd]"], ["--sort", "age:desc", "--sort", "score"]] {
                let store = try runSift(["store", "query", db, "Record", p] + sort)
                let filter = try runSift(["filter", p, peopleFile] + sort)
                #expect(store.stdout == (try withoutNulls(filter.stdout)), "\(p) \(sort)")
            }
        }
        // Keys print in the file's order, nested objects included, and nil attributes are left
        // out: Chloé's age is null in the file, Ingrid has none.
        let chloe = try runSift(["store", "query", db, "Record", "name BEGINSWITH 'Chlo'"])
        #expect(
            chloe.stdout
                == #"{"name":"Chloé Dubois","email":"chloe.dubois@example.fr","address":{"city":"Paris","zip":"75001"},"kids":[],"tags":["design"],"active":true,"score":78.0}"#
                + "\n")
        let nulls = try runSift(["store", "query", db, "Record", "name BEGINSWITH 'Chlo'", "--nulls"])
        #expect(
            nulls.stdout
                == #"{"name":"Chloé Dubois","age":null,"email":"chloe.dubois@example.fr","address":{"city":"Paris","zip":"75001"},"kids":[],"tags":["design"],"active":true,"score":78.0}"#
                + "\n")
    }

    @Test func messyRoundTripMatchesFilter() throws {
        let scratch = try Scratch()
        let data = try scratch.write("messy.ndjson", messy)
        let db = try scratch.store(from: data, expectInserted: 5)
        let predicates = [
            "TRUEPREDICATE",
            "v == 1", "v != 1", "v > 0",
            "code == 7", "code == 'A7'", "code != nil",
            "when > %@", "when == nil",
            "geo == nil", "geo.city == nil", "geo.lat > 50",
            "ANY items.qty > 1", "ALL items.qty > 1", "items.@count == 0", "items.@sum.qty > 5",
            "ANY items.note != nil",
            "ANY tags == 'x'", "tags.@count == 0", "tags == nil",
            "ok != YES", "ok == nil",
        ]
        var matched = 0
        for p in predicates {
            let args = p.contains("%@") ? ["--arg", #"{"$date": 100}"#] : []
            let store = try runSift(["store", "query", db, "Record", p] + args)
            let filter = try runSift(["filter", p, data] + args)
            #expect(store.status == 0 && filter.status == 0, "\(p): \(store.stderr) \(filter.stderr)")
            #expect(store.stdout == (try withoutNulls(filter.stdout)), "\(p)")
            matched += filter.stdout.split(separator: "\n").count
        }
        #expect(matched > 25)
        // Integers and doubles stay apart in a dynamic attribute, dates keep their fraction,
        // absent keys stay absent, and an empty nested object prints as one.
        let all = try runSift(["store", "query", db, "Record"])
        let lines = all.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[1] == #"{"id":2,"v":1.0,"code":"A7","when":{"$date":0.5},"items":[],"tags":[],"ok":false}"#)
        #expect(lines[3] == #"{"id":4,"geo":{},"items":[{"qty":1}]}"#)
    }

    @Test func sortLimitAndOffset() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let filter = try runSift(["filter", "active == YES", peopleFile, "--sort", "score:desc", "--sort", "name"])
        let all = try withoutNulls(filter.stdout).split(separator: "\n").map { $0 + "\n" }
        #expect(all.count > 8)
        let page = try runSift([
            "store", "query", db, "Record", "active == YES", "--sort", "score:desc", "--sort", "name",
            "--limit", "3", "--offset", "2",
        ])
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout == all[2..<5].joined())
        let tail = try runSift([
            "store", "query", db, "Record", "active == YES", "--sort", "score:desc", "--sort", "name", "--offset",
            "\(all.count - 1)",
        ])
        #expect(tail.stdout == all.last!)
        let counted = try runSift(["store", "query", db, "Record", "active == YES", "--limit", "4", "--count"])
        #expect(counted.stdout == "4\n")
        // A predicate with a part SQL cannot run (a function) sorts and pages the same way.
        let mixed = try runSift([
            "store", "query", db, "Record", "active == YES AND length:(name) > 0", "--sort", "score:desc", "--sort",
            "name",
            "--limit", "3", "--offset", "2",
        ])
        #expect(mixed.stdout == all[2..<5].joined(), "\(mixed.stderr)")
    }

    @Test func argumentsAndVariables() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let args = ["age > $min AND name BEGINSWITH[cd] %@", "--var", "min=40", "--arg", "\"s\""]
        let store = try runSift(["store", "query", db, "Record"] + args)
        let filter = try runSift(["filter"] + args.prefix(1) + [peopleFile] + args.dropFirst())
        #expect(store.status == 0, "\(store.stderr)")
        #expect(!store.stdout.isEmpty)
        #expect(store.stdout == (try withoutNulls(filter.stdout)))
    }

    // MARK: Import

    @Test func failedImportLeavesTheStoreEmpty() throws {
        let scratch = try Scratch()
        let db = scratch.path("db.sqlite")
        let model = try runSift(["store", "infer-model", peopleFile])
        #expect(try runSift(["store", "create", db, "--model", try scratch.write("m.json", model.stdout)]).status == 0)
        // Record 2's second kid has a string age; records 0 and 1 are fine.
        let bad =
            #"[{"name": "A", "age": 1}, {"name": "B", "kids": [{"name": "k", "age": 3}]}, {"name": "C", "kids": [{"age": 4}, {"age": "four"}]}]"#
        let r = try runSift(["store", "import", db, "Record", "-"], stdin: bad)
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(
            r.stderr == "error: record 2: key 'kids[1].age': \"four\" (string) is not an integer64\n", "\(r.stderr)")
        for entity in ["Record", "Record_kids", "Record_address"] {
            #expect(try runSift(["store", "query", db, entity, "--count"]).stdout == "0\n")
        }
        let unknown = try runSift(
            ["store", "import", db, "Record", "-"], stdin: "{\"name\": \"A\"}\n{\"name\": \"B\", \"nick\": \"b\"}\n")
        #expect(unknown.status == 1)
        #expect(
            unknown.stderr.contains("record 1: key 'nick': entity 'Record' has no attribute or relationship 'nick'"),
            "\(unknown.stderr)")
        let shape = try runSift(["store", "import", db, "Record", "-"], stdin: #"[{"address": ["Oslo"]}]"#)
        #expect(shape.status == 1)
        #expect(shape.stderr.contains("record 0: key 'address': expected an object"), "\(shape.stderr)")
        let syntax = try runSift(["store", "import", db, "Record", "-"], stdin: #"[{"name": "A"},"#)
        #expect(syntax.status == 1)
        #expect(syntax.stderr.hasPrefix("<stdin>:1:"), "\(syntax.stderr)")
        #expect(try runSift(["store", "query", db, "Record", "--count"]).stdout == "0\n")
        // The same store takes good records afterwards.
        let good = try runSift(
            ["store", "import", db, "Record", "-"], stdin: #"[{"name": "A", "kids": [{"age": 4}]}]"#)
        #expect(good.status == 0 && good.stdout == "1\n", "\(good.stderr)")
        #expect(try runSift(["store", "query", db, "Record_kids", "--count"]).stdout == "1\n")
    }

    @Test func validationFailuresNameRecordAndKey() throws {
        let scratch = try Scratch()
        let model = try scratch.write(
            "m.json",
            """
            {"entities": [
              {"name": "Person", "attributes": [{"name": "name", "type": "string", "optional": false},
                                                {"name": "age", "type": "integer16", "min": 0},
                                                {"name": "born", "type": "date"}, {"name": "photo", "type": "binary"}],
               "relationships": [{"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner", "deleteRule": "deny"}]},
              {"name": "Pet", "attributes": [{"name": "name", "type": "string", "regex": "[A-Z].*"}],
               "relationships": [{"name": "owner", "destination": "Person", "inverse": "pets"}]}
            ]}
            """)
        let db = scratch.path("db.sqlite")
        #expect(try runSift(["store", "create", db, "--model", model]).status == 0)
        let r = try runSift(
            ["store", "import", db, "Person", "-"],
            stdin:
                #"[{"name": "Ann", "pets": [{"name": "Rex"}]}, {"age": -1, "pets": [{"name": "Rex"}, {"name": "fido"}]}]"#
        )
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "error: record 1: key 'name': is required",
                "error: record 1: key 'age': -1 is below the minimum 0.0",
                "error: record 1: key 'pets[1].name': \"fido\" does not match the regular expression \"[A-Z].*\"",
            ], "\(r.stderr)")
        #expect(try runSift(["store", "query", db, "Pet", "--count"]).stdout == "0\n")
        // Dates and data in the tool's conventions; the relationship back prints from the child.
        let ok = try runSift(
            ["store", "import", db, "Person", "-"],
            stdin:
                #"{"name": "Ann", "born": {"$date": 86400.25}, "photo": {"$data": "AAEC"}, "pets": [{"name": "Rex"}]}"#)
        #expect(ok.status == 0 && ok.stdout == "1\n", "\(ok.stderr)")
        #expect(
            try runSift(["store", "query", db, "Person"]).stdout
                == #"{"name":"Ann","born":{"$date":86400.25},"photo":{"$data":"AAEC"},"pets":[{"name":"Rex"}]}"# + "\n")
        #expect(
            try runSift(["store", "query", db, "Pet"]).stdout
                == #"{"name":"Rex","owner":{"name":"Ann","born":{"$date":86400.25},"photo":{"$data":"AAEC"}}}"# + "\n")
        // A deny rule refuses the whole batch delete.
        let denied = try runSift(["store", "delete", db, "Person", "TRUEPREDICATE"])
        #expect(denied.status == 1)
        #expect(denied.stderr.contains("delete rule deny"), "\(denied.stderr)")
        #expect(try runSift(["store", "query", db, "Person", "--count"]).stdout == "1\n")
    }

    @Test func createRefusesAnotherModel() throws {
        let scratch = try Scratch()
        let db = scratch.path("db.sqlite")
        let a = try scratch.write(
            "a.json", #"{"entities": [{"name": "Record", "attributes": [{"name": "x", "type": "string"}]}]}"#)
        let b = try scratch.write(
            "b.json", #"{"entities": [{"name": "Record", "attributes": [{"name": "x", "type": "integer64"}]}]}"#)
        let first = try runSift(["store", "create", db, "--model", a])
        #expect(first.status == 0 && first.stdout.isEmpty, "\(first.stderr)")
        #expect(try runSift(["store", "create", db, "--model", a]).status == 0)
        let other = try runSift(["store", "create", db, "--model", b])
        #expect(other.status == 1)
        #expect(other.stderr.hasPrefix("error: the store was created with model "), "\(other.stderr)")
        #expect(other.stderr.contains("'Record.x' changed type from string to integer64"), "\(other.stderr)")
        let badModel = try runSift([
            "store", "create", scratch.path("c.sqlite"), "--model",
            try scratch.write("bad.json", #"{"entities": [{"name": "1x"}]}"#),
        ])
        #expect(badModel.status == 1)
        #expect(badModel.stderr.contains("bad.json: error: "), "\(badModel.stderr)")
        let missing = try runSift(["store", "query", scratch.path("nope.sqlite"), "Record"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no such store"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("nope.sqlite")))
    }

    // MARK: Errors

    @Test func predicateErrorsHaveCarets() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let syntax = try runSift(["store", "query", db, "Record", "age > AND x"])
        #expect(syntax.status == 1)
        #expect(syntax.stdout.isEmpty)
        #expect(
            syntax.stderr == "1:7: error: expected expression after '>'\nage > AND x\n      ^~~\n", "\(syntax.stderr)")
        // An error raised while evaluating names the object, with the caret under the comparison.
        let evaluation = try runSift(["store", "query", db, "Record", "age > 60 AND name < 5"])
        #expect(evaluation.status == 1)
        #expect(evaluation.stdout.isEmpty)
        #expect(
            evaluation.stderr.hasSuffix(
                ": 1:14: error: cannot order \"Søren Kierkegaard\" and 5\nage > 60 AND name < 5\n             ^~~~~~~~\n"
            ), "\(evaluation.stderr)")
        let update = try runSift(["store", "update", db, "Record", "age >", "--set", "active=true"])
        #expect(update.status == 1)
        #expect(update.stderr.hasPrefix("1:6: error: "), "\(update.stderr)")
        let expression = try runSift(["store", "update", db, "Record", "age > 1", "--set-expression", "score=score +"])
        #expect(expression.status == 1)
        #expect(
            expression.stderr
                == "--set-expression score: 1:8: error: expected expression after '+'\nscore +\n       ^\n",
            "\(expression.stderr)")
        let entity = try runSift(["store", "query", db, "Nobody"])
        #expect(entity.status == 1)
        #expect(entity.stderr.contains("no entity 'Nobody'"), "\(entity.stderr)")
    }

    @Test func usageErrorsExitTwo() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        for args in [
            ["--count", "--explain"], ["--count", "--group-by", "active"],
            ["--group-by", "active", "--properties", "name"],
            ["--aggregate", "n=@median.age"], ["--limit", "-1"], ["--sort", ":desc"], ["--var", "1x=2"],
            ["--aggregate", "n=@count", "--aggregate", "n=@sum.age"],
        ] {
            let r = try runSift(["store", "query", db, "Record", "TRUEPREDICATE"] + args)
            #expect(r.status == 2, "\(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        #expect(try runSift(["store", "update", db, "Record", "TRUEPREDICATE"]).status == 2)
        #expect(try runSift(["store", "update", db, "Record", "TRUEPREDICATE", "--set", "age={bad"]).status == 2)
        #expect(
            try runSift([
                "store", "update", db, "Record", "TRUEPREDICATE", "--set", "age=1", "--set-expression", "age=2",
            ]).status == 2)
    }

    // MARK: Batch update and delete

    @Test func updateAndDeleteChangeWhatLaterQueriesSee() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let over50 = try runSift(["filter", "age > 50", peopleFile, "--count"]).stdout
        let updated = try runSift([
            "store", "update", db, "Record", "age > $min", "--var", "min=50",
            "--set", "active=false", "--set-expression", "score=score + 1",
        ])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.stdout == over50)
        let after = try runSift([
            "store", "query", db, "Record", "age > 50", "--properties", "name,active,score", "--sort", "name",
        ])
        let expected = try runSift(["filter", "age > 50", peopleFile, "--sort", "name"]).stdout.split(separator: "\n")
            .map { line -> String in
                guard case .object(let m) = try JSONReader.parse(String(line)) else { return "" }
                let d = Dictionary(m, uniquingKeysWith: { a, _ in a })
                guard case .double(let score) = d["score"]! else { return "" }
                return JSONValue.object([("name", d["name"]!), ("active", .bool(false)), ("score", .double(score + 1))])
                    .text + "\n"
            }.joined()
        #expect(after.stdout == expected)
        // A value of the wrong type changes nothing.
        let wrong = try runSift(["store", "update", db, "Record", "TRUEPREDICATE", "--set", "age=\"old\""])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.hasPrefix("error: Record "), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("'age': \"old\" (string) is not an integer64"), "\(wrong.stderr)")
        #expect(
            try runSift(["store", "query", db, "Record", "age == nil", "--count"]).stdout
                == (try runSift(["filter", "age == nil", peopleFile, "--count"]).stdout))
        // Delete: the records go, their nested objects with them (cascade), counted apart.
        let kidsOfOver50 = try runSift(["filter", "age > 50", peopleFile]).stdout.split(separator: "\n")
            .reduce(0) { n, line in n + (line.components(separatedBy: "\"age\":").count - 2) }
        let deleted = try runSift(["store", "delete", db, "Record", "age > 50 AND active == NO"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout == over50)
        let addressesOfOver50 = Int(
            try runSift(["filter", "age > 50 AND address != nil", peopleFile, "--count"]).stdout.dropLast())!
        #expect(
            deleted.stderr
                == "note: \(addressesOfOver50 + kidsOfOver50) related objects of other entities deleted by cascade rules\n",
            "\(deleted.stderr)")
        #expect(try runSift(["store", "query", db, "Record", "age > 50", "--count"]).stdout == "0\n")
        let total = try runSift(["store", "query", db, "Record", "--count"]).stdout
        #expect(total == "\(30 - Int(over50.dropLast())!)\n")
        let remaining = try runSift(["store", "query", db, "Record"])
        #expect(remaining.stdout == (try withoutNulls(try runSift(["filter", "NOT (age > 50)", peopleFile]).stdout)))
        let addresses = try runSift(["filter", "NOT (age > 50) AND address != nil", peopleFile, "--count"]).stdout
        #expect(try runSift(["store", "query", db, "Record_address", "--count"]).stdout == addresses)
    }

    // MARK: Dictionaries, groups, aggregates, explain

    @Test func groupByAndAggregates() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let r = try runSift([
            "store", "query", db, "Record", "--group-by", "active", "--aggregate", "n=@count",
            "--aggregate", "oldest=@max.age", "--aggregate", "kids=@sum.kids.@count",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        // Groups in order of first appearance: the first record is active.
        let active = try runSift(["filter", "active == YES", peopleFile, "--count"]).stdout.dropLast()
        let inactive = try runSift(["filter", "active == NO", peopleFile, "--count"]).stdout.dropLast()
        let oldestActive = try runSift(["filter", "active == YES AND age != nil", peopleFile, "--sort", "age:desc"])
            .stdout
        let maxAge = try #require(
            oldestActive.split(separator: "\n").first.flatMap { line -> Int64? in
                guard case .object(let m) = try? JSONReader.parse(String(line)),
                    case .integer(let a)? = m.first(where: { $0.0 == "age" })?.1
                else { return nil }
                return a
            })
        #expect(lines[0].hasPrefix(#"{"active":true,"n":\#(active),"oldest":\#(maxAge),"kids":"#), "\(lines[0])")
        #expect(lines[1].hasPrefix(#"{"active":false,"n":\#(inactive),"#), "\(lines[1])")
        // Aggregates without --group-by: one row over every match, also when nothing matches.
        let whole = try runSift([
            "store", "query", db, "Record", "age > 40", "--aggregate", "n=@count", "--aggregate", "total=@sum.age",
            "--aggregate", "young=@min.age",
        ])
        let over40 = try runSift(["filter", "age > 40", peopleFile, "--count"]).stdout.dropLast()
        #expect(whole.stdout.hasPrefix(#"{"n":\#(over40),"total":"#), "\(whole.stdout)")
        #expect(whole.stdout.hasSuffix(#","young":41}"# + "\n"), "\(whole.stdout)")
        let none = try runSift([
            "store", "query", db, "Record", "age > 200", "--aggregate", "n=@count", "--aggregate", "total=@sum.age",
            "--aggregate", "young=@min.age",
        ])
        #expect(none.stdout == #"{"n":0,"total":0,"young":null}"# + "\n")
        // Group by a to-one key path.
        let cities = try runSift([
            "store", "query", db, "Record", "address.city BEGINSWITH 'S'", "--group-by", "address.city", "--aggregate",
            "n=@count",
        ])
        #expect(cities.stdout.contains(#"{"address.city":"Sevilla","n":1}"#), "\(cities.stdout)")
    }

    @Test func propertiesAndDistinct() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let r = try runSift([
            "store", "query", db, "Record", "age > 55", "--properties", "name,address.city", "--properties",
            "kids.name,address", "--sort", "name",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.split(separator: "\n").first
                == #"{"name":"Paulo Sérgio","address.city":"Sao Paulo","kids.name":["Rafaela","Caio"],"address":{"city":"Sao Paulo","zip":"04538-132"}}"#,
            "\(r.stdout)")
        let distinct = try runSift(["store", "query", db, "Record", "--properties", "active", "--distinct"])
        #expect(distinct.stdout == "{\"active\":true}\n{\"active\":false}\n")
        // Every requested key prints, nil as null.
        let nilCity = try runSift([
            "store", "query", db, "Record", "address == nil", "--properties", "address.city", "--limit", "1",
        ])
        #expect(nilCity.stdout == "{\"address.city\":null}\n")
    }

    @Test func explainShowsTheSQLAndWhatIsLeftForMemory() throws {
        let scratch = try Scratch()
        let db = try scratch.store(from: peopleFile)
        let sql = try runSift([
            "store", "query", db, "Record", "ANY kids.age < 10 AND address.city == 'Paris'", "--sort", "name",
            "--explain",
        ])
        #expect(sql.status == 0, "\(sql.stderr)")
        let lines = sql.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("sql: SELECT ") == true, "\(sql.stdout)")
        #expect(lines.first?.contains("EXISTS") == true && lines.first?.contains("LEFT JOIN") == true, "\(sql.stdout)")
        #expect(lines.first?.contains("ORDER BY") == true, "\(sql.stdout)")
        #expect(lines.contains { $0.hasPrefix("plan: ") }, "\(sql.stdout)")
        #expect(lines.contains("residual: none"), "\(sql.stdout)")
        let mixed = try runSift(["store", "query", db, "Record", "age > 30 AND random() < 2", "--explain"])
        #expect(mixed.stdout.contains("residual: random() < 2"), "\(mixed.stdout)")
        #expect(mixed.stdout.contains("bindings: 30"), "\(mixed.stdout)")
    }

    // MARK: Mixed and transformable attributes

    @Test func mixedValuesRoundTripAndQueryInSQL() throws {
        let scratch = try Scratch()
        // Booleans beside numbers, strings, dates and arrays: mixed, which keeps every value as its
        // JSON (a string of digits stays a string, true stays true) and queries it by its shape.
        let data = try scratch.write(
            "t.ndjson",
            "{\"v\": true}\n{\"v\": \"c\"}\n{\"v\": \"123\"}\n{\"v\": {\"$date\": 5}}\n{\"v\": [1, \"x\"]}\n{\"v\": 7}\n{}\n"
        )
        let model = try runSift(["store", "infer-model", data])
        #expect(model.stdout.contains("\"mixed\""), "\(model.stdout)")
        let db = try scratch.store(from: data, expectInserted: 7)
        let store = try runSift(["store", "query", db, "Record"])
        #expect(store.status == 0)
        #expect(store.stdout.contains("{\"v\":[1,\"x\"]}\n"))
        let filter = try runSift(["filter", "TRUEPREDICATE", data])
        #expect(store.stdout == (try withoutNulls(filter.stdout)))
        // Predicates memory answers on every record (`sift filter` stops where memory raises).
        for p in [
            "v == 'c'", "v == YES", "v == 1", "v == 7", "v == nil", "v == '123'", "v IN {7, 'c'}", "NOT (v == 'c')",
        ] {
            let q = try runSift(["store", "query", db, "Record", p])
            let f = try runSift(["filter", p, data])
            let expected = try withoutNulls(f.stdout)
            #expect(q.status == 0 && q.stdout == expected, "\(p): \(q.stderr)\n\(q.stdout)\n\(f.stdout)")
            let explained = try runSift(["store", "query", db, "Record", p, "--explain"])
            #expect(explained.stdout.contains("residual: none"), "\(p) runs in memory: \(explained.stdout)")
        }
    }
}
