// `sift store history` and concurrent `sift store update` run as subprocesses: the history of a
// store made with `create --history` as NDJSON (token, ISO 8601 timestamp, author, context name,
// changes, a delete's tombstone) with `--after`, `--off` turning tracking off, the error for a store
// without history, and two processes running `update` on the same row many times at once losing no
// increment.

import Foundation
import SiftJSON
import SiftStore
import Testing

@Suite struct StoreHistoryCLITests {
    /// A temporary directory, removed by the caller.
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sift-history-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A store at `dir/db.sqlite` made from `records` (entity Record), with or without history.
    static func store(in dir: URL, _ records: String, history: Bool) throws -> String {
        let data = dir.appendingPathComponent("records.json").path
        try Data(records.utf8).write(to: URL(fileURLWithPath: data))
        let model = try runSift(["store", "infer-model", data])
        try #require(model.status == 0, "\(model.stderr)")
        let modelFile = dir.appendingPathComponent("model.json").path
        try Data(model.stdout.utf8).write(to: URL(fileURLWithPath: modelFile))
        let db = dir.appendingPathComponent("db.sqlite").path
        let created = try runSift(["store", "create", db, "--model", modelFile] + (history ? ["--history"] : []))
        try #require(created.status == 0, "\(created.stderr)")
        let imported = try runSift(["store", "import", db, "Record", data])
        try #require(imported.status == 0, "\(imported.stderr)")
        return db
    }

    static func field(_ v: JSONValue, _ key: String) -> JSONValue? {
        if case .object(let members) = v { return members.first { $0.0 == key }?.1 }
        return nil
    }

    @Test func historyPrintsTransactionsAsNDJSON() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let start = Date().addingTimeInterval(-1)
        let db = try Self.store(in: dir, #"[{"n": 1, "label": "a"}, {"n": 2, "label": "b"}]"#, history: true)
        let updated = try runSift(["store", "update", db, "Record", "n == 1", "--set-expression", "n=n + 10"])
        #expect(updated.status == 0 && updated.stdout == "1\n")
        let deleted = try runSift(["store", "delete", db, "Record", "label == 'b'"])
        #expect(deleted.status == 0 && deleted.stdout == "1\n")

        let out = try runSift(["store", "history", db])
        #expect(out.status == 0 && out.stderr.isEmpty)
        let lines = try out.stdout.split(separator: "\n").map { try JSONReader.parse(String($0)) }
        try #require(lines.count == 3)
        let tokens = lines.compactMap { if case .integer(let t)? = Self.field($0, "token") { t } else { nil } }
        #expect(tokens.count == 3 && tokens == tokens.sorted() && Set(tokens).count == 3)
        #expect(lines.map { Self.field($0, "author") } == Array(repeating: .string("sift"), count: 3))
        #expect(
            lines.map { Self.field($0, "contextName") }
                == [.string("store import"), .string("store update"), .string("store delete")])
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in lines {
            guard case .string(let stamp)? = Self.field(line, "timestamp"), let date = format.date(from: stamp) else {
                Issue.record("no ISO 8601 timestamp in \(line.text)")
                continue
            }
            #expect(stamp.hasSuffix("Z") && date >= start && date <= Date())
        }
        func changes(_ line: JSONValue) -> [JSONValue] {
            if case .array(let items)? = Self.field(line, "changes") { items } else { [] }
        }
        #expect(changes(lines[0]).map { Self.field($0, "kind") } == [.string("insert"), .string("insert")])
        let update = try #require(changes(lines[1]).first)
        #expect(changes(lines[1]).count == 1 && Self.field(update, "kind") == .string("update"))
        #expect(
            Self.field(update, "keys") == .array([.string("n")]) && Self.field(update, "entity") == .string("Record"))
        let gone = try #require(changes(lines[2]).first)
        #expect(Self.field(gone, "kind") == .string("delete") && Self.field(gone, "keys") == nil)
        guard case .string(let uri)? = Self.field(gone, "object"), case .integer(let key)? = Self.field(gone, "key")
        else {
            Issue.record("no object URI or key in \(gone.text)")
            return
        }
        #expect(uri.hasPrefix("sift://") && uri.hasSuffix("/Record/p\(key)"))
        // The inserted row the delete names is the one labelled "b".
        #expect(changes(lines[0]).contains { Self.field($0, "key") == .integer(key) })

        let after = try runSift(["store", "history", db, "--after", String(tokens[0])])
        #expect(after.status == 0)
        #expect(
            after.stdout.split(separator: "\n").map(String.init)
                == out.stdout.split(separator: "\n").dropFirst().map(String.init))
        let none = try runSift(["store", "history", db, "--after", String(tokens[2])])
        #expect(none.status == 0 && none.stdout.isEmpty)
    }

    @Test func aStoreWithoutHistorySaysSo() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(in: dir, #"[{"n": 1}]"#, history: false)
        let out = try runSift(["store", "history", db])
        #expect(out.status == 1 && out.stdout.isEmpty)
        #expect(out.stderr.contains("error:") && out.stderr.contains("does not track history"))
    }

    @Test func historyOffTurnsTrackingOffAndCreateTurnsItOnAgain() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(in: dir, #"[{"n": 1}]"#, history: true)
        #expect(try runSift(["store", "history", db]).stdout.split(separator: "\n").count == 1)
        let both = try runSift(["store", "history", db, "--off", "--after", "1"])
        #expect(both.status != 0 && both.stderr.contains("--off takes no --after"))
        let off = try runSift(["store", "history", db, "--off"])
        #expect(off.status == 0 && off.stdout.isEmpty && off.stderr.isEmpty)
        let gone = try runSift(["store", "history", db])
        #expect(gone.status == 1 && gone.stderr.contains("does not track history"))
        // Writes record nothing now; --history on the existing store turns tracking on again.
        #expect(try runSift(["store", "update", db, "Record", "n == 1", "--set-expression", "n=n + 1"]).status == 0)
        let model = dir.appendingPathComponent("model.json").path
        #expect(try runSift(["store", "create", db, "--model", model, "--history"]).status == 0)
        let empty = try runSift(["store", "history", db])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
        #expect(try runSift(["store", "update", db, "Record", "n == 2", "--set-expression", "n=n + 1"]).status == 0)
        let lines = try runSift(["store", "history", db]).stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(#""contextName":"store update""#))
    }

    @Test func aDeletePrintsItsTombstone() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("model.json").path
        let text = """
            {"entities": [{"name": "Record", "attributes": [{"name": "n", "type": "integer64"},
                {"name": "label", "type": "string", "preservesValueInHistoryOnDeletion": true},
                {"name": "at", "type": "date", "preservesValueInHistoryOnDeletion": true}]}]}
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: model))
        let db = dir.appendingPathComponent("db.sqlite").path
        #expect(try runSift(["store", "create", db, "--model", model, "--history"]).status == 0)
        let data = dir.appendingPathComponent("records.json").path
        try Data(#"[{"n": 1, "label": "a"}, {"n": 2, "label": "b", "at": {"$date": 86400}}]"#.utf8).write(
            to: URL(fileURLWithPath: data))
        let imported = try runSift(["store", "import", db, "Record", data])
        try #require(imported.status == 0, "\(imported.stderr)")
        #expect(try runSift(["store", "delete", db, "Record", "n >= 1"]).status == 0)
        let out = try runSift(["store", "history", db, "--after", "1"])
        try #require(out.status == 0, "\(out.stderr)")
        let line = try JSONReader.parse(String(try #require(out.stdout.split(separator: "\n").first)))
        guard case .array(let changes)? = Self.field(line, "changes") else {
            Issue.record("no changes in \(line.text)")
            return
        }
        let kept = changes.compactMap { Self.field($0, "tombstone") }
        #expect(changes.count == 2 && changes.allSatisfy { Self.field($0, "kind") == .string("delete") })
        #expect(
            Set(kept.map(\.text)) == [
                #"{"at":null,"label":"a"}"#, #"{"at":{"$date":86400},"label":"b"}"#,
            ])
        // Inserts carry no tombstone.
        let first = try runSift(["store", "history", db]).stdout
        #expect(first.split(separator: "\n").first.map { !$0.contains("tombstone") } == true)
    }

    @Test func concurrentUpdatesLoseNoIncrement() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try Self.store(in: dir, #"[{"n": 0, "label": "counter"}]"#, history: true)
        let perProcess = 12
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<perProcess {
                do {
                    let r = try runSift([
                        "store", "update", db, "Record", "TRUEPREDICATE", "--set-expression", "n=n + 1",
                    ])
                    if r.status != 0 || r.stdout != "1\n" { failures.add("exit \(r.status): \(r.stdout) \(r.stderr)") }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty)
        let store = try PersistentStore(path: db)
        let rows = try ManagedObjectContext(store: store).fetch(FetchRequest("Record"))
        #expect(rows.count == 1)
        #expect(try rows.first?.get("n", as: Int64.self) == Int64(2 * perProcess))
        let updates = try store.history(after: nil).filter { $0.contextName == "store update" }
        #expect(updates.count == 2 * perProcess)
    }
}

/// Messages collected from several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ m: String) { lock.withLock { messages.append(m) } }
    var all: [String] { lock.withLock { messages } }
}
