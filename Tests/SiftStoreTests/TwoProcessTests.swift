// Two processes writing one store file: two `sift-crash-child --counters` children increment the
// same Ledger rows in a loop at the same time, with the `.error` merge policy, retrying after a
// merge conflict with the other's transactions merged from the persistent history. Every
// increment a child reports must be in the file (0 lost updates: each conflict was reported, or
// a stale save would have overwritten the other's), each row's version must count its saves, the
// history must hold one transaction per successful save, and each child must see the other's.

import Foundation
import SiftStoreTestSupport
import SiftTestSupport
import Testing

@testable import SiftStore

@Suite struct TwoProcessTests {
    static let ledgers = 2
    static let rounds = 150

    @Test func twoWritersLoseNoIncrementAndSeeEachOther() throws {
        let executable = try #require(
            builtExecutable(named: "sift-crash-child")?.path, "no sift-crash-child executable next to the test bundle")
        let modelRun = try Child(executable, ["--model"])
        let model = try ManagedObjectModel(json: Data(modelRun.readToEnd().utf8))
        #expect(modelRun.wait() == 0)

        let path = Fixtures.temporaryPath("counters.sqlite")
        do {
            let store = try PersistentStore(model: model, path: path, historyTracking: true)
            let context = ManagedObjectContext(store: store)
            for _ in 0..<Self.ledgers {
                let l = try context.insert("Ledger")
                for key in ["total", "saves", "deleted"] { try l.setValue(0, forKey: key) }
            }
            try context.save()
        }

        let children = try ["A", "B"].map { try Child(executable, ["--counters", path, $0, String(Self.rounds)]) }
        for c in children { #expect(try c.readLine() == "R") }
        for c in children { c.send("go") }
        var successes: [[Int]] = []
        var conflicts = 0
        for c in children {
            let done = try c.readLine().split(separator: " ")
            try #require(done.count == Self.ledgers + 2 && done[0] == "DONE", "child said \(done)")
            successes.append(done[1...Self.ledgers].map { Int($0)! })
            conflicts += Int(done[Self.ledgers + 1])!
        }
        for c in children { c.send("check") }
        let seen = try children.map { try c(readSeen: $0) }
        for c in children { #expect(c.wait() == 0) }

        let store = try PersistentStore(path: path)
        let context = ManagedObjectContext(store: store)
        let rows = try context.fetch(FetchRequest("Ledger")).sorted {
            ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0)
        }
        var expected: [Int64] = []
        for i in 0..<Self.ledgers {
            let total = Int64(successes[0][i] + successes[1][i])
            expected.append(total)
            // 0 lost updates: the total is every increment a child saw succeed.
            #expect(try rows[i].get("total", as: Int64.self) == total)
            // Inserted at version 0, raised once by each save of the row.
            let version = try store.connection.query(
                "SELECT Z_OPT FROM Ledger WHERE Z_PK = ?", [.integer(rows[i].objectID.primaryKey!)])
            #expect(version == [[.integer(total)]])
        }
        #expect(successes.map { $0.reduce(0, +) } == [Self.rounds, Self.rounds])
        let history = try store.history(after: nil)
        for (n, author) in ["A", "B"].enumerated() {
            let mine = history.filter { $0.author == author }
            #expect(mine.count == Self.rounds)
            #expect(mine.allSatisfy { $0.contextName == "counters" && $0.changes.count == 1 })
            #expect(mine.allSatisfy { $0.changes[0].kind == .update && $0.changes[0].updatedKeys == ["total"] })
            // Each saw all of the other's transactions, and the final totals after merging them.
            #expect(seen[n].transactions == Self.rounds)
            #expect(seen[n].totals == expected)
        }
        // Without collisions the test would prove nothing about conflicts.
        #expect(conflicts > 0, "the two children never collided")
        print("TwoProcessTests: \(2 * Self.rounds) increments, \(conflicts) merge conflicts reported and retried")
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// "SEEN n total…" from a child.
    func c(readSeen child: Child) throws -> (transactions: Int, totals: [Int64]) {
        let words = try child.readLine().split(separator: " ")
        try #require(words.count == Self.ledgers + 2 && words[0] == "SEEN", "child said \(words)")
        return (Int(words[1])!, words[2...].map { Int64($0)! })
    }
}

/// A child process with a line-oriented stdin and stdout; its stderr goes to the test's.
final class Child {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private var buffer = Data()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    struct Ended: Error, CustomStringConvertible {
        var description: String
    }

    /// The next line of output (a child that ends first is an error).
    func readLine() throws -> String {
        while true {
            if let nl = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer = Data(buffer[(nl + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw Ended(description: "the child ended before a full line") }
            buffer += chunk
        }
    }

    func readToEnd() -> String {
        String(decoding: buffer + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}
