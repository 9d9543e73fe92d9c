// SiftBench: measures SiftSyntax parse throughput (predicates/s, MB/s) for short, typical and large inputs.
import BenchSupport
import Foundation
import SiftSyntax

struct Result {
    let name: String
    let inputs: Int  // distinct inputs in the rotation
    let bytesPerOp: Double  // average UTF-8 bytes per operation
    let ops: Int
    let seconds: Double
    var opsPerSecond: Double { Double(ops) / seconds }
    var mbPerSecond: Double { Double(ops) * bytesPerOp / seconds / 1_000_000 }
}

/// Runs `run` for `warmup` seconds, then for `duration` seconds, and reports the second run.
func warmedUp(
    _ name: String, _ inputs: [String], warmup: Double, duration: Double,
    _ run: (_ seconds: Double) -> (ops: Int, elapsed: Double)
) -> Result {
    _ = run(warmup)
    let (ops, elapsed) = run(duration)
    let totalBytes = inputs.reduce(0) { $0 + $1.utf8.count }
    return Result(
        name: name, inputs: inputs.count, bytesPerOp: Double(totalBytes) / Double(inputs.count),
        ops: ops, seconds: elapsed)
}

/// Runs `body` over the inputs round-robin: a warm-up, then batches until `duration` seconds elapse.
func measure(
    _ name: String, _ inputs: [String], warmup: Double = 0.3, duration: Double = 1.5,
    _ body: (String) -> Int
) -> Result {
    func run(for seconds: Double) -> (ops: Int, elapsed: Double) {
        var ops = 0
        var acc = 0
        let start = now()
        let limit = UInt64(seconds * 1e9)
        var elapsed: UInt64 = 0
        repeat {
            for input in inputs { acc &+= body(input) }
            ops += inputs.count
            elapsed = now() - start
        } while elapsed < limit
        consume(acc)
        return (ops, Double(elapsed) / 1e9)
    }
    return warmedUp(name, inputs, warmup: warmup, duration: duration, run)
}

/// The tree of a benchmark input: one that does not parse is a bug in the benchmark, which stops.
@inline(__always)
func parsedInput(_ text: String) -> PredicateSyntax {
    do {
        return try PredicateSyntax.parse(text)
    } catch {
        fatalError("benchmark input failed to parse: \(error)\n\(text.prefix(200))")
    }
}

/// Parse only; the blackhole takes the root's source range (cheap, but depends on the parse result).
@inline(never)
func parseOnly(_ text: String) -> Int {
    let tree = parsedInput(text)
    return tree.range.upperBound &+ tree.range.lowerBound
}

/// Parse and hash the whole tree (the hash walks every node, so this costs more than parsing alone).
@inline(never)
func parseHash(_ text: String) -> Int { parsedInput(text).hashValue }

/// Print only: the canonical form of an already parsed tree.
@inline(never)
func printOnly(_ tree: PredicateSyntax) -> Int {
    tree.description.utf8.count
}

@inline(never)
func roundTripHash(_ text: String) -> Int {
    let printed = parsedInput(text).description
    return printed.utf8.count &+ printed.hashValue
}

/// Runs `parseOnly` over the inputs on `threads` threads at once for `duration` seconds (after a
/// warm-up) and reports the aggregate rate. Each thread parses the same rotation independently.
func measureParallel(
    _ name: String, _ inputs: [String], threads: Int, warmup: Double = 0.3,
    duration: Double = 1.5
) -> Result {
    func run(for seconds: Double) -> (ops: Int, elapsed: Double) {
        nonisolated(unsafe) let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: 2 * threads)
        defer { counts.deallocate() }
        let start = now()
        let limit = UInt64(seconds * 1e9)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            var ops = 0
            var acc = 0
            repeat {
                for input in inputs { acc &+= parseOnly(input) }
                ops += inputs.count
            } while now() - start < limit
            counts[2 * t] = ops
            counts[2 * t + 1] = acc
        }
        let elapsed = now() - start
        var ops = 0
        for t in 0..<threads {
            ops += counts[2 * t]
            consume(counts[2 * t + 1])
        }
        return (ops, Double(elapsed) / 1e9)
    }
    return warmedUp(name, inputs, warmup: warmup, duration: duration, run)
}

// MARK: - Inputs

let short = [
    "age > 30",
    "name == \"Ann\"",
    "score <= 4.5",
    "enabled == YES",
]

let typical = [
    "age >= 18 AND name BEGINSWITH[cd] \"jo\" AND (city == \"Oslo\" OR tags CONTAINS \"x\")",
    "status IN {\"open\", \"pending\"} AND priority > 2 AND NOT (owner == nil)",
    "ANY employees.salary > 50000 AND department.name ==[c] \"sales\" OR manager.age < 40",
    "title LIKE[c] \"*swift*\" AND rating BETWEEN {3, 5} AND created > $since",
    "name MATCHES \"[A-Z].*\" AND (price < 10.5 OR discount >= 0.25) AND stock != 0",
    "items.@count > 3 AND email ENDSWITH \"@example.com\" AND NOT archived == YES",
]

let intList = "value IN {" + (0..<10_000).map { String($0 &* 7919 % 1_000_003) }.joined(separator: ", ") + "}"
let stringList = "name IN {" + (0..<10_000).map { "\"item\($0)\"" }.joined(separator: ", ") + "}"

// Validate every input once (also checks that canonical forms reparse to equal trees).
for text in short + typical + [intList, stringList] {
    do {
        let tree = try PredicateSyntax.parse(text)
        let again = try PredicateSyntax.parse(tree.description)
        precondition(again == tree, "round trip mismatch for \(text.prefix(120))")
    } catch {
        fatalError("benchmark input invalid: \(error)\n\(text.prefix(200))")
    }
}

// MARK: - Run

let target = 1_000_000.0
var results: [Result] = []
results.append(measure("short (1 clause)", short, parseOnly))
results.append(measure("typical (3-4 clauses)", typical, parseOnly))
results.append(measure("large: 10k-int IN list", [intList], duration: 2.0, parseOnly))
results.append(measure("large: 10k-string IN list", [stringList], duration: 2.0, parseOnly))
results.append(measure("typical parse+hash tree", typical, parseHash))
results.append(measure("typical parse+print round trip", typical, roundTripHash))
// Printing against parsing, the two halves of `sift parse`: the same typical predicates, printed
// from trees parsed beforehand. Issue 14 asks for printing at least as fast as parsing.
// The tree is looked up by its text, which charges printing one dictionary lookup more than
// parsing pays: the ratio errs against printing.
let typicalTrees = Dictionary(uniqueKeysWithValues: typical.map { ($0, try! PredicateSyntax.parse($0)) })
let printing = measure("typical print only", typical) { printOnly(typicalTrees[$0]!) }
results.append(printing)
// Supplementary: all cores at once. The target below is judged on the single-thread figure only.
let cores = ProcessInfo.processInfo.activeProcessorCount
let parallel = cores > 1 ? measureParallel("typical, \(cores) threads (total)", typical, threads: cores) : nil

func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - s.count))
    return left ? s + fill : fill + s
}
func fmt(_ x: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", x) }

print("SiftSyntax parse benchmark (release build)")
print(
    pad("case", 32, left: true) + pad("inputs", 7) + pad("bytes/op", 10) + pad("ops", 11)
        + pad("seconds", 9) + pad("ops/s", 14) + pad("MB/s", 9))
print(String(repeating: "-", count: 92))
for r in results {
    print(
        pad(r.name, 32, left: true) + pad("\(r.inputs)", 7) + pad(fmt(r.bytesPerOp, 1), 10)
            + pad("\(r.ops)", 11) + pad(fmt(r.seconds, 2), 9) + pad(fmt(r.opsPerSecond), 14)
            + pad(fmt(r.mbPerSecond, 1), 9))
}
print(String(repeating: "-", count: 92))
if let r = parallel {
    print(
        pad(r.name, 32, left: true) + pad("\(r.inputs)", 7) + pad(fmt(r.bytesPerOp, 1), 10)
            + pad("\(r.ops)", 11) + pad(fmt(r.seconds, 2), 9) + pad(fmt(r.opsPerSecond), 14)
            + pad(fmt(r.mbPerSecond, 1), 9))
    print("(multi-threaded aggregate on \(cores) cores, for reference; every other row is single-threaded)")
    print(String(repeating: "-", count: 92))
}
let typicalRate = results[1].opsPerSecond
print(
    "Target: >= \(fmt(target)) typical predicates/s (single thread) — measured \(fmt(typicalRate)) /s: "
        + (typicalRate >= target ? "MET" : "NOT MET (\(fmt(typicalRate / target * 100, 1))% of target)"))

let printRatio = printing.opsPerSecond / results[1].opsPerSecond
print(
    "Printing vs parsing (typical): \(fmt(printing.opsPerSecond)) prints/s against \(fmt(results[1].opsPerSecond)) parses/s, ratio "
        + "\(fmt(printRatio, 2)) (target >= 1): " + (printRatio >= 1 ? "MET" : "NOT MET"))

// Growth: parsing four times the input should take about four times as long (quadratic work, for
// example re-copying a growing list, would take about sixteen). A wall-clock ratio belongs here,
// not in a unit test, where the load on the machine decides it.
func inList(_ count: Int) -> String {
    "a IN {" + (0..<count).map { String(100_000 + $0 % 900_000) }.joined(separator: ", ") + "}"
}
func bestParseSeconds(_ text: String, rounds: Int = 3) -> Double {
    var best = Double.infinity
    for _ in 0..<rounds {
        let start = now()
        consume(parseOnly(text))
        best = min(best, Double(now() - start) / 1e9)
    }
    return best
}
let (smallList, largeList) = (inList(100_000), inList(400_000))
let (smallSeconds, largeSeconds) = (bestParseSeconds(smallList), bestParseSeconds(largeList))
let growth = largeSeconds / smallSeconds
print(
    "Growth: 100k-element IN list \(fmt(smallSeconds * 1000, 1)) ms, 400k \(fmt(largeSeconds * 1000, 1)) ms, ratio "
        + "\(fmt(growth, 2)) (linear about 4, quadratic about 16): " + (growth < 8 ? "LINEAR" : "NOT LINEAR"))

// The stack guard's cliff: the same typical predicates parsed on a thread with a large stack and on
// one whose stack is smaller than StackGuard's red zone (192 KB), where every parse continues on a
// large-stack thread of the guard's and waits for it. The difference is the price of that move.
final class ResultBox: @unchecked Sendable { var result: Result? }
func measureOnThread(_ name: String, _ inputs: [String], stackSize: Int) -> Result {
    let box = ResultBox()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = measure(name, inputs, parseOnly)
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
    return box.result!
}
let roomy = measureOnThread("typical, 8 MB stack", typical, stackSize: 8 << 20)
let cramped = measureOnThread("typical, 128 KB stack", typical, stackSize: 128 << 10)
let (roomyMicros, crampedMicros) = (1e6 / roomy.opsPerSecond, 1e6 / cramped.opsPerSecond)
print(
    "Stack guard: typical parse on an 8 MB stack \(fmt(roomyMicros, 2)) µs, on a 128 KB stack (moved to a large "
        + "stack every parse) \(fmt(crampedMicros, 2)) µs, \(fmt(crampedMicros - roomyMicros, 2)) µs more per move")
print("(blackhole \(blackhole & 0xff))")
