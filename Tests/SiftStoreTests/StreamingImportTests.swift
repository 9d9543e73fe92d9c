// `sift store import`'s streaming form (records read one at a time, saved in batches inside one
// transaction) against the form that converts every record and saves once: the same rows in every
// table, whatever the batch size; a bad record in a later batch rolls the earlier batches back and
// is named by its record number and key path; uniqueness holds across batches; and printing with
// the relationships prefetched gives the bytes printing object by object gives.

import Foundation
import SiftJSON
import SiftSQL
import SiftStore
import Testing

/// Records of every shape the inference knows: nested objects, arrays of objects (empty, missing),
/// collections, dates, data-free mixed values, nulls and missing keys.
private let varied = variedRecords(23)

/// `varied`'s records 0..<n, one a line.
private func variedRecords(_ n: Int) -> String {
    (0..<n).map { i -> String in
        let kids = (0..<(i % 4)).map { k in #"{"name":"k\#(k)","age":\#(k + i % 7),"toys":["t\#(k)"]}"# }
        let mixed = i % 3 == 0 ? #""s\#(i)""# : i % 3 == 1 ? "\(i)" : #"{"$date":\#(i * 1000)}"#
        let address = i % 5 == 4 ? "null" : #"{"city":"C\#(i % 3)","zip":"0\#(i)"}"#
        let extra = i % 2 == 0 ? #","note":"n\#(i)""# : ""
        return
            #"{"id":\#(i),"name":"user \#(i)","score":\#(i).5,"when":{"$date":\#(i * 86400)},"m":\#(mixed),"address":\#(address),"kids":[\#(kids.joined(separator: ","))],"tags":["a\#(i % 2)","b"]\#(extra)}"#
    }.joined(separator: "\n")
}

private func parse(_ text: String) throws -> [JSONValue] { try JSONReader(text).parseSequence() }

private func inferredModel(_ records: [JSONValue], unique: Bool = false) throws -> ManagedObjectModel {
    var entities = try ModelInference.infer(records, entity: "Record").entities
    if unique { entities[0].uniquenessConstraints = [["id"]] }
    return try ManagedObjectModel(entities: entities)
}

/// Every row of every table but the metadata (which holds the store's own identifier), by table.
private func tables(_ store: PersistentStore) throws -> [String: [[SQLValue]]] {
    var out: [String: [[SQLValue]]] = [:]
    let names = try store.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    for case .text(let name)? in names.map(\.first) where name != "sift_metadata" {
        out[name] = try store.query("SELECT * FROM \"\(name)\" ORDER BY rowid")
    }
    return out
}

/// Streams `text` into `store`, as rows without objects (`rows`) or as objects; the rows path is
/// checked to have been taken (or not).
private func streamImport(_ text: String, into store: PersistentStore, batchSize: Int, rows: Bool = true)
    throws(JSONImportError) -> Int
{
    var stream = RecordStream(MappedInput(copying: Array(text.utf8)), name: "<test>")
    var importer = StoreImporter(context: ManagedObjectContext(store: store))
    importer.writesRows = rows
    let n = try importer.run(&stream, entity: "Record", batchSize: batchSize)
    #expect((importer.rowsWritten > 0) == rows, "rows written: \(importer.rowsWritten)")
    return n
}

/// The error lines of streaming `lines` into a new store of `model` in batches of `batchSize`,
/// as rows or as objects, after checking that nothing was left in the store.
private func streamErrors(_ lines: [String], _ model: ManagedObjectModel, batchSize: Int, rows: Bool) throws
    -> [String]
{
    let store = try PersistentStore.inMemory(model: model)
    var stream = RecordStream(MappedInput(copying: Array(lines.joined(separator: "\n").utf8)), name: "<test>")
    var importer = StoreImporter(context: ManagedObjectContext(store: store))
    importer.writesRows = rows
    do {
        _ = try importer.run(&stream, entity: "Record", batchSize: batchSize)
        Issue.record("records breaking a rule were imported (batches of \(batchSize), rows: \(rows))")
        return []
    } catch {
        for (name, stored) in try tables(store) where name != "sift_primary_key" {
            #expect(stored.isEmpty, "table \(name) kept rows")
        }
        return error.lines
    }
}

@Suite struct StreamingImportTests {
    @Test func batchesWriteTheRowsOneSaveWrites() throws {
        let records = try parse(varied)
        let model = try inferredModel(records)
        let once = try PersistentStore.inMemory(model: model)
        var importer = StoreImporter(context: ManagedObjectContext(store: once))
        #expect(try importer.run(records, entity: "Record") == 23)
        let expected = try tables(once)
        // Not vacuous: the nested entities and the collections have rows.
        #expect(expected.values.filter { !$0.isEmpty }.count >= 5)
        for batchSize in [1, 3, 7, 1000] {
            // Rows without objects, and objects: the same rows as the one save.
            for rows in [true, false] {
                let streamed = try PersistentStore.inMemory(model: model)
                #expect(try streamImport(varied, into: streamed, batchSize: batchSize, rows: rows) == 23)
                let got = try tables(streamed)
                #expect(got.keys.sorted() == expected.keys.sorted())
                for (name, stored) in expected {
                    #expect(got[name] == stored, "table \(name), batches of \(batchSize), rows: \(rows)")
                }
            }
        }
    }

    /// The rows path writes each table's rows several to a statement (at most 64, a power of
    /// two, the last ones of a batch in smaller statements): tables of 1 to 200 rows a batch,
    /// around those sizes, hold what the one save writes.
    @Test func multiRowStatementsWriteTheRowsOneSaveWrites() throws {
        for count in [63, 64, 65, 129, 200] {
            let text = variedRecords(count)
            let records = try parse(text)
            let model = try inferredModel(records)
            let once = try PersistentStore.inMemory(model: model)
            var importer = StoreImporter(context: ManagedObjectContext(store: once))
            #expect(try importer.run(records, entity: "Record") == count)
            let expected = try tables(once)
            #expect(expected.values.map(\.count).max() ?? 0 >= 2 * count)
            // One batch (each table's rows in full statements and a partial last chunk), and
            // batches whose rows end at and around 64 in the record table.
            for batchSize in [100_000, 64 * 3, 64 * 3 + 1, 97] {
                let streamed = try PersistentStore.inMemory(model: model)
                #expect(try streamImport(text, into: streamed, batchSize: batchSize) == count)
                let got = try tables(streamed)
                for (name, stored) in expected {
                    #expect(got[name] == stored, "table \(name), \(count) records, batches of \(batchSize) rows")
                }
            }
        }
    }

    @Test func aBadRecordInALaterBatchRollsEveryBatchBack() throws {
        let records = try parse(varied)
        let store = try PersistentStore.inMemory(model: try inferredModel(records))
        // Record 22's second kid has a string age, several batches after the first save.
        var lines = varied.split(separator: "\n").map(String.init)
        lines[22] = lines[22].replacingOccurrences(of: #""name":"k1","age":"#, with: #""name":"k1","age":"x","was":"#)
        #expect(lines[22].contains(#""age":"x""#))
        do {
            _ = try streamImport(lines.joined(separator: "\n"), into: store, batchSize: 4)
            Issue.record("a bad record was imported")
        } catch {
            #expect(error.lines == [#"error: record 22: key 'kids[1].age': "x" (string) is not an integer64"#])
        }
        for (name, rows) in try tables(store) where name != "sift_primary_key" {
            #expect(rows.isEmpty, "table \(name) kept rows")
        }
        // A syntax error after good records: nothing either, and the position in the input.
        do {
            _ = try streamImport(varied + "\n{\"id\": }", into: store, batchSize: 4)
            Issue.record("a syntax error was imported")
        } catch {
            #expect(error.lines == ["<test>:24:8: error: unexpected '}' where a JSON value was expected"])
        }
        #expect(try store.query("SELECT count(*) FROM \"\(model(store).table)\"") == [[.integer(0)]])
    }

    @Test func uniquenessHoldsAcrossBatches() throws {
        let records = try parse(varied)
        let store = try PersistentStore.inMemory(model: try inferredModel(records, unique: true))
        var lines = varied.split(separator: "\n").map(String.init)
        // Record 21 takes record 2's id: two batches apart with batches of 5 objects.
        lines[21] = lines[21].replacingOccurrences(of: #"{"id":21,"#, with: #"{"id":2,"#)
        do {
            _ = try streamImport(lines.joined(separator: "\n"), into: store, batchSize: 5)
            Issue.record("a duplicate id was imported")
        } catch {
            #expect(error.lines.count == 1)
            #expect(
                error.lines.first?.hasPrefix("error: record 21: has the same id 2 as record 2 (uniqueness constraint")
                    == true, "\(error.lines)")
        }
        // In one batch, the pending objects collide with each other.
        do {
            _ = try streamImport(lines.joined(separator: "\n"), into: store, batchSize: 10_000)
            Issue.record("a duplicate id was imported")
        } catch {
            // Named by its record, as the stored one is (not by a temporary number).
            #expect(error.lines == ["error: record 21: has the same id 2 as record 2 (uniqueness constraint [id])"])
        }
        #expect(try store.query("SELECT count(*) FROM \"\(model(store).table)\"") == [[.integer(0)]])
        // Without the duplicate every record goes in.
        #expect(try streamImport(varied, into: store, batchSize: 5) == 23)
    }

    /// Each rule the rows path checks itself, broken in a later batch (or in the record being
    /// converted): the same error lines as the objects give, and nothing stored.
    @Test func rowsReportWhatObjectsReport() throws {
        let records = try parse(varied)
        let base = try ModelInference.infer(records, entity: "Record").entities
        let lines = varied.split(separator: "\n").map(String.init)
        func model(_ change: (inout [EntityDescription]) -> Void) throws -> ManagedObjectModel {
            var entities = base
            change(&entities)
            return try ManagedObjectModel(entities: entities)
        }
        func setAttribute(
            _ entity: String, _ name: String, _ change: @escaping (inout AttributeDescription) -> Void
        ) throws -> ManagedObjectModel {
            try model { entities in
                let e = entities.firstIndex { $0.name == entity }!
                change(&entities[e].attributes[entities[e].attributes.firstIndex { $0.name == name }!])
            }
        }
        let kids = try #require(base.first { $0.name != "Record" && $0.attributes.contains { $0.name == "age" } }).name
        var duplicate = lines
        duplicate[21] = duplicate[21].replacingOccurrences(of: #"{"id":21,"#, with: #"{"id":2,"#)
        var badAge = lines
        badAge[22] = badAge[22].replacingOccurrences(of: #""name":"k1","age":"#, with: #""name":"k1","age":"x","was":"#)
        var unknown = lines
        unknown[17] = unknown[17].replacingOccurrences(of: #""name":"k0","#, with: #""name":"k0","pet":"cat","#)
        var notObject = lines
        notObject[13] = "[1, 2]"
        let cases: [(String, ManagedObjectModel, [String])] = [
            ("a maximum length", try setAttribute("Record", "name") { $0.maxLength = 6 }, lines),
            ("a nested maximum", try setAttribute(kids, "age") { $0.maxValue = 5 }, lines),
            ("a required attribute", try setAttribute("Record", "note") { $0.isOptional = false }, lines),
            ("a pattern", try setAttribute("Record", "name") { $0.regularExpression = "user [0-9]" }, lines),
            ("uniqueness", try inferredModel(records, unique: true), duplicate),
            ("a value of the wrong type", try inferredModel(records), badAge),
            ("a key of no property", try inferredModel(records), unknown),
            ("a record that is no object", try inferredModel(records), notObject),
        ]
        for (what, model, lines) in cases {
            for batchSize in [1, 4, 1000] {
                let objects = try streamErrors(lines, model, batchSize: batchSize, rows: false)
                #expect(!objects.isEmpty, "\(what)")
                let rows = try streamErrors(lines, model, batchSize: batchSize, rows: true)
                #expect(rows == objects, "\(what), batches of \(batchSize)")
            }
        }
    }

    @Test func prefetchedPrintingPrintsWhatObjectByObjectPrints() throws {
        let records = try parse(varied)
        let store = try PersistentStore.inMemory(model: try inferredModel(records))
        #expect(try streamImport(varied, into: store, batchSize: 6) == 23)
        let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
        #expect(renderer.printedPaths(of: "Record").sorted() == ["address", "kids"])
        func printed(prefetching: Bool) throws -> String {
            var request = FetchRequest("Record")
            if prefetching { request.relationshipKeyPathsForPrefetching = renderer.printedPaths(of: "Record") }
            var out = ""
            let context = ManagedObjectContext(store: store)
            for o in try context.fetch(request) {
                try renderer.render(o).write(into: &out)
                out += "\n"
            }
            return out
        }
        let plain = try printed(prefetching: false)
        #expect(plain.split(separator: "\n").count == 23)
        #expect(try printed(prefetching: true) == plain)
    }
}

/// The root entity's table.
private func model(_ store: PersistentStore) throws -> (name: String, table: String) {
    let e = try #require(store.model.schema.entity(named: "Record"))
    return ("Record", e.table)
}
