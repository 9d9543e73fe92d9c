// StoreBench: what SiftStore's object layer costs over the SQLite it stands on. In one process run
// it measures, each as the median of several rounds on WAL store files in a temporary directory:
// (1) inserting Person objects with `context.insert` + `setValue` and one `save()`, (2) fetching
// the objects a predicate matches into a fresh context, (3) `fetchObjectIDs` and `count(for:)`, all
// three against the raw SQLite C API doing the same SQL work by hand (prepared statements, one
// transaction, rows read into Swift structs) and against GRDB 7 records (a hand-written record,
// GRDB's fastest form, and a Codable one, its everyday form); and (4) the same fetch with 1,000
// pending changes in the context against it with none. Every contender must give the same answer
// (row counts, primary keys, table checksums) or the run fails: comparing different work is
// worthless. The raw C API comes from the main package's `CSQLite` system-library module: it is no
// product, but SwiftPM puts a system library's module map on the search path of every target that
// depends on it, even transitively (here through SiftStore → SiftSQLite), as for SQLBench. GRDB
// brings its own `GRDBSQLite` module over the same <sqlite3.h> and libsqlite3; the two never meet
// in one file (this file imports GRDB, whose module does not re-export GRDBSQLite), so nothing is
// ambiguous, and one libsqlite3 is linked.
//
// Usage: StoreBench [--insert N] [--fetch N] [--pending-rows N] [--changes N] [--update N]
//                   [--merge N] [--merge-held N] [--typed N] [--stream N,M] [--migrate N] [--rounds R]
//                   [--only insert|fetch|ids|count|pending|update|merge|controller|typed|stream|migrate] [--sift-only] [--history]
//   defaults: 100,000 inserted objects; 200,000 matching objects fetched (from a table of 250,000);
//   100,000 rows and 1,000 pending changes; 100,000 objects updated and saved; a did-save of 1,000
//   objects merged into contexts holding 1,000 and 100,000; a did-save of 1, 10 and 1,000 objects
//   merged into a context with a fetched results controller over --merge-held objects; 100,000
//   objects read and written typed; 100,000 and 400,000 rows streamed and fetched for memory;
//   1,000,000 objects migrated; median of 5 rounds (Contexts.swift holds parts 5 and 6, FetchedResults.swift part 7,
//   Typed.swift part 8, Streaming.swift part 9, Migration.swift part 10). --only keeps the parts whose name
//   contains the text; --sift-only skips the baselines (for profiling: the Sift work is then in
//   functions whose names start with `profiledSift`, for callgrind's --toggle-collect); --history
//   makes Sift's insert store record persistent history (the cost of tracking it).
import BenchSupport
import CSQLite
import Foundation
import GRDB
import SiftStore

// MARK: - Command line

nonisolated(unsafe) var insertCount = 100_000
nonisolated(unsafe) var fetchCount = 200_000
nonisolated(unsafe) var pendingRows = 100_000
nonisolated(unsafe) var changeCount = 1_000
nonisolated(unsafe) var updateCount = 100_000
nonisolated(unsafe) var mergeCount = 1_000
nonisolated(unsafe) var mergeHeld = 100_000
nonisolated(unsafe) var typedCount = 100_000
nonisolated(unsafe) var streamSizes = [100_000, 400_000]
nonisolated(unsafe) var migrateCount = 1_000_000
nonisolated(unsafe) var rounds = 5
nonisolated(unsafe) var only: String? = nil
nonisolated(unsafe) var siftOnly = false
nonisolated(unsafe) var history = false
readOptions(
    [
        .integer("--insert") { insertCount = $0 },
        .integer("--fetch") { fetchCount = $0 },
        .integer("--pending-rows") { pendingRows = $0 },
        .integer("--changes") { changeCount = $0 },
        .integer("--update") { updateCount = $0 },
        .integer("--merge") { mergeCount = max(1, $0) },
        .integer("--merge-held") { mergeHeld = $0 },
        .integer("--typed") { typedCount = max(1, $0) },
        .text("--stream") { text in streamSizes = (text ?? "").split(separator: ",").compactMap { Int($0) } },
        .integer("--migrate") { migrateCount = max(100, $0) },
        .integer("--rounds") { rounds = max(1, $0) },
        .text("--only") { only = $0 },
        .flag("--sift-only") { siftOnly = true },
        .flag("--history") { history = true },
    ],
    usage: """
        usage: StoreBench [--insert N] [--fetch N] [--pending-rows N] [--changes N] [--update N]
                          [--merge N] [--merge-held N] [--typed N] [--stream N,M] [--migrate N] [--rounds R]
                          [--only insert|fetch|ids|count|pending|update|merge|controller|typed|stream|migrate] [--sift-only] [--history]
        """)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("StoreBench: \(message)\n".utf8))
    exit(1)
}

func runs(_ part: String) -> Bool { only.map { part.contains($0) } ?? true }

// MARK: - Data

/// One person as the application holds it before storing it.
struct PersonData {
    var name: String
    var age: Int
    var score: Double
    var city: String
    var active: Bool

    /// The benchmark's predicate, `age >= 18 AND score > 0.5`, in Swift.
    var matches: Bool { age >= 18 && score > 0.5 }
}

let firstNames = [
    "Ann", "Bob", "Chloé", "Dmitri", "Emma", "François", "Grace", "Hiroshi", "Inès", "Jonas",
    "Katarzyna", "Liam", "Mette", "Nuno", "Olga", "Priya",
]
let lastNames = [
    "Smith", "Müller", "García", "Nakamura", "Kowalski", "Johansson", "Rossi", "Dubois",
    "O'Brien", "Silva", "Novak", "Andersen",
]
let cities = [
    "Lyon", "Nice", "Oslo", "São Paulo", "Berlin", "Zürich", "Łódź", "Kraków", "Paris", "Porto",
    "Sevilla", "Tokyo", "Reykjavík", "Montréal", "New York", "Cape Town",
]

/// `n` people, the same on every run. Exactly four in five (every index not divisible by 5) match
/// the predicate, so the match counts are known without asking any database; the others fail it
/// on age, on score, or on both.
func makePeople(_ n: Int, seed: UInt64) -> [PersonData] {
    var rng = SplitMix64(state: seed)
    var out: [PersonData] = []
    out.reserveCapacity(n)
    for i in 0..<n {
        let name = "\(rng.pick(firstNames)) \(rng.pick(lastNames)) \(i)"
        let age: Int
        let score: Double
        if i % 5 != 0 {
            age = 18 + rng.below(72)
            score = 0.5 + Double(1 + rng.below(49_999)) / 100_000
        } else {
            switch rng.below(3) {
            case 0:
                age = rng.below(18)
                score = rng.unit()
            case 1:
                age = 18 + rng.below(72)
                score = Double(rng.below(50_001)) / 100_000
            default:
                age = rng.below(18)
                score = Double(rng.below(50_001)) / 100_000
            }
        }
        out.append(PersonData(name: name, age: age, score: score, city: rng.pick(cities), active: rng.below(2) == 0))
    }
    return out
}

let model: ManagedObjectModel
do {
    model = try ManagedObjectModel(entities: [
        EntityDescription(
            "Person",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("age", .integer64),
                AttributeDescription("score", .double),
                AttributeDescription("city", .string),
                AttributeDescription("active", .boolean),
            ])
    ])
} catch { fail("model: \(error)") }

/// The table and columns SiftStore lays the entity out in (checked against the store's own
/// `explain` below, so a layout change fails loudly instead of comparing different tables).
let table = "\"Person\""
let allColumns = "Z_PK, Z_ENT, Z_OPT, name, age, score, city, active"
let whereClause = "age >= ?1 AND score > ?2"
let predicateFormat = "age >= 18 AND score > 0.5"

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storebench-\(UUID().uuidString)")
do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
    fail("\(error)")
}
defer { try? FileManager.default.removeItem(at: directory) }
nonisolated(unsafe) var fileCounter = 0
/// A fresh store path in the benchmark's temporary directory.
func freshPath(_ label: String) -> String {
    fileCounter += 1
    return directory.appendingPathComponent("\(label)-\(fileCounter).sqlite").path
}
func removeStore(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// A new, empty Sift store file (tables, indexes, metadata, WAL). Every contender writes into a
/// file made this way, so all three fill the very same schema.
func makeEmptyStore(_ label: String) -> String {
    let path = freshPath(label)
    do { _ = try PersistentStore(model: model, path: path) } catch { fail("create store: \(error)") }
    return path
}

// MARK: - Raw C API

nonisolated(unsafe) let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A raw connection to a store file, with the durability SiftStore uses (WAL, synchronous=FULL).
final class RawDB {
    let db: OpaquePointer
    init(_ path: String) {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            fail("cannot open \(path)")
        }
        db = handle
        exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
    }
    deinit { sqlite3_close_v2(db) }

    func check(_ rc: Int32, _ what: String) {
        if rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW {
            fail("\(what): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
    func exec(_ sql: String) { check(sqlite3_exec(db, sql, nil, nil, nil), sql) }
    func prepare(_ sql: String) -> OpaquePointer {
        var stmt: OpaquePointer?
        check(sqlite3_prepare_v2(db, sql, -1, &stmt, nil), "prepare \(sql)")
        guard let stmt else { fail("no statement in \(sql)") }
        return stmt
    }
    /// Binds the predicate's two constants.
    func bindPredicate(_ stmt: OpaquePointer) {
        check(sqlite3_bind_int64(stmt, 1, 18), "bind")
        check(sqlite3_bind_double(stmt, 2, 0.5), "bind")
    }
    /// The first column of every row of `sql` as integers.
    func integers(_ sql: String) -> [Int64] {
        let stmt = prepare(sql)
        defer { sqlite3_finalize(stmt) }
        var out: [Int64] = []
        while sqlite3_step(stmt) == SQLITE_ROW { out.append(sqlite3_column_int64(stmt, 0)) }
        return out
    }
    /// The columns of the first row of `sql` as text, for checksums.
    func firstRowText(_ sql: String) -> [String] {
        let stmt = prepare(sql)
        defer { sqlite3_finalize(stmt) }
        guard sqlite3_step(stmt) == SQLITE_ROW else { return [] }
        return (0..<sqlite3_column_count(stmt)).map { i in
            sqlite3_column_text(stmt, i).map { String(cString: $0) } ?? "NULL"
        }
    }
}

/// Binds a Swift string by its UTF-8 bytes (no NUL-terminated copy), as SiftSQLite binds text.
@inline(__always)
func bindText(_ stmt: OpaquePointer, _ index: Int32, _ string: String) -> Int32 {
    var s = string
    return s.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) {
            sqlite3_bind_text(stmt, index, $0.baseAddress, Int32($0.count), transient)
        }
    }
}

@inline(__always)
func columnText(_ stmt: OpaquePointer, _ i: Int32) -> String {
    guard let bytes = sqlite3_column_text(stmt, i) else { return "" }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(stmt, i))), as: UTF8.self)
}

/// A row read by the raw baseline: what an application's own struct would hold.
struct RawPerson {
    var id: Int64
    var entity: Int64
    var version: Int64
    var name: String
    var age: Int64
    var score: Double
    var city: String
    var active: Bool
}

/// Everything after opening: prepare, BEGIN, one bound INSERT per row, COMMIT.
func rawInsert(_ raw: RawDB, _ people: [PersonData]) {
    let stmt = raw.prepare("INSERT INTO \(table) (\(allColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    defer { sqlite3_finalize(stmt) }
    raw.exec("BEGIN IMMEDIATE")
    // The same primary keys SiftStore hands out (one store-wide counter starting at 1).
    for (i, p) in people.enumerated() {
        raw.check(sqlite3_bind_int64(stmt, 1, Int64(i + 1)), "bind")
        raw.check(sqlite3_bind_int64(stmt, 2, 1), "bind")
        raw.check(sqlite3_bind_int64(stmt, 3, 0), "bind")
        raw.check(bindText(stmt, 4, p.name), "bind")
        raw.check(sqlite3_bind_int64(stmt, 5, Int64(p.age)), "bind")
        raw.check(sqlite3_bind_double(stmt, 6, p.score), "bind")
        raw.check(bindText(stmt, 7, p.city), "bind")
        raw.check(sqlite3_bind_int64(stmt, 8, p.active ? 1 : 0), "bind")
        raw.check(sqlite3_step(stmt), "insert")
        sqlite3_reset(stmt)
    }
    raw.exec("UPDATE sift_primary_key SET max = \(people.count) WHERE entity = '*'")
    raw.exec("COMMIT")
}

func rawFetch(_ raw: RawDB) -> [RawPerson] {
    let stmt = raw.prepare("SELECT \(allColumns) FROM \(table) WHERE \(whereClause)")
    defer { sqlite3_finalize(stmt) }
    raw.bindPredicate(stmt)
    var out: [RawPerson] = []
    while true {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_DONE { break }
        guard rc == SQLITE_ROW else {
            raw.check(rc, "fetch")
            break
        }
        out.append(
            RawPerson(
                id: sqlite3_column_int64(stmt, 0), entity: sqlite3_column_int64(stmt, 1),
                version: sqlite3_column_int64(stmt, 2), name: columnText(stmt, 3),
                age: sqlite3_column_int64(stmt, 4), score: sqlite3_column_double(stmt, 5),
                city: columnText(stmt, 6), active: sqlite3_column_int64(stmt, 7) != 0))
    }
    return out
}

func rawIDs(_ raw: RawDB) -> [Int64] {
    let stmt = raw.prepare("SELECT Z_PK FROM \(table) WHERE \(whereClause)")
    defer { sqlite3_finalize(stmt) }
    raw.bindPredicate(stmt)
    var out: [Int64] = []
    while sqlite3_step(stmt) == SQLITE_ROW { out.append(sqlite3_column_int64(stmt, 0)) }
    return out
}

func rawCount(_ raw: RawDB) -> Int {
    let stmt = raw.prepare("SELECT COUNT(*) FROM \(table) WHERE \(whereClause)")
    defer { sqlite3_finalize(stmt) }
    raw.bindPredicate(stmt)
    raw.check(sqlite3_step(stmt), "count")
    return Int(sqlite3_column_int64(stmt, 0))
}

/// What a filled table holds, for comparing the contenders' inserts: rows, sums of the integer
/// columns, the score total and the text lengths, and the key range.
func checksum(_ path: String) -> String {
    let raw = RawDB(path)
    return raw.firstRowText(
        """
        SELECT COUNT(*), SUM(age), TOTAL(score), SUM(active), SUM(length(name)), SUM(length(city)), MIN(Z_PK), MAX(Z_PK),
               SUM(Z_ENT), SUM(Z_OPT) FROM \(table)
        """
    ).joined(separator: " ")
}

// MARK: - GRDB

/// GRDB's fastest record form: columns selected in a fixed order and read by index, written
/// through a hand-written `encode(to:)`. The values are kept in a `GRDBCodablePerson`, used here
/// as plain storage: none of its Codable code runs for this form.
struct GRDBPerson: FetchableRecord, PersistableRecord {
    static let databaseTableName = "Person"
    static var databaseSelection: [any SQLSelectable] {
        [
            Column("Z_PK"), Column("Z_ENT"), Column("Z_OPT"), Column("name"), Column("age"), Column("score"),
            Column("city"), Column("active"),
        ]
    }
    var values: GRDBCodablePerson
    var id: Int64 { values.id }

    init(id: Int64, _ p: PersonData) { values = GRDBCodablePerson(id: id, p) }

    init(row: Row) throws {
        values = GRDBCodablePerson(
            id: row[0], entity: row[1], version: row[2], name: row[3], age: row[4], score: row[5], city: row[6],
            active: row[7])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["Z_PK"] = values.id
        container["Z_ENT"] = values.entity
        container["Z_OPT"] = values.version
        container["name"] = values.name
        container["age"] = values.age
        container["score"] = values.score
        container["city"] = values.city
        container["active"] = values.active
    }
}

/// GRDB's everyday record form: Codable does the reading and writing.
struct GRDBCodablePerson: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Person"
    var id: Int64
    var entity: Int64
    var version: Int64
    var name: String
    var age: Int64
    var score: Double
    var city: String
    var active: Bool

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK"
        case entity = "Z_ENT"
        case version = "Z_OPT"
        case name, age, score, city, active
    }
}

extension GRDBCodablePerson {
    /// Person `id` of the store's entity 1, at version 0 (declared here, so the memberwise
    /// initializer stays).
    init(id: Int64, _ p: PersonData) {
        self.init(
            id: id, entity: 1, version: 0, name: p.name, age: Int64(p.age), score: p.score, city: p.city,
            active: p.active)
    }
}

/// A pool on a store file, writing with the durability SiftStore uses: GRDB sets
/// `synchronous=NORMAL` on WAL databases, which would skip the fsync at each commit that the
/// other two pay.
func openPool(_ path: String) -> DatabasePool {
    do {
        let pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        return pool
    } catch { fail("GRDB open: \(error)") }
}

let grdbFilter = Column("age") >= 18 && Column("score") > 0.5

// MARK: - Sift

/// Creates, fills and saves `people` in one context: the work the insert benchmark times.
@inline(never)
func profiledSiftInsert(_ store: PersistentStore, _ people: [PersonData]) -> ManagedObjectContext {
    siftInsert(store, people)
}

/// The insert itself, also used to fill the fetch benchmarks' stores (outside `profiledSift…`, so
/// a profile of a fetch does not count the filling).
func siftInsert(_ store: PersistentStore, _ people: [PersonData]) -> ManagedObjectContext {
    let context = ManagedObjectContext(store: store)
    do {
        for p in people {
            let o = try context.insert("Person")
            try o.setValue(p.name, forKey: "name")
            try o.setValue(p.age, forKey: "age")
            try o.setValue(p.score, forKey: "score")
            try o.setValue(p.city, forKey: "city")
            try o.setValue(p.active, forKey: "active")
        }
        try context.save()
    } catch { fail("Sift insert: \(error)") }
    return context
}

@inline(never)
func profiledSiftFetch(_ context: ManagedObjectContext, _ request: SiftStore.FetchRequest<ManagedObject>)
    -> [ManagedObject]
{
    do { return try context.fetch(request) } catch { fail("Sift fetch: \(error)") }
}

/// The same fetch, for a context with pending changes (a name of its own, so a profile tells the
/// two apart).
@inline(never)
func profiledSiftPendingFetch(_ context: ManagedObjectContext, _ request: SiftStore.FetchRequest<ManagedObject>)
    -> [ManagedObject]
{
    do { return try context.fetch(request) } catch { fail("Sift fetch with pending changes: \(error)") }
}

@inline(never)
func profiledSiftIDs(_ context: ManagedObjectContext, _ request: SiftStore.FetchRequest<ManagedObject>) -> [ObjectID] {
    do { return try context.fetchObjectIDs(request) } catch { fail("Sift fetchObjectIDs: \(error)") }
}

@inline(never)
func profiledSiftCount(_ context: ManagedObjectContext, _ request: SiftStore.FetchRequest<ManagedObject>) -> Int {
    // Through the sink, so the call cannot become a tail jump that callgrind's toggle misses.
    do {
        let n = try context.count(for: request)
        consume(n)
        return n
    } catch { fail("Sift count: \(error)") }
}

/// A Sift store holding `people`, written by SiftStore itself (one save).
func populatedStore(_ label: String, _ people: [PersonData]) -> (path: String, seconds: Double) {
    let path = makeEmptyStore(label)
    let t0 = now()
    do {
        let store = try PersistentStore(model: model, path: path)
        _ = siftInsert(store, people)
    } catch { fail("populate: \(error)") }
    return (path, Double(now() - t0) / 1e9)
}

// Qualified: GRDB has a `FetchRequest` protocol of its own.
let request: SiftStore.FetchRequest<ManagedObject>
do { request = try SiftStore.FetchRequest("Person", predicate: predicateFormat) } catch { fail("\(error)") }

// MARK: - Timing and reporting

/// Nanoseconds taken by `body`.
@inline(__always)
func timed<R>(_ body: () -> R) -> (ns: Double, result: R) {
    let t0 = now()
    let r = body()
    return (Double(now() - t0), r)
}

struct Row3 {
    var label: String
    var rows: Int
    var sift: Double
    var raw: Double?
    var grdb: Double?
    var grdbCodable: Double?
    var target: Double
}
nonisolated(unsafe) var table3: [Row3] = []

/// One operation's contenders over the rounds: round 0 warms up and gives each contender's
/// answer, the later rounds give its times.
struct Contest<Answer> {
    var times: [String: [Double]] = [:]
    var answers: [(String, Answer)] = []

    /// Times `body` for `who` in `round`; `answer` reads round 0's result after the clock stops.
    mutating func run<R>(_ who: String, _ round: Int, _ body: () -> R, answer: (R) -> Answer) {
        let (ns, result) = timed(body)
        if round > 0 { times[who, default: []].append(ns) } else { answers.append((who, answer(result))) }
        withExtendedLifetime(result) {}
    }

    /// Times `body`, whose result is the answer itself.
    mutating func run(_ who: String, _ round: Int, _ body: () -> Answer) { run(who, round, body) { $0 } }

    /// The table row of the medians: Sift's, the raw C API's, and those of the GRDB contenders named.
    func row(_ label: String, rows: Int, grdb: String, grdbCodable: String? = nil, target: Double) -> Row3 {
        let median = { (who: String?) in who.flatMap { self.times[$0] }.map(BenchSupport.median) }
        return Row3(
            label: label, rows: rows, sift: median("Sift") ?? .nan, raw: median("raw C API"), grdb: median(grdb),
            grdbCodable: median(grdbCodable), target: target)
    }
}
nonisolated(unsafe) var checks: [String] = []

func f(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }

print(
    "StoreBench: SQLite \(String(cString: sqlite3_libversion())), GRDB 7.10.0; median of \(rounds) rounds; store files in \(directory.path)"
)

/// One timed GRDB insert of every person through record type `R` in one write transaction, into a
/// fresh store (checksummed on round 0, as the other contenders are).
func grdbInsert<R: PersistableRecord>(
    _ name: String, label: String, round: Int, people: [PersonData],
    sums: inout [String: String], _ make: (Int64, PersonData) -> R
) -> Double {
    let path = makeEmptyStore(label)
    defer { removeStore(path) }
    let ns: Double
    do {
        let pool = openPool(path)
        ns =
            timed {
                do {
                    try pool.write { db in
                        for (i, p) in people.enumerated() { try make(Int64(i + 1), p).insert(db) }
                        try db.execute(
                            sql: "UPDATE sift_primary_key SET max = ? WHERE entity = '*'", arguments: [people.count])
                    }
                } catch { fail("\(name) insert: \(error)") }
            }.ns
    }
    if round == 0 { sums[name] = checksum(path) }
    return ns
}

// MARK: 1. Insert

if runs("insert") {
    let people = makePeople(insertCount, seed: 1)
    var siftT: [Double] = []
    var rawT: [Double] = []
    var grdbT: [Double] = []
    var codableT: [Double] = []
    var sums: [String: String] = [:]
    for round in 0..<rounds {
        do {
            let path = makeEmptyStore("sift-insert")
            do {
                let store: PersistentStore
                do { store = try PersistentStore(model: model, path: path, historyTracking: history) } catch {
                    fail("\(error)")
                }
                // The context lives past the clock: freeing 100,000 objects is not the insert.
                let (ns, context) = timed { profiledSiftInsert(store, people) }
                siftT.append(ns)
                withExtendedLifetime(context) {}
            }
            if round == 0 { sums["Sift"] = checksum(path) }
            removeStore(path)
        }
        if siftOnly { continue }
        do {
            let path = makeEmptyStore("raw-insert")
            do {
                let raw = RawDB(path)
                rawT.append(timed { rawInsert(raw, people) }.ns)
            }
            if round == 0 { sums["raw C API"] = checksum(path) }
            removeStore(path)
        }
        grdbT.append(
            grdbInsert("GRDB record", label: "grdb-insert", round: round, people: people, sums: &sums, GRDBPerson.init))
        codableT.append(
            grdbInsert(
                "GRDB Codable", label: "grdb-codable-insert", round: round, people: people, sums: &sums,
                GRDBCodablePerson.init))
    }
    let expectedAges = people.reduce(0) { $0 + $1.age }
    let expectedActive = people.filter(\.active).count
    for (who, sum) in sums.sorted(by: { $0.key < $1.key }) {
        let fields = sum.split(separator: " ")
        guard fields.count >= 4, Int(fields[0]) == people.count, Int(fields[1]) == expectedAges,
            Int(fields[3]) == expectedActive
        else {
            fail(
                "insert: \(who) wrote \(sum), expected \(people.count) rows, age sum \(expectedAges), \(expectedActive) active"
            )
        }
    }
    guard Set(sums.values).count == 1 else {
        fail("insert: the tables differ: " + sums.map { "\($0.key): \($0.value)" }.joined(separator: "; "))
    }
    checks.append(
        "insert: \(people.count) rows written by each of \(sums.keys.sorted().joined(separator: ", ")); identical table checksums (count, sum(age), total(score), sum(active), text lengths, key range, Z_ENT, Z_OPT): \(sums.values.first ?? "")"
    )
    table3.append(
        Row3(
            label: "insert \(people.count) + save", rows: people.count, sift: median(siftT),
            raw: rawT.isEmpty ? nil : median(rawT), grdb: grdbT.isEmpty ? nil : median(grdbT),
            grdbCodable: codableT.isEmpty ? nil : median(codableT), target: 1.5))
}

// MARK: 2 and 3. Fetch, fetchObjectIDs, count

if runs("fetch") || runs("ids") || runs("count") {
    let totalRows = fetchCount * 5 / 4
    let people = makePeople(totalRows, seed: 2)
    let expected = people.indices.filter { people[$0].matches }.map { Int64($0 + 1) }
    let (path, populateSeconds) = populatedStore("fetch", people)
    print(
        "fetch store: \(totalRows) rows (\(expected.count) match \(predicateFormat)), written by one Sift save in \(f(populateSeconds, 2)) s"
    )
    let store: PersistentStore
    do { store = try PersistentStore(model: model, path: path) } catch { fail("\(error)") }
    do {
        let explanation = try ManagedObjectContext(store: store).explain(request)
        print(
            "Sift's SQL: \(explanation.sql) [\(explanation.bindings.joined(separator: ", "))]; plan: \(explanation.queryPlan.joined(separator: "; ")); residual: \(explanation.residualPredicate ?? "none")"
        )
    } catch { fail("explain: \(error)") }
    let raw = RawDB(path)
    let pool = openPool(path)
    let filtered = GRDBPerson.filter(grdbFilter)
    let filteredCodable = GRDBCodablePerson.filter(grdbFilter)

    func agree(_ part: String, _ answers: [(String, [Int64])]) {
        for (who, keys) in answers where keys != expected {
            fail("\(part): \(who) returned \(keys.count) rows, expected \(expected.count) (or other keys)")
        }
        checks.append(
            "\(part): \(expected.count) rows, the same primary keys from " + answers.map(\.0).joined(separator: ", "))
    }

    if runs("fetch") {
        var contest = Contest<[Int64]>()
        // Round 0 warms the page cache and every statement cache; it is not counted.
        for round in 0...rounds {
            do {
                let context = ManagedObjectContext(store: store)
                contest.run("Sift", round, { profiledSiftFetch(context, request) }) {
                    $0.map { $0.objectID.primaryKey ?? -1 }
                }
            }
            if siftOnly { continue }
            contest.run("raw C API", round, { rawFetch(raw) }) { $0.map(\.id) }
            contest.run("GRDB record", round) {
                do { return try pool.read { try filtered.fetchAll($0) } } catch { fail("GRDB fetch: \(error)") }
            } answer: {
                $0.map(\.id)
            }
            contest.run("GRDB Codable", round) {
                do { return try pool.read { try filteredCodable.fetchAll($0) } } catch { fail("GRDB fetch: \(error)") }
            } answer: {
                $0.map(\.id)
            }
        }
        agree("fetch", contest.answers)
        table3.append(
            contest.row(
                "fetch \(expected.count) of \(totalRows)", rows: expected.count, grdb: "GRDB record",
                grdbCodable: "GRDB Codable", target: 1.5))
    }

    if runs("ids") {
        var contest = Contest<[Int64]>()
        for round in 0...rounds {
            do {
                let context = ManagedObjectContext(store: store)
                contest.run("Sift", round, { profiledSiftIDs(context, request) }) { $0.map { $0.primaryKey ?? -1 } }
            }
            if siftOnly { continue }
            contest.run("raw C API", round) { rawIDs(raw) }
            contest.run("GRDB", round) {
                do {
                    return try pool.read { try filtered.select(Column("Z_PK"), as: Int64.self).fetchAll($0) }
                } catch { fail("GRDB ids: \(error)") }
            }
        }
        agree("fetchObjectIDs", contest.answers)
        table3.append(contest.row("fetchObjectIDs \(expected.count)", rows: expected.count, grdb: "GRDB", target: 1.1))
    }

    if runs("count") {
        var contest = Contest<Int>()
        for round in 0...rounds {
            do {
                let context = ManagedObjectContext(store: store)
                contest.run("Sift", round) { profiledSiftCount(context, request) }
            }
            if siftOnly { continue }
            contest.run("raw C API", round) { rawCount(raw) }
            contest.run("GRDB", round) {
                do { return try pool.read { try filtered.fetchCount($0) } } catch { fail("GRDB count: \(error)") }
            }
        }
        for (who, n) in contest.answers where n != expected.count {
            fail("count: \(who) counted \(n), expected \(expected.count)")
        }
        checks.append("count(for:): \(expected.count) from " + contest.answers.map(\.0).joined(separator: ", "))
        table3.append(contest.row("count(for:) \(expected.count)", rows: expected.count, grdb: "GRDB", target: 1.1))
    }
    withExtendedLifetime((raw, pool, store)) {}
}

// MARK: 4. Fetch with pending changes

struct PendingRow {
    var rows: Int
    var matches: Int
    var pending: Double
    var clean: Double
}
nonisolated(unsafe) var pendingResult: PendingRow?

if runs("pending") {
    var people = makePeople(pendingRows, seed: 3)
    let (path, _) = populatedStore("pending", people)
    let store: PersistentStore
    do { store = try PersistentStore(model: model, path: path) } catch { fail("\(error)") }
    let ids: [ObjectID]
    do {
        ids = try ManagedObjectContext(store: store).fetchObjectIDs(SiftStore.FetchRequest("Person")).sorted {
            ($0.primaryKey ?? 0) < ($1.primaryKey ?? 0)
        }
    } catch { fail("\(error)") }
    guard ids.count == people.count else { fail("pending: the store holds \(ids.count) rows, not \(people.count)") }
    // Spread over the table; one in five targets starts out not matching (index divisible by 5).
    let stride = max(1, people.count / changeCount)
    let targets = (0..<min(changeCount, people.count)).map { k in min(people.count - 1, k * stride + k % 5) }
    /// The k-th change: a third stop matching (age 10), a third start matching (age 40, score
    /// 0.75; those that matched already stay), a third change a column the predicate ignores.
    func apply(_ k: Int, to p: inout PersonData) {
        switch k % 3 {
        case 0: p.age = 10
        case 1:
            p.age = 40
            p.score = 0.75
        default: p.city = "Changed"
        }
    }
    let before = people.indices.filter { people[$0].matches }.map { Int64($0 + 1) }
    for (k, i) in targets.enumerated() { apply(k, to: &people[i]) }
    let after = people.indices.filter { people[$0].matches }.map { Int64($0 + 1) }
    let flippedIn = Set(after).subtracting(before).count
    let flippedOut = Set(before).subtracting(after).count

    /// A context holding the target objects (rows read), with the changes applied or not.
    func prepared(changed: Bool) -> ManagedObjectContext {
        let context = ManagedObjectContext(store: store)
        do {
            for (k, i) in targets.enumerated() {
                let o = try context.existingObject(with: ids[i])
                guard changed else { continue }
                switch k % 3 {
                case 0: try o.setValue(10, forKey: "age")
                case 1:
                    try o.setValue(40, forKey: "age")
                    try o.setValue(0.75, forKey: "score")
                default: try o.setValue("Changed", forKey: "city")
                }
            }
        } catch { fail("pending setup: \(error)") }
        return context
    }

    var pendingT: [Double] = []
    var cleanT: [Double] = []
    /// One timed fetch in a context prepared with or without the changes; round 0 checks the
    /// answer instead of counting.
    func measure(changed: Bool, round: Int) {
        let context = prepared(changed: changed)
        if changed, context.updatedObjects.count != targets.count {
            fail("pending: \(context.updatedObjects.count) updated objects, not \(targets.count)")
        }
        let (ns, objects) =
            changed
            ? timed { profiledSiftPendingFetch(context, request) } : timed { profiledSiftFetch(context, request) }
        if round > 0 {
            if changed { pendingT.append(ns) } else { cleanT.append(ns) }
        } else {
            let keys = objects.map { $0.objectID.primaryKey ?? -1 }
            let expected = changed ? after : before
            guard keys == expected else {
                fail(
                    "pending: the fetch \(changed ? "with" : "without") the changes returned \(keys.count) objects, expected \(expected.count) (or other keys)"
                )
            }
        }
        withExtendedLifetime((context, objects)) {}
    }
    for round in 0...rounds {
        // Alternating which goes first, so neither always runs on the heap the other just freed.
        let order = round % 2 == 0 ? [true, false] : [false, true]
        for changed in order { measure(changed: changed, round: round) }
    }
    checks.append(
        "pending: \(targets.count) objects updated (\(flippedIn) now match, \(flippedOut) no longer match): \(after.count) objects, the keys saving first would give; without the changes \(before.count), the stored answer"
    )
    pendingResult = PendingRow(
        rows: people.count, matches: after.count, pending: median(pendingT), clean: median(cleanT))
    withExtendedLifetime(store) {}
}

// MARK: 5 and 6. Saving edits, merging a did-save (Contexts.swift)

if runs("update") { runUpdateBenchmark(count: updateCount) }
nonisolated(unsafe) var mergeResult: [(held: Int, ns: Double)] = []
if runs("merge") { mergeResult = runMergeBenchmark(merged: mergeCount, holdings: [mergeCount, mergeHeld]) }

// MARK: 7. A fetched results controller taking a merged save in (FetchedResults.swift)

nonisolated(unsafe) var controllerResult: [ControllerRow] = []
if runs("controller") { controllerResult = runControllerBenchmark(held: mergeHeld, sizes: [1, 10, 1_000]) }

// MARK: 8. Typed access (Typed.swift)

nonisolated(unsafe) var typedResult: [TypedRow] = []
if runs("typed") && !siftOnly { typedResult = runTypedBenchmark(count: typedCount) }

// MARK: 9. Memory of a streamed fetch (Streaming.swift)

nonisolated(unsafe) var streamResult: [StreamRow] = []
if runs("stream") { streamResult = runStreamBenchmark(sizes: streamSizes) }

// MARK: 10. A migration against the same schema change by hand (Migration.swift)

nonisolated(unsafe) var migrationResult: MigrationResult?
if runs("migrate") && !siftOnly { migrationResult = runMigrationBenchmark(count: migrateCount) }

// MARK: - Report

print("")
print("Checks (every contender's answer compared before any time is reported):")
for c in checks { print("- \(c)") }
print("")
print(
    "ns per row (inserted or returned; for count(for:) per counted row), median of \(rounds) rounds. Sift = SiftStore; raw = SQLite C API"
)
print(
    "by hand (prepared statement, one transaction, rows into Swift structs); GRDB = GRDB 7.10.0, hand-written record / Codable record."
)
print("")
print(
    "| benchmark | rows | Sift ns/row | raw C ns/row | GRDB ns/row | GRDB Codable ns/row | Sift / raw | target | Sift / GRDB |"
)
print("|---|---|---|---|---|---|---|---|---|")
for r in table3 {
    let n = Double(r.rows)
    let ratio = r.raw.map { r.sift / $0 }
    let verdict =
        r.target.isNaN
        ? "–"
        : ratio.map { $0 <= r.target ? "≤ \(f(r.target, 1))× met" : "≤ \(f(r.target, 1))× MISSED" }
            ?? "≤ \(f(r.target, 1))×"
    print(
        "| \(r.label) | \(r.rows) | \(f(r.sift / n, 1)) | \(r.raw.map { f($0 / n, 1) } ?? "–") | \(r.grdb.map { f($0 / n, 1) } ?? "–") | "
            + "\(r.grdbCodable.map { f($0 / n, 1) } ?? "–") | \(ratio.map { f($0, 2) + "×" } ?? "–") | \(verdict) | \(r.grdb.map { f(r.sift / $0, 2) + "×" } ?? "–") |"
    )
}
if let p = pendingResult {
    let ratio = p.pending / p.clean
    print("")
    print(
        "| fetch over \(p.rows) rows | matches | with \(changeCount) pending changes ns/row | no pending changes ns/row | ratio | target |"
    )
    print("|---|---|---|---|---|---|")
    print(
        "| \(predicateFormat) | \(p.matches) | \(f(p.pending / Double(p.rows), 1)) | \(f(p.clean / Double(p.rows), 1)) | \(f(ratio, 2))× | ≤ 1.2× \(ratio <= 1.2 ? "met" : "MISSED") |"
    )
    print("(ns per table row scanned; totals \(f(p.pending / 1e6, 1)) ms and \(f(p.clean / 1e6, 1)) ms)")
}
if !mergeResult.isEmpty {
    print("")
    print("| merging a did-save of \(mergeCount) updated objects into a context holding | ns per merged object |")
    print("|---|---|")
    for r in mergeResult { print("| \(r.held) objects | \(f(r.ns, 1)) |") }
    if let small = mergeResult.first, let big = mergeResult.last, mergeResult.count > 1 {
        print(
            "(holding \(big.held / max(1, small.held))× as many objects costs \(f(big.ns / small.ns, 2))× per merged object; target: about 1×)"
        )
    }
}
printControllerResult(controllerResult, held: mergeHeld)
printTyped(typedResult)
printStream(streamResult)
printMigration(migrationResult)
print("")
print(
    "Totals, ms: "
        + table3.map { r in
            "\(r.label): Sift \(f(r.sift / 1e6, 1))" + (r.raw.map { ", raw \(f($0 / 1e6, 1))" } ?? "")
                + (r.grdb.map { ", GRDB \(f($0 / 1e6, 1))" } ?? "")
                + (r.grdbCodable.map { ", GRDB Codable \(f($0 / 1e6, 1))" } ?? "")
        }.joined(separator: "; "))
