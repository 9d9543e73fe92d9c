// The writer the crash test (Tests/SiftStoreTests/CrashTests.swift) kills with SIGKILL: it opens
// the store at the path it is given and saves forever, each save one context save that inserts a
// batch of entries, updates the single Ledger and sometimes deletes a whole older batch, so a save
// cut in half leaves a store whose ledger and entries disagree. It continues from whatever state it
// finds, so the store accumulates history across kills. It reports on stdout, one flushed line at
// a time, "R" once the store is open and "B s" / "E s" around save number s, which tells the
// parent whether a kill landed inside a save and which saves were reported done (those must
// survive). `sift-crash-child --model` prints the model as JSON instead, so the test checks the
// store with exactly this model.

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

let arguments = CommandLine.arguments
guard arguments.count == 2 else { fail("usage: sift-crash-child STORE-PATH | --model") }
do {
    if arguments[1] == "--model" {
        say(try crashModel().jsonString)
        exit(0)
    }
    try run(path: arguments[1])
} catch {
    fail("\(error)")
}
