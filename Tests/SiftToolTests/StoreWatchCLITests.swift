// `sift store watch` as a subprocess while other `sift` processes (import, update, delete) save
// into the same store: its first lines are the results, and each batch of change lines, applied
// to the results printed before as a table view applies a batch update, gives exactly a fresh
// `sift store query` with the same predicate and sort, sections included. An in-place change is
// an update (never a move to its own place), an object entering or leaving the predicate an
// insert or a delete; a seeded random variant mixes imports, updates and deletes. SIGINT and
// SIGTERM end it with exit status 0; a store without history, a missing sort and a predicate that
// raises on a changed object are errors (exit 1). Also the store's `currentHistoryToken()`, where
// a watch starts following.

import Foundation
import SiftJSON
import SiftStore
import SiftTestSupport
import Testing

@Suite struct StoreWatchCLITests {
    static let records = """
        [{"name": "a1", "cat": "x", "n": 1, "note": "p"}, {"name": "a2", "cat": "x", "n": 5, "note": "p"},
         {"name": "b1", "cat": "y", "n": 7, "note": "p"}, {"name": "c1", "cat": "z", "n": 3, "note": "p"}]
        """

    @Test func watchPrintsTheResultsThenEachChangeAsOtherProcessesSave() throws {
        let dir = try StoreHistoryCLITests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try StoreHistoryCLITests.store(in: dir, Self.records, history: true)
        let view = View(db: db, predicate: "n > 2", sort: ["cat", "n"], section: "cat")
        let watch = try WatchProcess(view.arguments)
        var state = try view.start(watch)
        #expect(state.map(\.name) == ["x", "y", "z"] && state.map(\.rows.count) == [1, 1, 1])

        // A change that keeps the object in place is one update, old and new path the same.
        let inPlace = try view.step(watch, &state, ["update", db, "Record", "name == 'b1'", "--set", #"note="q""#])
        #expect(inPlace.map(\.type) == ["update"] && inPlace.first?.old == inPlace.first?.new)
        #expect(inPlace.first?.object?.contains(#""note":"q""#) == true)
        // Leaving the predicate is a delete (its section goes with it); entering it an insert.
        let leaves = try view.step(watch, &state, ["update", db, "Record", "name == 'a2'", "--set", "n=0"])
        #expect(leaves.map(\.type) == ["deleteSection", "delete"] && leaves.last?.object == nil)
        let enters = try view.step(watch, &state, ["update", db, "Record", "name == 'a1'", "--set", "n=9"])
        #expect(enters.map(\.type) == ["insertSection", "insert"] && enters.last?.section == "x")
        // Changing section is one move.
        let moves = try view.step(watch, &state, ["update", db, "Record", "name == 'c1'", "--set", #"cat="y""#])
        #expect(moves.map(\.type) == ["deleteSection", "move"] && moves.last?.section == "y")
        let more = dir.appendingPathComponent("more.json").path
        try Data(#"[{"name": "d1", "cat": "y", "n": 4, "note": "p"}, {"name": "d2", "cat": "w", "n": 0}]"#.utf8)
            .write(to: URL(fileURLWithPath: more))
        let imported = try view.step(watch, &state, ["import", db, "Record", more])
        #expect(imported.map(\.type) == ["insert"])
        let deleted = try view.step(watch, &state, ["delete", db, "Record", "cat == 'y'"])
        #expect(deleted.map(\.type) == ["deleteSection", "delete", "delete", "delete"])
        // A save that leaves the results as they were is a batch of its 'end' line alone.
        let unseen = try view.step(watch, &state, ["update", db, "Record", "n == 0", "--set", #"note="r""#])
        #expect(unseen.isEmpty)

        let end = try watch.stop(signal: SIGINT)
        #expect(end.status == 0 && end.reason == .exit, "stderr: \(end.stderr)")
        #expect(end.stderr.isEmpty && end.rest.isEmpty)
    }

    static let predicates: [String?] = [nil, "n > 3", "cat IN {'x', 'y'} OR n == 0", "name BEGINSWITH 'r1'"]
    static let sorts: [(keys: [String], section: String?)] = [
        (["cat", "n"], "cat"), (["n:desc", "name"], nil), (["cat:desc", "name:desc"], "cat"), (["name"], nil),
    ]

    /// Random imports, updates and deletes by other processes, seeded: every batch applies.
    @Test(arguments: 0..<3) func randomSavesByOtherProcessesKeepTheWatchExact(round: Int) throws {
        var rng = SplitMix64(seed: 0x3A7C_0000 + UInt64(round))
        func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &rng)] }
        func record() -> String {
            let (name, n) = (Int.random(in: 0..<20, using: &rng), Int.random(in: 0..<8, using: &rng))
            return #"{"name": "r\#(name)", "cat": "\#(pick(["x", "y", "z"]))", "n": \#(n)}"#
        }
        let dir = try StoreHistoryCLITests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try StoreHistoryCLITests.store(
            in: dir, "[" + (0..<8).map { _ in record() }.joined(separator: ",") + "]", history: true)
        let sort = pick(Self.sorts)
        let view = View(db: db, predicate: pick(Self.predicates), sort: sort.keys, section: sort.section)
        let setting = "round \(round): \(view.arguments)"
        let watch = try WatchProcess(view.arguments)
        var state = try view.start(watch)
        var changes = 0
        for step in 0..<6 {
            let n = Int.random(in: 0..<8, using: &rng)
            let op: [String]
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                let file = dir.appendingPathComponent("step\(step).json").path
                try Data((0..<Int.random(in: 1...2, using: &rng)).map { _ in record() }.joined(separator: "\n").utf8)
                    .write(to: URL(fileURLWithPath: file))
                op = ["import", db, "Record", file]
            case 1: op = ["update", db, "Record", "n == \(n)", "--set", #"cat="\#(pick(["x", "y", "z"]))""#]
            case 2: op = ["update", db, "Record", "n == \(n) OR name == 'r\(n)'", "--set-expression", "n=n + 3"]
            default: op = ["delete", db, "Record", "n == \(n)"]
            }
            let batch = try view.step(watch, &state, op)
            #expect(
                !batch.contains { $0.type == "move" && $0.old == $0.new }, "\(setting), step \(step): a move to itself")
            changes += batch.count
        }
        #expect(changes > 0, "\(setting): no change in 6 steps")
        let end = try watch.stop(signal: SIGTERM)
        #expect(end.status == 0 && end.reason == .exit && end.stderr.isEmpty, "\(setting): \(end.stderr)")
    }

    @Test func aStoreWithoutHistoryOrSortIsAClearError() throws {
        let dir = try StoreHistoryCLITests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = try StoreHistoryCLITests.store(in: dir, Self.records, history: false)
        let noHistory = try runSift(["store", "watch", plain, "Record", "--sort", "n"])
        #expect(noHistory.status == 1 && noHistory.stdout.isEmpty)
        #expect(noHistory.stderr.contains("does not record history") && noHistory.stderr.contains("--history"))
        #expect(
            try runSift([
                "store", "create", plain, "--model", dir.appendingPathComponent("model.json").path, "--history",
            ]).status == 0)
        let noSort = try runSift(["store", "watch", plain, "Record", "n > 2"])
        #expect(noSort.status == 1 && noSort.stdout.isEmpty)
        #expect(noSort.stderr.contains("error: a fetched results controller needs a sorted request"))
        let grouping = try runSift(["store", "watch", plain, "Record", "--sort", "n", "--section", "cat"])
        #expect(grouping.status == 1 && grouping.stderr.contains("does not group like the section key path 'cat'"))
    }

    /// The token a watch starts from: nil for an empty history, then the newest transaction's;
    /// a store without history says so.
    @Test func currentHistoryTokenIsTheNewestTransactions() throws {
        let dir = try StoreHistoryCLITests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Record", attributes: [AttributeDescription("n", .integer64)])
        ])
        let path = dir.appendingPathComponent("db.sqlite").path
        let store = try PersistentStore(model: model, path: path, historyTracking: true)
        #expect(try store.currentHistoryToken() == nil)
        let context = ManagedObjectContext(store: store)
        for n in 0..<3 {
            try context.insert("Record").setValue(n, forKey: "n")
            try context.save()
        }
        let all = try store.history(after: nil)
        let current = try store.currentHistoryToken()
        #expect(all.count == 3 && current == all.last?.token && current != nil)
        let plain = try PersistentStore(model: model, path: dir.appendingPathComponent("plain.sqlite").path)
        let error = #expect(throws: StoreError.self) { try plain.currentHistoryToken() }
        #expect(error?.kind == .invalidOperation)
    }

    /// Memory's rule: a predicate that raises on a changed object ends the watch with the object
    /// and a caret under the failing part (exit 1), the lines before it standing.
    @Test func aPredicateRaisingOnAChangedObjectEndsTheWatch() throws {
        let dir = try StoreHistoryCLITests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try StoreHistoryCLITests.store(in: dir, Self.records, history: true)
        let watch = try WatchProcess([db, "Record", "n + 1 > 2", "--sort", "name", "--interval", "0.02"])
        let first = try watch.batch()
        #expect(first.count == 4 && first.last.map { WatchLine($0).type } == "end")
        let update = try runSift(["store", "update", db, "Record", "name == 'a2'", "--set", "n=null"])
        try #require(update.status == 0, "\(update.stderr)")
        let end = try watch.waitForExit()
        #expect(end.status == 1 && end.rest.isEmpty)
        let lines = end.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines.first?.hasPrefix("Record ") == true, "\(end.stderr)")
        #expect(lines.first?.contains(": error: ") == true && lines.first?.contains("nil") == true)
        #expect(lines.dropFirst().first == "n + 1 > 2" && lines.last?.hasPrefix("^") == true)
    }
}

/// One watched request: its options, and how to check a batch against a fresh `sift store query`.
struct View {
    let db: String
    let predicate: String?
    let sort: [String]
    let section: String?

    var arguments: [String] {
        [db, "Record"] + (predicate.map { [$0] } ?? []) + sort.flatMap { ["--sort", $0] }
            + (section.map { ["--section", $0] } ?? []) + ["--interval", "0.02"]
    }

    /// The fresh query's results, in sections by the section key's value (a string, or none).
    func fresh() throws -> WatchState {
        let args = ["store", "query", db, "Record"] + (predicate.map { [$0] } ?? []) + sort.flatMap { ["--sort", $0] }
        let out = try runSift(args)
        try #require(out.status == 0, "\(out.stderr)")
        var sections: WatchState = []
        for line in out.stdout.split(separator: "\n") {
            let object = try JSONReader.parse(String(line))
            var name = ""
            if let section, case .string(let s)? = StoreHistoryCLITests.field(object, section) { name = s }
            let row = WatchRow(id: "", object: object.text)
            if sections.last?.name == name {
                sections[sections.count - 1].rows.append(row)
            } else {
                sections.append((name, [row]))
            }
        }
        return sections
    }

    /// The results the watch prints first, checked against a fresh query.
    func start(_ watch: WatchProcess) throws -> WatchState {
        let lines = try watch.batch().map(WatchLine.init)
        var state: WatchState = []
        for l in lines.dropLast() {
            if state.last?.name != l.section { state.append((l.section, [])) }
            let expected = ResultIndexPath(item: state[state.count - 1].rows.count, section: state.count - 1)
            try #require(l.type == "result" && l.new == expected, "line \(l.type) at \(String(describing: l.new))")
            state[state.count - 1].rows.append(WatchRow(id: l.id, object: try #require(l.object)))
        }
        #expect(same(state, try fresh()), "first results \(describe(state))")
        return state
    }

    /// Runs `sift store OP…` (another process), waits for the watch to take in what it saved,
    /// applies each batch to `state` and checks it against a fresh query; returns the change lines.
    func step(_ watch: WatchProcess, _ state: inout WatchState, _ op: [String]) throws -> [WatchLine] {
        let saved = try runSift(["store"] + op)
        try #require(saved.status == 0, "\(op): \(saved.stderr)")
        let target = try PersistentStore(path: db).currentHistoryToken()?.value
        var changes: [WatchLine] = []
        // A save that changed nothing records no transaction, and the watch prints nothing for it.
        while let target, watch.token ?? 0 < target {
            let batch = try watch.batch().map(WatchLine.init).dropLast()
            let (applied, why) = apply(Array(batch), to: state)
            try #require(applied != nil, "\(op): \(why)")
            state = applied!
            changes += batch
        }
        let fresh = try fresh()
        #expect(same(state, fresh), "\(op): \(describe(state)) vs \(describe(fresh))")
        return changes
    }

    func same(_ a: WatchState, _ b: WatchState) -> Bool {
        a.map(\.name) == b.map(\.name) && a.map { $0.rows.map(\.object) } == b.map { $0.rows.map(\.object) }
    }

    func describe(_ s: WatchState) -> String {
        s.map { "\($0.name): \($0.rows.map(\.object).joined(separator: " "))" }.joined(separator: " | ")
    }

    /// `state` with `batch` applied as a table view applies a batch update; nil with the reason
    /// when it does not apply (a path naming another object, an insert of an object present, a
    /// move to its own place).
    func apply(_ batch: [WatchLine], to state: WatchState) -> (WatchState?, String) {
        var s = state
        for c in batch.filter({ $0.type == "delete" || $0.type == "move" }).sorted(by: { $0.old! > $1.old! }) {
            guard let p = c.old, p.section < s.count, p.item < s[p.section].rows.count,
                s[p.section].rows[p.item].id == c.id
            else { return (nil, "\(c.type) at \(String(describing: c.old)) names another object") }
            s[p.section].rows.remove(at: p.item)
        }
        for d in batch.filter({ $0.type == "deleteSection" }).sorted(by: { $0.index! > $1.index! }) {
            guard d.index! < s.count, s[d.index!].name == d.section, s[d.index!].rows.isEmpty else {
                return (nil, "section delete \(d.section) at \(d.index!) does not apply")
            }
            s.remove(at: d.index!)
        }
        for i in batch.filter({ $0.type == "insertSection" }).sorted(by: { $0.index! < $1.index! }) {
            guard i.index! <= s.count else { return (nil, "section insert \(i.section) out of range") }
            s.insert((i.section, []), at: i.index!)
        }
        let present = Set(s.flatMap { $0.rows.map(\.id) })
        for c in batch.filter({ $0.type == "insert" || $0.type == "move" }).sorted(by: { $0.new! < $1.new! }) {
            guard let p = c.new, p.section < s.count, p.item <= s[p.section].rows.count, let object = c.object,
                s[p.section].name == c.section, !(c.type == "insert" && present.contains(c.id))
            else { return (nil, "\(c.type) to \(String(describing: c.new)) does not apply") }
            s[p.section].rows.insert(.init(id: c.id, object: object), at: p.item)
        }
        for c in batch where c.type == "update" {
            guard let p = c.new, p.section < s.count, p.item < s[p.section].rows.count,
                s[p.section].rows[p.item].id == c.id,
                let object = c.object
            else { return (nil, "update at \(String(describing: c.new)) names another object") }
            s[p.section].rows[p.item].object = object
        }
        if let own = batch.first(where: {
            $0.type == "move" && $0.old == $0.new && $0.section == state[$0.old!.section].name
        }) {
            return (nil, "a move to its own place: \(own.id)")
        }
        return (s, "")
    }
}

/// Sections of rows: each object's ID and its JSON text.
typealias WatchState = [(name: String, rows: [WatchRow])]

/// One row of the watched results.
struct WatchRow: Equatable {
    var id: String
    var object: String
}

/// One line of `sift store watch`, parsed.
struct WatchLine {
    let type: String
    let section: String
    let old: ResultIndexPath?
    let new: ResultIndexPath?
    let index: Int?
    let id: String
    let object: String?
    let token: Int64?

    init(_ v: JSONValue) {
        func field(_ k: String) -> JSONValue? { StoreHistoryCLITests.field(v, k) }
        func path(_ k: String) -> ResultIndexPath? {
            guard case .array(let xs)? = field(k), xs.count == 2, case .integer(let s) = xs[0],
                case .integer(let i) = xs[1]
            else { return nil }
            return ResultIndexPath(item: Int(i), section: Int(s))
        }
        func string(_ k: String) -> String? { if case .string(let s)? = field(k) { s } else { nil } }
        type = string("type") ?? ""
        section = string("section") ?? ""
        old = path("old")
        new = path("new") ?? path("path")
        if case .integer(let i)? = field("index") { index = Int(i) } else { index = nil }
        id = string("id") ?? ""
        object = field("object")?.text
        if case .integer(let t)? = field("token") { token = t } else { token = nil }
    }
}

/// `sift store watch` running, its standard output read on a thread of its own so that the test
/// can wait for a batch with a deadline.
final class WatchProcess: @unchecked Sendable {
    private let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var partial = Data()
    private var ended = false
    private var errors = Data()
    private var errorsRead = false
    /// The history token of the last batch taken.
    private(set) var token: Int64?

    init(_ arguments: [String]) throws {
        let exe = try #require(builtExecutable(named: "sift"), "no sift executable next to the test bundle")
        process.executableURL = exe
        process.arguments = ["store", "watch"] + arguments
        process.standardOutput = out
        process.standardError = err
        try process.run()
        DispatchQueue.global().async { [self] in readOutput() }
        DispatchQueue.global().async { [self] in
            let data = err.fileHandleForReading.readDataToEndOfFile()
            condition.withLock {
                errors = data
                errorsRead = true
                condition.broadcast()
            }
        }
    }

    private func readOutput() {
        let handle = out.fileHandleForReading
        while true {
            let chunk = handle.availableData
            condition.withLock {
                if chunk.isEmpty { ended = true }
                partial += chunk
                while let nl = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: partial[partial.startIndex..<nl], as: UTF8.self))
                    partial = Data(partial[(nl + 1)...])
                }
                condition.broadcast()
            }
            if chunk.isEmpty { return }
        }
    }

    struct Failed: Error, CustomStringConvertible { var description: String }

    /// The lines up to and including the next `end` line, parsed; an error after `seconds`, or
    /// when the watch ends first.
    func batch(seconds: Double = 30) throws -> [JSONValue] {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let i = lines.firstIndex(where: { $0.hasPrefix(#"{"type":"end""#) }) {
                let taken = try lines[...i].map { try JSONReader.parse($0) }
                lines.removeFirst(i + 1)
                token = taken.last.flatMap { WatchLine($0).token }
                return taken
            }
            if ended { throw Failed(description: "the watch ended: \(String(decoding: errors, as: UTF8.self))") }
            if !condition.wait(until: deadline) { throw Failed(description: "no batch in \(seconds) s after \(lines)") }
        }
    }

    struct Ending {
        var status: Int32
        var reason: Process.TerminationReason
        var stderr: String
        /// Lines printed after the last batch taken.
        var rest: [String]
    }

    /// Sends `signal` and waits for the watch to end.
    func stop(signal: Int32) throws -> Ending {
        kill(process.processIdentifier, signal)
        return try waitForExit()
    }

    /// Waits (at most `seconds`) for the watch to end and its output to be read.
    func waitForExit(seconds: Double = 30) throws -> Ending {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            throw Failed(description: "the watch did not end within \(seconds) s")
        }
        process.waitUntilExit()
        condition.lock()
        defer { condition.unlock() }
        while !(ended && errorsRead) && condition.wait(until: deadline) {}
        return Ending(
            status: process.terminationStatus, reason: process.terminationReason,
            stderr: String(decoding: errors, as: UTF8.self), rest: lines)
    }
}
