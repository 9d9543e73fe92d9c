// `printStoredRows` reading a store file in two halves of the root's keys on two threads
// (`HalvedRead`): the bytes the object path prints and a one-thread read prints, for predicates
// matching everything, a few rows or rows in one half only, over a to-one, a to-many with its own
// to-one and collection below it, and a collection; the one-thread read's error where a row of
// either half raises; one thread where a writer holds the store's write lock or the store's
// connection is in a transaction; and, while another connection commits again and again, every
// read's two halves from one snapshot. `make test` also runs this suite under ThreadSanitizer.

import Foundation
import SiftJSON
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

/// `count` records: an address (none for every ninth), kids (with a pet and toys unless `flat`),
/// tags, and `opt` (nil only for the record `nilAt`).
private func records(_ count: Int, nilAt: Int? = nil, flat: Bool = false) -> String {
    (0..<count).map { i -> String in
        let kids = (0..<(i % 3)).map { k in
            flat
                ? #"{"name":"k\#(k)","age":\#((k + i) % 12)}"#
                : #"{"name":"k\#(k)","age":\#((k + i) % 12),"toys":["t\#(k)","u"],"pet":{"kind":"cat \#(i % 5)"}}"#
        }
        let address = i % 9 == 8 ? "null" : #"{"city":"C\#(i % 7) ville","zip":"\#(10_000 + i)"}"#
        let opt = i == nilAt ? "null" : "\(i % 4)"
        return
            #"{"id":\#(i),"name":"user \#(i) é","address":\#(address),"kids":[\#(kids.joined(separator: ","))],"tags":["a\#(i % 2)","b"],"opt":\#(opt)}"#
    }.joined(separator: "\n")
}

/// A store file holding `text`'s records as entity `Record`.
private func storeFile(_ text: String) throws -> PersistentStore {
    let parsed = try JSONReader(text).parseSequence()
    let model = try ManagedObjectModel(entities: try ModelInference.infer(parsed, entity: "Record").entities)
    let store = try PersistentStore(model: model, path: Fixtures.temporaryPath())
    var stream = RecordStream(MappedInput(copying: Array(text.utf8)), name: "<test>")
    var importer = StoreImporter(context: ManagedObjectContext(store: store))
    _ = try importer.run(&stream, entity: "Record", batchSize: 500)
    return store
}

/// What `printStoredRows` printed and said, halving from a key span of 100 (or `halving`).
private func printed(
    _ store: PersistentStore, _ request: FetchRequest<ManagedObject>, reading: StoredRowReading = .automatic,
    halving: Int64 = 100
) throws -> (String, StoredRowsPrinted) {
    let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
    var bytes: [UInt8] = []
    let outcome = try ManagedObjectContext(store: store).printStoredRows(
        request, renderer: renderer, reading: reading, halving: halving, into: { bytes += $0 })
    return (String(decoding: bytes, as: UTF8.self), outcome)
}

/// The lines the object path prints.
private func objectLines(_ store: PersistentStore, _ request: FetchRequest<ManagedObject>) throws -> String {
    let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: false)
    var request = request
    request.relationshipKeyPathsForPrefetching = renderer.printedPaths(of: "Record")
    var out = ""
    let context = ManagedObjectContext(store: store)
    for o in try context.fetch(request) {
        try renderer.render(o).write(into: &out)
        out += "\n"
    }
    return withExtendedLifetime(context) { out }
}

@Suite struct HalvedReadTests {
    @Test func halvesPrintWhatOneThreadAndObjectsPrint() throws {
        let store = try storeFile(records(1_500))
        for predicate in [
            "id >= 0", "ANY kids.age < 3", "address.city BEGINSWITH 'C3'", "name CONTAINS '7'", "id < 300",
            "id > 1200", "ANY kids.pet.kind == 'cat 4' AND ANY tags == 'a1'", "id < 0",
        ] {
            let request = try FetchRequest("Record", predicate: predicate)
            let (halved, outcome) = try printed(store, request)
            #expect(outcome == .readInHalves(outOfOrderAt: nil), "\(predicate)")
            let (oneThread, keyed) = try printed(store, request, reading: .keyed)
            #expect(keyed == .readWhole(outOfOrderAt: nil))
            #expect(halved == oneThread, "\(predicate)")
            #expect(halved == (try objectLines(store, request)), "\(predicate)")
            if predicate == "id >= 0" { #expect(halved.split(separator: "\n").count == 1_500) }
        }
    }

    @Test func aRowThatRaisesGivesTheOneThreadError() throws {
        // `opt + 1` raises on a nil `opt`: one row in the first half, then one in the second.
        for nilAt in [200, 1_300] {
            let store = try storeFile(records(1_500, nilAt: nilAt))
            let request = try FetchRequest("Record", predicate: "opt + 1 > 0")
            var oneThread: String?
            do { _ = try printed(store, request, reading: .keyed) } catch { oneThread = "\(error)" }
            var halved: String?
            do { _ = try printed(store, request) } catch { halved = "\(error)" }
            #expect(oneThread != nil && halved == oneThread, "\(nilAt)")
            #expect(
                halved?.hasSuffix(": + needs numbers, got nil") == true, "\(halved ?? "")")
        }
    }

    /// Every row, no predicate: two streams over the halves of the keys, when the tables below the
    /// root have none below them; the bytes of one stream and of the object path.
    @Test func everyRowStreamsInHalves() throws {
        let all = FetchRequest<ManagedObject>("Record")
        // Sizes that put the middle key in different places: on a record, a kid, an address.
        for count in [150, 377, 801, 1_500] {
            let flat = try storeFile(records(count, flat: true))
            let (halved, outcome) = try printed(flat, all)
            #expect(outcome == .readInHalves(outOfOrderAt: nil), "\(count)")
            let (oneStream, streamed) = try printed(flat, all, halving: .max)
            #expect(streamed == .streamed(checked: false))
            #expect(halved == oneStream, "\(count)")
            #expect(halved == (try objectLines(flat, all)), "\(count)")
            #expect(halved.split(separator: "\n").count == count)
        }
        // Kids with a pet and toys: tables below the tables below, one stream.
        let nested = try storeFile(records(600))
        let (deep, deepOutcome) = try printed(nested, all)
        #expect(deepOutcome == .streamed(checked: false))
        #expect(deep == (try objectLines(nested, all)))
    }

    /// The boundary itself: a store whose middle key (the first of the second half) is a record
    /// with kids and tags, whose rows must be read by the second half and not the first.
    @Test func theRecordAtTheMiddleKeyKeepsItsRows() throws {
        let all = FetchRequest<ManagedObject>("Record")
        var found = false
        for count in 200..<260 where !found {
            let store = try storeFile(records(count, flat: true))
            let c = try store.openSideConnection()
            let middle = #"(SELECT min("Z_PK") + (max("Z_PK") - min("Z_PK")) / 2 + 1 FROM "Record")"#
            let rows = try c.query(
                #"SELECT (SELECT count(*) FROM "Record_kids" WHERE "owner" = \#(middle)), (SELECT count(*) FROM "Z_Record_tags" WHERE "Z_OWNER" = \#(middle))"#
            )
            guard case .integer(let kids) = rows.first?[0], case .integer(let tags) = rows.first?[1], kids > 0, tags > 0
            else { continue }
            found = true
            let (halved, outcome) = try printed(store, all)
            #expect(outcome == .readInHalves(outOfOrderAt: nil))
            #expect(halved == (try objectLines(store, all)), "\(count) records")
        }
        #expect(found, "no store size put a record with kids at the middle key")
    }

    /// Rows stored out of the order they print in, on either side of the middle: the halves give way
    /// to one stream (which reads the tables whole), and the bytes are still the object path's.
    @Test func outOfOrderRowsGiveWayToOneStream() throws {
        let first = #"(SELECT min("Z_PK") FROM "Record")"#
        let last = #"(SELECT max("Z_PK") FROM "Record")"#
        let changes: [(String, String)] = [
            // The last kid given to the first record: a first-half owner's row among the second half's.
            (
                "kid moved late",
                #"UPDATE "Record_kids" SET "owner" = \#(first) WHERE "Z_PK" = (SELECT max("Z_PK") FROM "Record_kids")"#
            ),
            // The first kid given to the last record: the first half's part ends before its own rows.
            (
                "kid moved early",
                #"UPDATE "Record_kids" SET "owner" = \#(last) WHERE "Z_PK" = (SELECT min("Z_PK") FROM "Record_kids")"#
            ),
            // The last record's last tag given to the first record.
            (
                "tag moved late",
                #"UPDATE "Z_Record_tags" SET "Z_OWNER" = \#(first), "Z_ORD" = 99 WHERE rowid = (SELECT max(rowid) FROM "Z_Record_tags")"#
            ),
            // The first and the last record swap addresses: the keys asked no longer rise.
            (
                "addresses swapped",
                #"UPDATE "Record" SET "address" = (SELECT r."address" FROM "Record" AS r WHERE r."Z_PK" = CASE "Record"."Z_PK" WHEN \#(first) THEN \#(last) ELSE \#(first) END) WHERE "Z_PK" IN (\#(first), \#(last))"#
            ),
        ]
        let all = FetchRequest<ManagedObject>("Record")
        for (label, sql) in changes {
            let store = try storeFile(records(1_200, flat: true))
            let writer = try store.openSideConnection()
            try writer.execute(sql)
            #expect(try writer.query("SELECT changes()").first?.first != .integer(0), "\(label)")
            let expected = try objectLines(store, all)
            let (lines, outcome) = try printed(store, all)
            #expect(outcome != .readInHalves(outOfOrderAt: nil), "\(label)")
            #expect(lines == expected, "\(label)")
        }
    }

    /// A writer raises every record's `opt` by one in each of its transactions: a read whose halves
    /// saw two snapshots would print two values.
    @Test func bothHalvesReadOneSnapshotWhileAWriterCommits() throws {
        for (flat, predicate) in [(false, "id >= 0"), (true, nil)] {
            try readsOneSnapshot(try storeFile(records(1_200, flat: flat)), predicate)
        }
    }

    private func readsOneSnapshot(_ store: PersistentStore, _ predicate: String?) throws {
        let writer = try store.openSideConnection()
        try writer.execute("UPDATE \"Record\" SET \"opt\" = 0")
        let stop = Flag()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            while !stop.isSet {
                try? writer.execute("UPDATE \"Record\" SET \"opt\" = \"opt\" + 1")
                usleep(500)
            }
            done.signal()
        }
        thread.start()
        defer {
            stop.set()
            done.wait()
        }
        let request = try predicate.map { try FetchRequest("Record", predicate: $0) } ?? FetchRequest("Record")
        var halved = 0
        var seen = Set<String>()
        for _ in 0..<200 where halved < 20 || seen.count < 3 {
            let (lines, outcome) = try printed(store, request)
            if outcome == .readInHalves(outOfOrderAt: nil) { halved += 1 }
            let values = Set(lines.split(separator: "\n").map(opt))
            #expect(values.count == 1, "one read printed \(values.count) values of opt")
            seen.formUnion(values)
        }
        // Not vacuous: reads were halved, and the writer committed between them.
        #expect(halved >= 20 && seen.count >= 3, "\(predicate ?? "every row"): \(halved) halved, \(seen.count) values")
    }

    @Test func aHeldWriteLockOrAnOpenTransactionReadsOnOneThread() throws {
        let store = try storeFile(records(600))
        let request = try FetchRequest("Record", predicate: "ANY kids.age < 5")
        let expected = try objectLines(store, request)
        // Another connection holds the write lock: nothing waits for it, the read takes one thread.
        let writer = try store.openSideConnection()
        try writer.execute("BEGIN IMMEDIATE")
        let (locked, outcome) = try printed(store, request)
        try writer.execute("ROLLBACK")
        #expect(outcome == .readWhole(outOfOrderAt: nil))
        #expect(locked == expected)
        // The store's own connection in a transaction: other connections would not see its writes.
        try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { try store.connection.execute("BEGIN") } catch {
                throw StoreError(.sqlite, error.message)
            }
        }
        let (inTransaction, during) = try printed(store, request)
        try store.locked { () throws(StoreError) in
            do throws(SQLiteError) { try store.connection.execute("COMMIT") } catch {
                throw StoreError(.sqlite, error.message)
            }
        }
        #expect(during == .readWhole(outOfOrderAt: nil))
        #expect(inTransaction == expected)
        // Afterwards, halved again.
        #expect(try printed(store, request).1 == .readInHalves(outOfOrderAt: nil))
    }
}

/// The text of a printed line's `opt` value.
private func opt(_ line: Substring) -> String {
    guard let key = line.range(of: #""opt":"#) else { return "" }
    return String(line[key.upperBound...].prefix { $0 != "," && $0 != "}" })
}

/// A flag one thread sets and another reads.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
