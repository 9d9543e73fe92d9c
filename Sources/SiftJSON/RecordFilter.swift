// The record filter: one predicate evaluated over every record of a JSON input, as `sift filter`
// runs it in memory, for library users. The input is memory-mapped (`MappedInput`); each record is
// read only as far as the predicate looks into it (`RecordProjection`), by the direct form where
// the predicate has one (`DirectFilter`) and by the general path otherwise (`FirstPass`), and only
// the positions of the matches are kept. The matches are read again, whole, to sort or write them.

import Foundation
import SiftEvaluation
import SiftSyntax

/// Told how far a ``RecordFilter`` has read: every 1,024 records, on the thread that called
/// ``RecordFilter/select(from:progress:)``.
///
/// ```swift
/// struct Printer: RecordFilterProgress {
///     mutating func update(records: Int, matches: Int, offset: Int) {
///         print("\(records) read, \(matches) matched")
///     }
/// }
/// ```
public protocol RecordFilterProgress {
    /// `records` read so far, `matches` among them, and the byte `offset` the reading has reached.
    mutating func update(records: Int, matches: Int, offset: Int)
}

/// A progress sink that ignores every report.
public struct NoProgress: RecordFilterProgress {
    /// No progress reports.
    public init() {}
    /// Ignores the report.
    public mutating func update(records: Int, matches: Int, offset: Int) {}
}

/// Why a ``RecordFilter`` stopped: the input is not JSON, or the predicate raised on a record.
///
/// ```swift
/// do { _ = try filter.select(from: input) } catch {
///     switch error.kind {
///     case .syntax(let json): print("not JSON at \(json.location)")
///     case .evaluation(let record, let failure): print("record \(record): \(failure.id)")
///     }
/// }
/// ```
public struct RecordFilterError: SiftError, Hashable {
    /// What stopped the filter.
    public enum Kind: Hashable, Sendable {
        /// The input is not a JSON array or a sequence of JSON values; the error has its line and
        /// column in the input.
        case syntax(JSONError)
        /// The predicate raised on the record at this 0-based position (the lowest such record).
        case evaluation(record: Int, EvaluationError)
    }

    /// What stopped the filter.
    public var kind: Kind

    /// An error of `kind`.
    public init(_ kind: Kind) { self.kind = kind }

    /// `invalid-json`, or the evaluation error's id (`incomparable-values`…).
    public var id: String {
        switch kind {
        case .syntax(let error): error.id
        case .evaluation(_, let error): error.id
        }
    }

    /// The syntax or evaluation error's message, without position.
    public var message: String {
        switch kind {
        case .syntax(let error): error.message
        case .evaluation(_, let error): error.message
        }
    }

    /// `line:column: error: message` (in the input), or `record N: ` and the evaluation error with
    /// its caret line (in the predicate).
    public var description: String {
        switch kind {
        case .syntax(let error): error.description
        case .evaluation(let record, let error): "record \(record): \(error.annotated)"
        }
    }
}

/// One predicate evaluated over the records of a JSON input: the elements of one top-level array,
/// or a sequence of JSON values (NDJSON, or values concatenated with any whitespace).
///
/// Records are read from a memory-mapped ``MappedInput``, as far as the predicate looks into them,
/// and evaluated as they are read (on two threads for a large sequence of values), so memory stays
/// bounded whatever the input's size. The outcome is all or nothing: the matches of every record,
/// or the first syntax error of the input, else the error of the lowest record the predicate raises
/// on (`EvaluationOptions.lenient` turns type mismatches into `false`).
///
/// ```swift
/// let input = try MappedInput.open("people.ndjson")
/// let filter = RecordFilter(try SiftPredicate("age >= 18 AND address.city BEGINSWITH[cd] 'sao'"))
/// var selection = try filter.select(from: input)
/// try selection.sort(by: [try SiftSortDescriptor("name")])
/// print(selection.indices)           // 0-based positions of the matching records
/// selection.write { bytes in         // the matching records as NDJSON
///     FileHandle.standardOutput.write(Data(bytes))
/// }
/// ```
public struct RecordFilter: Sendable {
    /// The compiled predicate.
    public let predicate: SiftPredicate
    /// The values of the predicate's `$VARIABLE`s.
    public let variables: [String: Value]
    /// Whether reading and evaluation are timed apart (``Selection/readTime``,
    /// ``Selection/evaluateTime``); the clock costs a little per record.
    public var timed = false

    /// A filter for `predicate`, with `variables` bound.
    public init(_ predicate: SiftPredicate, variables: [String: Value] = [:]) {
        self.predicate = predicate
        self.variables = variables
    }

    /// Reads and evaluates every record of `input`, keeping the positions of the matches.
    public func select(from input: MappedInput) throws(RecordFilterError) -> Selection {
        var progress = NoProgress()
        return try select(from: input, progress: &progress)
    }

    /// Reads and evaluates every record of `input`, reporting to `progress` as it goes.
    public func select(from input: MappedInput, progress: inout some RecordFilterProgress)
        throws(RecordFilterError) -> Selection
    {
        let pass = try run(over: input, keepsMatches: true, progress: &progress)
        return Selection(
            input: input, recordCount: pass.recordCount, indices: pass.matchIndices,
            starts: pass.matchStarts, depth: pass.depth, readTime: pass.readTime,
            evaluateTime: pass.evaluateTime)
    }

    /// Reads and evaluates every record of `input`, counting the matches without keeping their
    /// positions: what ``select(from:progress:)`` finds, in less time and memory when only the
    /// number is wanted. Errors are the same as `select`'s.
    ///
    /// ```swift
    /// let tally = try RecordFilter(try SiftPredicate("ANY tags == 'b'")).count(in: input)
    /// print("\(tally.matches) of \(tally.records) records match")
    /// ```
    public func count(in input: MappedInput) throws(RecordFilterError) -> Count {
        var progress = NoProgress()
        return try count(in: input, progress: &progress)
    }

    /// ``count(in:)``, reporting to `progress` as it goes.
    public func count(in input: MappedInput, progress: inout some RecordFilterProgress)
        throws(RecordFilterError) -> Count
    {
        let pass = try run(over: input, keepsMatches: false, progress: &progress)
        return Count(
            records: pass.recordCount, matches: pass.matchCount, readTime: pass.readTime,
            evaluateTime: pass.evaluateTime)
    }

    /// The first pass over `input`, its syntax or evaluation error thrown.
    private func run(
        over input: MappedInput, keepsMatches: Bool, progress: inout some RecordFilterProgress
    ) throws(RecordFilterError) -> FirstPass {
        let pass = FirstPass.run(
            input, compiled: predicate, variables: variables, projection: RecordProjection.of(predicate.syntax),
            timed: timed, keepsMatches: keepsMatches, progress: &progress)
        if let error = pass.syntaxError { throw RecordFilterError(.syntax(error.located(in: input.bytes))) }
        if let failure = pass.failure { throw RecordFilterError(.evaluation(record: failure.record, failure.error)) }
        return pass
    }

    /// How many records of one input a ``RecordFilter`` read and how many matched
    /// (``RecordFilter/count(in:)``).
    ///
    /// ```swift
    /// let tally = try filter.count(in: input)
    /// print(tally.matches, tally.records)
    /// ```
    public struct Count: Sendable, Hashable {
        /// How many records the input holds.
        public let records: Int
        /// How many of them matched.
        public let matches: Int
        /// Time spent reading and evaluating, when the filter was ``RecordFilter/timed``.
        public let readTime: Duration, evaluateTime: Duration
    }

    /// The records a ``RecordFilter`` matched in one input: their positions, and their text read
    /// again from the input on demand.
    ///
    /// ```swift
    /// let selection = try RecordFilter(try SiftPredicate("age >= 18")).select(from: input)
    /// print("\(selection.indices.count) of \(selection.recordCount) records match")
    /// let adults = selection.records()   // the matches as JSONValues, in input order
    /// ```
    public struct Selection {
        /// The input the records are read from.
        public let input: MappedInput
        /// How many records the input holds.
        public let recordCount: Int
        /// The 0-based positions of the matching records, in input order until sorted.
        public private(set) var indices: [Int]
        /// Where each match starts in the input, parallel to `indices`.
        private var starts: [Int]
        /// The nesting depth of each record (1 in a top-level array, 0 in a sequence).
        private let depth: Int
        /// Time spent reading and evaluating, when the filter was ``RecordFilter/timed``.
        public let readTime: Duration, evaluateTime: Duration

        fileprivate init(
            input: MappedInput, recordCount: Int, indices: [Int], starts: [Int], depth: Int,
            readTime: Duration, evaluateTime: Duration
        ) {
            self.input = input
            self.recordCount = recordCount
            self.indices = indices
            self.starts = starts
            self.depth = depth
            self.readTime = readTime
            self.evaluateTime = evaluateTime
        }

        /// Orders the matches by `descriptors` (stable; each match read again whole to sort it).
        public mutating func sort(by descriptors: [SiftSortDescriptor]) throws(EvaluationError) {
            guard !descriptors.isEmpty else { return }
            input.rewind()
            var values: [Value] = []
            values.reserveCapacity(starts.count)
            for at in starts {
                var scanner = JSONScanner(input.bytes, at: at)
                // Each match was read without error in the first pass.
                values.append((try? scanner.value(depth: depth, .whole)) ?? .null)
                input.release(before: at)
            }
            let order = try values.sortedIndices(by: descriptors)
            indices = order.map { indices[$0] }
            starts = order.map { starts[$0] }
        }

        /// The matching records as NDJSON: each record's compact JSON (object keys in input order)
        /// and a newline, handed to `sink` in blocks of about 1 MB.
        public func write(into sink: ([UInt8]) -> Void) {
            input.rewind()
            var out: [UInt8] = []
            out.reserveCapacity(1 << 20)
            for at in starts {
                var scanner = JSONScanner(input.bytes, at: at)
                // Each match was read without error in the first pass.
                try? scanner.writeValue(depth: depth, into: &out)
                out.append(0x0A)
                if out.count >= 1 << 20 {
                    sink(out)
                    out.removeAll(keepingCapacity: true)
                    input.release(before: at)
                }
            }
            if !out.isEmpty { sink(out) }
        }

        /// The matching records as JSON values, in order.
        public func records() -> [JSONValue] {
            var out: [JSONValue] = []
            out.reserveCapacity(starts.count)
            for at in starts {
                var scanner = JSONScanner(input.bytes, at: at)
                // Each match was read without error in the first pass.
                out.append((try? scanner.jsonValue(depth: depth)) ?? .null)
            }
            return out
        }
    }
}
