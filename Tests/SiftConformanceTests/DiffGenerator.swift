// Random inputs for the differential test: datasets of JSON records full of nils, missing keys,
// keys that are not identifiers (`first name`, `@timestamp`, `café`, one that reads like SQL),
// empty strings, empty and nil collections, accents, case variants and mixed numbers, and random
// predicates drawn from the part of the grammar both back-ends support. Predicates are kept as a
// small tree of their own (not the parser's AST) so the shrinker can take them apart and render
// them back to text, which is then parsed by SiftSyntax like any user predicate.

import Foundation
import SiftJSON
import SiftTestSupport

/// A generated expression: renders to format-string text plus the `%@` arguments it consumes.
indirect enum GenExpr: Hashable {
    /// A key path as predicate text (`address.city`, `#"first name"`).
    case key(String)
    /// `%K` with this key path as its argument (`user-agent`, `address.post-code`).
    case formatKey(String)
    case literal(String)
    /// A `%@` argument, a JSON value converted with the CLI's conventions.
    case argument(JSONValue)
    case arithmetic(GenExpr, String, GenExpr)
    /// `SUBQUERY(kids, $k, P).@count` or `…[SIZE]`.
    case subquery(GenPred, size: Bool)
    /// `$name`, bound to a JSON value at evaluation (memory) and lowering (SQL) time.
    case variable(String, JSONValue)
    /// `{lo, hi}`, BETWEEN's bounds.
    case bounds(GenExpr, GenExpr)
    /// `name(arg, …)`: a built-in function, or `CAST` (its type as a literal argument).
    case call(String, [GenExpr])
    /// `TERNARY(condition, then, else)`.
    case ternary(GenPred, GenExpr, GenExpr)
    /// `SUBQUERY(collection, $variable, P)` followed by `suffix` (`""`, `.name`, `.@count`): a
    /// SUBQUERY's result as a whole.
    case filtered(String, String, GenPred, String)

    func render(_ args: inout [JSONValue]) -> String {
        switch self {
        case .key(let k): return k
        case .formatKey(let k):
            args.append(.string(k))
            return "%K"
        case .literal(let l): return l
        case .argument(let v):
            args.append(v)
            return "%@"
        case .variable(let name, _): return "$" + name
        case .bounds(let lo, let hi): return "{\(lo.render(&args)), \(hi.render(&args))}"
        case .arithmetic(let a, let op, let b): return "(\(a.render(&args)) \(op) \(b.render(&args)))"
        case .subquery(let p, let size):
            return "SUBQUERY(kids, $k, \(p.render(&args)))" + (size ? "[SIZE]" : ".@count")
        case .call(let name, let xs):
            var parts: [String] = []
            for x in xs { parts.append(x.render(&args)) }
            return "\(name)(\(parts.joined(separator: ", ")))"
        case .ternary(let p, let a, let b):
            let c = p.render(&args)
            let x = a.render(&args)
            return "TERNARY(\(c), \(x), \(b.render(&args)))"
        case .filtered(let collection, let variable, let p, let suffix):
            return "SUBQUERY(\(collection), $\(variable), \(p.render(&args)))\(suffix)"
        }
    }

    /// Smaller expressions that may still show a failure.
    var shrinks: [GenExpr] {
        switch self {
        case .key, .formatKey: return []
        case .bounds(let lo, let hi): return lo.shrinks.map { .bounds($0, hi) } + hi.shrinks.map { .bounds(lo, $0) }
        case .variable(_, let v):
            if case .string = v { return [.literal("\"\"")] }
            return [.literal("0")]
        case .literal(let l):
            var out: [GenExpr] = []
            if l.hasPrefix("\"") && l != "\"\"" { out.append(.literal("\"\"")) }
            if l != "0", Double(l) != nil { out.append(.literal("0")) }
            if l.hasPrefix("{") && l != "{}" { out.append(.literal("{}")) }
            return out
        case .argument(let v):
            if case .array(let items) = v, !items.isEmpty {
                return items.indices.map { i in
                    var a = items
                    a.remove(at: i)
                    return .argument(.array(a))
                }
            }
            return []
        case .arithmetic(let a, let op, let b):
            return [a, b] + a.shrinks.map { .arithmetic($0, op, b) } + b.shrinks.map { .arithmetic(a, op, $0) }
        case .subquery(let p, let size):
            return p.shrinks.map { .subquery($0, size: size) } + (size ? [.subquery(p, size: false)] : [])
        case .call(let name, let xs):
            var out: [GenExpr] = xs.filter { if case .literal = $0 { false } else { true } }
            for (i, x) in xs.enumerated() {
                for y in x.shrinks {
                    var c = xs
                    c[i] = y
                    out.append(.call(name, c))
                }
            }
            return out
        case .ternary(let p, let a, let b):
            return [a, b] + p.shrinks.map { .ternary($0, a, b) } + a.shrinks.map { .ternary(p, $0, b) }
                + b.shrinks.map { .ternary(p, a, $0) }
        case .filtered(let c, let v, let p, let suffix):
            return p.shrinks.map { .filtered(c, v, $0, suffix) } + (suffix.isEmpty ? [] : [.filtered(c, v, p, "")])
        }
    }

    /// The `$variables` used, with their values.
    func collectVariables(into out: inout [String: JSONValue]) {
        switch self {
        case .variable(let n, let v): out[n] = v
        case .arithmetic(let a, _, let b):
            a.collectVariables(into: &out)
            b.collectVariables(into: &out)
        case .subquery(let p, _): p.collectVariables(into: &out)
        case .bounds(let a, let b):
            a.collectVariables(into: &out)
            b.collectVariables(into: &out)
        case .call(_, let xs): for x in xs { x.collectVariables(into: &out) }
        case .ternary(let p, let a, let b):
            p.collectVariables(into: &out)
            a.collectVariables(into: &out)
            b.collectVariables(into: &out)
        case .filtered(_, _, let p, _): p.collectVariables(into: &out)
        default: break
        }
    }
}

/// A generated predicate.
indirect enum GenPred: Hashable {
    case constant(Bool)
    case not(GenPred)
    case and([GenPred])
    case or([GenPred])
    /// `[quantifier] lhs OP[options] rhs`; `quantifier` is "", "ANY", "ALL", "NONE" or "SOME".
    case comparison(quantifier: String, GenExpr, op: String, options: String, GenExpr)

    func render(_ args: inout [JSONValue]) -> String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let p): return "NOT (\(p.render(&args)))"
        case .and(let ps): return "(" + ps.map { $0.render(&args) }.joined(separator: " AND ") + ")"
        case .or(let ps): return "(" + ps.map { $0.render(&args) }.joined(separator: " OR ") + ")"
        case .comparison(let q, let l, let op, let opts, let r):
            let lhs = l.render(&args)
            let rhs = r.render(&args)
            return (q.isEmpty ? "" : q + " ") + lhs + " " + op + (opts.isEmpty ? "" : "[\(opts)]") + " " + rhs
        }
    }

    /// The `$variables` used, with their values.
    var variables: [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        collectVariables(into: &out)
        return out
    }

    func collectVariables(into out: inout [String: JSONValue]) {
        switch self {
        case .constant: break
        case .not(let p): p.collectVariables(into: &out)
        case .and(let ps), .or(let ps): for p in ps { p.collectVariables(into: &out) }
        case .comparison(_, let l, _, _, let r):
            l.collectVariables(into: &out)
            r.collectVariables(into: &out)
        }
    }

    /// The predicate text and its arguments.
    var text: (String, [JSONValue]) {
        var args: [JSONValue] = []
        let s = render(&args)
        return (s, args)
    }

    /// Smaller predicates that may still show a failure, most aggressive first.
    var shrinks: [GenPred] {
        switch self {
        case .constant: return []
        case .not(let p):
            if case .not(let q) = p { return [q] + p.shrinks.map { .not($0) } }
            return [p] + p.shrinks.map { .not($0) }
        case .and(let ps), .or(let ps):
            let rebuild: ([GenPred]) -> GenPred = {
                if $0.count == 1 { return $0[0] }
                if case .and = self { return .and($0) } else { return .or($0) }
            }
            var out: [GenPred] = ps
            if ps.count > 1 {
                for i in ps.indices {
                    var a = ps
                    a.remove(at: i)
                    out.append(rebuild(a))
                }
            }
            for i in ps.indices {
                for s in ps[i].shrinks {
                    var a = ps
                    a[i] = s
                    out.append(rebuild(a))
                }
            }
            return out
        case .comparison(let q, let l, let op, let opts, let r):
            var out: [GenPred] = []
            if !opts.isEmpty { out.append(.comparison(quantifier: q, l, op: op, options: "", r)) }
            if q == "NONE" || q == "SOME" || q == "ALL" {
                out.append(.comparison(quantifier: "ANY", l, op: op, options: opts, r))
            }
            out += l.shrinks.map { .comparison(quantifier: q, $0, op: op, options: opts, r) }
            // BETWEEN's bounds stay a pair.
            if op != "BETWEEN" { out += r.shrinks.map { .comparison(quantifier: q, l, op: op, options: opts, $0) } }
            if case .subquery(let p, _) = l { out.append(p.replacingSubqueryVariable()) }
            return out
        }
    }

    /// The same predicate with `$k.` paths turned into `ANY kids.` leaves (a shrink step that
    /// gets rid of a SUBQUERY while keeping its inner comparison around).
    func replacingSubqueryVariable() -> GenPred {
        switch self {
        case .constant: return self
        case .not(let p): return .not(p.replacingSubqueryVariable())
        case .and(let ps): return .and(ps.map { $0.replacingSubqueryVariable() })
        case .or(let ps): return .or(ps.map { $0.replacingSubqueryVariable() })
        case .comparison(_, let l, let op, let opts, let r):
            func fix(_ e: GenExpr) -> GenExpr {
                if case .key(let k) = e, k.hasPrefix("$k.") { return .key("kids." + k.dropFirst(3)) }
                return e
            }
            return .comparison(quantifier: "ANY", fix(l), op: op, options: opts, fix(r))
        }
    }
}

/// Generates datasets and predicates from one seeded generator.
struct DiffGenerator {
    var rng: SplitMix64
    /// The current dataset's records are values (strings, numbers, dates, arrays, null), not
    /// objects: predicates then test SELF.
    var selfRecords = false

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    // MARK: data

    /// Strings stored in records: NFC (the store convention), with case, accent, width and
    /// special-character variants of a few words, and the empty string.
    static let words = [
        "Ann", "ann", "ANN", "Anna", "Émile", "émile", "Emile", "emile", "EMILE", "Straße", "STRASSE", "strasse",
        "İstanbul", "istanbul", "ISTANBUL", "ıi", "Ａｎｎ", "", "São Paulo", "sao paulo", "Sao Paulo",
        "a%b", "a_b", "x*y", "Zoë", "zoe", "Ångström", "b", "Bob", "bob", "café", "CAFÉ", "cafe", "naïve",
        // NFC text that still carries combining marks (q has no precomposed accented form): a
        // match may not end just before one; ligatures and capital sharp s under [c].
        "Aq\u{301}x", "q\u{301}", "ﬁle", "FILE", "file", "ẞ", "Ǆ", "ǆ",
    ]

    /// A string, now and then a number in its place (memory then raises on ordering and string
    /// operators, SQL must not select what memory says is false).
    mutating func string() -> JSONValue { chance(0.04) ? number() : .string(pick(Self.words)) }

    /// A number of mixed kinds: integers, doubles (some integral), now and then a boolean, and now
    /// and then a string in its place (memory raises on ordering it, and the SQL back-ends must then
    /// raise too, see `Differential.check`).
    mutating func number() -> JSONValue {
        switch int(0...39) {
        case 0...1: return .string(pick(["5", "7.0", "", "x"]))
        case 2...23: return .integer(Int64(int(-2...12)))
        case 24...31: return .double(pick([0.5, 2.5, 3.0, 7.0, -1.25, 10.0, 4.75]))
        default: return .bool(chance(0.5))
        }
    }

    /// A date (`{"$date": seconds since 1970}`), a few seconds or days apart, some fractional.
    mutating func date() -> JSONValue {
        let seconds: JSONValue =
            chance(0.2) ? .double(Double(int(0...4)) * 86_400 + 0.5) : .integer(Int64(int(-2...4) * 86_400))
        return .object([("$date", seconds)])
    }

    /// A value for `key` that may be missing (nil result), null, or of the given shape.
    mutating func maybe(_ make: (inout DiffGenerator) -> JSONValue, missing: Double = 0.15, null: Double = 0.15)
        -> JSONValue?
    {
        if chance(missing) { return nil }
        if chance(null) { return .null }
        return make(&self)
    }

    mutating func address(depth: Int, full: Bool) -> JSONValue {
        var o: [(String, JSONValue)] = []
        if full || chance(0.8), let v = full ? string() : maybe({ $0.string() }) { o.append(("city", v)) }
        if full || chance(0.7), let v = full ? number() : maybe({ $0.number() }) { o.append(("zip", v)) }
        if full || chance(0.5), let v = full ? number() : maybe({ $0.number() }) { o.append(("post-code", v)) }
        if full || chance(0.6) {
            let geo: JSONValue? =
                full
                ? .object([("lat", number())])
                : maybe({ g in
                    var inner: [(String, JSONValue)] = []
                    if let lat = g.maybe({ $0.number() }) { inner.append(("lat", lat)) }
                    return .object(inner)
                })
            if let geo { o.append(("geo", geo)) }
        }
        return .object(o)
    }

    mutating func kid(full: Bool) -> JSONValue {
        var o: [(String, JSONValue)] = []
        if let v = full ? string() : maybe({ $0.string() }, missing: 0.1, null: 0.1) { o.append(("name", v)) }
        if let v = full ? number() : maybe({ $0.number() }, missing: 0.1, null: 0.1) { o.append(("age", v)) }
        if let v = full
            ? address(depth: 1, full: true) : maybe({ $0.address(depth: 1, full: false) }, missing: 0.4, null: 0.2)
        {
            o.append(("address", v))
        }
        // An array in each element: `kids.@unionOfArrays.toys` (only the document holds it as a whole).
        if let v = full
            ? .array([string()])
            : maybe({ g in .array((0..<g.int(0...2)).map { _ in g.string() }) }, missing: 0.5, null: 0.1)
        {
            o.append(("toys", v))
        }
        return .object(o)
    }

    /// One record; `full` fills every key so the inferred schema knows every path.
    mutating func record(full: Bool) -> JSONValue {
        var o: [(String, JSONValue)] = []
        func add(_ k: String, _ v: JSONValue?) { if let v { o.append((k, v)) } }
        add("name", full ? string() : maybe({ $0.string() }))
        add("city", full ? string() : maybe({ $0.string() }))
        add("age", full ? number() : maybe({ $0.number() }))
        add("score", full ? number() : maybe({ $0.number() }))
        // Integers or nil, never another kind: a typed optional column, where nil into arithmetic
        // is the one way memory raises (issue 27).
        add("qty", full ? .integer(Int64(int(-2...12))) : maybe({ .integer(Int64($0.int(-2...12))) }))
        add("born", full ? date() : maybe({ $0.date() }))
        add("address", full ? address(depth: 0, full: true) : maybe({ $0.address(depth: 0, full: false) }))
        // Now and then a null element, which only the document keeps apart from an empty object.
        add(
            "kids",
            full
                ? .array([kid(full: true), kid(full: false)])
                : maybe({ g in
                    .array((0..<g.int(0...3)).map { _ in g.chance(0.08) ? .null : g.kid(full: false) })
                }))
        add(
            "tags",
            full
                ? .array([string(), string()])
                : maybe({ g in
                    .array((0..<g.int(0...3)).map { _ in g.string() })
                }))
        // A key of every shape: its shape column picks, per record, how a predicate reads it.
        add("mix", full ? mixed() : maybe({ $0.mixed() }))
        for k in Self.oddStringKeys { add(k, full ? string() : maybe({ $0.string() })) }
        for k in Self.oddNumberKeys { add(k, full ? number() : maybe({ $0.number() })) }
        return .object(o)
    }

    /// A dataset of `count` records, the first of which has every key (in random order of
    /// position, so that records with missing keys also come first now and then).
    mutating func dataset(count: Int, valueRecords: Bool = true) -> [JSONValue] {
        selfRecords = valueRecords && chance(0.15)
        if selfRecords { return (0..<count).map { _ in selfRecord() } }
        var records = (0..<count).map { _ in record(full: false) }
        records[int(0...(count - 1))] = record(full: true)
        // `mix` takes at least three shapes, so it is always a mixed key.
        let anchors: [JSONValue] = [.array([string()]), .object([("city", string())]), string()]
        for (k, anchor) in anchors.enumerated() {
            guard case .object(var fields) = records[k] else { continue }
            fields.removeAll { $0.0 == "mix" }
            fields.append(("mix", anchor))
            records[k] = .object(fields)
        }
        return records
    }

    // MARK: predicates

    /// Constants: the stored words, non-NFC spellings (Sift binds constants NFC-normalized except
    /// under [n], and both back-ends then agree because the data itself is NFC), and prefixes.
    static let constants =
        words + [
            "E\u{301}mile", "e\u{301}", "É", "é", "e", "E", "An", "an", "Str", "STR", "s", "ß", "ss", "SS", "İ", "i",
            "I",
            "Ａ", "ａ", "Sã", "sa", "ile", "ILE", "aße", "%", "_", "*", "ë", "caf", "É\u{300}",
            "Aq", "q", "\u{301}x", "fi", "FI", "le", "ǅ",
        ]

    static let likePatterns = [
        "A*", "*e", "?nn", "*a*", "É*", "*", "?", "a%b", "a_b", "*ß*", "s*o", "x\\*y", "*ILE", "Ａ*", "",
        "Aq*", "Aq?x", "?", "??", "fi*", "*\u{301}*",
    ]
    static let regexes = [
        "A.*", ".*[eé]", "[A-Za-z]+", "S.*", ".*", "", "(?:ann|bob)", "\\\\w+", ".{3}", "É.*", "Aq.x", "\\\\X+",
    ]

    mutating func quoted(_ s: String) -> String {
        var out = "\""
        for ch in s.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "\""
    }

    /// Names for `$variables`, unique within a run.
    var variableCount = 0

    mutating func variable(_ value: JSONValue) -> GenExpr {
        variableCount += 1
        return .variable("v\(variableCount)", value)
    }

    mutating func stringConstant() -> GenExpr {
        if chance(0.15) { return .argument(.string(pick(Self.constants))) }
        if chance(0.08) { return variable(.string(pick(Self.constants))) }
        return .literal(quoted(pick(Self.constants)))
    }

    mutating func numberConstant() -> GenExpr {
        if chance(0.06) {
            let v = number()
            if case .string = v { return variable(.integer(3)) }
            return variable(v)
        }
        switch number() {
        case .integer(let i): return .literal(String(i))
        case .double(let d): return .literal(String(d))
        case .bool(let b): return .literal(b ? "TRUE" : "FALSE")
        default: return .literal("0")
        }
    }

    static let stringKeys = ["name", "city", "address.city"]
    static let numberKeys = ["age", "score", "qty", "address.zip", "address.geo.lat"]

    /// Keys that are not C identifiers, as real JSON has them; every record may have them.
    static let oddStringKeys = ["first name", "user-agent"]
    static let oddNumberKeys = ["@timestamp", "café", "x\"; DROP TABLE t; --"]
    /// The same keys as predicate text: quoted with either quote, or bare where they are identifiers.
    static let oddStringKeyTexts = [#"#"first name""#, "#'user-agent'"]
    static let oddNumberKeyTexts = [#"#"@timestamp""#, "café", #"#"x\"; DROP TABLE t; --""#, #"address.#"post-code""#]

    /// A key that is not an identifier, spelled in the predicate or passed to `%K`.
    mutating func oddKey(strings: Bool) -> GenExpr {
        if chance(0.4) {
            let raw = strings ? Self.oddStringKeys : Self.oddNumberKeys + ["address.post-code"]
            return .formatKey(pick(raw))
        }
        return .key(pick(strings ? Self.oddStringKeyTexts : Self.oddNumberKeyTexts))
    }

    mutating func options() -> String { pick(["", "", "", "c", "d", "cd", "n", "c", "cd"]) }

    /// A list constant for IN: a literal `{…}` or a `%@` array, with nil and empty lists.
    mutating func list(strings: Bool) -> GenExpr {
        let n = int(0...3)
        var items: [JSONValue] = (0..<n).map { _ in
            if chance(0.15) { return .null }
            if strings { return .string(pick(Self.constants)) }
            let v = number()
            if case .string = v { return .integer(5) }
            return v
        }
        // A number among strings: the string keys are dynamically typed columns, which accept it
        // (a string among numbers would be a type mismatch against @count's integer type).
        if strings && chance(0.1) { items.append(number()) }
        if chance(0.4) { return .argument(.array(items)) }
        func lit(_ v: JSONValue) -> String {
            switch v {
            case .null: return "nil"
            case .bool(let b): return b ? "TRUE" : "FALSE"
            case .integer(let i): return String(i)
            case .double(let d): return String(d)
            case .string(let s): return quoted(s)
            default: return "nil"
            }
        }
        return .literal("{" + items.map(lit).joined(separator: ", ") + "}")
    }

    /// A numeric operand: a key path, a constant, a collection operator, a subquery count, or arithmetic.
    mutating func numeric(depth: Int, prefix: String = "") -> GenExpr {
        // Never a bare constant: a comparison between constants is folded or rejected by the
        // lowering, which is not what this test is about.
        if !prefix.isEmpty { return .key(prefix + pick(["age", "address.zip"])) }
        if chance(0.1) { return oddKey(strings: false) }
        switch int(0...15) {
        case 12 where depth > 0:
            // functions, CAST, TERNARY, indexes (issue 12): the evaluator's own implementation in SQL
            switch int(0...7) {
            case 0:
                return .call(
                    pick(["sqrt:", "floor:", "ceiling:", "trunc:", "abs:", "ln:", "exp:", "log:", "onesComplement:"]),
                    [numeric(depth: depth - 1)])
            case 1:
                return .call(
                    "modulus:by:",
                    [numeric(depth: depth - 1), chance(0.5) ? numberConstant() : numeric(depth: depth - 1)])
            case 2:
                return .call(
                    pick(["sum:", "count:", "min:", "max:", "average:", "median:", "stddev:"]),
                    [.key(pick(["kids.age", "kids.address.zip"]))])
            case 3: return .call(pick(["count:", "length:"]), [.key(pick(["kids", "tags", "name", "city"]))])
            case 4:
                return .call(
                    "CAST", [.key(pick(["name", "city", "born", "age", "score"])), .literal(quoted("NSNumber"))])
            case 5:
                return .ternary(
                    condition(), numeric(depth: depth - 1), chance(0.5) ? numberConstant() : numeric(depth: depth - 1))
            case 6:
                return .key(
                    pick([
                        "kids[FIRST].age", "kids[LAST].age", "kids[1].age", "kids[0].address.zip", "kids[SIZE]",
                        "tags[SIZE]", "address['zip']",
                    ]))
            default:
                return .call(
                    "length:", [.call(pick(["uppercase:", "lowercase:", "canonical:"]), [stringOperand(prefix: "")])])
            }
        case 13...14 where depth > 0:
            // operators SQL computes differently: memory's own through sift_call, or SQLite's on integers
            return .arithmetic(
                numeric(depth: depth - 1), pick(["/", "**", "&", "|", "^", "<<", ">>", "/"]),
                chance(0.6) ? numberConstant() : numeric(depth: depth - 1))
        case 0...5: return .key(pick(Self.numberKeys))
        case 6:
            return .key(
                pick(["kids.@count", "tags.@count", "kids.age.@count", "kids.name.@count", "kids.address.zip.@count"]))
        case 7: return .key(pick(["kids.@sum.age", "kids.@avg.age", "kids.@min.age", "kids.@max.age"]))
        case 8 where depth > 0: return .subquery(predicate(depth: depth - 1, prefix: "$k."), size: chance(0.3))
        case 9...10 where depth > 0:
            return .arithmetic(
                numeric(depth: depth - 1), pick(["+", "-", "*"]),
                chance(0.5) ? numberConstant() : numeric(depth: depth - 1))
        default: return .key(pick(Self.numberKeys))
        }
    }

    /// A TERNARY condition that reads the record (a constant one would make the whole TERNARY a
    /// constant, which the lowering folds or rejects).
    mutating func condition() -> GenPred {
        let leaf: GenPred =
            chance(0.5)
            ? .comparison(
                quantifier: "", .key(pick(Self.numberKeys)), op: pick([">", "==", "<="]), options: "", numberConstant())
            : .comparison(
                quantifier: "", .key(pick(Self.stringKeys)), op: pick(["BEGINSWITH", "==", "<"]), options: options(),
                stringConstant())
        return chance(0.3) ? .not(leaf) : leaf
    }

    mutating func stringOperand(prefix: String) -> GenExpr {
        if !prefix.isEmpty { return .key(prefix + pick(["name", "address.city"])) }
        if chance(0.12) { return oddKey(strings: true) }
        if chance(0.08) {
            switch int(0...4) {
            case 0:
                return .call(
                    pick(["uppercase:", "lowercase:", "canonical:", "noindex:"]), [.key(pick(Self.stringKeys))])
            case 1: return .call("CAST", [.key(pick(["age", "score", "name"])), .literal(quoted("NSString"))])
            case 2:
                return .key(
                    pick([
                        "tags[0]", "tags[FIRST]", "tags[LAST]", "kids[FIRST].name", "kids[1].address.city",
                        "address['city']",
                    ]))
            case 3:
                return .ternary(
                    condition(), .key(pick(Self.stringKeys)),
                    chance(0.5) ? stringConstant() : .key(pick(Self.stringKeys)))
            default: return .call("groupConcat:separator:", [.key("tags"), .literal(quoted(pick([",", "", " "])))])
            }
        }
        return .key(pick(Self.stringKeys))
    }

    /// One leaf comparison; `prefix` is "$k." inside a SUBQUERY.
    /// A value of any shape but an array of arrays: string, number, date, array of values, object, null.
    mutating func mixed() -> JSONValue {
        switch int(0...5) {
        case 0: return string()
        case 1: return number()
        case 2: return date()
        case 3: return .array((0..<int(0...3)).map { g in chance(0.5) ? string() : number() })
        case 4: return .object([("city", string())])
        default: return .null
        }
    }

    /// A record that is not an object (no objects at all: memory has no order for a dictionary's
    /// values, and SQL keeps none).
    mutating func selfRecord() -> JSONValue {
        switch int(0...7) {
        case 0, 1: return string()
        case 2, 3: return number()
        case 4: return date()
        case 5, 6: return .array((0..<int(0...3)).map { _ in chance(0.5) ? string() : number() })
        default: return .null
        }
    }

    mutating func anyConstant() -> GenExpr { chance(0.5) ? stringConstant() : numberConstant() }

    /// A comparison on SELF, for records that are values.
    mutating func selfLeaf() -> GenPred {
        let op = pick(["==", "!=", "<", ">=", "BEGINSWITH", "LIKE"])
        switch int(0...14) {
        case 14:
            // SUBQUERY over the record itself (an array, or nil, or a value memory raises on)
            let elementOp = pick(["==", ">", "BEGINSWITH", "!=", "=="])
            let p: GenPred = .comparison(
                quantifier: "", .key("$x"), op: elementOp, options: options(),
                elementOp == "BEGINSWITH" ? stringConstant() : anyConstant())
            if chance(0.4) {
                return .comparison(
                    quantifier: "", .filtered("SELF", "x", p, pick([".@count", "[SIZE]"])), op: pick(["==", ">"]),
                    options: "", .literal(String(int(0...2))))
            }
            return .comparison(
                quantifier: "", .filtered("SELF", "x", p, ""), op: pick(["==", "!="]), options: "",
                .literal(pick(["nil", "{}", "{}", "{'Ann'}", "{1, 2}", "{2.5}"])))
        case 12:
            // SELF computed on: arithmetic and functions of the record's own value
            let value: GenExpr =
                chance(0.7)
                ? .arithmetic(.key("SELF"), pick(["+", "-", "*", "/", "**"]), numberConstant())
                : .call(pick(["abs:", "floor:", "sqrt:", "length:", "uppercase:"]), [.key("SELF")])
            return .comparison(quantifier: "", value, op: pick(["==", "!=", "<", ">="]), options: "", anyConstant())
        case 13:
            // UTI operators: memory's type table, asked from SQL
            let type: GenExpr =
                chance(0.6)
                ? .literal(quoted(pick(["public.item", "public.data", "public.image", "public.text"])))
                : stringConstant()
            return .comparison(
                quantifier: chance(0.2) ? "ANY" : "", .key("SELF"), op: pick(["UTI-CONFORMS-TO", "UTI-EQUALS"]),
                options: "", type)
        case 0, 1, 2:
            let rhs =
                op == "LIKE"
                ? .literal(quoted(pick(Self.likePatterns))) : op == "BEGINSWITH" ? stringConstant() : anyConstant()
            return .comparison(quantifier: "", .key("SELF"), op: op, options: options(), rhs)
        case 3:
            return .comparison(
                quantifier: pick(["ANY", "ALL", "NONE"]), .key("SELF"), op: pick(["==", "<", ">="]), options: options(),
                anyConstant())
        case 4:
            return .comparison(
                quantifier: "", .key("SELF.@count"), op: pick(["==", ">", "<="]), options: "",
                .literal(String(int(0...3))))
        case 5:
            return .comparison(
                quantifier: "", .key(pick(["SELF[SIZE]", "SELF[0]", "SELF[LAST]", "SELF[FIRST]"])),
                op: pick(["==", "!="]), options: "", anyConstant())
        case 6: return .comparison(quantifier: "", anyConstant(), op: "IN", options: options(), .key("SELF"))
        case 7: return .comparison(quantifier: "", .key("SELF"), op: "CONTAINS", options: options(), stringConstant())
        case 8:
            return .comparison(
                quantifier: "", .key("SELF"), op: pick(["==", "!="]), options: "",
                .literal(pick(["nil", "{}", "{1, 2}", "{'b'}"])))
        case 9:
            return .comparison(
                quantifier: "", .key(pick(["SELF.@max", "SELF.@min", "SELF.@sum"])), op: pick(["==", ">"]), options: "",
                numberConstant())
        case 10:
            return .comparison(
                quantifier: "", .key("SELF"), op: "IN", options: "", .literal(pick(["{1, 'b'}", "{2.5, 'Ann', nil}"])))
        default:
            return .comparison(
                quantifier: "", .key("SELF.@distinctUnionOfObjects[SIZE]"), op: pick(["==", ">"]), options: "",
                .literal(String(int(0...2))))
        }
    }

    /// A comparison on `mix`, a key of every shape.
    mutating func mixLeaf() -> GenPred {
        switch int(0...5) {
        case 5:
            // SUBQUERY over a key that is an array in some records (nil for null, memory raises on the rest)
            let p: GenPred = .comparison(
                quantifier: "", .key("$x"), op: pick(["==", "!="]), options: options(), anyConstant())
            if chance(0.5) {
                return .comparison(
                    quantifier: "", .filtered("mix", "x", p, ".@count"), op: pick(["==", ">"]), options: "",
                    .literal(String(int(0...2))))
            }
            return .comparison(
                quantifier: "", .filtered("mix", "x", p, ""), op: pick(["==", "!="]), options: "",
                .literal(pick(["nil", "{}", "{'Ann'}", "{1}"])))
        case 0, 1:
            let op = pick(["==", "!=", "<", ">=", "BEGINSWITH", "LIKE"])
            let rhs =
                op == "LIKE"
                ? .literal(quoted(pick(Self.likePatterns))) : op == "BEGINSWITH" ? stringConstant() : anyConstant()
            return .comparison(quantifier: "", .key("mix"), op: op, options: options(), rhs)
        case 2:
            return .comparison(
                quantifier: pick(["ANY", "ALL"]), .key("mix"), op: pick(["==", ">"]), options: options(), anyConstant())
        case 3:
            return .comparison(
                quantifier: "", .key("mix.city"), op: pick(["==", "!=", "BEGINSWITH"]), options: options(),
                stringConstant())
        default:
            return .comparison(
                quantifier: "", .key("mix"), op: pick(["==", "!="]), options: "",
                .literal(pick(["nil", "{}", "{'Ann'}"])))
        }
    }

    /// A list of values to compare a collection with as a whole (no nil: see `wholeCollectionLeaf`).
    mutating func wholeList(strings: Bool) -> GenExpr {
        let items: [JSONValue] = (0..<int(0...2)).map { _ in strings ? .string(pick(Self.constants)) : number() }
        return chance(0.5)
            ? .argument(.array(items))
            : .literal(
                pick(
                    strings
                        ? ["{}", "{'Ann'}", "{'Ann', 'ann'}", "{'b', 'Bob'}"] : ["{}", "{3}", "{3, 7.0}", "{1, 1}"]))
    }

    /// A to-many collection read as a whole (issue 12): the objects of `kids` against `{}` or
    /// plain values, a SUBQUERY's result against nil or a list, and `mode:` of row values read by
    /// `@count`, `[SIZE]`, `count:`, ANY/ALL/NONE, IN, CONTAINS and equality with a list.
    mutating func wholeCollectionLeaf() -> GenPred {
        func either(_ a: GenExpr, _ op: String, _ options: String, _ b: GenExpr) -> GenPred {
            chance(0.8)
                ? .comparison(quantifier: "", a, op: op, options: options, b)
                : .comparison(quantifier: "", b, op: op, options: options, a)
        }
        let eq = pick(["==", "!="])
        switch int(0...7) {
        case 0:
            // A nil in the list is left out: the store keeps a null element as an object of NULLs.
            return either(
                .key("kids"), eq, "", .literal(pick(["{}", "{}", "{'Ann'}", "{1, 'b'}", "5", "'Ann'", "nil"])))
        case 1, 2:
            let key = pick(["", "", "", ".name", ".age", ".address.city"])
            let p = predicate(depth: 1, prefix: "$k.")
            let rhs: GenExpr
            if key.isEmpty && chance(0.25) { return either(.filtered("kids", "k", p, ""), eq, "", .key("kids")) }
            if key.isEmpty {
                rhs = .literal(pick(["nil", "{}", "{}", "{'Ann'}", "'Ann'", "5"]))
            } else if chance(0.4) {
                rhs = .literal(pick(["nil", "{}", "{nil}", "{nil, 3}"]))
            } else {
                rhs = wholeList(strings: key != ".age")
            }
            return either(.filtered("kids", "k", p, key), eq, key.isEmpty ? "" : options(), rhs)
        case 3:
            let p: GenPred = .comparison(
                quantifier: "", .key("$t"), op: pick(["==", "BEGINSWITH", "!=", "<"]), options: options(),
                stringConstant())
            let rhs: GenExpr =
                chance(0.3)
                ? .literal(pick(["nil", "{}"])) : (chance(0.5) ? wholeList(strings: true) : list(strings: true))
            if chance(0.25) { return either(.filtered("tags", "t", p, ""), eq, "", .key("tags")) }
            return either(.filtered("tags", "t", p, ""), eq, options(), rhs)
        default:
            let key = pick(["kids.age", "tags", "kids.name", "kids.address.zip"])
            let strings = key == "tags" || key == "kids.name"
            let mode: GenExpr = .call("mode:", [.key(key)])
            let value: GenExpr = strings ? stringConstant() : numberConstant()
            switch int(0...5) {
            case 0:
                return either(
                    mode, eq, strings ? options() : "",
                    chance(0.7) ? wholeList(strings: strings) : list(strings: strings))
            case 1:
                return .comparison(
                    quantifier: pick(["ANY", "ALL", "NONE"]), mode,
                    op: pick(["==", "<", ">=", "!="] + (strings ? ["BEGINSWITH"] : [])),
                    options: strings ? options() : "", value)
            case 2: return .comparison(quantifier: "", value, op: "IN", options: strings ? options() : "", mode)
            case 3: return .comparison(quantifier: "", mode, op: "CONTAINS", options: "", value)
            case 4:
                return .comparison(
                    quantifier: "", .key("mode:(\(key))" + pick(["[SIZE]", ".@count"])), op: pick(["==", ">", "<="]),
                    options: "", .literal(String(int(0...2))))
            default:
                return .comparison(
                    quantifier: "", .call(pick(["count:", "sum:", "max:"]), [mode]), op: pick(["==", ">"]), options: "",
                    numberConstant())
            }
        }
    }

    /// A comparison only memory can decide, on the record's whole document (issue 12): a
    /// dictionary's `@count` and values, an element compared with nil (null elements), unions of
    /// arrays, a SUBQUERY's result quantified over or compared with the row.
    mutating func documentLeaf() -> GenPred {
        let eq = pick(["==", "!="])
        let count: GenExpr = .literal(String(int(0...4)))
        switch int(0...7) {
        case 0:
            return .comparison(
                quantifier: "",
                .key(pick(["SELF.@count", "address.@count", "address.geo.@count", "kids[FIRST].@count"])),
                op: pick(["==", "!=", "<", ">="]), options: "", count)
        case 1:
            // A dictionary's values: CONTAINS / IN search them.
            let value: GenExpr = chance(0.5) ? stringConstant() : numberConstant()
            if chance(0.5) {
                return .comparison(
                    quantifier: "", .key(pick(["address", "address.geo", "SELF"])), op: "CONTAINS", options: "", value)
            }
            return .comparison(
                quantifier: "", value, op: "IN", options: "", .key(pick(["address", "address.geo", "kids[LAST]"])))
        case 2:
            let index = pick(["FIRST", "LAST", "0", "1", "SIZE"])
            return .comparison(quantifier: "", .key("kids[\(index)]"), op: eq, options: "", .literal("nil"))
        case 3:
            let key = pick(["kids.@unionOfArrays.toys", "kids.@distinctUnionOfArrays.toys"])
            switch int(0...2) {
            case 0:
                return .comparison(quantifier: "", .key(key + ".@count"), op: pick(["==", ">"]), options: "", count)
            case 1:
                return .comparison(
                    quantifier: pick(["ANY", "ALL", "NONE"]), .key(key), op: pick(["==", "BEGINSWITH"]),
                    options: options(), stringConstant())
            default: return .comparison(quantifier: "", stringConstant(), op: "IN", options: options(), .key(key))
            }
        case 4:
            return .comparison(
                quantifier: "", .key(pick(["kids.toys.@count", "kids[FIRST].toys.@count"])), op: pick(["==", ">"]),
                options: "", count)
        case 5:
            // Quantified over a SUBQUERY's result.
            let p = predicate(depth: 1, prefix: "$k.")
            let q = pick(["ANY", "ALL", "NONE"])
            if chance(0.5) {
                return .comparison(
                    quantifier: q, .filtered("kids", "k", p, ".name"), op: pick(["==", "BEGINSWITH"]),
                    options: options(), stringConstant())
            }
            return .comparison(
                quantifier: q, .filtered("kids", "k", p, ".age"), op: pick(["<", ">=", "=="]), options: "",
                numberConstant())
        case 6:
            // A SUBQUERY's result against a key path of the row.
            let p = predicate(depth: 1, prefix: "$k.")
            return .comparison(
                quantifier: "", .filtered("kids", "k", p, ".name"), op: eq, options: "",
                .key(pick(["kids.name", "tags"])))
        default:
            return .comparison(
                quantifier: "", .key(pick(["SELF", "address", "kids[0]"])), op: eq, options: "",
                .key(pick(["SELF", "address", "kids[LAST]"])))
        }
    }

    mutating func leaf(depth: Int, prefix: String) -> GenPred {
        if selfRecords { return selfLeaf() }
        if prefix.isEmpty && chance(0.03) { return documentLeaf() }
        if prefix.isEmpty && chance(0.05) { return mixLeaf() }
        if prefix.isEmpty && chance(0.06) { return wholeCollectionLeaf() }
        switch int(0...21) {
        case 20:
            // different kinds: a number column against strings that look like numbers, a string
            // column against numbers (== is false in memory, ordering raises), options on numbers
            if chance(0.5) {
                let rhs: GenExpr = .literal(quoted(pick(["5", "7.0", "", "x", "TRUE"])))
                return .comparison(
                    quantifier: "", .key(prefix.isEmpty ? pick(Self.numberKeys) : prefix + "age"),
                    op: pick(["==", "!=", "IN", "<"]), options: options(), rhs)
            }
            return .comparison(
                quantifier: "", stringOperand(prefix: prefix), op: pick(["==", "!=", ">="]), options: options(),
                numberConstant())
        case 21 where chance(0.15):
            // UTI operators on a key: memory's type table, asked from SQL
            let type: GenExpr =
                chance(0.6) ? .literal(quoted(pick(["public.item", "public.data", "public.image"]))) : stringConstant()
            return .comparison(
                quantifier: "", stringOperand(prefix: prefix), op: pick(["UTI-CONFORMS-TO", "UTI-EQUALS"]), options: "",
                type)
        case 21:
            // string IN string is a substring test
            let lhs: GenExpr = chance(0.6) ? stringConstant() : stringOperand(prefix: prefix)
            return .comparison(quantifier: "", lhs, op: "IN", options: options(), stringOperand(prefix: prefix))
        case 0:
            return .constant(chance(0.5))
        case 1, 2:
            // nil comparisons, either side
            let key: GenExpr = chance(0.5) ? stringOperand(prefix: prefix) : numeric(depth: 0, prefix: prefix)
            let op = pick(["==", "!=", "<", ">=", "==", "!="])
            if prefix.isEmpty && chance(0.2) {
                return .comparison(
                    quantifier: "", .key(pick(["address", "address.geo"])), op: pick(["==", "!="]), options: "",
                    .literal("nil"))
            }
            return chance(0.8)
                ? .comparison(quantifier: "", key, op: op, options: "", .literal("nil"))
                : .comparison(quantifier: "", .literal("nil"), op: op, options: "", key)
        case 3...6:
            // string operators against constants
            let op = pick([
                "==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "BEGINSWITH", "CONTAINS",
            ])
            return .comparison(
                quantifier: "", stringOperand(prefix: prefix), op: op, options: options(), stringConstant())
        case 7:
            if chance(0.5) {
                return .comparison(
                    quantifier: "", stringOperand(prefix: prefix), op: "LIKE", options: options(),
                    .literal(quoted(pick(Self.likePatterns))))
            }
            return .comparison(
                quantifier: "", stringOperand(prefix: prefix), op: "MATCHES", options: pick(["", "c", "", "d"]),
                .literal(quoted(pick(Self.regexes))))
        case 8...10:
            let op = pick(["==", "!=", "<", "<=", ">", ">="])
            let lhs = numeric(depth: depth, prefix: prefix)
            let rhs = chance(0.6) ? numberConstant() : numeric(depth: depth, prefix: prefix)
            return chance(0.85)
                ? .comparison(quantifier: "", lhs, op: op, options: "", rhs)
                : .comparison(quantifier: "", rhs, op: op, options: "", lhs)
        case 11:
            // column vs column, strings
            let op = pick(["==", "!=", "<", ">=", "BEGINSWITH", "CONTAINS", "ENDSWITH"])
            return .comparison(
                quantifier: "", stringOperand(prefix: prefix), op: op, options: options(),
                prefix.isEmpty ? .key(pick(Self.stringKeys)) : .key("name"))
        case 12:
            // IN a list
            if chance(0.5) {
                return .comparison(
                    quantifier: "", stringOperand(prefix: prefix), op: "IN", options: options(), list(strings: true))
            }
            return .comparison(
                quantifier: "", numeric(depth: 0, prefix: prefix), op: "IN", options: "", list(strings: false))
        case 13 where prefix.isEmpty && chance(0.35):
            // dates: ordered against %@ dates, BETWEEN two dates, nil
            let op = pick(["==", "!=", "<", "<=", ">", ">=", "BETWEEN"])
            if op == "BETWEEN" {
                return .comparison(
                    quantifier: "", .key("born"), op: op, options: "", .argument(.array([date(), date()])))
            }
            return .comparison(
                quantifier: "", .key("born"), op: op, options: "", chance(0.1) ? .literal("nil") : .argument(date()))
        case 13:
            // BETWEEN
            let lo = numberConstant()
            let hi = chance(0.2) ? .literal("nil") : numberConstant()
            return .comparison(
                quantifier: "", numeric(depth: depth, prefix: prefix), op: "BETWEEN", options: "", .bounds(lo, hi))
        case 14 where prefix.isEmpty:
            // IN / CONTAINS against tags, with quantifiers over the strings
            switch int(0...3) {
            case 0: return .comparison(quantifier: "", stringConstant(), op: "IN", options: options(), .key("tags"))
            case 1:
                return .comparison(quantifier: "", .key("tags"), op: "CONTAINS", options: options(), stringConstant())
            case 2:
                return .comparison(
                    quantifier: "", .key(pick(Self.stringKeys)), op: "IN", options: options(), .key("tags"))
            default:
                let op = pick(["==", "!=", "BEGINSWITH", "CONTAINS", "<", "LIKE"])
                let rhs: GenExpr = op == "LIKE" ? .literal(quoted(pick(Self.likePatterns))) : stringConstant()
                return .comparison(
                    quantifier: pick(["ANY", "ALL", "NONE", "SOME"]), .key("tags"), op: op, options: options(), rhs)
            }
        case 15...16 where prefix.isEmpty:
            // quantifiers over kids
            let q = pick(["ANY", "ALL", "NONE", "SOME", "ANY"])
            if chance(0.5) {
                let op = pick(["==", "!=", "<", ">=", "BEGINSWITH", "CONTAINS", "IN"])
                let rhs: GenExpr =
                    op == "IN" ? list(strings: true) : (chance(0.15) ? .literal("nil") : stringConstant())
                return .comparison(
                    quantifier: q, .key(pick(["kids.name", "kids.address.city"])), op: op, options: options(), rhs)
            }
            let op = pick(["==", "!=", "<", "<=", ">", ">="])
            let rhs: GenExpr =
                chance(0.15) ? .literal("nil") : (chance(0.8) ? numberConstant() : .key(pick(["age", "score"])))
            return .comparison(quantifier: q, .key(pick(["kids.age", "kids.address.zip"])), op: op, options: "", rhs)
        case 17 where !prefix.isEmpty:
            // bare key paths inside SUBQUERY are avoided: only `$k.` paths and constants
            return .comparison(
                quantifier: "", .key("$k.name"), op: pick(["==", "BEGINSWITH"]), options: options(),
                .key("$k.address.city"))
        default:
            let op = pick(["==", "!=", "<", ">"])
            return .comparison(
                quantifier: "", numeric(depth: depth, prefix: prefix), op: op, options: "", numberConstant())
        }
    }

    /// A predicate of nesting at most `depth`.
    mutating func predicate(depth: Int, prefix: String = "") -> GenPred {
        guard depth > 0, chance(0.45) else { return leaf(depth: min(depth, 1), prefix: prefix) }
        switch int(0...4) {
        case 0: return .not(predicate(depth: depth - 1, prefix: prefix))
        case 1, 2: return .and((0..<int(2...3)).map { _ in predicate(depth: depth - 1, prefix: prefix) })
        default: return .or((0..<int(2...3)).map { _ in predicate(depth: depth - 1, prefix: prefix) })
        }
    }
}
