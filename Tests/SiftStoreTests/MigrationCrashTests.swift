// The migration crash test: a store of 100,000 items (and 100 tags) made with the first of
// `sift-crash-child --migration-models` is copied afresh for each kill, `sift-crash-child
// --migrate` opens the copy with the second model through a plan, and is killed with SIGKILL at a
// random instant within the time an unkilled migration takes (and a third more). After each kill the copy must pass
// `PRAGMA integrity_check`, keep exactly one of the two models' hashes, open with that model, and
// hold every item whole in that model's form (its number, its name or title, its score, its flag,
// its tag). The store is built once, with SQL (saving 100,000 objects in a debug build would take
// longer than the whole test may). The second test does the same on a store laid out as Core Data
// lays it out, its model told by its schema. SIFT_MIGRATION_KILLS=n sets the number of kills (3 by default,
// to keep `make test` within its time; `make crash-test` runs 40), for each.

import Foundation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import SiftTestSupport
import Testing

@testable import SiftStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite struct MigrationCrashTests {
    static let items = 100_000
    static let tags = 100

    @Test func killedMigrationLeavesOneWholeModel() throws { try killMigrations(coreData: false) }

    /// The same on a store laid out as Core Data lays it out, told at which model by its schema.
    @Test func killedCoreDataMigrationLeavesOneWholeModel() throws { try killMigrations(coreData: true) }

    func killMigrations(coreData: Bool) throws {
        let kills = ProcessInfo.processInfo.environment["SIFT_MIGRATION_KILLS"].flatMap { Int($0) } ?? 3
        let executable = try #require(
            builtExecutable(named: "sift-crash-child")?.path, "no sift-crash-child executable next to the test bundle")
        let modelsRun = try CrashChild(executable, ["--migration-models"], stderr: "/dev/null")
        modelsRun.readToEnd()
        #expect(modelsRun.reap() == .exited(0))
        let texts = String(decoding: modelsRun.output, as: UTF8.self).components(separatedBy: "\n---\n")
        try #require(texts.count == 2)
        let models = try texts.map { try ManagedObjectModel(json: Data($0.utf8)) }
        let original = Fixtures.temporaryPath("items.sqlite")
        try Self.build(original, models[0], coreData: coreData)
        let directory = (original as NSString).deletingLastPathComponent
        let stderrPath = directory + "/child-stderr.txt"

        // One migration left to finish: how long one takes, and the migrated store checked.
        let copy = directory + "/copy.sqlite"
        let clock = ContinuousClock()
        let start = clock.now
        try Self.migrate(executable, original, copy, stderrPath, killAfter: nil, coreData: coreData)
        let full = clock.now - start
        #expect(try Self.check(copy, models, coreData: coreData) == 1)
        let microseconds = UInt32(
            max(1_000, full.components.seconds * 1_000_000 + full.components.attoseconds / 1_000_000_000_000))

        var landed = [0, 0]
        for round in 1...kills {
            // Up to a third past the unkilled run's time, so some kills land at the commit or after.
            let delay = UInt32.random(in: 0...(microseconds + microseconds / 3))
            try Self.migrate(executable, original, copy, stderrPath, killAfter: delay, coreData: coreData)
            let at = try Self.check(copy, models, coreData: coreData)
            guard at >= 0 else {
                Issue.record("kill \(round) after \(delay) µs: the store is broken (kept at \(copy))")
                return
            }
            landed[at] += 1
        }
        print(
            "MigrationCrashTests\(coreData ? " (Core Data's layout)" : ""): one migration of \(Self.items) items took \(full); \(kills) kills: \(landed[0]) left the old model, \(landed[1]) the new"
        )
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Copies `original` to `copy` (no -wal or -shm left over) and runs the migrating child on
    /// it, killing it `killAfter` µs after it said it is about to open the store (nil: never).
    static func migrate(
        _ executable: String, _ original: String, _ copy: String, _ stderrPath: String, killAfter: UInt32?,
        coreData: Bool
    ) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        let child = try CrashChild(
            executable, [coreData ? "--migrate-coredata" : "--migrate", copy], stderr: stderrPath)
        try #require(child.waitForReady(seconds: 30), "the child did not start: \(childErrors(stderrPath))")
        guard let killAfter else {
            child.readToEnd()
            #expect(child.reap() == .exited(0), "\(childErrors(stderrPath))")
            #expect(child.lines.last == "M")
            return
        }
        usleep(killAfter)
        child.sendKill()
        let status = child.reap()
        #expect(status == .signalled(SIGKILL) || status == .exited(0), "\(childErrors(stderrPath))")
    }

    /// Makes the store at `path` with `model` and fills it with SQL: tags 1…100, items 101…
    /// (number i, name "item i", score (i % 8) / 4, tag 1 + i % 100); the key counter past them.
    static func build(_ path: String, _ model: ManagedObjectModel, coreData: Bool) throws {
        let store =
            coreData
            ? try PersistentStore(coreDataStoreAt: URL(fileURLWithPath: path), model: model, create: true)
            : try PersistentStore(model: model, path: path)
        let item = store.model.resolved["Item"]!
        let tag = store.model.resolved["Tag"]!
        let q = PersistentStore.q
        guard case .foreignKey(let fk) = item.relationship("tag")!.storage else {
            Issue.record("Item.tag is not kept in a foreign key")
            return
        }
        let head = [Storage.primaryKey, Storage.entityColumn, Storage.versionColumn].map(q)
        let col = { (name: String) in q(item.attribute(name)!.column) }
        try store.writeTransaction { () throws(StoreError) in
            do {
                try store.run(
                    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) INSERT INTO \(q(tag.table)) (\((head + [q(tag.attribute("label")!.column)]).joined(separator: ", "))) SELECT i, ?, 1, 'tag ' || i FROM c",
                    [.integer(Int64(tags)), .integer(tag.number)])
                try store.run(
                    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) INSERT INTO \(q(item.table)) (\((head + [col("n"), col("name"), col("score"), q(fk)]).joined(separator: ", "))) SELECT ? + i, ?, 1, i, 'item ' || i, (i % 8) / 4.0, 1 + i % ? FROM c",
                    [.integer(Int64(items)), .integer(Int64(tags)), .integer(item.number), .integer(Int64(tags))])
                // One counter for the store (Sift's layout), or each root's (Core Data's).
                let counters = coreData ? [SQLValue.integer(tag.number), .integer(item.number)] : [.text("*")]
                for counter in counters {
                    try store.run(store.model.layout.keyCounterSQL.write, [counter, .integer(Int64(tags + items))])
                }
            } catch { throw StoreError(.sqlite, "\(error)") }
        }
        // Read back through the store: the rows are what saves would have written.
        let c = ManagedObjectContext(store: store)
        let seven = try c.fetch(FetchRequest("Item", predicate: "n == 7"))
        #expect(try seven.first?.get("name", as: String.self) == "item 7")
        #expect(
            try c.count(for: FetchRequest("Item", predicate: "n == 7 AND score == 1.75 AND tag.label == 'tag 8'")) == 1)
        #expect(try c.count(for: FetchRequest("Tag", predicate: "items.@count == 1000")) == tags)
    }

    /// Which of `models` the store on `db` is at: told by its stored model's hash, or in Core
    /// Data's layout by its schema; nil, with an issue recorded, when neither.
    static func storedModel(_ db: SQLiteConnection, _ models: [ManagedObjectModel], coreData: Bool) throws -> Int? {
        if coreData {
            let laid = try models.map { try $0.laidOut(as: .coreData) }
            let at = try laid.firstIndex { try CoreDataFile.schemaDifferences(db, $0, TableLayout.make($0)).isEmpty }
            if at == nil { Issue.record("the store's schema is neither model's") }
            return at
        }
        let hash = try db.query(
            "SELECT value FROM \(PersistentStore.q(Storage.metadataTable)) WHERE key = 'version_hash'")
        let at = models.firstIndex { hash == [[.text($0.versionHash)]] }
        if at == nil { Issue.record("the stored model hash \(hash) is neither model's") }
        return at
    }

    /// Which of the two models (0 or 1) the store at `path` holds, every item whole in its form;
    /// -1, with an issue recorded for each problem, when it holds neither or anything is off.
    static func check(_ path: String, _ models: [ManagedObjectModel], coreData: Bool) throws -> Int {
        let db = try SQLiteConnection(path: path)
        guard try db.query("PRAGMA integrity_check") == [[.text("ok")]] else {
            Issue.record("integrity_check fails")
            return -1
        }
        guard let at = try storedModel(db, models, coreData: coreData) else { return -1 }
        let store =
            coreData
            ? try PersistentStore(coreDataStoreAt: URL(fileURLWithPath: path), model: models[at])
            : try PersistentStore(model: models[at], path: path)
        let item = store.model.resolved["Item"]!
        let q = PersistentStore.q
        let col = { (name: String) in q(item.attribute(name)!.column) }
        let name = at == 0 ? "name" : "title"
        // Every item whole: its number, its name, its score and (after) its flag, by SQL.
        let whole = try store.rows(
            "SELECT COUNT(*), SUM(\(col("n"))) FROM \(q(item.table)) WHERE \(col(name)) = 'item ' || \(col("n")) AND \(col("score")) = (\(col("n")) % 8) / 4.0\(at == 1 ? " AND \(col("flag")) = 1" : "")",
            [])
        let n = Int64(items)
        #expect(whole == [[.integer(n), .integer(n * (n + 1) / 2)]], "model \(at): items not whole")
        // Every item's tag, through the store's fetches.
        let c = ManagedObjectContext(store: store)
        let linked = at == 0 ? "tag.label == 'tag 1'" : "ANY tags.label == 'tag 1' AND tags.@count == 1"
        #expect(try c.count(for: FetchRequest("Item", predicate: linked)) == items / tags, "model \(at): links")
        #expect(try c.count(for: FetchRequest("Tag", predicate: "items.@count == \(items / tags)")) == tags)
        #expect(try c.count(for: FetchRequest("Item")) == items)
        return at
    }
}
