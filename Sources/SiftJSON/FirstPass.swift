// The first pass of the record filter (`RecordFilter`, what `sift filter` runs in memory): every record read as far as the predicate looks
// into it and evaluated at once, keeping only the positions of the matches. A large sequence of
// values (NDJSON) is read on two threads: the second starts at a line boundary near the middle and
// reads to the end, while the first reads from the start and stops at the first record that starts
// at or after that boundary. The halves are joined only when that record starts exactly at the
// boundary: the second thread then read the very records a single pass would have read from there
// (a sequence carries no state from one record to the next). Otherwise (the boundary fell inside a
// record spanning lines) the first thread goes on to the end and the second's work is dropped. Errors
// are reported as one pass reports them: the first syntax error in the input, else the evaluation
// error of the lowest record, so the output is the same byte for byte, and all or nothing.

import Foundation
import SiftEvaluation
import SiftSyntax

#if canImport(Glibc)
    import Glibc
#endif

struct FirstPass {
    /// Records read and evaluated (up to the first evaluation failure, counted on after it).
    var recordCount = 0
    /// The 0-based positions of the matching records, and the offsets where they start.
    var matchIndices: [Int] = []
    var matchStarts: [Int] = []
    /// The first evaluation error, by record position.
    var failure: (record: Int, error: EvaluationError)?
    /// The first syntax error of the input read, which is reported before any evaluation error.
    var syntaxError: JSONScanError?
    /// Where the pass stopped when asked to stop at a boundary: the start of the first record at or
    /// after it (nil when the input ended, or a syntax error came, first).
    var stoppedAt: Int?
    var readTime = Duration.zero, evaluateTime = Duration.zero
    /// The depth of each record (`RecordCursor.depth`).
    var depth = 0

    /// Inputs smaller than this are read on one thread: a thread costs more than it saves.
    static let parallelThreshold = 4 << 20

    /// The first pass over all of `input`.
    static func run(
        _ input: MappedInput, compiled: SiftPredicate, variables: [String: Value], projection: Projection,
        timed: Bool, progress: inout some RecordFilterProgress
    ) -> FirstPass {
        let bytes = input.bytes
        var cursor = RecordCursor(bytes)
        guard !cursor.isArray, bytes.count >= parallelThreshold, ProcessInfo.processInfo.activeProcessorCount >= 2,
            let boundary = lineBoundary(near: bytes.count / 2, in: bytes)
        else {
            var released = 0
            return scan(
                &cursor, stopAt: nil, input: input, released: &released, compiled: compiled, variables: variables,
                projection: projection, timed: timed, progress: &progress, shared: nil)
        }

        // The second half on a thread of its own, with the main thread's stack size: records nest
        // up to JSONScanner.maximumDepth and are read recursively.
        let second = SecondHalf()
        let done = DispatchSemaphore(value: 0)
        // The input and its bytes are only read by both threads (and released page by page in
        // disjoint parts), and outlive the thread: the main thread waits for it below.
        nonisolated(unsafe) let unsafeInput = input
        nonisolated(unsafe) let unsafeBytes = bytes
        let thread = Thread {
            var cursor = RecordCursor(sequenceIn: unsafeBytes, from: boundary)
            var released = boundary
            var quiet = NoProgress()
            second.result = scan(
                &cursor, stopAt: nil, input: unsafeInput, released: &released, compiled: compiled,
                variables: variables, projection: projection, timed: timed, progress: &quiet, shared: second)
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()

        var released = 0
        var first = scan(
            &cursor, stopAt: boundary, input: input, released: &released, compiled: compiled,
            variables: variables, projection: projection, timed: timed, progress: &progress, shared: second)
        done.wait()
        guard let later = second.result else { preconditionFailure("the second half ended without a result") }
        if first.syntaxError != nil { return first }
        guard first.stoppedAt == boundary else {
            // The boundary was inside a record (or the input ended before it): read on from where
            // the first half stopped, alone.
            guard first.stoppedAt != nil else { return first }
            var rest = scan(
                &cursor, stopAt: nil, input: input, released: &released, compiled: compiled, variables: variables,
                projection: projection, timed: timed, progress: &progress, shared: nil, continuing: first)
            rest.stoppedAt = nil
            return rest
        }
        // Joined: the second half's positions follow the first half's records.
        first.syntaxError = later.syntaxError
        if first.failure == nil, let failure = later.failure {
            first.failure = (first.recordCount + failure.record, failure.error)
        }
        let offset = first.recordCount
        first.matchIndices.append(contentsOf: later.matchIndices.lazy.map { $0 + offset })
        first.matchStarts.append(contentsOf: later.matchStarts)
        first.recordCount += later.recordCount
        first.readTime += later.readTime
        first.evaluateTime += later.evaluateTime
        first.stoppedAt = nil
        return first
    }

    /// The start of a line near `offset` (after a "\n", blanks skipped), or nil when there is none
    /// with a record after it.
    private static func lineBoundary(near offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress, offset < bytes.count,
            let nl = memchr(base + offset, 0x0A, bytes.count - offset)
        else { return nil }
        var i = base.distance(to: nl.assumingMemoryBound(to: UInt8.self)) + 1
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        return i < bytes.count ? i : nil
    }

    /// Reads and evaluates the records from `cursor` on until the input ends, a syntax error comes,
    /// or (with `stop`) a record starts at or after `stop`. `continuing` carries the counts of a
    /// pass this one continues.
    private static func scan(
        _ cursor: inout RecordCursor, stopAt stop: Int?, input: MappedInput, released: inout Int,
        compiled: SiftPredicate, variables: [String: Value], projection: Projection, timed: Bool,
        progress: inout some RecordFilterProgress, shared: SecondHalf?, continuing: FirstPass? = nil
    ) -> FirstPass {
        let origin = cursor.scanner.i
        var pass = continuing ?? FirstPass()
        let depth = cursor.depth
        pass.depth = depth
        // Records seen, including those only checked after an evaluation error.
        var seen = pass.recordCount
        let isSecondHalf = shared != nil && stop == nil
        var record = RecordTest(compiled: compiled, variables: variables, projection: projection, timed: timed)
        do throws(JSONScanError) {
            while let at = try cursor.next() {
                if let stop, at >= stop {
                    pass.stoppedAt = at
                    break
                }
                seen += 1
                if seen & 1023 == 0 {
                    input.release(&released, before: at)
                    if isSecondHalf {
                        shared?.publish(records: seen, matches: pass.matchIndices.count, bytes: at - origin)
                    } else {
                        let other = shared?.published ?? (records: 0, matches: 0)
                        progress.update(
                            records: seen + other.records, matches: pass.matchIndices.count + other.matches,
                            offset: at + (shared?.bytesRead ?? 0))
                    }
                }
                guard pass.failure == nil else {
                    // After an evaluation error the rest is only checked: a syntax error anywhere in
                    // the input is reported before it, as when the whole input was read first.
                    try cursor.scanner.skipValue(depth: depth)
                    continue
                }
                switch try record.matches(at: at, &cursor.scanner, depth: depth, sampled: seen & 15 == 0) {
                case .success(true):
                    pass.matchIndices.append(pass.recordCount)
                    pass.matchStarts.append(at)
                case .success(false): break
                case .failure(let error):
                    pass.failure = (pass.recordCount, error)
                    continue
                }
                pass.recordCount += 1
            }
        } catch {
            pass.syntaxError = error
        }
        record.finish(&pass)
        return pass
    }
}

/// How the pass tests one record: the direct form of the predicate when it has one and decides,
/// else the general path; and, for --stats, the time each part took.
private struct RecordTest {
    let compiled: SiftPredicate
    let variables: [String: Value]
    let projection: Projection
    let timed: Bool
    /// The direct form of the predicate, when it has one, with room for its members' offsets.
    let direct: DirectFilter?
    var offsets: [Int]
    let clock = ContinuousClock()
    /// The clock is only read per record for --stats; `began` stands in otherwise.
    let began: ContinuousClock.Instant
    var readTime = Duration.zero, evaluateTime = Duration.zero
    /// The time the direct form spent after locating the members, split between reading and
    /// evaluating as in the records where both were timed.
    var directTime = Duration.zero, sampledPath = Duration.zero, sampledDirect = Duration.zero

    init(compiled: SiftPredicate, variables: [String: Value], projection: Projection, timed: Bool) {
        self.compiled = compiled
        self.variables = variables
        self.projection = projection
        self.timed = timed
        direct = DirectFilter(compiled)
        offsets = [Int](repeating: -1, count: direct?.memberNames.count ?? 0)
        began = clock.now
    }

    /// Whether the record at `at` (where `scanner` is) matches, or the evaluation error it raises;
    /// the scanner is left after the record. `sampled`: whether reading a key path and testing it
    /// are timed apart in this record (for --stats; the clock costs as much as a short path).
    @inline(__always)
    mutating func matches(
        at: Int, _ scanner: inout JSONScanner, depth: Int, sampled: Bool
    ) throws(JSONScanError) -> Result<Bool, EvaluationError> {
        var t0 = began
        if timed { t0 = clock.now }
        if let direct {
            // Validated and located here; the key paths are read while evaluating (and that time
            // counted as reading).
            if try direct.locate(&scanner, depth: depth, offsets: &offsets) {
                var located = t0
                if timed { located = clock.now }
                var pathTime = Duration.zero
                let answer = direct.evaluate(
                    scanner, depth: depth, offsets: offsets, variables: variables, timed: timed && sampled,
                    pathTime: &pathTime)
                if let answer {
                    if timed { note(t0, located, pathTime, sampled: sampled) }
                    return .success(answer)
                }
            }
        }
        // The general path: the record built as projected and evaluated (again, when the direct
        // form could not decide; it was validated then, so reading it again cannot fail).
        var s = scanner
        s.i = at
        let record = try s.value(depth: depth, projection)
        scanner.i = s.i
        var t1 = t0
        if timed {
            t1 = clock.now
            readTime += t1 - t0
        }
        do throws(EvaluationError) {
            let matched = try compiled.evaluate(with: record, variables: variables)
            if timed { evaluateTime += clock.now - t1 }
            return .success(matched)
        } catch {
            return .failure(error)
        }
    }

    /// Notes the times of a record the direct form decided: located at `located` after starting
    /// at `t0`, `pathTime` of its evaluation spent reading key paths when `sampled`.
    private mutating func note(
        _ t0: ContinuousClock.Instant, _ located: ContinuousClock.Instant, _ pathTime: Duration, sampled: Bool
    ) {
        readTime += located - t0
        let spent = clock.now - located
        directTime += spent
        if sampled {
            sampledPath += pathTime
            sampledDirect += spent
        }
    }

    /// Adds the times to `pass`.
    func finish(_ pass: inout FirstPass) {
        pass.readTime += readTime
        pass.evaluateTime += evaluateTime
        if directTime > .zero {
            let path = sampledDirect > .zero ? directTime * (sampledPath / sampledDirect) : .zero
            pass.readTime += path
            pass.evaluateTime += directTime - path
        }
    }
}

/// The second half's result, handed to the main thread once (after the semaphore), and its
/// progress counts, published under a lock for the progress line.
private final class SecondHalf: @unchecked Sendable {
    var result: FirstPass?
    private let lock = NSLock()
    private var counts = (records: 0, matches: 0, bytes: 0)

    func publish(records: Int, matches: Int, bytes: Int) {
        lock.lock()
        counts = (records, matches, bytes)
        lock.unlock()
    }

    var published: (records: Int, matches: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (counts.records, counts.matches)
    }

    var bytesRead: Int {
        lock.lock()
        defer { lock.unlock() }
        return counts.bytes
    }
}
