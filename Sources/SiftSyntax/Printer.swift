// Prints predicates in canonical form: `==` for `=`, `!=` for `<>`, `ANY` for `SOME`, `NOT ANY`
// for `NONE`, options in the order c d l n, strings in double quotes with `\\` and `\"` escaped,
// nested compounds and binary operands parenthesised, built-in functions by selector, keys that are
// not identifiers quoted as `#"user-agent"` (KeyPathComponent.spelling). Reading the
// output back gives the same tree. Values without literal syntax print as folded CASTs
// (`CAST(722000000.0, "NSDate")`), which the parser turns back into the same constants.

import Foundation

enum PredicatePrinter {
    static func predicate(_ p: PredicateSyntax, into out: inout PrintBuffer) {
        switch p.kind {
        case .comparison, .constant: predicateBody(p, into: &out)
        // Only compounds nest: they alone check the stack (see `StackGuard`).
        case .and, .or, .not: StackGuard.ensure { predicateBody(p, into: &out) }
        }
    }

    private static func predicateBody(_ p: PredicateSyntax, into out: inout PrintBuffer) {
        switch p.kind {
        case .constant(let v):
            out += v ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let ops), .or(let ops):
            let isAnd: Bool = { if case .and = p.kind { return true } else { return false } }()
            if ops.isEmpty {
                out += isAnd ? "TRUEPREDICATE" : "FALSEPREDICATE"
                return
            }
            for (i, op) in ops.enumerated() {
                if i > 0 { out += isAnd ? " AND " : " OR " }
                operand(op, into: &out)
            }
        case .not(let operand):
            out += "NOT "
            self.operand(operand, into: &out)
        case .comparison(let quantifier, let lhs, let op, let options, let rhs):
            if let quantifier {
                out += quantifier.rawValue
                out += " "
            }
            expression(lhs, into: &out)
            out += " "
            out += op.symbol
            if !options.isEmpty { self.options(options, into: &out) }
            out += " "
            expression(rhs, into: &out)
        }
    }

    /// `[cdln]`, letters in canonical order, appended without building the letters first.
    private static func options(_ options: ComparisonOptions, into out: inout PrintBuffer) {
        out += "["
        if options.contains(.caseInsensitive) { out += "c" }
        if options.contains(.diacriticInsensitive) { out += "d" }
        if options.contains(.localeSensitive) { out += "l" }
        if options.contains(.normalized) { out += "n" }
        out += "]"
    }

    /// A sub-predicate of a compound: compounds are parenthesised.
    private static func operand(_ p: PredicateSyntax, into out: inout PrintBuffer) {
        switch p.kind {
        case .and(let ops) where ops.count == 1: operand(ops[0], into: &out)
        case .or(let ops) where ops.count == 1: operand(ops[0], into: &out)
        case .and(let ops) where ops.isEmpty: predicate(p, into: &out)
        case .or(let ops) where ops.isEmpty: predicate(p, into: &out)
        case .and, .or, .not:
            out += "("
            predicate(p, into: &out)
            out += ")"
        default:
            predicate(p, into: &out)
        }
    }

    static func expression(_ e: ExpressionSyntax, into out: inout PrintBuffer) {
        switch e.kind {
        case .keyPath(nil, _), .variable, .evaluatedObject, .constant(.integer), .constant(.string), .constant(.double):
            expressionBody(e, into: &out)
        // Everything else may nest: it checks the stack first (see `StackGuard`).
        default:
            StackGuard.ensure { expressionBody(e, into: &out) }
        }
    }

    private static func expressionBody(_ e: ExpressionSyntax, into out: inout PrintBuffer) {
        switch e.kind {
        case .constant(let v):
            literal(v, into: &out)
        case .evaluatedObject:
            out += "SELF"
        case .keyPath(let base, let components):
            keyPath(base, components, into: &out)
        case .dynamicKey(let base, let key):
            dynamicKey(base, key, into: &out)
        case .variable(let name):
            out += "$"
            out += name
        case .aggregate(let elements):
            out += "{"
            list(elements, into: &out)
            out += "}"
        case .index(let base, let index):
            self.index(base, index, into: &out)
        case .binary(let op, let lhs, let rhs):
            binaryOperand(lhs, into: &out)
            out += " "
            out += op.rawValue
            out += " "
            binaryOperand(rhs, into: &out)
        case .unary(let op, let operand):
            unary(op, operand, into: &out)
        case .function(let name, let arguments):
            out += name
            out += "("
            list(arguments, into: &out)
            out += ")"
        case .customFunction(let target, let selector, let arguments):
            customFunction(target, selector, arguments, into: &out)
        case .subquery(let collection, let variable, let predicate):
            out += "SUBQUERY("
            expression(collection, into: &out)
            out += ", $"
            out += variable
            out += ", "
            self.predicate(predicate, into: &out)
            out += ")"
        case .ternary(let condition, let then, let otherwise):
            out += "TERNARY("
            predicate(condition, into: &out)
            argument(then, into: &out)
            argument(otherwise, into: &out)
            out += ")"
        case .cast(let value, let type):
            out += "CAST("
            expression(value, into: &out)
            argument(type, into: &out)
            out += ")"
        case .assignment(let variable, let value):
            out += "$"
            out += variable
            out += " := "
            expression(value, into: &out)
        }
    }

    /// `base.a.b`, or `a.b` from the evaluated object.
    @inline(__always)
    private static func keyPath(
        _ base: ExpressionSyntax?, _ components: [String], into out: inout PrintBuffer
    ) {
        if let base {
            postfixBase(base, into: &out)
            out += "."
        }
        for (i, c) in components.enumerated() {
            if i > 0 { out += "." }
            KeyPathComponent.spell(c, into: &out)
        }
    }

    /// `base.$variable`, or `base.(expression)` for any other computed key.
    @inline(__always)
    private static func dynamicKey(_ base: ExpressionSyntax, _ key: ExpressionSyntax, into out: inout PrintBuffer) {
        postfixBase(base, into: &out)
        if case .variable(let name) = key.kind {
            out += ".$"
            out += name
        } else {
            out += ".("
            expression(key, into: &out)
            out += ")"
        }
    }

    /// `base[FIRST]`, `base[LAST]`, `base[SIZE]` or `base[expression]`.
    @inline(__always)
    private static func index(_ base: ExpressionSyntax, _ index: IndexSyntax, into out: inout PrintBuffer) {
        postfixBase(base, into: &out)
        out += "["
        switch index {
        case .first: out += "FIRST"
        case .last: out += "LAST"
        case .size: out += "SIZE"
        case .expression(let x): expression(x, into: &out)
        }
        out += "]"
    }

    /// `-x`, `~x`: the operand is parenthesised when it is an operation or a negative number.
    @inline(__always)
    private static func unary(_ op: UnaryOperator, _ operand: ExpressionSyntax, into out: inout PrintBuffer) {
        out += op.rawValue
        let parenthesise: Bool
        switch operand.kind {
        case .binary, .assignment: parenthesise = true
        case .constant(.integer(let i)): parenthesise = i < 0
        case .constant(.double(let d)): parenthesise = d.sign == .minus
        default: parenthesise = false
        }
        if parenthesise { out += "(" }
        expression(operand, into: &out)
        if parenthesise { out += ")" }
    }

    /// `FUNCTION(target, "selector" , arg1, arg2)`.
    @inline(__always)
    private static func customFunction(
        _ target: ExpressionSyntax, _ selector: String, _ arguments: [ExpressionSyntax], into out: inout PrintBuffer
    ) {
        out += "FUNCTION("
        expression(target, into: &out)
        out += ", "
        string(selector, into: &out)
        // Apple's printer writes `"selector" , arg1, arg2`: the argument list keeps its leading ", ".
        if !arguments.isEmpty { out += " " }
        for a in arguments { argument(a, into: &out) }
        out += ")"
    }

    /// `, x`: an argument after the first of a call-like form.
    @inline(__always)
    private static func argument(_ x: ExpressionSyntax, into out: inout PrintBuffer) {
        out += ", "
        expression(x, into: &out)
    }

    private static func list(_ items: [ExpressionSyntax], into out: inout PrintBuffer) {
        for (i, x) in items.enumerated() {
            if i > 0 { out += ", " }
            expression(x, into: &out)
        }
    }

    private static func binaryOperand(_ e: ExpressionSyntax, into out: inout PrintBuffer) {
        switch e.kind {
        case .binary, .assignment:
            out += "("
            expression(e, into: &out)
            out += ")"
        default:
            expression(e, into: &out)
        }
    }

    /// The base of `.key` or `[index]` must be a primary expression.
    private static func postfixBase(_ e: ExpressionSyntax, into out: inout PrintBuffer) {
        let needsParens: Bool
        switch e.kind {
        case .binary, .unary, .assignment: needsParens = true
        case .constant(.integer(let i)): needsParens = i < 0
        case .constant(.double(let d)): needsParens = d.sign == .minus || !d.isFinite
        default: needsParens = false
        }
        if needsParens { out += "(" }
        expression(e, into: &out)
        if needsParens { out += ")" }
    }

    static func literal(_ v: LiteralValue) -> String {
        var s = PrintBuffer()
        literal(v, into: &s)
        return s.string
    }

    static func literal(_ v: LiteralValue, into out: inout PrintBuffer) {
        switch v {
        case .null: out += "nil"
        case .bool(let b): out += b ? "YES" : "NO"
        case .integer(let i): out.append(i)
        case .double(let d):
            if d.isFinite {
                out += d.description
            } else {
                out += "CAST(\""
                out += d.isNaN ? "nan" : d < 0 ? "-inf" : "inf"
                out += "\", \"NSNumber\")"
            }
        case .decimal(let d):
            out += "CAST("
            string(decimalText(d), into: &out)
            out += ", \"NSDecimalNumber\")"
        case .string(let s): string(s, into: &out)
        case .date(let d):
            out += "CAST("
            out += d.timeIntervalSinceReferenceDate.description
            out += ", \"NSDate\")"
        case .data(let d):
            out += "CAST("
            string(d.base64EncodedString(), into: &out)
            out += ", \"NSData\")"
        case .array(let items):
            // Constant arrays nest as deeply as aggregates do.
            guard StackGuard.hasRoom(below: StackGuard.lowWater) else {
                return StackGuard.onLargeStack { literal(v, into: &out) }
            }
            out += "{"
            for (i, x) in items.enumerated() {
                if i > 0 { out += ", " }
                literal(x, into: &out)
            }
            out += "}"
        case .object(let r):
            // An object has no literal either: its identity, readable, as `<sift://…/Employee/p3>`.
            out += "<"
            out += r.uri
            out += ">"
        case .dictionary(let d):
            // Apple's `{key = value}` form. There is no dictionary literal in the grammar, so this
            // is the one constant whose printed form does not parse back.
            out += "{"
            for (i, k) in d.keys.sorted().enumerated() {
                if i > 0 { out += ", " }
                string(k, into: &out)
                out += " = "
                literal(d[k]!, into: &out)
            }
            out += "}"
        }
    }

    /// Reserves room in `out` for the printed form of a node parsed from `range`: canonical forms
    /// are about as long as their source, so one allocation usually holds the whole output instead
    /// of a growing buffer reallocating as it doubles. Trees built in code (empty range) get the
    /// small reservation only.
    static func reserve(_ out: inout PrintBuffer, for range: SourceRange) {
        out.reserve((range.upperBound - range.lowerBound) * 5 / 4 + 8)
    }

    /// What `body` prints into a buffer reserved for a tree parsed from `range`, as a string.
    @inline(__always)
    static func printed(for range: SourceRange, _ body: (inout PrintBuffer) -> Void) -> String {
        var out = PrintBuffer()
        reserve(&out, for: range)
        body(&out)
        return out.string
    }

    static func decimalText(_ d: Decimal) -> String {
        var copy = d
        return NSDecimalString(&copy, Locale(identifier: "en_US_POSIX"))
    }

    static func string(_ s: String, into out: inout PrintBuffer) {
        out += "\""
        if !s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C }) {
            out += s
        } else {
            for ch in s.unicodeScalars {
                if ch == "\"" { out += "\\\"" } else if ch == "\\" { out += "\\\\" } else { out.append(ch) }
            }
        }
        out += "\""
    }
}

extension PredicateSyntax {
    /// The canonical format string; parsing it gives an equal predicate.
    public var description: String {
        PredicatePrinter.printed(for: range) { PredicatePrinter.predicate(self, into: &$0) }
    }

    /// Appends the canonical format string (`description`) to `out`, for printing many predicates
    /// into one buffer without a string for each.
    package func printCanonical(into out: inout PrintBuffer) {
        PredicatePrinter.predicate(self, into: &out)
    }
}

extension ExpressionSyntax {
    /// The canonical format of this expression.
    public var description: String {
        PredicatePrinter.printed(for: range) { PredicatePrinter.expression(self, into: &$0) }
    }
}
