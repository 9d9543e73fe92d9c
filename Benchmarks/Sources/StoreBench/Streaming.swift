// StoreBench part 9 (issue 30): the memory a big fetch takes, streamed batch by batch
// (`context.batches(for:)`, batches of 1,000, each read then dropped) against an ordinary
// `fetch` that returns (and holds) every object, over stores of 100,000 and 400,000 Person rows.
// The measure is the resident set over its level just before the fetch: its peak (VmHWM, reset
// through /proc/self/clear_refs after `malloc_trim` handed freed memory back, so one phase's
// freed pages cannot hide the next one's growth), and the largest VmRSS seen after a batch (or
// once the ordinary fetch returned). The streamed peak must not grow with the row count; the
// ordinary fetch's does. Both read every object's age, and their sums must agree.

import Foundation
import SiftStore

/// One store size: rows, batches, and MB over the resident set before the fetch: peak (VmHWM)
/// and the largest sample, streamed and fetched.
struct StreamRow {
    var rows: Int
    var batches = 0
    var streamedPeak = 0.0
    var streamedSample = 0.0
    var fetchedPeak = 0.0
    var fetchedSample = 0.0
}

/// A field of /proc/self/status in KB (VmRSS: the resident set now; VmHWM: its peak).
func statusKB(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.split(separator: " ").dropFirst().compactMap { Int($0) }.first ?? 0
    }
    return 0
}

/// Hands freed heap memory back to the system (glibc's `malloc_trim`, looked up at run time:
/// Swift's Glibc module has no <malloc.h>) and restarts the peak resident set from the current one.
func resetPeakRSS() {
    typealias Trim = @convention(c) (Int) -> Int32
    if let trim = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(trim, to: Trim.self)(0) }
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// Runs `body` to its end on a task, waiting here (the benchmark's top level is synchronous).
func waitFor(_ body: @escaping @Sendable () async throws -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await body() } catch { fail("stream: \(error)") }
        done.signal()
    }
    done.wait()
}

/// Measures one store of `n` rows: streamed first, then fetched, each in a fresh context.
func measureStream(rows n: Int) -> StreamRow {
    let (path, _) = populatedStore("stream-\(n)", makePeople(n, seed: 9))
    defer { removeStore(path) }
    nonisolated(unsafe) var row = StreamRow(rows: n)
    nonisolated(unsafe) var sums = (streamed: 0, fetched: 0)
    waitFor {
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        var r = SiftStore.FetchRequest("Person")
        r.fetchBatchSize = 1_000
        resetPeakRSS()
        let rss0 = statusKB("VmRSS")
        var sample = 0
        for try await batch in context.batches(for: AsynchronousFetchRequest(r)) {
            for o in batch { sums.streamed += try o.get("age", as: Int.self) ?? 0 }
            sample = max(sample, statusKB("VmRSS") - rss0)
            row.batches += 1
        }
        row.streamedPeak = Double(statusKB("VmHWM") - rss0) / 1e3
        row.streamedSample = Double(sample) / 1e3
    }
    waitFor {
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        resetPeakRSS()
        let rss0 = statusKB("VmRSS")
        let all = try context.fetch(SiftStore.FetchRequest("Person"))
        for o in all { sums.fetched += try o.get("age", as: Int.self) ?? 0 }
        row.fetchedSample = Double(statusKB("VmRSS") - rss0) / 1e3
        row.fetchedPeak = Double(statusKB("VmHWM") - rss0) / 1e3
        withExtendedLifetime(all) {}
    }
    if sums.streamed != sums.fetched {
        fail("stream: the streamed ages sum to \(sums.streamed), fetched \(sums.fetched)")
    }
    return row
}

/// Part 9 over each store size.
func runStreamBenchmark(sizes: [Int]) -> [StreamRow] { sizes.map { measureStream(rows: $0) } }

/// Prints the streaming table (MB over the resident set before the fetch).
func printStream(_ rows: [StreamRow]) {
    guard !rows.isEmpty else { return }
    print("")
    print(
        "| rows | batches of 1,000 | streamed: peak RSS MB | largest sample | fetched: peak RSS MB | largest sample |")
    print("|---|---|---|---|---|---|")
    for r in rows {
        print(
            "| \(r.rows) | \(r.batches) | \(f(r.streamedPeak, 1)) | \(f(r.streamedSample, 1)) | \(f(r.fetchedPeak, 1)) | \(f(r.fetchedSample, 1)) |"
        )
    }
    if let small = rows.first, let big = rows.last, rows.count > 1 {
        print(
            "(\(big.rows / max(1, small.rows))× the rows: streamed peak \(f(big.streamedPeak / max(0.1, small.streamedPeak), 2))×, fetched \(f(big.fetchedPeak / max(0.1, small.fetchedPeak), 2))×; target: streamed about 1×)"
        )
    }
}
