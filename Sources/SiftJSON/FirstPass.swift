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
    /// How many records matched.
    var matchCount = 0
    /// The 0-based positions of the matching records, and the offsets where they start (empty when
    /// the pass only counts).
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

    /// The first pass over all of `input`; `keepsMatches`: whether the matches' positions are kept
    /// (else only counted).
    static func run(
        _ input: MappedInput, compiled: SiftPredicate, variables: [String: Value], projection: Projection,
        timed: Bool, keepsMatches: Bool, progress: inout some RecordFilterProgress
    ) -> FirstPass {
        let bytes = input.bytes
        let test = RecordTest.Parts(
            compiled: compiled, variables: variables, projection: projection, timed: timed, keepsMatches: keepsMatches)
        var cursor = RecordCursor(bytes)
        guard !cursor.isArray, bytes.count >= parallelThreshold, ProcessInfo.processInfo.activeProcessorCount >= 2,
            let boundary = lineBoundary(near: bytes.count / 2, in: bytes)
        else {
            var released = 0
            return scan(
                &cursor, stopAt: nil, input: input, released: &released, record: test, progress: &progress, shared: nil)
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
                &cursor, stopAt: nil, input: unsafeInput, released: &released, record: test,
                progress: &quiet, shared: second)
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()

        var released = 0
        var first = scan(
            &cursor, stopAt: boundary, input: input, released: &released, record: test, progress: &progress,
            shared: second)
        done.wait()
        guard let later = second.result else { preconditionFailure("the second half ended without a result") }
        if first.syntaxError != nil { return first }
        guard first.stoppedAt == boundary else {
            // The boundary was inside a record (or the input ended before it): read on from where
            // the first half stopped, alone.
            guard first.stoppedAt != nil else { return first }
            var rest = scan(
                &cursor, stopAt: nil, input: input, released: &released, record: test, progress: &progress,
                shared: nil, continuing: first)
            rest.stoppedAt = nil
            return rest
        }
        // Joined: the second half's positions follow the first half's records.
        first.syntaxError = later.syntaxError
        if first.failure == nil, let failure = later.failure {
            first.failure = (first.recordCount + failure.record, failure.error)
        }
        let offset = first.recordCount
        first.matchCount += later.matchCount
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
        record parts: RecordTest.Parts,
        progress: inout some RecordFilterProgress, shared: SecondHalf?, continuing: FirstPass? = nil
    ) -> FirstPass {
        let origin = cursor.scanner.i
        var pass = continuing ?? FirstPass()
        let depth = cursor.depth
        pass.depth = depth
        // Records seen, including those only checked after an evaluation error.
        var seen = pass.recordCount
        let isSecondHalf = shared != nil && stop == nil
        // Where the input ends, for reserving room for the matches once the first records tell their
        // size: a first half reserves for the whole input, as the second half's matches are joined
        // to its own.
        let end = input.bytes.count
        let record = RecordTest(parts)
        do throws(JSONScanError) {
            while let at = try cursor.next() {
                if let stop, at >= stop {
                    pass.stoppedAt = at
                    break
                }
                seen += 1
                if seen == 4096, record.keepsMatches {
                    pass.reserveForMatches(seen: seen, read: at - origin, end: end - origin)
                }
                if seen & 1023 == 0 {
                    input.release(&released, before: at)
                    if isSecondHalf {
                        shared?.publish(records: seen, matches: pass.matchCount, bytes: at - origin)
                    } else {
                        let other = shared?.published ?? (records: 0, matches: 0)
                        progress.update(
                            records: seen + other.records, matches: pass.matchCount + other.matches,
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
                    pass.matchCount += 1
                    if record.keepsMatches {
                        pass.matchIndices.append(pass.recordCount)
                        pass.matchStarts.append(at)
                    }
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

    /// Reserves room for the matches of the part of the input the pass reads (`end` bytes from its
    /// start), as far as the first `seen` records (`read` bytes) foretell them, so that the arrays
    /// are not copied as they grow; room never written to costs no memory.
    private mutating func reserveForMatches(seen: Int, read: Int, end: Int) {
        guard read > 0 else { return }
        let records = Double(end) / Double(read) * Double(seen)
        let share = Double(matchCount + 1) / Double(seen)
        let expected = Int(Swift.min(records * share * 1.25, Double(end))) + 1024
        matchIndices.reserveCapacity(expected)
        matchStarts.reserveCapacity(expected)
    }
}

/// How the pass tests one record: the direct form of the predicate when it has one and decides,
/// else the general path. Nothing in it changes per record but the offsets it points at, so the
/// pass holds it as a constant and the loop retains nothing; the clock is only read for --stats
/// (`RecordTimes`), in a path of its own.
private struct RecordTest {
    let compiled: SiftPredicate
    let variables: [String: Value]
    let projection: Projection
    /// The direct form of the predicate, when it has one.
    let direct: DirectFilter?
    /// Where `locate` notes the offsets of the direct form's members in each record.
    let offsets: UnsafeMutablePointer<Int>
    /// The time each part took, when timed (for --stats).
    let times: RecordTimes?

    /// Whether the pass keeps the matches' positions (else it only counts them).
    let keepsMatches: Bool

    /// What a pass's tests are made from (each thread makes its own `RecordTest`).
    struct Parts: Sendable {
        let compiled: SiftPredicate
        let variables: [String: Value]
        let projection: Projection
        let timed: Bool
        let keepsMatches: Bool
    }

    init(_ parts: Parts) {
        compiled = parts.compiled
        variables = parts.variables
        projection = parts.projection
        keepsMatches = parts.keepsMatches
        direct = DirectFilter(compiled)
        offsets = .allocate(capacity: Swift.max(direct?.memberNames.count ?? 0, 1))
        times = parts.timed ? RecordTimes() : nil
    }

    /// Whether the record at `at` (where `scanner` is) matches, or the evaluation error it raises;
    /// the scanner is left after the record. `sampled`: whether reading a key path and testing it
    /// are timed apart in this record (for --stats; the clock costs as much as a short path).
    @inline(__always)
    func matches(
        at: Int, _ scanner: inout JSONScanner, depth: Int, sampled: Bool
    ) throws(JSONScanError) -> Result<Bool, EvaluationError> {
        if let times { return try timedMatches(times, at: at, &scanner, depth: depth, sampled: sampled) }
        // Validated and located here; the key paths are read while evaluating.
        if let direct, try direct.locate(&scanner, depth: depth, offsets: offsets) {
            var untimed = Untimed()
            if let answer = direct.evaluate(
                scanner, depth: depth, offsets: offsets, variables: variables, timing: &untimed)
            {
                return .success(answer)
            }
        }
        return test(try read(at: at, &scanner, depth: depth))
    }

    /// `matches`, timing reading and evaluating apart into `times`.
    @inline(never)
    private func timedMatches(
        _ times: RecordTimes, at: Int, _ scanner: inout JSONScanner, depth: Int, sampled: Bool
    ) throws(JSONScanError) -> Result<Bool, EvaluationError> {
        let t0 = times.clock.now
        if let direct, try direct.locate(&scanner, depth: depth, offsets: offsets) {
            let located = times.clock.now
            var answer: Bool?
            var paths = Duration.zero
            if sampled {
                var timing = PathClock()
                answer = direct.evaluate(scanner, depth: depth, offsets: offsets, variables: variables, timing: &timing)
                paths = timing.spent
            } else {
                var untimed = Untimed()
                answer = direct.evaluate(
                    scanner, depth: depth, offsets: offsets, variables: variables, timing: &untimed)
            }
            if let answer {
                times.note(t0, located, paths, sampled: sampled)
                return .success(answer)
            }
        }
        let record = try read(at: at, &scanner, depth: depth)
        let t1 = times.clock.now
        times.readTime += t1 - t0
        let result = test(record)
        if case .success = result { times.evaluateTime += times.clock.now - t1 }
        return result
    }

    /// The general path's record: built as projected (again, when the direct form could not
    /// decide; it was validated then, so reading it again cannot fail). The scanner is left after it.
    private func read(at: Int, _ scanner: inout JSONScanner, depth: Int) throws(JSONScanError) -> Value {
        var s = scanner
        s.i = at
        let record = try s.value(depth: depth, projection)
        scanner.i = s.i
        return record
    }

    /// The general path's answer on a record read whole or as projected.
    private func test(_ record: Value) -> Result<Bool, EvaluationError> {
        do throws(EvaluationError) {
            return .success(try compiled.evaluate(with: record, variables: variables))
        } catch {
            return .failure(error)
        }
    }

    /// Adds the times to `pass` and frees the offsets: the last use of this test.
    func finish(_ pass: inout FirstPass) {
        offsets.deallocate()
        times?.finish(&pass)
    }
}

/// The time a `RecordTest` spent reading and evaluating, for --stats. A class of its own, so that
/// the untimed loop holds no clock value (its instants are opaque to this module, and each copy of
/// one was a call).
private final class RecordTimes {
    let clock = ContinuousClock()
    var readTime = Duration.zero, evaluateTime = Duration.zero
    /// The time the direct form spent after locating the members, split between reading and
    /// evaluating as in the records where both were timed.
    var directTime = Duration.zero, sampledPath = Duration.zero, sampledDirect = Duration.zero

    /// Notes the times of a record the direct form decided: located at `located` after starting
    /// at `t0`, `pathTime` of its evaluation spent reading key paths when `sampled`.
    func note(_ t0: ContinuousClock.Instant, _ located: ContinuousClock.Instant, _ pathTime: Duration, sampled: Bool) {
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
