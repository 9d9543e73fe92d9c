// Checks Grammar/predicate.ebnf against the parser: the grammar is read with a small EBNF reader,
// its productions are matched with the `parseX()` functions of Parser.swift, and thousands of
// random sentences generated from it (seeded, so every run is the same) must parse and must
// survive printing and re-parsing unchanged.

import Foundation
import SiftTestSupport
import Testing

@testable import SiftSyntax

// MARK: - EBNF reader

/// One right-hand side of the EBNF grammar.
private indirect enum EBNFNode {
    case terminal(String)
    case special(String)
    case nonterminal(String)
    case sequence([EBNFNode])
    case alternatives([EBNFNode])
    case optional(EBNFNode)
    case repetition(EBNFNode)
}

private struct EBNFGrammar {
    var rules: [String: EBNFNode] = [:]
    /// Production names in the order they are defined.
    var order: [String] = []
    var duplicates: [String] = []

    enum Token: Equatable {
        case name(String)
        case terminal(String)
        case special(String)
        case symbol(Character)
    }

    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    init(text: String) throws {
        let tokens = try Self.tokenize(text)
        var i = 0
        func peek() -> Token? { i < tokens.count ? tokens[i] : nil }
        func expect(_ c: Character) throws {
            guard peek() == .symbol(c) else {
                throw ReadError(description: "expected '\(c)' at token \(i): \(String(describing: peek()))")
            }
            i += 1
        }
        func alternatives() throws -> EBNFNode {
            var alts = [try sequence()]
            while peek() == .symbol("|") {
                i += 1
                alts.append(try sequence())
            }
            return alts.count == 1 ? alts[0] : .alternatives(alts)
        }
        func sequence() throws -> EBNFNode {
            var items: [EBNFNode] = []
            loop: while let t = peek() {
                switch t {
                case .name(let n):
                    items.append(.nonterminal(n))
                    i += 1
                case .terminal(let s):
                    items.append(.terminal(s))
                    i += 1
                case .special(let s):
                    items.append(.special(s))
                    i += 1
                case .symbol(","): i += 1  // ISO concatenation; juxtaposition means the same
                case .symbol("("):
                    i += 1
                    items.append(try alternatives())
                    try expect(")")
                case .symbol("["):
                    i += 1
                    items.append(.optional(try alternatives()))
                    try expect("]")
                case .symbol("{"):
                    i += 1
                    items.append(.repetition(try alternatives()))
                    try expect("}")
                default: break loop
                }
            }
            guard !items.isEmpty else { throw ReadError(description: "empty sequence at token \(i)") }
            return items.count == 1 ? items[0] : .sequence(items)
        }
        while let t = peek() {
            guard case .name(let name) = t else {
                throw ReadError(description: "expected a production name at token \(i), found \(t)")
            }
            i += 1
            try expect("=")
            let rhs = try alternatives()
            try expect(";")
            if rules[name] != nil { duplicates.append(name) }
            rules[name] = rhs
            order.append(name)
        }
    }

    static func tokenize(_ text: String) throws -> [Token] {
        let chars = Array(text)
        var tokens: [Token] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace {
                i += 1
                continue
            }
            if c == "(", i + 1 < chars.count, chars[i + 1] == "*" {
                i += 2
                while i + 1 < chars.count, !(chars[i] == "*" && chars[i + 1] == ")") { i += 1 }
                guard i + 1 < chars.count else { throw ReadError(description: "unterminated comment") }
                i += 2
                continue
            }
            if c == "\"" || c == "'" || c == "?" {
                var j = i + 1
                while j < chars.count, chars[j] != c { j += 1 }
                guard j < chars.count else { throw ReadError(description: "unterminated \(c)") }
                let body = String(chars[(i + 1)..<j])
                tokens.append(c == "?" ? .special(body.trimmingCharacters(in: .whitespaces)) : .terminal(body))
                i = j + 1
                continue
            }
            if c.isLetter || c == "_" {
                var j = i
                while j < chars.count, chars[j].isLetter || chars[j].isNumber || chars[j] == "_" { j += 1 }
                tokens.append(.name(String(chars[i..<j])))
                i = j
                continue
            }
            guard "=;|,()[]{}".contains(c) else { throw ReadError(description: "unexpected character '\(c)'") }
            tokens.append(.symbol(c))
            i += 1
        }
        return tokens
    }

    /// Every nonterminal referenced anywhere.
    var referencedNames: Set<String> {
        var out: Set<String> = []
        func walk(_ n: EBNFNode) {
            switch n {
            case .nonterminal(let s): out.insert(s)
            case .sequence(let xs), .alternatives(let xs): xs.forEach(walk)
            case .optional(let x), .repetition(let x): walk(x)
            case .terminal, .special: break
            }
        }
        rules.values.forEach(walk)
        return out
    }

    /// The least derivation height of each production (Int.max when it derives nothing).
    func heights() -> [String: Int] {
        var h: [String: Int] = [:]
        func height(_ n: EBNFNode) -> Int {
            switch n {
            case .terminal, .special, .optional, .repetition: return 0
            case .nonterminal(let s): return h[s] ?? Int.max
            case .sequence(let xs): return xs.map(height).max() ?? 0
            case .alternatives(let xs): return xs.map(height).min() ?? Int.max
            }
        }
        var changed = true
        while changed {
            changed = false
            for name in order {
                let v = height(rules[name]!)
                let candidate = v == Int.max ? Int.max : v + 1
                if candidate < (h[name] ?? Int.max) {
                    h[name] = candidate
                    changed = true
                }
            }
        }
        return h
    }
}

// MARK: - Random sentences

private struct SentenceGenerator {
    let grammar: EBNFGrammar
    let heights: [String: Int]
    var rng: SplitMix64
    var usage: [String: Int] = [:]
    var specialUsage: [String: Int] = [:]
    var budget = 20
    var tokens: [String] = []
    var arguments: [Any?] = []

    init(grammar: EBNFGrammar, seed: UInt64) {
        self.grammar = grammar
        self.heights = grammar.heights()
        self.rng = SplitMix64(seed: seed)
    }

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &rng) }
    mutating func pick<T>(_ xs: [T]) -> T { xs[int(0...(xs.count - 1))] }

    mutating func sentence(from start: String, budget: Int) -> (text: String, arguments: [Any?]) {
        tokens = []
        arguments = []
        self.budget = budget
        expand(.nonterminal(start), depth: 0)
        var text = ""
        for (i, t) in tokens.enumerated() {
            if i > 0 { text += chance(0.9) ? " " : pick(["\n", "\t", "  ", " \u{00A0}"]) }
            text += t
        }
        return (text, arguments)
    }

    func height(_ n: EBNFNode) -> Int {
        switch n {
        case .terminal, .special, .optional, .repetition: return 0
        case .nonterminal(let s): return heights[s] ?? Int.max
        case .sequence(let xs): return xs.map(height).max() ?? 0
        case .alternatives(let xs): return xs.map(height).min() ?? Int.max
        }
    }

    mutating func expand(_ node: EBNFNode, depth: Int) {
        let exhausted = depth > budget
        switch node {
        case .terminal(let s): tokens.append(terminal(s))
        case .special(let s):
            specialUsage[s, default: 0] += 1
            if let t = special(s) { tokens.append(t) }
        case .nonterminal(let name):
            usage[name, default: 0] += 1
            expand(grammar.rules[name]!, depth: depth + 1)
        case .sequence(let xs):
            for x in xs { expand(x, depth: depth) }
        case .alternatives(let xs):
            if exhausted {
                let best = xs.map(height).min()!
                expand(pick(xs.filter { height($0) == best }), depth: depth)
            } else {
                expand(pick(xs), depth: depth)
            }
        case .optional(let x):
            if !exhausted && chance(0.5) { expand(x, depth: depth) }
        case .repetition(let x):
            let n = exhausted ? 0 : pick([0, 0, 1, 1, 2, 3])
            for _ in 0..<n { expand(x, depth: depth) }
        }
    }

    /// Keywords are case-insensitive, so they are written in a random case.
    mutating func terminal(_ s: String) -> String {
        guard Keyword.isReserved(s) || ["TERNARY", "FUNCTION"].contains(s.uppercased()) else { return s }
        switch int(0...3) {
        case 0: return s.lowercased()
        case 1: return String(s.map { chance(0.5) ? Character($0.uppercased()) : Character($0.lowercased()) })
        default: return s
        }
    }

    static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
    static let digits = Array("0123456789")

    mutating func word() -> String {
        var w = String(pick(Self.letters))
        for _ in 0..<int(0...7) { w.append(chance(0.25) ? pick(Self.digits) : pick(Self.letters)) }
        return w
    }

    mutating func identifier() -> String {
        if chance(0.15) {
            return pick([
                "ternary", "Function", "sum", "now", "uti", "count", "selfie", "andy", "e1",
                "NOTE", "inside", "_", "x0", "firstName", "Like_", "CASEINSENSITIVE2",
                "café", "名前", "Straße", "cafe\u{301}", "_ü2", "ſelf", "Ωmega",
            ])
        }
        while true {
            let w = word()
            if !Keyword.isReserved(w) { return w }
        }
    }

    mutating func reservedOrPlain() -> String {
        chance(0.3)
            ? pick(Keyword.allCases).rawValue.replacingOccurrences(of: "-", with: "_").lowercased() : identifier()
    }

    mutating func stringLiteral(nonEmpty: Bool) -> String {
        let quote: Character = chance(0.5) ? "\"" : "'"
        let other: Character = quote == "\"" ? "'" : "\""
        var body = ""
        let count = int(nonEmpty ? 1...6 : 0...6)
        for _ in 0..<count {
            switch int(0...11) {
            case 0: body += "\\n"
            case 1: body += "\\\\"
            case 2: body += "\\" + String(quote)
            case 3: body += String(other)
            case 4: body += pick(["\\x41", "\\X7e", "\\u00e9", "\\U4E2D", "\\101", "\\7", "\\t", "\\a", "\\q"])
            case 5: body += pick(["%@", "$x", "%K", "é", "日本", "🙂", " ", "#", "AND"])
            default: body += word()
            }
        }
        return String(quote) + body + String(quote)
    }

    mutating func integerLiteral() -> String {
        switch int(0...9) {
        case 0:
            return "0x"
                + String(
                    UInt64.random(in: 0...UInt64(Int64.max), using: &rng) >> UInt64(int(0...60)), radix: 16,
                    uppercase: chance(0.5))
        case 1:
            return pick(["0X", "0o", "0O"])
                + String(UInt64(int(0...100_000)), radix: chance(0.5) ? 16 : 8).filter { $0.isNumber && $0 < "8" }
                .ifEmpty("0")
        case 2: return pick(["0b", "0B"]) + String(int(0...4096), radix: 2)
        case 3:
            return pick([
                "9223372036854775807", "9223372036854775808", "18446744073709551615", "99999999999999999999", "0",
                "007",
            ])
        default: return String(int(0...1_000_000))
        }
    }

    mutating func decimalLiteral() -> String {
        let mantissa = "\(int(0...9999))"
        let exponent = "\(pick(["e", "E"]))\(pick(["", "+", "-"]))\(int(0...300))"
        switch int(0...2) {
        case 0: return mantissa + "." + "\(int(0...99999))"
        case 1: return mantissa + "." + "\(int(0...999))" + exponent
        default: return mantissa + exponent
        }
    }

    mutating func jsonValue(depth: Int = 0) -> Any? {
        switch int(0...(depth > 1 ? 6 : 7)) {
        case 0: return nil
        case 1: return chance(0.5)
        case 2: return pick([0, 1, -1, Int.max, Int.min, int(-1000...1000)])
        case 3:
            return pick([0.5, -2.25, 1e300, Double.leastNonzeroMagnitude, -0.0, 3.0, Double(int(-99999...99999)) / 64])
        case 4, 5: return pick(["", "a", "it's", "say \"hi\"", "back\\slash", "%@", "$x", "é🙂", word()])
        case 6: return NSNull()
        default:
            var items: [Any?] = []
            for _ in 0..<int(0...3) { items.append(jsonValue(depth: depth + 1)) }
            return items
        }
    }

    /// A key that is not an identifier: the kind of key real JSON has.
    mutating func oddKey() -> String {
        pick([
            "user-agent", "Content-Type", "ISO 3166-1:2006", "first name", "@timestamp", "@Count", "",
            "1x", "a\"b", "back\\slash", "it's", "x\"; DROP TABLE t; --", "🙂", "tab\there", "%K", "$x",
        ])
    }

    mutating func keyPathArgument() -> String {
        var parts: [String] = []
        for i in 0..<int(1...3) {
            switch int(0...3) {
            case 0 where i > 0: parts.append("@" + pick(["count", "sum", "avg", "min", "max"]))
            case 1: parts.append(oddKey())
            default: parts.append(reservedOrPlain())
            }
        }
        let path = parts.joined(separator: ".")
        return path.isEmpty ? "k" : path
    }

    /// `#"…"` or `#'…'` around a key, with the escapes a string literal may use.
    mutating func quotedKey() -> String {
        switch int(0...3) {
        case 0: return "#" + stringLiteral(nonEmpty: false)
        case 1:
            return "#'"
                + oddKey().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        default:
            return "#\""
                + oddKey().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
    }

    /// A token for a special sequence, recording the format argument it consumes.
    mutating func special(_ s: String) -> String? {
        switch s {
        case "identifier": return identifier()
        case "escaped-identifier": return "#" + reservedOrPlain()
        case "quoted-key": return quotedKey()
        case "at-identifier": return pick(KeyPathComponent.collectionOperators.sorted())
        case "variable": return "$" + reservedOrPlain()
        case "string": return stringLiteral(nonEmpty: false)
        case "nonempty-string": return stringLiteral(nonEmpty: true)
        case "integer": return integerLiteral()
        case "decimal": return decimalLiteral()
        case "option-letters":
            var w = ""
            for _ in 0..<int(1...3) {
                let c = pick(["c", "d", "n", "l"])
                w += chance(0.3) ? c.uppercased() : c
            }
            return w
        case "format-object":
            arguments.append(jsonValue())
            return "%@"
        case "format-key":
            arguments.append(keyPathArgument())
            return "%K"
        case "format-integer":
            let spec = pick(["%d", "%i", "%ld", "%lld", "%qi", "%hi", "%hhd", "%u", "%lu", "%llu", "%x", "%o"])
            var value = pick([0, 1, -1, 127, -128, 32767, Int.max, Int.min, int(-100_000...100_000)])
            if spec.hasPrefix("%hh") {
                value = max(-128, min(127, value))
            } else if spec.hasPrefix("%h") {
                value = max(-32768, min(32767, value))
            }
            if "uxo".contains(spec.last!) { value = value == Int.min ? 0 : abs(value) }
            arguments.append(value)
            return spec
        case "format-float":
            arguments.append(
                chance(0.8) ? pick([0.0, -1.5, 2.75, 1e-7, 6.02e23, Double(int(-999...999)) / 8]) : int(-5...5))
            return pick(["%f", "%e", "%g", "%lf", "%le", "%lg"])
        case "format-string":
            arguments.append(pick(["", "x", "it's", "a\"b", word()]))
            return "%s"
        case "format-character":
            arguments.append(chance(0.5) ? pick(["a", "é", "'", "\""]) as Any? : Character(pick(["z", "🙂"])) as Any?)
            return "%c"
        case "end-of-input": return nil
        default:
            Issue.record("the grammar uses the special sequence ? \(s) ?, which the generator does not know")
            return nil
        }
    }
}

extension String {
    fileprivate func ifEmpty(_ s: String) -> String { isEmpty ? s : self }
}

// MARK: - Tests

@Suite struct GrammarTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private static func loadGrammar() throws -> EBNFGrammar {
        let text = try String(contentsOf: root.appendingPathComponent("Grammar/predicate.ebnf"), encoding: .utf8)
        return try EBNFGrammar(text: text)
    }

    private static func parserSource() throws -> String {
        try String(contentsOf: root.appendingPathComponent("Sources/SiftSyntax/Parser.swift"), encoding: .utf8)
    }

    /// `func parseX(` names in Parser.swift, in order.
    private static func parserFunctions(_ source: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: #"func parse([A-Za-z0-9]+)\("#)
        let ns = source as NSString
        return regex.matches(in: source, range: NSRange(location: 0, length: ns.length)).map {
            ns.substring(with: $0.range(at: 1))
        }
    }

    @Test func grammarIsWellFormedAndMatchesTheParser() throws {
        let g = try Self.loadGrammar()
        let source = try Self.parserSource()
        #expect(g.duplicates.isEmpty, "productions defined twice: \(g.duplicates)")
        let undefined = g.referencedNames.subtracting(g.rules.keys)
        #expect(undefined.isEmpty, "nonterminals used but not defined: \(undefined.sorted())")
        let unused = Set(g.rules.keys).subtracting(g.referencedNames).subtracting(["Start", "ExpressionStart"])
        #expect(unused.isEmpty, "productions never referenced: \(unused.sorted())")
        let heights = g.heights()
        let underivable = g.order.filter { heights[$0] == nil }
        #expect(underivable.isEmpty, "productions that derive no sentence: \(underivable)")

        let functions = Self.parserFunctions(source)
        #expect(functions.count >= 20, "found only \(functions) in Parser.swift")
        // Every parse function has a production, and the productions that have one come in the same order.
        for f in functions {
            #expect(g.rules[f] != nil, "Parser.swift has func parse\(f)( but the grammar has no production \(f)")
        }
        let withFunction = g.order.filter { source.contains("func parse\($0)(") }
        #expect(
            withFunction == functions.filter { g.rules[$0] != nil },
            "grammar order \(withFunction) differs from parser order \(functions)")
        // The productions the parser's doc comments name, and the ones the language is described by.
        let docRegex = try NSRegularExpression(pattern: #"///\s*([A-Z][A-Za-z]*)\s*="#)
        let ns = source as NSString
        for m in docRegex.matches(in: source, range: NSRange(location: 0, length: ns.length)) {
            let name = ns.substring(with: m.range(at: 1))
            #expect(g.rules[name] != nil, "Parser.swift documents a production \(name) that the grammar lacks")
        }
        let expected = [
            "Start", "Predicate", "OrPredicate", "AndPredicate", "NotPredicate", "Comparison", "Quantifier",
            "ComparisonOperator", "Options", "Expression", "AssignmentExpression", "BinaryExpression",
            "UnaryExpression", "PostfixExpression", "Index", "KeyPathTail", "PrimaryExpression", "Aggregate",
            "Arguments", "FunctionCall", "SubqueryExpression", "TernaryExpression", "CastExpression",
            "CustomFunctionExpression",
        ]
        for name in expected { #expect(g.rules[name] != nil, "the grammar lacks production \(name)") }
        // Each name in that list that has a parse function comes in the parser's order.
        let positions = expected.compactMap { g.order.firstIndex(of: $0) }
        #expect(positions == positions.sorted(), "productions are not in the parser's order")
    }

    @Test func builtinFunctionsMatchTheGrammar() throws {
        let g = try Self.loadGrammar()
        func terminals(_ name: String) -> [String] {
            guard case .alternatives(let xs)? = g.rules[name] else { return [] }
            return xs.compactMap { if case .terminal(let s) = $0 { s } else { nil } }
        }
        for (arity, name) in [(0, "NullaryFunction"), (1, "UnaryFunction"), (2, "BinaryFunction")] {
            let written = terminals(name)
            for w in written {
                #expect(
                    BuiltinFunction.named(w)?.arity == arity,
                    "\(name) lists \(w), which is not a built-in of arity \(arity)")
            }
            let selectors = Set(written.compactMap { BuiltinFunction.named($0)?.selector })
            let expected = Set(BuiltinFunction.all.values.filter { $0.arity == arity }.map(\.selector))
            #expect(selectors == expected, "\(name): missing \(expected.subtracting(selectors).sorted())")
        }
        let ops = terminals("BinaryOperator")
        #expect(Set(ops) == Set(["|", "^", "&", "<<", ">>", "+", "-", "*", "/", "**"]))
    }

    @Test func randomSentencesParseAndRoundTrip() throws {
        let g = try Self.loadGrammar()
        var gen = SentenceGenerator(grammar: g, seed: 0x5EED_2024_51F7)
        let predicateCount = 3_000
        let expressionCount = 600
        var failures: [(sentence: String, message: String)] = []

        func fail(_ sentence: String, _ arguments: [Any?], _ message: String) {
            failures.append((sentence, message + "\n  sentence: \(sentence)\n  arguments: \(arguments)"))
        }

        for n in 0..<(predicateCount + expressionCount) {
            let isPredicate = n < predicateCount
            let budget = gen.int(12...36)
            let (sentence, arguments) = gen.sentence(from: isPredicate ? "Start" : "ExpressionStart", budget: budget)
            if isPredicate {
                let p: PredicateSyntax
                do { p = try PredicateSyntax.parse(sentence, arguments: arguments) } catch {
                    fail(sentence, arguments, "rejected: \(error)")
                    continue
                }
                let printed = p.description
                do {
                    let q = try PredicateSyntax.parse(printed)
                    if q != p {
                        fail(
                            sentence, arguments,
                            "parse(description) differs\n  printed: \(printed)\n  reprinted: \(q.description)")
                    } else if q.description != printed {
                        fail(
                            sentence, arguments,
                            "description not stable\n  printed: \(printed)\n  reprinted: \(q.description)")
                    }
                } catch {
                    fail(sentence, arguments, "printed form rejected: \(error)\n  printed: \(printed)")
                }
            } else {
                let e: ExpressionSyntax
                do { e = try ExpressionSyntax.parse(sentence, arguments: arguments) } catch {
                    fail(sentence, arguments, "expression rejected: \(error)")
                    continue
                }
                let printed = e.description
                do {
                    let f = try ExpressionSyntax.parse(printed)
                    if f != e {
                        fail(
                            sentence, arguments,
                            "expression parse(description) differs\n  printed: \(printed)\n  reprinted: \(f.description)"
                        )
                    } else if f.description != printed {
                        fail(
                            sentence, arguments,
                            "expression description not stable\n  printed: \(printed)\n  reprinted: \(f.description)")
                    }
                } catch {
                    fail(sentence, arguments, "printed expression rejected: \(error)\n  printed: \(printed)")
                }
            }
        }

        // Report the shortest failures first; they are the easiest to read.
        for f in failures.sorted(by: { $0.sentence.count < $1.sentence.count }).prefix(25) {
            Issue.record("\(f.message)")
        }
        #expect(failures.isEmpty, "\(failures.count) of \(predicateCount + expressionCount) generated sentences failed")

        let unusedProductions = g.order.filter { (gen.usage[$0] ?? 0) == 0 }
        #expect(unusedProductions.isEmpty, "productions never used by the generator: \(unusedProductions)")
        print(
            "GrammarTests: \(g.order.count) productions, \(predicateCount + expressionCount) sentences, \(failures.count) failures"
        )
    }
}
