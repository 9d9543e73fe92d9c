// A faster way for `sift filter` to test records against the common predicates: AND, OR and NOT
// over comparisons of a plain key path (no collection operator; ANY/ALL allowed) with a constant or
// a variable. Building a `Value` for every record (an object per level, an array per member array)
// and reading it back key by key cost more than reading the JSON itself, so instead each record is
// validated once while the offsets of the top-level members the predicate names are noted, and each
// comparison reads its key path straight from the bytes. Comparisons with an integer or a string
// constant (any options, under ANY/ALL too) are decided where the values are written
// (DirectTextTest.swift for strings); any other builds only the value it compares, which the
// comparison itself, compiled over `SELF`, then tests. Whatever this cannot decide exactly as
// the general path would (a record that is not a plain object, a `{"$date": …}` object on the way,
// a key read from a number or a string, a comparison that raises) is sent back to the general path,
// which evaluates the record again and decides: answers and errors are always the general path's.
// Lenient predicates take the general path throughout: three-valued logic does not reduce to one
// Boolean per comparison.

import Foundation
import SiftEvaluation
import SiftSyntax

/// A class: the pass binds it once per record, and a struct would be copied there, retaining each
/// of its arrays.
final class DirectFilter: Sendable {
    /// The predicate's logic, with comparisons as indices into `leaves`.
    indirect enum Node: Sendable {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        case leaf(Int)
    }

    /// One comparison: which top-level member its key path starts at, the keys below that, and
    /// the comparison with the key path replaced by `SELF`. A class, so that taking one out of
    /// `leaves` per record is one retain rather than one per array and per part of the predicate.
    final class Leaf: Sendable {
        let member: Int
        let rest: [[UInt8]]
        let restNames: [String]
        let test: SiftPredicate
        /// For an ordering or equality against an integer constant: the test on an integer value,
        /// and the quantifier, so that integers are compared where they are written.
        let integer: IntegerTest?
        let quantifier: Quantifier?
        /// For a string test against a string constant (quantified or not): the test on a string,
        /// compared where it is written (DirectTextTest.swift).
        let text: TextTest?

        init(
            member: Int, rest: [[UInt8]], restNames: [String], test: SiftPredicate, integer: IntegerTest?,
            quantifier: Quantifier?, text: TextTest?
        ) {
            self.member = member
            self.rest = rest
            self.restNames = restNames
            self.test = test
            self.integer = integer
            self.quantifier = quantifier
            self.text = text
        }
    }

    /// `x op k` for an integer `x` and an integer constant `k`: two integers compare as integers
    /// on the general path too. Any other value takes the general comparison.
    struct IntegerTest: Sendable {
        let op: ComparisonOperator
        let k: Int64

        init?(_ op: ComparisonOperator, _ options: ComparisonOptions, _ rhs: ExpressionSyntax) {
            guard options.isEmpty, case .constant(.integer(let k)) = rhs.kind else { return nil }
            switch op {
            case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .equal, .notEqual: break
            default: return nil
            }
            self.op = op
            self.k = k
        }

        @inline(__always)
        func callAsFunction(_ x: Int64) -> Bool {
            switch op {
            case .lessThan: x < k
            case .lessThanOrEqual: x <= k
            case .greaterThan: x > k
            case .greaterThanOrEqual: x >= k
            case .equal: x == k
            default: x != k
            }
        }
    }

    let tree: Node
    let leaves: [Leaf]
    /// The same leaves, read per record without retaining them.
    private let unretainedLeaves: [Unmanaged<Leaf>]
    /// The top-level members the leaves read, by name and as bytes.
    let memberNames: [String]
    let memberBytes: [[UInt8]]
    /// Their lengths, and their first eight bytes as a little-endian word (zeros after a shorter
    /// name): a key of up to eight bytes is compared with each in one step, not a call to memcmp.
    let memberLengths: [Int]
    let memberWords: [UInt64]

    /// The direct form of `predicate`, or nil when it has a form this does not handle (the general
    /// path is then used for every record).
    init?(_ predicate: SiftPredicate) {
        guard !predicate.options.lenient else { return nil }
        var leaves: [Leaf] = []
        var names: [String] = []
        // Predicates nested deeper than this keep the general path, whose compiled code checks the
        // stack as it recurses; this form recurses without checks, so it stays shallow.
        var nesting = 0
        func node(_ p: PredicateSyntax) -> Node? {
            nesting += 1
            defer { nesting -= 1 }
            guard nesting <= 64 else { return nil }
            switch p.kind {
            case .constant(let value): return .constant(value)
            case .and(let operands):
                var nodes: [Node] = []
                for o in operands {
                    guard let n = node(o) else { return nil }
                    nodes.append(n)
                }
                return .and(nodes)
            case .or(let operands):
                var nodes: [Node] = []
                for o in operands {
                    guard let n = node(o) else { return nil }
                    nodes.append(n)
                }
                return .or(nodes)
            case .not(let operand):
                return node(operand).map { .not($0) }
            case .comparison(let quantifier, let lhs, let op, let options, let rhs):
                // A plain key path on the left, something that does not read the record on the right.
                guard case .keyPath(nil, let components) = lhs.kind, let first = components.first,
                    !components.contains(where: { $0.hasPrefix("@") || KeyPathComponent.isCollectionOperator($0) })
                else { return nil }
                switch rhs.kind {
                case .constant, .variable: break
                default: return nil
                }
                let member: Int
                if let n = names.firstIndex(of: first) {
                    member = n
                } else {
                    member = names.count
                    names.append(first)
                }
                let comparison = PredicateSyntax(
                    .comparison(
                        quantifier: quantifier, lhs: ExpressionSyntax(.evaluatedObject, range: lhs.range),
                        operator: op, options: options, rhs: rhs), range: p.range)
                let rest = Array(components.dropFirst())
                leaves.append(
                    Leaf(
                        member: member, rest: rest.map { Array($0.utf8) }, restNames: rest,
                        test: SiftPredicate(comparison, source: predicate.source, options: predicate.options),
                        integer: IntegerTest(op, options, rhs), quantifier: quantifier,
                        text: TextTest(op, options, rhs)))
                return .leaf(leaves.count - 1)
            }
        }
        guard let tree = node(predicate.syntax) else { return nil }
        self.tree = tree
        self.leaves = leaves
        self.unretainedLeaves = leaves.map { Unmanaged.passUnretained($0) }
        self.memberNames = names
        self.memberBytes = names.map { Array($0.utf8) }
        self.memberLengths = memberBytes.map(\.count)
        self.memberWords = memberBytes.map { name in
            name.prefix(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
    }

    // MARK: Reading

    /// Validates the record at the scanner's position and moves past it, noting in `offsets` where
    /// the value of each member in `memberNames` starts (-1 when absent; the last of duplicates, as
    /// the general reader keeps). Answers false when the record is not a plain object, so that only
    /// the general path may read it. Fails as the general reader fails, at the same byte.
    func locate(_ s: inout JSONScanner, depth: Int, offsets: UnsafeMutablePointer<Int>) throws(JSONScanError) -> Bool {
        offsets.update(repeating: -1, count: memberBytes.count)
        guard depth < JSONScanner.maximumDepth, s.i < s.count, s.base[s.i] == UInt8(ascii: "{") else {
            try s.skipValue(depth: depth)
            return false
        }
        guard !s.open(UInt8(ascii: "}")) else { return true }
        var plain = true
        var first = true
        repeat {
            let key = try s.memberKey()
            // `{"$date": …}` may be a date; the general path decides.
            if first, s.isKey(key, "$date") { plain = false }
            first = false
            if let n = s.index(of: key, in: self) { offsets[n] = s.i }
            try s.skipElement(depth: depth + 1)
        } while try s.separator(UInt8(ascii: "}"))
        return plain
    }

    // MARK: Evaluating

    /// Whether the record whose members `locate` found matches, or nil when the general path must
    /// decide. `s` is any scanner over the input. `timing` times the reading of key paths from the
    /// bytes (for --stats: it is reading, not evaluating), or nothing (`Untimed`, which compiles
    /// away).
    func evaluate<Timing: PathTiming>(
        _ s: JSONScanner, depth: Int, offsets: UnsafeMutablePointer<Int>, variables: [String: Value],
        timing: inout Timing
    ) -> Bool? {
        answer(tree, Located(scanner: s, depth: depth, offsets: offsets), variables, &timing)
    }

    /// A record as `locate` left it: a scanner over the input, the record's depth, and the offsets
    /// of its members.
    struct Located {
        let scanner: JSONScanner
        let depth: Int
        let offsets: UnsafeMutablePointer<Int>
    }

    /// The answer of `node` on `record` (a method, not a closure over the record: a closure's
    /// captures were retained for each leaf).
    private func answer<Timing: PathTiming>(
        _ node: Node, _ record: Located, _ variables: [String: Value], _ timing: inout Timing
    ) -> Bool? {
        switch node {
        case .constant(let value): return value
        case .and(let nodes):
            for n in nodes.indices {
                guard let r = answer(nodes[n], record, variables, &timing) else { return nil }
                if !r { return false }
            }
            return true
        case .or(let nodes):
            for n in nodes.indices {
                guard let r = answer(nodes[n], record, variables, &timing) else { return nil }
                if r { return true }
            }
            return false
        case .not(let n):
            return answer(n, record, variables, &timing).map { !$0 }
        case .leaf(let k):
            // The leaf without a retain and a release: `leaves` holds it while self lives.
            return unretainedLeaves[k]._withUnsafeGuaranteedRef { answer(leaf: $0, record, variables, &timing) }
        }
    }

    /// The answer of one comparison on `record`: a typed test where the value is written when it
    /// decides, else the comparison on the value its key path reads.
    private func answer<Timing: PathTiming>(
        leaf: Leaf, _ record: Located, _ variables: [String: Value], _ timing: inout Timing
    ) -> Bool? {
        let at = record.offsets[leaf.member]
        timing.start()
        if at >= 0, leaf.integer != nil || leaf.text != nil {
            // The typed tests, where the value is written: an integer, or a string;
            // nil leaves the leaf to the general test below.
            var t = record.scanner
            t.i = at
            var answer: Bool?
            if let integer = leaf.integer { answer = t.integerAnswer(integer, leaf) }
            if answer == nil, let text = leaf.text {
                t.i = at
                answer = t.textAnswer(text, leaf)
            }
            timing.lap()
            if let answer { return answer }
        }
        let value: Value
        if at < 0 {
            // A key on a missing member, and any key below it, reads nil.
            value = .null
        } else {
            var t = record.scanner
            t.i = at
            guard let v = t.resolve(leaf, from: 0, depth: record.depth + 1) else { return nil }
            value = v
        }
        timing.lap()
        do throws(EvaluationError) { return try leaf.test.evaluate(with: value, variables: variables) } catch {
            return nil
        }
    }
}

/// How `DirectFilter.evaluate` times the reading of key paths: not at all (`Untimed`), or on the
/// clock (`PathClock`, for --stats). A type parameter rather than a flag, so that the untimed
/// evaluation holds no clock value at all (an instant is opaque to this module: each copy of one
/// was a call).
protocol PathTiming {
    /// Starts timing the reading of one key path.
    mutating func start()
    /// Adds the time since the last `start` or `lap` to the reading time.
    mutating func lap()
}

/// No timing.
struct Untimed: PathTiming {
    @inline(__always) func start() {}
    @inline(__always) func lap() {}
}

/// The time spent reading key paths, on the continuous clock.
struct PathClock: PathTiming {
    private let clock = ContinuousClock()
    private var mark: ContinuousClock.Instant
    /// The time counted so far.
    private(set) var spent = Duration.zero

    init() { mark = clock.now }

    mutating func start() { mark = clock.now }

    mutating func lap() {
        let now = clock.now
        spent += now - mark
        mark = now
    }
}

extension JSONScanner {
    /// Whether a member's key (as `memberKey` answered it) is `name`.
    @inline(__always)
    func isKey(_ key: (start: Int, end: Int, escaped: Bool), _ name: StaticString) -> Bool {
        if key.escaped { return stringContent(key.start, key.end, escaped: true) == name.description }
        return key.end - key.start == name.utf8CodeUnitCount
            && memcmp(base + key.start, name.utf8Start, name.utf8CodeUnitCount) == 0
    }

    /// The index of a member's key among the members `filter` reads, or nil.
    @inline(__always)
    func index(of key: (start: Int, end: Int, escaped: Bool), in filter: DirectFilter) -> Int? {
        if key.escaped {
            let name = stringContent(key.start, key.end, escaped: true)
            return filter.memberNames.firstIndex(of: name)
        }
        let length = key.end - key.start
        if length <= 8, key.start + 8 <= count {
            // The key's bytes as a word, the bytes after it masked off.
            let bytes = UInt64(littleEndian: UnsafeRawPointer(base + key.start).loadUnaligned(as: UInt64.self))
            let word = length == 8 ? bytes : bytes & (1 << (8 * UInt64(length)) - 1)
            for n in filter.memberWords.indices where filter.memberWords[n] == word && filter.memberLengths[n] == length
            {
                return n
            }
            return nil
        }
        let bytes = filter.memberBytes
        for n in bytes.indices where bytes[n].count == length {
            if bytes[n].withUnsafeBufferPointer({ memcmp(base + key.start, $0.baseAddress!, length) == 0 }) { return n }
        }
        return nil
    }

    /// The value of `leaf`'s key path from key `k` on, read from the (already validated) value at
    /// `i` and built as the general path builds it: a key on an object is its member (the last of
    /// duplicates) or nil, a key on nil is nil, a key on an array maps over the elements. Nil where
    /// the general path may answer otherwise or raise: a key on a number, string or Boolean, or an
    /// object that starts with `$date`.
    func resolve(_ leaf: DirectFilter.Leaf, from k: Int, depth: Int) -> Value? {
        var s = self
        guard k < leaf.rest.count else { return s.leafValue(depth: depth) }
        switch s.base[s.i] {
        case UInt8(ascii: "{"):
            guard let found = s.member(leaf.rest[k], leaf.restNames[k]) else { return nil }
            guard found >= 0 else { return .null }
            s.i = found
            return s.resolve(leaf, from: k + 1, depth: depth + 1)
        case UInt8(ascii: "n"):
            return .null
        case UInt8(ascii: "["):
            s.i += 1
            s.skipSpace()
            var items: [Value] = []
            if s.base[s.i] == UInt8(ascii: "]") { return .array(items) }
            while true {
                s.skipSpace()
                guard let v = s.resolve(leaf, from: k, depth: depth + 1) else { return nil }
                items.append(v)
                guard (try? s.skipElement(depth: depth + 1)) != nil else { return nil }
                s.skipSpace()
                guard s.i < s.count, s.base[s.i] == UInt8(ascii: ",") else { break }
                s.i += 1
            }
            return .array(items)
        default:
            return nil
        }
    }

    /// Where a key path read through objects only leads from the (already validated) value at `i`.
    enum Walk {
        /// The value at this offset.
        case value(Int)
        /// Nil: a key missing, or a null on the way.
        case null
        /// An array at this offset, to map the keys from the given index on over.
        case array(Int, Int)
        /// Something the general path reads otherwise (a key on a scalar, a `$date` object).
        case other
    }

    /// Follows `leaf`'s key path from key `k` on through objects, from the value at `i`.
    @inline(__always)
    func walk(_ leaf: DirectFilter.Leaf, from k: Int) -> Walk {
        k < leaf.rest.count ? walkKeys(leaf, from: k) : .value(i)
    }

    /// `walk` with at least one key left to read.
    private func walkKeys(_ leaf: DirectFilter.Leaf, from k: Int) -> Walk {
        var s = self
        var k = k
        while k < leaf.rest.count {
            switch s.base[s.i] {
            case UInt8(ascii: "{"):
                guard let found = s.member(leaf.rest[k], leaf.restNames[k]) else { return .other }
                guard found >= 0 else { return .null }
                s.i = found
            case UInt8(ascii: "n"): return .null
            case UInt8(ascii: "["): return .array(s.i, k)
            default: return .other
            }
            k += 1
        }
        return .value(s.i)
    }

    /// The offset of the value of member `key` (`name` as a string) of the (already validated)
    /// object at `i`, the last of duplicates; -1 when it has none; nil for an object starting with
    /// `$date` (the general path may read it as a date).
    func member(_ key: [UInt8], _ name: String) -> Int? {
        var s = self
        s.i += 1
        s.skipSpace()
        if s.base[s.i] == UInt8(ascii: "}") { return -1 }
        var found = -1
        var first = true
        while true {
            guard let k = try? s.memberKey() else { return nil }
            if first, s.isKey(k, "$date") { return nil }
            first = false
            if k.escaped {
                if s.stringContent(k.start, k.end, escaped: true) == name { found = s.i }
            } else if k.end - k.start == key.count,
                key.withUnsafeBufferPointer({ memcmp(s.base + k.start, $0.baseAddress!, key.count) == 0 })
            {
                found = s.i
            }
            guard (try? s.skipElement(depth: 0)) != nil else { return nil }
            s.skipSpace()
            guard s.i < s.count, s.base[s.i] == UInt8(ascii: ",") else { return found }
            s.i += 1
        }
    }

    /// The integer written at `i`, leaving `i` just past it, or nil for anything else.
    @inline(__always)
    mutating func integer() -> Int64? {
        let c = base[i]
        guard c == UInt8(ascii: "-") || c &- 0x30 < 10 else { return nil }
        // Most integers have a few digits: up to 18 (always in Int64's range) are read here, once;
        // anything longer, or a fraction or an exponent after them, is read by the general path.
        var j = c == UInt8(ascii: "-") ? i + 1 : i
        let first = j
        var n: Int64 = 0
        while j < count, j - first < 18, base[j] &- 0x30 < 10 {
            n = n &* 10 &+ Int64(base[j] &- 0x30)
            j += 1
        }
        if j > first, j - first < 18,
            j == count || (base[j] != UInt8(ascii: ".") && base[j] | 0x20 != UInt8(ascii: "e"))
        {
            i = j
            return c == UInt8(ascii: "-") ? -n : n
        }
        return longInteger()
    }

    /// `integer` for a number of more than 18 digits or not written as an integer.
    private mutating func longInteger() -> Int64? {
        guard let (start, isInteger) = try? scanNumber(), isInteger,
            case .integer(let n) = numberValue(start, isInteger: true)
        else { return nil }
        return n
    }

    /// The answer of `leaf`'s integer comparison (quantified or not) on its key path from the
    /// value at `i`, when every value it compares is an integer; nil otherwise (the general
    /// comparison then decides).
    func integerAnswer(_ test: DirectFilter.IntegerTest, _ leaf: DirectFilter.Leaf) -> Bool? {
        typedAnswer(leaf) { t in t.integer().map { test($0) } }
    }

    /// The answer of `leaf`'s string comparison (quantified or not) on its key path from the value
    /// at `i`, when `textValueAnswer` decides every value it compares; nil otherwise.
    func textAnswer(_ test: DirectFilter.TextTest, _ leaf: DirectFilter.Leaf) -> Bool? {
        typedAnswer(leaf) { t in t.textValueAnswer(test) }
    }

    /// The answer of `leaf`'s comparison on its key path from the value at `i`, `element` giving
    /// the answer on one value it compares (or nil, which leaves the leaf to the general
    /// comparison). ANY and ALL decide where the general path does, at the first element that
    /// decides, having tested only elements `element` answers before it; but when keys are left
    /// to read in the elements, every element is still read through the path, as the general path
    /// maps the whole path before comparing, and a key it cannot read in any element is an error
    /// there. `element` may leave its scanner past the value it read (a string it scanned), which
    /// saves reading the element again to pass it.
    @inline(__always)
    func typedAnswer(_ leaf: DirectFilter.Leaf, _ element: (inout JSONScanner) -> Bool?) -> Bool? {
        guard let quantifier = leaf.quantifier else {
            guard case .value(let at) = walk(leaf, from: 0) else { return nil }
            var t = self
            t.i = at
            return element(&t)
        }
        let all = quantifier == .all
        var s = self
        var rest = leaf.rest.count
        switch walk(leaf, from: 0) {
        case .null: return all
        case .other: return nil
        case .value(let at):
            s.i = at
            if s.base[at] == UInt8(ascii: "n") { return all }
            guard s.base[at] == UInt8(ascii: "[") else { return nil }
        case .array(let at, let from):
            s.i = at
            rest = from
        }
        // The elements of the array at `i`, each read through the rest of the path.
        s.i += 1
        s.skipSpace()
        if s.base[s.i] == UInt8(ascii: "]") { return all }
        var decided: Bool?
        while true {
            s.skipSpace()
            // An array of the values compared (no key left to read) needs no walk.
            // The element's own value, with no key left to read in it: `element` may pass it.
            let direct = rest == leaf.rest.count
            var passed = false
            switch direct ? .value(s.i) : s.walk(leaf, from: rest) {
            case .value(let at):
                if decided == nil {
                    var t = s
                    t.i = at
                    guard let x = element(&t) else { return nil }
                    if x != all {
                        // With no key to map over the elements left, nothing after this one
                        // can raise: the answer is final.
                        if direct { return !all }
                        decided = !all
                    }
                    if direct, t.i > at {
                        s.i = t.i
                        passed = true
                    }
                }
            case .null:
                if decided == nil { return nil }
            case .array, .other:
                return nil
            }
            guard passed || (try? s.skipElement(depth: 0)) != nil else { return nil }
            s.skipSpace()
            guard s.i < s.count, s.base[s.i] == UInt8(ascii: ",") else { return decided ?? all }
            s.i += 1
        }
    }

    /// The (already validated) value at `i`: scalars built directly, containers as the general
    /// path builds a value read whole.
    private func leafValue(depth: Int) -> Value? {
        var s = self
        switch s.base[s.i] {
        case UInt8(ascii: "\""): return try? .string(s.string())
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let (start, isInteger) = try? s.scanNumber() else { return nil }
            switch s.numberValue(start, isInteger: isInteger) {
            case .integer(let n): return .integer(n)
            case .double(let d): return .double(d)
            }
        default:
            return try? s.value(depth: depth, .whole)
        }
    }
}
