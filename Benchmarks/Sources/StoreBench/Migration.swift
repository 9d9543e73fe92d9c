// StoreBench part 10 (`--only migrate`, `--migrate N`): an inferred migration of a store of N
// items (1,000,000 by default, with 100 tags) against the same schema change written by hand in
// SQL. Version 2 renames `name` to `title`, widens `n` and `score`, adds a required `flag` with a
// default, indexes `n` and turns the to-one `tag` into the to-many `tags` (a join table). Sift
// opens a copy with `migration: .inferred` (its set-aside, copy, relink, check and drop, in one
// transaction); the hand-written SQL on another copy, also in one transaction, renames the column
// in place, adds `flag` with a column default, fills the join table from the foreign key, drops
// the column (SQLite rewrites the table for that), makes the index and stores the new model in the
// metadata, so Sift opens its result with version 2. The two files must then hold the same items,
// values and links (checksums and a fetch through Sift on each) or the run fails. Times are this
// thread's CPU time (the machine may be shared), each the median of the rounds, with the stores
// closed (their WAL checkpointed) inside the measured time for both.

import BenchSupport
import CSQLite
import Foundation
import SiftStore

struct MigrationResult {
    var items: Int
    var sift: (wall: Double, cpu: Double)
    var hand: (wall: Double, cpu: Double)
}

let migrationVersion1 = """
    {"entities": [
        {"name": "Item", "attributes": [{"name": "n", "type": "integer32", "optional": false},
            {"name": "name", "type": "string"}, {"name": "score", "type": "float"}],
         "relationships": [{"name": "tag", "destination": "Tag", "inverse": "items"}]},
        {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
         "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "tag"}]}]}
    """
let migrationVersion2 = """
    {"entities": [
        {"name": "Item", "attributes": [{"name": "n", "type": "integer64", "optional": false, "indexed": true},
            {"name": "title", "type": "string", "renamingIdentifier": "name"}, {"name": "score", "type": "double"},
            {"name": "flag", "type": "boolean", "optional": false, "default": true}],
         "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "items", "renamingIdentifier": "tag"}]},
        {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
         "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "tags"}]}]}
    """

/// The schema change by hand, on the layout SiftStore gives version 1 (checked before it runs).
let handMigrationSQL = """
    ALTER TABLE "Item" RENAME COLUMN "name" TO "title";
    ALTER TABLE "Item" ADD COLUMN "flag" INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE "Z_Item_tags" ("Z_SRC" INTEGER NOT NULL, "Z_DST" INTEGER NOT NULL, "Z_SRC_ORD" INTEGER);
    INSERT INTO "Z_Item_tags" ("Z_SRC", "Z_DST") SELECT "Z_PK", "tag" FROM "Item" WHERE "tag" IS NOT NULL;
    CREATE INDEX "Z_Item_tags_src" ON "Z_Item_tags" ("Z_SRC");
    CREATE INDEX "Z_Item_tags_dst" ON "Z_Item_tags" ("Z_DST");
    DROP INDEX "Z_Item_tag";
    ALTER TABLE "Item" DROP COLUMN "tag";
    CREATE INDEX "Z_Item_n_index" ON "Item" ("n");
    """

func migrationModel(_ json: String) -> ManagedObjectModel {
    do { return try ManagedObjectModel(json: Data(json.utf8)) } catch { fail("migration model: \(error)") }
}

/// A version 1 store (`model`) of `count` items (number i, name "item i", score (i % 8) / 4, tag
/// "tag (i % 100)"), saved 100,000 at a time.
func makeMigrationStore(_ count: Int, _ model: ManagedObjectModel) -> String {
    let path = freshPath("migrate-v1")
    do {
        let store = try PersistentStore(model: model, path: path)
        var context = ManagedObjectContext(store: store)
        var tags: [String: ManagedObject] = [:]
        for t in 0..<100 {
            let tag = try context.insert("Tag")
            try tag.setValue("tag \(t)", forKey: "label")
            tags["tag \(t)"] = tag
        }
        for i in 0..<count {
            let item = try context.insert("Item")
            try item.setValue(i, forKey: "n")
            try item.setValue("item \(i)", forKey: "name")
            try item.setValue(Double(i % 8) / 4, forKey: "score")
            try item.setValue(tags["tag \(i % 100)"], forKey: "tag")
            if (i + 1) % 100_000 == 0 || i == count - 1 {
                // A fresh context per batch: one holding every object would hold a million.
                try context.save()
                context = ManagedObjectContext(store: store)
                for tag in try context.fetch(FetchRequest("Tag")) { tags[try tag.get("label", as: String.self)!] = tag }
            }
        }
    } catch { fail("making the migration store: \(error)") }
    return path
}

/// Runs the hand-written migration on `path` in one transaction and stores version 2 in its
/// metadata.
func handMigrate(_ path: String, to model: ManagedObjectModel) {
    let raw = RawDB(path)
    raw.exec("BEGIN IMMEDIATE")
    raw.exec(handMigrationSQL)
    let update = raw.prepare("UPDATE sift_metadata SET value = ?1 WHERE key = ?2")
    for (key, value) in [("model", model.jsonString), ("version_hash", model.versionHash)] {
        raw.check(bindText(update, 1, value), "bind")
        raw.check(bindText(update, 2, key), "bind")
        raw.check(sqlite3_step(update), "update the metadata")
        sqlite3_reset(update)
    }
    sqlite3_finalize(update)
    raw.exec("COMMIT")
}

/// What a migrated file holds: item and link checksums, and a fetch count through Sift.
func migratedContents(_ path: String, _ model: ManagedObjectModel) -> [String] {
    var out: [String] = []
    do {
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let request = try FetchRequest(
            "Item", predicate: "flag == YES AND ANY tags.label == 'tag 7' AND title ENDSWITH '7'")
        out.append("fetched \(try context.count(for: request))")
    } catch { fail("opening the migrated \(path): \(error)") }
    let raw = RawDB(path)
    out += raw.firstRowText("SELECT COUNT(*), SUM(n), SUM(length(title)), SUM(score), SUM(flag) FROM \"Item\"")
    out += raw.firstRowText("SELECT COUNT(*), SUM(\"Z_SRC\"), SUM(\"Z_DST\") FROM \"Z_Item_tags\"")
    return out
}

func runMigrationBenchmark(count: Int) -> MigrationResult {
    let (v1, v2) = (migrationModel(migrationVersion1), migrationModel(migrationVersion2))
    let original = makeMigrationStore(count, v1)
    let columns = RawDB(original).firstRowText("SELECT group_concat(name, ',') FROM pragma_table_info('Item')")
    guard columns == ["Z_PK,Z_ENT,Z_OPT,n,name,score,tag"] else {
        fail("SiftStore lays out version 1 as \(columns), not as the hand-written migration expects")
    }
    var sift: [(wall: Double, cpu: Double)] = []
    var hand: [(wall: Double, cpu: Double)] = []
    for round in 0..<rounds {
        let (a, b) = (freshPath("migrate-sift"), freshPath("migrate-hand"))
        do {
            try FileManager.default.copyItem(atPath: original, toPath: a)
            try FileManager.default.copyItem(atPath: original, toPath: b)
        } catch { fail("copying the store: \(error)") }
        // Alternating which runs first, so neither always meets a warmer cache.
        let runSift = {
            sift.append(
                timedBoth {
                    do { _ = try PersistentStore(model: v2, path: a, migration: .inferred) } catch {
                        fail("Sift's migration: \(error)")
                    }
                })
        }
        let runHand = { hand.append(timedBoth { handMigrate(b, to: v2) }) }
        if round % 2 == 0 {
            runSift()
            runHand()
        } else {
            runHand()
            runSift()
        }
        if round == 0 {
            let (x, y) = (migratedContents(a, v2), migratedContents(b, v2))
            guard x == y, x.first == "fetched \(count / 100)" else {
                fail("the migrated stores differ: Sift \(x), by hand \(y)")
            }
            checks.append(
                "migration of \(count) items: Sift and the hand-written SQL give the same store (\(x.joined(separator: ", ")))"
            )
        }
        removeStore(a)
        removeStore(b)
    }
    removeStore(original)
    return MigrationResult(
        items: count, sift: (median(sift.map(\.wall)), median(sift.map(\.cpu))),
        hand: (median(hand.map(\.wall)), median(hand.map(\.cpu))))
}

func printMigration(_ r: MigrationResult?) {
    guard let r else { return }
    let ratio = r.sift.cpu / r.hand.cpu
    print("")
    print("| migration of \(r.items) items | Sift (inferred) ms | hand-written SQL ms | Sift / hand | target |")
    print("|---|---|---|---|---|")
    print(
        "| CPU time, median of \(rounds) | \(f(r.sift.cpu, 0)) | \(f(r.hand.cpu, 0)) | \(f(ratio, 2))× | ≤ 3× \(ratio <= 3 ? "met" : "MISSED") |"
    )
    print(
        "| wall clock, median of \(rounds) | \(f(r.sift.wall, 0)) | \(f(r.hand.wall, 0)) | \(f(r.sift.wall / r.hand.wall, 2))× | – |"
    )
}
