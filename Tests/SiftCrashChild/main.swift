// The writer the crash test (Tests/SiftStoreTests/CrashTests.swift) kills with SIGKILL: it opens
// the store at the path it is given and saves forever, each save one context save that inserts a
// batch of entries, updates the single Ledger and sometimes deletes a whole older batch, so a save
// cut in half leaves a store whose ledger and entries disagree. It continues from whatever state it
// finds, so the store accumulates history across kills. It reports on stdout, one flushed line at
// a time, "R" once the store is open and "B s" / "E s" around save number s, which tells the
// parent whether a kill landed inside a save and which saves were reported done (those must
// survive). `sift-crash-child --model` prints the model as JSON instead, so the test checks the
// store with exactly this model.
//
// `sift-crash-child --migrate PATH` is the migration crash test's child: it opens the store at PATH
// (made with the first of `migrationModels()`) with the second through a migration plan, saying
// "R" before the open and "M" once it returned (`--migrate-coredata PATH`: the same on a store in
// Core Data's layout); `--migration-models` prints both models' JSON,
// separated by a line "---".
//
// `sift-crash-child --counters PATH AUTHOR ROUNDS` is the other test's writer (TwoProcessTests):
// two of them increment the Ledgers' totals in one store file at the same time, under the `.error`
// merge policy, and learn of each other's saves through the persistent history.

import Foundation
import SiftStore

/// Ledger: `total` entries exist, `saves` saves happened (save s wrote batch s), `deleted` batches
/// were deleted since. Entry: number `n` of the `batchSize` entries of batch `batch`, with a text
/// that is a prefix of `pattern(batch, n)`, so torn or misplaced text is visible too.
func crashModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(
            "Ledger",
            attributes: [
                AttributeDescription("total", .integer64, optional: false),
                AttributeDescription("saves", .integer64, optional: false),
                AttributeDescription("deleted", .integer64, optional: false),
            ],
            relationships: [
                RelationshipDescription("entries", to: "Entry", toMany: true, inverse: "ledger", deleteRule: .cascade)
            ]),
        EntityDescription(
            "Entry",
            attributes: [
                AttributeDescription("batch", .integer64, optional: false),
                AttributeDescription("n", .integer64, optional: false),
                AttributeDescription("batchSize", .integer64, optional: false),
                AttributeDescription("text", .string, optional: false),
            ],
            relationships: [RelationshipDescription("ledger", to: "Ledger", inverse: "entries", optional: false)]),
    ])
}

/// The text an entry's `text` is a prefix of; the test rebuilds it to check the stored text.
/// (Built with the standard library's bulk operations: a loop per byte is slow in debug builds.)
func pattern(batch: Int64, n: Int64, length: Int) -> String {
    let unit = "b\(batch)n\(n)|"
    let repeated = String(repeating: unit, count: length / unit.utf8.count + 1)
    return String(decoding: repeated.utf8.prefix(length), as: UTF8.self)
}

/// One line to the parent, written at once (no buffering: the process dies without flushing).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sift-crash-child: \(message)\n".utf8))
    exit(1)
}

func integer(_ o: ManagedObject, _ key: String) throws -> Int64 {
    guard let v = try o.get(key, as: Int64.self) else { throw StoreError(.validation, "\(o.objectID) has no \(key)") }
    return v
}

/// Saves forever. Batch s is the entries of save s; the batch of the previous save is never
/// deleted, so the latest batch is always present and the test can check it.
func run(path: String) throws -> Never {
    let store = try PersistentStore(model: try crashModel(), path: path)
    var context = ManagedObjectContext(store: store)
    var ledger = try context.fetch(FetchRequest("Ledger")).first
    say("R")
    var savesThisRun = 0
    while true {
        let l: ManagedObject
        if let ledger {
            l = ledger
        } else {
            // The first save creates the ledger together with the first batch.
            l = try context.insert("Ledger")
            for key in ["total", "saves", "deleted"] { try l.setValue(0, forKey: key) }
            ledger = l
        }
        let s = try integer(l, "saves") + 1
        var total = try integer(l, "total")
        var deleted = try integer(l, "deleted")

        let k = Int64.random(in: 1...50)
        for n in 0..<k {
            let e = try context.insert("Entry")
            try e.setValue(s, forKey: "batch")
            try e.setValue(n, forKey: "n")
            try e.setValue(k, forKey: "batchSize")
            try e.setValue(pattern(batch: s, n: n, length: Int.random(in: 0...4096)), forKey: "text")
            try e.setValue(l, forKey: "ledger")
        }
        total += k

        // Batches present before this save: s - 1 - deleted. Deleting sometimes, and the oldest
        // batch past 24, keeps the store small enough to check after every kill.
        let crowded = s - 1 - deleted > 24
        if s > 2, crowded || Int.random(in: 0..<4) == 0 {
            let victim: Int64
            if crowded || Bool.random() {
                // Unsorted, SQLite reads the table in key order and keys grow with the saves, so
                // this is the oldest batch (or near it: which one does not matter).
                var oldest = try FetchRequest("Entry", predicate: "batch < %@", s - 1)
                oldest.fetchLimit = 1
                victim = try context.fetch(oldest).first.map { try integer($0, "batch") } ?? 0
            } else {
                // Often a batch deleted already: then nothing is deleted and nothing counted.
                victim = Int64.random(in: 1...(s - 2))
            }
            let doomed = try context.fetch(try FetchRequest("Entry", predicate: "batch == %@", victim))
            if !doomed.isEmpty {
                for e in doomed { try context.delete(e) }
                total -= Int64(doomed.count)
                deleted += 1
            }
        }

        try l.setValue(total, forKey: "total")
        try l.setValue(s, forKey: "saves")
        try l.setValue(deleted, forKey: "deleted")
        say("B \(s)")
        try context.save()
        say("E \(s)")

        savesThisRun += 1
        if savesThisRun % 100 == 0 {
            // Left alone forever (a manual run), the context would keep every entry it saved.
            context = ManagedObjectContext(store: store)
            ledger = try context.fetch(FetchRequest("Ledger")).first
        }
    }
}

/// Waits for the parent's next line on standard input (it sends one when every child is ready).
func awaitParent(_ word: String) {
    guard let line = readLine(), line == word else { fail("expected '\(word)' from the parent") }
}

/// Saves `context`; false after a merge conflict, with the context's changes discarded.
func saved(_ context: ManagedObjectContext) throws(StoreError) -> Bool {
    do {
        try context.save()
        return true
    } catch {
        guard error.kind == .mergeConflict else { throw error }
        context.rollback()
        return false
    }
}

/// `ROUNDS` times: adds 1 to the total of a random Ledger and saves. A merge conflict (the other
/// process saved that Ledger since this one read it) discards the edit, merges the other's
/// transactions from the history and tries again, so no increment is lost or counted twice. Says
/// "R" when ready, waits for "go", says "DONE <successes per ledger…> <conflicts>", waits for
/// "check", then reads the whole history and says "SEEN <the other children's transactions>
/// <each ledger's total as this context sees it after merging them>".
func counters(path: String, author: String, rounds: Int) throws -> Never {
    let store = try PersistentStore(path: path)
    guard store.tracksHistory else { fail("the store does not track history") }
    let context = ManagedObjectContext(store: store)
    context.transactionAuthor = author
    context.name = "counters"
    let ledgers = try context.fetch(FetchRequest("Ledger")).sorted {
        ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0)
    }
    guard !ledgers.isEmpty else { fail("no ledgers") }
    var token = try store.history(after: nil).last?.token
    say("R")
    awaitParent("go")
    var successes = [Int](repeating: 0, count: ledgers.count)
    var conflicts = 0
    for _ in 0..<rounds {
        // A pause of up to 2 ms: a child that ran all its rounds in one time slice would never
        // meet the other.
        usleep(UInt32.random(in: 0...2_000))
        let i = Int.random(in: ledgers.indices)
        var attempts = 0
        while true {
            try ledgers[i].setValue(try integer(ledgers[i], "total") + 1, forKey: "total")
            if try saved(context) {
                successes[i] += 1
                break
            }
            conflicts += 1
            attempts += 1
            if attempts > 1_000 { fail("1000 conflicts in a row: merging the history does not refresh") }
            let news = try store.history(after: token)
            try context.mergeChanges(fromHistory: news)
            token = news.last?.token ?? token
        }
    }
    say("DONE " + (successes.map(String.init) + [String(conflicts)]).joined(separator: " "))
    awaitParent("check")
    let others = try store.history(after: token).filter { $0.author != nil && $0.author != author }
    try context.mergeChanges(fromHistory: others)
    let seen = try store.history(after: nil).filter { $0.author != nil && $0.author != author }.count
    let totals = try ledgers.map { try integer($0, "total") }
    say("SEEN \(seen) " + totals.map(String.init).joined(separator: " "))
    exit(0)
}

/// The migration crash test's two versions: items (a number, a name, a score) with a tag each;
/// then the name renamed, the number and score widened, a required flag added with a default, an
/// index on the number, and the tag become a to-many.
func migrationModels() throws -> (ManagedObjectModel, ManagedObjectModel) {
    var v1 = try ManagedObjectModel(
        json: Data(
            #"""
            {"entities": [
                {"name": "Item", "attributes": [{"name": "n", "type": "integer32", "optional": false},
                    {"name": "name", "type": "string"}, {"name": "score", "type": "float"}],
                 "relationships": [{"name": "tag", "destination": "Tag", "inverse": "items"}]},
                {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
                 "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "tag"}]}]}
            """#.utf8))
    var v2 = try ManagedObjectModel(
        json: Data(
            #"""
            {"entities": [
                {"name": "Item", "attributes": [{"name": "n", "type": "integer64", "optional": false, "indexed": true},
                    {"name": "title", "type": "string", "renamingIdentifier": "name"}, {"name": "score", "type": "double"},
                    {"name": "flag", "type": "boolean", "optional": false, "default": true}],
                 "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "items", "renamingIdentifier": "tag"}]},
                {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
                 "relationships": [{"name": "items", "destination": "Item", "toMany": true, "inverse": "tags"}]}]}
            """#.utf8))
    v1.version = "1"
    v2.version = "2"
    return (v1, v2)
}

/// Opens the store at `path` with the second migration model, through a plan from the first.
func migrate(path: String) throws -> Never {
    let (v1, v2) = try migrationModels()
    let plan = try MigrationPlan(from: v1, [.inferred(v2)])
    say("R")
    _ = try PersistentStore(model: v2, path: path, migration: .plan(plan))
    say("M")
    exit(0)
}

/// Opens the Core Data store at `path` (laid out for the first migration model) with the second,
/// through a plan from the first.
func migrateCoreData(path: String) throws -> Never {
    let (v1, v2) = try migrationModels()
    let plan = try MigrationPlan(from: v1, [.inferred(v2)])
    say("R")
    _ = try PersistentStore(coreDataStoreAt: URL(fileURLWithPath: path), model: v2, migration: .plan(plan))
    say("M")
    exit(0)
}

let arguments = CommandLine.arguments
do {
    if arguments.count == 2, arguments[1] == "--migration-models" {
        let (v1, v2) = try migrationModels()
        say(v1.jsonString + "\n---\n" + v2.jsonString)
        exit(0)
    }
    if arguments.count == 3, arguments[1] == "--migrate" { try migrate(path: arguments[2]) }
    if arguments.count == 3, arguments[1] == "--migrate-coredata" { try migrateCoreData(path: arguments[2]) }
    if arguments.count == 2, arguments[1] == "--model" {
        say(try crashModel().jsonString)
        exit(0)
    }
    if arguments.count == 5, arguments[1] == "--counters", let rounds = Int(arguments[4]) {
        try counters(path: arguments[2], author: arguments[3], rounds: rounds)
    }
    guard arguments.count == 2 else {
        fail(
            "usage: sift-crash-child STORE-PATH | --model | --counters STORE-PATH AUTHOR ROUNDS | --migrate[-coredata] STORE-PATH | --migration-models"
        )
    }
    try run(path: arguments[1])
} catch {
    fail("\(error)")
}
