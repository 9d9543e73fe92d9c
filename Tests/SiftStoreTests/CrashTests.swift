// The crash test: runs `sift-crash-child` (Tests/SiftCrashChild) on one store and kills it with
// SIGKILL at random moments, again and again, so kills land while the store is being opened or
// created, before the first save, in the middle of a save and between saves. After each kill the
// store must open, pass `PRAGMA integrity_check`, and hold only whole saves: the ledger's counts
// agree with the entries, every batch is complete, the latest save is there, and every save the
// child reported done survived. The next child continues from that state, so the store keeps its
// history. `SIFT_CRASH_KILLS=N` sets the number of kills (200 by default; `make crash-test` runs
// 2000). The child is spawned with posix_spawn rather than `Process` so the kill moment and the
// reaping are exact and its stdout can be read while it runs.

import Foundation
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

@Suite struct CrashTests {
    @Test func killedWriterLeavesWholeSaves() throws {
        let kills = ProcessInfo.processInfo.environment["SIFT_CRASH_KILLS"].flatMap { Int($0) } ?? 200
        let executable = try #require(
            builtExecutable(named: "sift-crash-child")?.path, "no sift-crash-child executable next to the test bundle")
        // The child's own model, so the two can never drift apart (the store would refuse it).
        let modelRun = try CrashChild(executable, ["--model"], stderr: "/dev/null")
        modelRun.readToEnd()
        #expect(modelRun.reap() == .exited(0))
        let model = try ManagedObjectModel(json: Data(modelRun.output))

        let path = Fixtures.temporaryPath("crash.sqlite")
        let directory = (path as NSString).deletingLastPathComponent
        let stderrPath = directory + "/child-stderr.txt"
        var stats = CrashStats()
        var saves: Int64 = 0
        let clock = ContinuousClock()
        let start = clock.now

        for round in 1...kills {
            // A quarter of the delays count from the spawn (most of those land while the child
            // starts or opens the store), the rest from the moment the store is open.
            let fromSpawn = Int.random(in: 0..<4) == 0
            let delay = UInt32.random(in: 1_000...50_000)
            let child = try CrashChild(executable, [path], stderr: stderrPath)
            if !fromSpawn, !child.waitForReady(seconds: 30) {
                child.sendKill()
                Issue.record(
                    "kill \(round): the child stopped before opening the store (\(child.reap())): \(childErrors(stderrPath))"
                )
                return
            }
            usleep(delay)
            child.sendKill()
            let status = child.reap()
            child.readToEnd()
            guard status == .signalled(SIGKILL) else {
                Issue.record(
                    "kill \(round): the child ended by itself (\(status)) before the kill: \(childErrors(stderrPath))")
                return
            }

            var problems: [String] = []
            let run = CrashRun(lines: child.lines, previousSaves: saves, problems: &problems)
            let checkStart = clock.now
            let found = checkStore(path: path, model: model, problems: &problems)
            stats.checking += clock.now - checkStart
            if let found {
                if !run.allowedSaves.contains(found.saves) {
                    problems.append(
                        "the ledger records \(found.saves) saves; after this run's output (\(run.summary)) it must be one of \(run.allowedSaves.map(String.init).joined(separator: " or "))"
                    )
                }
                if run.landedMidSave { stats.midSave[found.saves == run.lastBegun ? 0 : 1] += 1 }
                stats.entries = found.entries
                saves = found.saves
            } else if run.lastEnded != nil {
                problems.append("the store file is missing after the child reported save \(run.lastEnded!) done")
            }
            stats.count(run)
            if !problems.isEmpty {
                Issue.record(
                    """
                    kill \(round) (\(delay) µs after \(fromSpawn ? "the spawn" : "the store opened"); child output: \(run.summary)) \
                    left a broken store at \(path) (kept for inspection):
                    \(problems.map { "  - " + $0 }.joined(separator: "\n"))
                    """)
                return
            }
        }

        print(
            "CrashTests: \(kills) kills in \(seconds(clock.now - start)) s (checking the store: \(seconds(stats.checking)) s): "
                + "\(stats.midSave[0] + stats.midSave[1]) mid-save (\(stats.midSave[0]) committed, \(stats.midSave[1]) rolled back), "
                + "\(stats.betweenSaves) between saves, \(stats.beforeFirstSave) after opening before the first save, "
                + "\(stats.beforeOpen) before the store was open; \(stats.savesReported) saves reported done, "
                + "ledger at \(saves) saves with \(stats.entries) entries")
        // With a few kills all may land before the first commit; with many, that means the child
        // never gets a save done and the test checks nothing.
        if kills >= 50 { #expect(saves > 0, "no save ever completed: the kills all landed too early to test anything") }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

// MARK: What one run of the child said

/// Where kills landed, over the whole test.
private struct CrashStats {
    /// Kills inside a save: [the save was committed, it was rolled back].
    var midSave = [0, 0]
    var betweenSaves = 0
    var beforeFirstSave = 0
    var beforeOpen = 0
    var savesReported = 0
    var entries = 0
    var checking = Duration.zero

    mutating func count(_ run: CrashRun) {
        savesReported += run.endedCount
        if run.landedMidSave { return }
        if run.lastEnded != nil {
            betweenSaves += 1
        } else if run.sawReady {
            beforeFirstSave += 1
        } else {
            beforeOpen += 1
        }
    }
}

/// One run's stdout, checked against what the child must print: "R", then "B s" / "E s" for
/// s = previousSaves + 1, previousSaves + 2, …, cut anywhere by the kill.
private struct CrashRun {
    var sawReady = false
    var lastBegun: Int64?
    var lastEnded: Int64?
    var endedCount = 0
    var summary: String
    /// The ledger's save counts this output allows: the last save reported done (or the state the
    /// run started from), plus the save the kill interrupted, which may or may not have committed.
    var allowedSaves: [Int64]

    var landedMidSave: Bool { lastBegun != nil && lastBegun != lastEnded }

    init(lines: [String], previousSaves: Int64, problems: inout [String]) {
        var expected = ["R"]
        var next = previousSaves + 1
        for (i, line) in lines.enumerated() {
            if i >= expected.count {
                expected += ["B \(next)", "E \(next)"]
                next += 1
            }
            guard line == expected[i] else {
                problems.append(
                    "the child printed '\(line)' where '\(expected[i])' was due (it did not continue from \(previousSaves) saves)"
                )
                break
            }
            if line == "R" {
                sawReady = true
            } else if line.hasPrefix("B ") {
                lastBegun = Int64(line.dropFirst(2))
            } else {
                lastEnded = Int64(line.dropFirst(2))
                endedCount += 1
            }
        }
        let done = lastEnded ?? previousSaves
        let interrupted = lastBegun != nil && lastBegun != lastEnded
        allowedSaves = interrupted ? [done, done + 1] : [done]
        summary =
            lines.isEmpty
            ? "nothing"
            : lines.count <= 4
                ? lines.joined(separator: ", ")
                : "\(lines[0]), \(lines[1]) … \(lines[lines.count - 2]), \(lines[lines.count - 1])"
    }
}

// MARK: Checking the store

/// Opens the store and checks everything a partial save would break; nil when the child never
/// created the file. Problems are collected (not thrown) so one report names all of them.
private func checkStore(path: String, model: ManagedObjectModel, problems: inout [String]) -> (
    saves: Int64, entries: Int
)? {
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    do {
        // The store (and its connection) go away at the end of this call, before the next child
        // starts, so the child never shares the file with a reader holding an old snapshot.
        let store = try PersistentStore(model: model, path: path)
        let integrity = try store.connection.query("PRAGMA integrity_check")
        if integrity != [[.text("ok")]] { problems.append("PRAGMA integrity_check: \(integrity)") }

        let context = ManagedObjectContext(store: store)
        let ledgers = try context.fetch(FetchRequest("Ledger"))
        let entries = try context.fetch(FetchRequest("Entry"))
        guard ledgers.count == 1, let ledger = ledgers.first else {
            if ledgers.count > 1 { problems.append("\(ledgers.count) ledgers") }
            if !entries.isEmpty { problems.append("\(entries.count) entries and no ledger") }
            return (0, entries.count)
        }
        let total = try ledger.get("total", as: Int64.self) ?? -1
        let saves = try ledger.get("saves", as: Int64.self) ?? -1
        let deleted = try ledger.get("deleted", as: Int64.self) ?? -1

        // batch → (sizes the entries claim, the numbers n present)
        var batches: [Int64: (sizes: Set<Int64>, numbers: [Int64])] = [:]
        var strays = 0
        var badText = 0
        for e in entries {
            let batch = try e.get("batch", as: Int64.self) ?? -1
            let n = try e.get("n", as: Int64.self) ?? -1
            batches[batch, default: ([], [])].sizes.insert(try e.get("batchSize", as: Int64.self) ?? -1)
            batches[batch, default: ([], [])].numbers.append(n)
            if try e.get("ledger", as: ManagedObject.self) !== ledger { strays += 1 }
            if !isPatternPrefix(try e.get("text", as: String.self) ?? "", batch: batch, n: n) { badText += 1 }
        }

        if total != Int64(entries.count) {
            problems.append("the ledger's total is \(total) but \(entries.count) entries exist")
        }
        if strays > 0 { problems.append("\(strays) entries do not point at the ledger") }
        if badText > 0 { problems.append("\(badText) entries have a text that is not the one they were saved with") }
        for (batch, b) in batches.sorted(by: { $0.key < $1.key }) {
            guard b.sizes.count == 1, let size = b.sizes.first else {
                problems.append("batch \(batch): its entries disagree on its size (\(b.sizes.sorted()))")
                continue
            }
            if b.numbers.sorted() != Array(0..<size) {
                problems.append(
                    "batch \(batch) was saved with \(size) entries but holds \(b.numbers.count) (numbers \(b.numbers.sorted()))"
                )
            }
            if batch < 1 || batch > saves {
                problems.append("batch \(batch) exists but the ledger records \(saves) saves")
            }
        }
        // Save s wrote batch s and each deletion removed one whole batch, so the batches present
        // and the ones deleted add up to the saves; the latest batch is never deleted.
        if Int64(batches.count) + deleted != saves {
            problems.append("\(batches.count) batches present + \(deleted) deleted ≠ \(saves) saves")
        }
        if saves > 0, batches[saves] == nil { problems.append("the batch of the latest save (\(saves)) is missing") }

        // The same facts by other roads: the inverse to-many, a count, and the raw tables.
        let linked = try ledger.get("entries", as: [ManagedObject].self)?.count ?? 0
        if linked != entries.count {
            problems.append("ledger.entries holds \(linked) entries, the fetch \(entries.count)")
        }
        let counted = try context.count(for: FetchRequest("Entry"))
        if counted != entries.count {
            problems.append("count(for:) says \(counted) entries, the fetch \(entries.count)")
        }
        let raw = try store.connection.query(
            "SELECT (SELECT COUNT(*) FROM Entry), (SELECT MAX(Z_PK) FROM (SELECT Z_PK FROM Entry UNION ALL SELECT Z_PK FROM Ledger)), (SELECT max FROM sift_primary_key WHERE entity = '*')"
        )
        func integer(_ column: Int) -> Int64 { if case .integer(let i)? = raw.first?[column] { i } else { 0 } }
        if integer(0) != Int64(entries.count) {
            problems.append("the Entry table has \(integer(0)) rows, the fetch \(entries.count)")
        }
        // A key counter behind the keys in use would hand out a key twice.
        if integer(2) < integer(1) {
            problems.append("the primary-key counter (\(integer(2))) is behind the largest key in use (\(integer(1)))")
        }
        return (saves, entries.count)
    } catch {
        problems.append("cannot read the store: \(error)")
        return nil
    }
}

/// Whether `text` is a prefix of "b<batch>n<n>|" repeated: what the child saves for that entry.
/// (One string comparison: a loop per byte would dominate the test's time in a debug build.)
private func isPatternPrefix(_ text: String, batch: Int64, n: Int64) -> Bool {
    let unit = "b\(batch)n\(n)|"
    let length = text.utf8.count
    let repeated = String(repeating: unit, count: length / unit.utf8.count + 1)
    return text == String(decoding: repeated.utf8.prefix(length), as: UTF8.self)
}

private func seconds(_ d: Duration) -> String {
    String(format: "%.1f", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
}

func childErrors(_ path: String) -> String {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.isEmpty ? "no message" : text.split(separator: "\n").suffix(5).joined(separator: "\n")
}

// MARK: Running the child

enum ChildStatus: Equatable {
    case exited(Int32)
    case signalled(Int32)
}

struct SpawnError: Error, CustomStringConvertible {
    var description: String
}

/// A running child whose stdout is a pipe this process reads; its stderr goes to a file.
final class CrashChild {
    let pid: pid_t
    private let fd: Int32
    private(set) var output: [UInt8] = []
    private var closed = false

    init(_ executable: String, _ arguments: [String], stderr: String) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SpawnError(description: "pipe: errno \(errno)") }
        // Close-on-exec, so children other tests spawn meanwhile do not inherit the write end
        // and keep the pipe open after this child dies (pipe2, which does it at once, is not
        // imported from Glibc).
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        #if os(Linux)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw SpawnError(description: "posix_spawn \(executable): error \(rc)")
        }
        self.pid = pid
        self.fd = fds[0]
    }

    deinit { if !closed { close(fd) } }

    var lines: [String] {
        String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Reads what arrives within `milliseconds`; false at end of file.
    @discardableResult
    private func readSome(milliseconds: Int32) -> Bool {
        guard !closed else { return false }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) > 0 else { return true }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = read(fd, &chunk, chunk.count)
        if n < 0, errno == EINTR { return true }
        guard n > 0 else {
            close(fd)
            closed = true
            return false
        }
        output += chunk[..<n]
        return true
    }

    /// Waits for the "R" line (the store is open); false when the child stops first or the time
    /// runs out.
    func waitForReady(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !output.starts(with: Array("R\n".utf8)) {
            guard Date() < deadline, readSome(milliseconds: 100) else { return false }
        }
        return true
    }

    /// Reads until every writer of the pipe is gone (after `reap`, that is at once).
    func readToEnd() {
        while readSome(milliseconds: 1_000) {}
    }

    func sendKill() {
        _ = kill(pid, SIGKILL)
    }

    /// Waits for the child and says how it ended.
    func reap() -> ChildStatus {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return .exited(-1) }
        }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import (they are macros).
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}
