// Recursive-descent parser for the predicate format language. There is one `parseX()` per
// production of `Grammar/predicate.ebnf`, in the same order and with the same names; expression
// precedence comes from `BinaryOperator.precedence`, defined once. Every loop consumes a token per
// iteration, and recursion is bounded by `PredicateSyntax.maximumDepth`, so any input ends in a
// tree or a diagnostic. Format arguments are consumed left to right as their specifiers are met.

import Foundation

extension PredicateSyntax {
    /// How deeply predicates and expressions may nest (parentheses, NOT, operators, calls).
    /// Deeper input is rejected with `nested-too-deeply` instead of overflowing the stack. Every
    /// stage (printing, evaluation, SQL lowering) handles trees this deep on a 512 KB stack.
    ///
    /// ```swift
    /// let deep = String(repeating: "NOT ", count: PredicateSyntax.maximumDepth) + "a == 1"
    /// _ = try PredicateSyntax.parse(deep)  // parses; one more NOT is `nested-too-deeply`
    /// ```
    public static let maximumDepth = 1000

    /// Parses a predicate format string, substituting `arguments` for `%@`, `%K`, `%d`, … in order.
    ///
    /// ```swift
    /// let p = try PredicateSyntax.parse("name == %@ AND age > %d", arguments: ["Ann", 30])
    /// ```
    public static func parse(_ format: String, arguments: [Any?] = []) throws(SyntaxError) -> PredicateSyntax {
        try Parser.withParser(format, arguments: arguments) { (parser: inout Parser) throws(SyntaxError) in
            try parser.parseStart()
        }
    }

    /// Parses `format` and substitutes typed constants, avoiding `Any`.
    public static func parse(_ format: String, literals: [LiteralValue]) throws(SyntaxError) -> PredicateSyntax {
        try parse(format, arguments: literals.map { $0 as Any? })
    }
}

extension ExpressionSyntax {
    /// Parses a standalone expression (`NSExpression(format:)`).
    public static func parse(_ format: String, arguments: [Any?] = []) throws(SyntaxError) -> ExpressionSyntax {
        try Parser.withParser(format, arguments: arguments) { (parser: inout Parser) throws(SyntaxError) in
            try parser.parseExpressionStart()
        }
    }
}

struct Parser {
    /// The tokens, in a small stack buffer or a heap buffer (`TokenBuffer`), alive for `withParser`'s body.
    private let tokens: UnsafeBufferPointer<Token>
    private let strings: [String]
    /// The source's UTF-8, borrowed for the duration of `withParser`'s body.
    private let bytes: UnsafeBufferPointer<UInt8>
    private let source: String
    private let arguments: [Any?]
    private var position = 0
    private var argumentIndex = 0
    /// Nesting of tree nodes (NOT, operators, calls, aggregates…), limited to `maximumDepth`.
    private var depth = 0
    /// Nesting of parenthesised predicates and expressions, which add no node, limited separately
    /// to `maximumDepth`, so that the printer's parentheses around nested compounds and operands
    /// never push a printed predicate over the limit its source was within.
    private var groupDepth = 0
    /// The error that reached furthest into the input, reported when every alternative fails.
    private var furthestError: SyntaxError?
    /// Memo of "( Predicate )" attempts by token position: the predicate and where it ended, or nil.
    /// Only attempts that can be read again are stored (see `parseNotPredicate`), so input without
    /// nested groups never allocates it.
    private var parenthesisedPredicates: [Int: (PredicateSyntax, Int, Int)?] = [:]
    /// Memo of "( Expression )" readings inside a group by the position of "(": a predicate group
    /// that falls back to a comparison reads its text again as an expression, so without the memo
    /// n nested groups that fail cost n² (each fallback re-reads every group inside it).
    private var parenthesisedExpressions: [Int: ExpressionReading] = [:]
    /// `StackGuard.lowWater` of the thread parsing, read once: the recursive productions compare
    /// the stack pointer with it and continue on a larger stack below it.
    private var lowWater = StackGuard.lowWater

    private init(
        tokens: UnsafeBufferPointer<Token>, strings: [String], bytes: UnsafeBufferPointer<UInt8>, source: String,
        arguments: [Any?]
    ) {
        self.tokens = tokens
        self.strings = strings
        self.bytes = bytes
        self.source = source
        self.arguments = arguments
    }

    /// Lexes `source` and runs `body` with a parser over it, lexing straight from the string's own
    /// UTF-8 storage (made contiguous first if it is bridged or otherwise foreign) instead of a
    /// copy. The parser must not escape `body`: it points into that storage.
    @inline(__always)
    static func withParser<R>(
        _ source: String, arguments: [Any?],
        _ body: (inout Parser) throws(SyntaxError) -> R
    ) throws(SyntaxError) -> R {
        var contiguous = source
        contiguous.makeContiguousUTF8()
        // Captured below as a constant: a captured variable would cost dynamic exclusivity checks.
        let source = contiguous
        func run(_ bytes: UnsafeBufferPointer<UInt8>) throws(SyntaxError) -> R {
            // Up to `smallTokenCount` tokens (typical predicates need about 20) live on the stack;
            // longer input moves them to the heap. Tokens are plain data: nothing to deinitialize.
            try withUnsafeTemporaryAllocation(of: Token.self, capacity: smallTokenCount) {
                small throws(SyntaxError) -> R in
                var sink = TokenBuffer(small: small, sourceCount: bytes.count)
                defer { sink.deallocate() }
                var lexer = Lexer(source, bytes: bytes)
                try lexer.tokenize(into: &sink)
                var parser = Parser(
                    tokens: sink.tokens, strings: lexer.strings, bytes: bytes, source: source, arguments: arguments)
                return try body(&parser)
            }
        }
        // withContiguousStorageIfAvailable rethrows untyped errors: only SyntaxError can arrive.
        do {
            if let result = try source.utf8.withContiguousStorageIfAvailable({ bytes in try run(bytes) }) {
                return result
            }
            // A contiguous string always offers its storage; the copy is only a formal fallback.
            return try Array(source.utf8).withUnsafeBufferPointer { bytes throws(SyntaxError) -> R in try run(bytes) }
        } catch let error as SyntaxError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }

    /// Tokens kept in a stack buffer before spilling to the heap: 32 tokens of 32 bytes stay within
    /// the size that `withUnsafeTemporaryAllocation` always places on the stack.
    private static var smallTokenCount: Int { 1024 / MemoryLayout<Token>.stride }

    // MARK: - Helpers

    /// The name a word token spells, without its `#`, `@` or `$` sigil.
    private func name(_ t: Token) -> String {
        let skip: Int
        switch t.kind {
        case .escapedIdentifier, .atIdentifier, .variable: skip = 1
        default: skip = 0
        }
        return Self.string(bytes, t.range.lowerBound + skip, t.range.upperBound)
    }

    /// The text of `bytes[lo..<hi]`, a slice of the source that starts and ends on scalar
    /// boundaries. Up to 15 bytes (keys, most literals) it is built as a small string in place,
    /// which for ASCII needs no separate validation pass; longer text is decoded as usual.
    @inline(__always)
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ lo: Int, _ hi: Int) -> String {
        let count = hi - lo
        guard count > 0, count <= 15, let base = bytes.baseAddress else {
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[lo..<hi]), as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: count) { buffer in
            buffer.baseAddress!.update(from: base + lo, count: count)
            return count
        }
    }

    /// The source text in `range`.
    private func text(_ range: SourceRange) -> String {
        Self.string(bytes, range.lowerBound, range.upperBound)
    }

    /// The decoded value of a string literal token: from the lexer's side table when it had
    /// escapes, otherwise the bytes between its quotes.
    private func stringValue(_ t: Token, _ index: Int) -> String {
        if index >= 0 { return strings[index] }
        return Self.string(bytes, t.range.lowerBound + 1, t.range.upperBound - 1)
    }

    /// The format specifier a `.format` token stands for, with its text for messages.
    private func specifier(_ t: Token) -> FormatSpecifier {
        guard case .format(let conversion, let bits) = t.kind else { preconditionFailure("not a format token") }
        return FormatSpecifier(text: t.text(in: bytes), conversion: conversion, bits: bits)
    }

    private var current: Token { tokens[position] }
    private func peek(_ n: Int = 1) -> Token { tokens[Swift.min(position + n, tokens.count - 1)] }
    private mutating func advance() -> Token {
        let t = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return t
    }
    /// The previous token's text, for "expected … after 'x'" messages.
    private var previousText: String? { position > 0 ? tokens[position - 1].text(in: bytes) : nil }

    private func expectedExpression() -> SyntaxError {
        if let previous = previousText { return error(.expectedExpression(after: previous)) }
        return error(.expectedExpressionFound(current.text(in: bytes)))
    }
    private var previousEnd: Int { position > 0 ? tokens[position - 1].range.upperBound : 0 }

    private func error(_ kind: SyntaxErrorKind, _ range: SourceRange) -> SyntaxError {
        SyntaxError(kind, range: range, source: source)
    }
    private func error(_ kind: SyntaxErrorKind) -> SyntaxError { error(kind, current.range) }

    private func isPunct(_ p: Punctuation) -> Bool {
        if case .punctuation(p) = current.kind { return true }
        return false
    }
    private func isKeyword(_ k: Keyword) -> Bool {
        if case .keyword(k) = current.kind { return true }
        return false
    }
    private mutating func expect(_ p: Punctuation) throws(SyntaxError) -> Token {
        guard isPunct(p) else { throw error(.expected(p.rawValue, found: current.text(in: bytes))) }
        return advance()
    }

    @inline(__always)
    private mutating func descend() throws(SyntaxError) {
        depth += 1
        if depth > PredicateSyntax.maximumDepth { throw tooDeep() }
    }

    /// Runs `body` on a thread with a large stack (see `StackGuard`), with `lowWater` that thread's.
    @inline(never)
    private mutating func onLargeStack<T>(_ body: (inout Parser) throws(SyntaxError) -> T) throws(SyntaxError) -> T {
        let saved = lowWater
        defer { lowWater = saved }
        return try StackGuard.onLargeStack { () throws(SyntaxError) -> T in
            lowWater = StackGuard.lowWater
            return try body(&self)
        }
    }

    @inline(never)
    private func tooDeep() -> SyntaxError {
        error(.nestedTooDeeply(limit: PredicateSyntax.maximumDepth))
    }

    private mutating func record(_ e: SyntaxError) {
        if furthestError == nil || e.range.lowerBound > furthestError!.range.lowerBound { furthestError = e }
    }

    // MARK: - Predicates

    /// Start = Predicate EOF
    mutating func parseStart() throws(SyntaxError) -> PredicateSyntax {
        if case .end = current.kind { throw error(.emptyPredicate) }
        let p = try parsePredicate()
        guard case .end = current.kind else {
            if case .comparison = p.kind, comparisonOperator(current) != nil {
                throw error(.chainedComparison(current.text(in: bytes)))
            }
            throw error(.unexpectedToken(current.text(in: bytes)))
        }
        try checkArgumentsUsed()
        return p
    }

    mutating func parseExpressionStart() throws(SyntaxError) -> ExpressionSyntax {
        let e = try parseExpression()
        guard case .end = current.kind else { throw error(.unexpectedToken(current.text(in: bytes))) }
        try checkArgumentsUsed()
        return e
    }

    private func checkArgumentsUsed() throws(SyntaxError) {
        if argumentIndex < arguments.count {
            throw error(
                .extraArguments(expected: argumentIndex, given: arguments.count), SourceRange(bytes.count, bytes.count))
        }
    }

    /// Predicate = OrPredicate
    mutating func parsePredicate() throws(SyntaxError) -> PredicateSyntax {
        try parseOrPredicate()
    }

    /// OrPredicate = AndPredicate { ("OR" | "||") AndPredicate }
    mutating func parseOrPredicate() throws(SyntaxError) -> PredicateSyntax {
        let first = try parseAndPredicate()
        guard isKeyword(.or) || isPunct(.pipePipe) else { return first }
        // As for AND: two or three operands get an array of exactly that size.
        let second = try nextOrOperand()
        guard isKeyword(.or) || isPunct(.pipePipe) else {
            return PredicateSyntax(.or(operands: [first, second]), range: first.range.union(second.range))
        }
        let third = try nextOrOperand()
        var operands = [first, second, third]
        while isKeyword(.or) || isPunct(.pipePipe) {
            operands.append(try nextOrOperand())
        }
        return PredicateSyntax(.or(operands: operands), range: first.range.union(operands.last!.range))
    }

    /// After an OR operand, with "OR" or "||" current: the next operand.
    @inline(__always)
    private mutating func nextOrOperand() throws(SyntaxError) -> PredicateSyntax {
        let op = advance()
        guard startsPredicate(current) else { throw error(.expectedPredicate(after: op.text(in: bytes))) }
        return try parseAndPredicate()
    }

    /// AndPredicate = NotPredicate { ("AND" | "&&") NotPredicate }
    mutating func parseAndPredicate() throws(SyntaxError) -> PredicateSyntax {
        let first = try notPredicateOperand()
        guard isKeyword(.and) || isPunct(.ampAmp) else { return first }
        // Chains of two or three operands (the common ones) get an array of exactly that size.
        let second = try nextAndOperand()
        guard isKeyword(.and) || isPunct(.ampAmp) else {
            return PredicateSyntax(.and(operands: [first, second]), range: first.range.union(second.range))
        }
        let third = try nextAndOperand()
        var operands = [first, second, third]
        while isKeyword(.and) || isPunct(.ampAmp) {
            operands.append(try nextAndOperand())
        }
        return PredicateSyntax(.and(operands: operands), range: first.range.union(operands.last!.range))
    }

    /// After an AND operand, with "AND" or "&&" current: the next operand.
    @inline(__always)
    private mutating func nextAndOperand() throws(SyntaxError) -> PredicateSyntax {
        let op = advance()
        guard startsPredicate(current) else { throw error(.expectedPredicate(after: op.text(in: bytes))) }
        return try notPredicateOperand()
    }

    @inline(__always)
    private func startsPredicate(_ t: Token) -> Bool {
        switch t.kind {
        case .end: return false
        case .punctuation(let p):
            switch p {
            case .leftParen, .leftBrace, .bang, .minus, .tilde: return true
            default: return false
            }
        case .keyword(let k):
            switch k {
            case .and, .or, .in, .like, .matches, .contains, .beginsWith, .endsWith, .between, .utiConformsTo,
                .utiEquals:
                return false
            default: return true
            }
        default: return true
        }
    }

    /// An operand of AND: `parseNotPredicate`, whose first checks (NOT, !, TRUEPREDICATE,
    /// FALSEPREDICATE, "(") are made here so that a plain comparison is parsed without the extra call.
    @inline(__always)
    private mutating func notPredicateOperand() throws(SyntaxError) -> PredicateSyntax {
        switch current.kind {
        case .keyword(.not), .punctuation(.bang), .keyword(.truePredicate), .keyword(.falsePredicate),
            .punctuation(.leftParen):
            return try parseNotPredicate()
        default:
            return try parseComparison()
        }
    }

    /// NotPredicate = ("NOT" | "!") NotPredicate | "(" Predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | Comparison
    mutating func parseNotPredicate() throws(SyntaxError) -> PredicateSyntax {
        guard StackGuard.hasRoom(below: lowWater) else {
            return try onLargeStack { p throws(SyntaxError) in try p.parseNotPredicate() }
        }
        let start = current
        if isKeyword(.not) || isPunct(.bang) {
            _ = advance()
            guard startsPredicate(current) else { throw error(.expectedPredicate(after: start.text(in: bytes))) }
            try descend()
            defer { depth -= 1 }
            let operand = try parseNotPredicate()
            return PredicateSyntax(.not(operand: operand), range: start.range.union(operand.range))
        }
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            _ = advance()
            return PredicateSyntax(.constant(value: isKeywordToken(start, .truePredicate)), range: start.range)
        }
        if isPunct(.leftParen) {
            // "(" may open a predicate or an expression such as "(a + b) * 2 > 3": try the predicate
            // reading first, and fall back to a comparison when it fails or when an operator follows.
            // The outcome is remembered per position: the fallback re-reads the same text, and
            // without the memo nested groups (inside TERNARY or SUBQUERY) would cost 2^depth.
            let saved = (position, argumentIndex, depth)
            groupDepth += 1
            defer { groupDepth -= 1 }
            if groupDepth > PredicateSyntax.maximumDepth { throw tooDeep() }
            // A position is read again only when an enclosing group attempt falls back, so an
            // attempt made outside any other group (groupDepth 1) is never looked up again and its
            // success is not stored; failures (rare) are stored always.
            if !parenthesisedPredicates.isEmpty, let memo = parenthesisedPredicates[position] {
                if let (p, end, arguments) = memo {
                    position = end
                    argumentIndex = arguments
                    return p
                }
            } else {
                do {
                    _ = advance()
                    let inner = try parsePredicate()
                    let close = try expect(.rightParen)
                    if !continuesExpression(current) {
                        var p = inner
                        p.range = start.range.union(close.range)
                        if groupDepth > 1 { parenthesisedPredicates[saved.0] = (p, position, argumentIndex) }
                        return p
                    }
                    // If the expression reading fails too, the operator after ")" is the culprit.
                    record(error(.unexpectedToken(current.text(in: bytes))))
                } catch {
                    // Too deep is too deep whichever way the group is read.
                    if case .nestedTooDeeply = error.kind { throw error }
                    record(error)
                }
                parenthesisedPredicates[saved.0] = .some(nil)
            }
            (position, argumentIndex, depth) = saved
            do {
                return try parseComparison()
            } catch {
                // Too deep is too deep whichever way the group is read.
                if case .nestedTooDeeply = error.kind { throw error }
                record(error)
                throw furthestError!
            }
        }
        return try parseComparison()
    }

    private func isKeywordToken(_ t: Token, _ k: Keyword) -> Bool {
        if case .keyword(k) = t.kind { return true }
        return false
    }

    /// Whether `t` can continue an expression, so a parenthesised group before it was an expression.
    private func continuesExpression(_ t: Token) -> Bool {
        if comparisonOperator(t) != nil { return true }
        if case .punctuation(let p) = t.kind {
            switch p {
            case .dot, .leftBracket, .plus, .minus, .star, .slash, .starStar, .amp, .pipe, .caret, .shiftLeft,
                .shiftRight:
                return true
            default: return false
            }
        }
        return false
    }

    @inline(__always)
    private func comparisonOperator(_ t: Token) -> ComparisonOperator? {
        switch t.kind {
        case .punctuation(let p):
            switch p {
            case .equal, .equalEqual: return .equal
            case .notEqual, .lessGreater: return .notEqual
            case .less: return .lessThan
            case .lessEqual, .equalLess: return .lessThanOrEqual
            case .greater: return .greaterThan
            case .greaterEqual, .equalGreater: return .greaterThanOrEqual
            default: return nil
            }
        case .keyword(let k):
            switch k {
            case .matches: return .matches
            case .like: return .like
            case .beginsWith: return .beginsWith
            case .endsWith: return .endsWith
            case .in: return .in
            case .contains: return .contains
            case .between: return .between
            case .utiConformsTo: return .utiConformsTo
            case .utiEquals: return .utiEquals
            default: return nil
            }
        default: return nil
        }
    }

    /// Comparison = [Quantifier] Expression ComparisonOperator [Options] Expression
    /// Quantifier = "ANY" | "SOME" | "ALL" | "NONE"
    mutating func parseComparison() throws(SyntaxError) -> PredicateSyntax {
        let start = current
        var quantifier: Quantifier? = nil
        var negate = false
        if case .keyword(let k) = current.kind {
            switch k {
            case .any, .some: quantifier = .any
            case .all: quantifier = .all
            case .none:
                quantifier = .any
                negate = true
            default: break
            }
            if quantifier != nil { _ = advance() }
        }
        if quantifier != nil, !startsExpression(current) {
            throw error(.expectedExpression(after: start.text(in: bytes)))
        }
        let lhs = try parseExpression()
        guard let op = comparisonOperator(current) else {
            throw error(.expectedOperator(found: current.text(in: bytes)))
        }
        let opToken = advance()
        // Most comparisons have no options: skip the call (parseOptions returns [] for them too).
        let options =
            isPunct(.leftBracket) ? try parseOptions(after: opToken, operator: op) : ComparisonOptions(rawValue: 0)
        guard case let t = current, !isEnd(t), startsExpression(t) else {
            throw error(.expectedExpression(after: tokens[position - 1].text(in: bytes)))
        }
        let rhs = try parseExpression()
        if comparisonOperator(current) != nil {
            throw error(.chainedComparison(current.text(in: bytes)))
        }
        let range = start.range.union(rhs.range)
        let comparison = PredicateSyntax(
            .comparison(quantifier: quantifier, lhs: lhs, operator: op, options: options, rhs: rhs), range: range)
        return negate ? PredicateSyntax(.not(operand: comparison), range: range) : comparison
    }

    private func isEnd(_ t: Token) -> Bool {
        if case .end = t.kind { return true }
        return false
    }

    @inline(__always)
    private func startsExpression(_ t: Token) -> Bool {
        switch t.kind {
        case .end: return false
        case .punctuation(let p):
            switch p {
            case .leftParen, .leftBrace, .minus, .tilde: return true
            default: return false
            }
        case .keyword(let k):
            switch k {
            case .null, .nil_, .self, .true, .yes, .false, .no, .subquery, .cast, .first, .last, .size,
                .anyKey, .fetch, .caseInsensitive, .ci:
                return true
            default: return false
            }
        default: return true
        }
    }

    /// Options = "[" OptionLetters "]"
    mutating func parseOptions(after opToken: Token, operator op: ComparisonOperator) throws(SyntaxError)
        -> ComparisonOptions
    {
        guard isPunct(.leftBracket) else { return ComparisonOptions(rawValue: 0) }
        let open = advance()
        // The letters are an identifier or keyword token, checked byte by byte in place (the
        // valid ones are ASCII); strings are built only for a message.
        var letters = SourceRange(0, 0)
        if case .identifier = current.kind {
            letters = advance().range
        } else if case .keyword = current.kind {
            letters = advance().range
        }
        let noLetters = letters.upperBound == letters.lowerBound
        guard isPunct(.rightBracket) else {
            if noLetters, case .integer = current.kind {
                throw error(
                    .unknownOption(letter: current.text(in: bytes), options: current.text(in: bytes)),
                    open.range.union(current.range))
            }
            throw error(.expected("]", found: current.text(in: bytes)))
        }
        let close = advance()
        if noLetters { throw error(.emptyOptions, open.range.union(close.range)) }
        var options = ComparisonOptions(rawValue: 0)
        for j in letters.lowerBound..<letters.upperBound {
            switch bytes[j] {
            case UInt8(ascii: "c"), UInt8(ascii: "C"): options.insert(.caseInsensitive)
            case UInt8(ascii: "d"), UInt8(ascii: "D"): options.insert(.diacriticInsensitive)
            case UInt8(ascii: "n"), UInt8(ascii: "N"): options.insert(.normalized)
            case UInt8(ascii: "l"), UInt8(ascii: "L"): options.insert(.localeSensitive)
            default:
                // An identifier may hold non-ASCII letters: name the whole scalar, not one byte.
                var end = j + 1
                while end < letters.upperBound, bytes[end] & 0xC0 == 0x80 { end += 1 }
                throw error(
                    .unknownOption(letter: text(SourceRange(j, end)), options: text(letters)),
                    open.range.union(close.range))
            }
        }
        if op == .between {
            throw error(.optionsNotAllowed(operator: opToken.text(in: bytes)), open.range.union(close.range))
        }
        return options
    }

    // MARK: - Expressions

    /// Expression = AssignmentExpression
    mutating func parseExpression() throws(SyntaxError) -> ExpressionSyntax {
        guard StackGuard.hasRoom(below: lowWater) else {
            return try onLargeStack { p throws(SyntaxError) in try p.parseExpression() }
        }
        try descend()
        defer { depth -= 1 }
        // Unless the expression starts with a prefix operator or is an assignment, the chain
        // Assignment -> Binary -> Unary -> Postfix comes down to these three steps, in this order
        // and with the same depth bookkeeping; taking them directly saves three calls per operand.
        if !isPunct(.minus) && !isPunct(.tilde) && !startsAssignment() {
            var e = try parsePrimaryExpression()
            if continuesPostfix(current) { e = try postfixExpressionTail(base: e) }
            if binaryOperator(current) != nil { e = try binaryExpressionTail(minimumPrecedence: 1, lhs: e) }
            return e
        }
        return try parseAssignmentExpression()
    }

    /// `$name :=`
    private func startsAssignment() -> Bool {
        if case .variable = current.kind, case .punctuation(.assign) = peek().kind { return true }
        return false
    }

    /// AssignmentExpression = Variable ":=" Expression | BinaryExpression
    mutating func parseAssignmentExpression() throws(SyntaxError) -> ExpressionSyntax {
        if case .variable = current.kind, case .punctuation(.assign) = peek().kind {
            let name = self.name(current)
            let start = advance()
            let op = advance()
            guard startsExpression(current) else { throw error(.expectedExpression(after: op.text(in: bytes))) }
            let value = try parseExpression()
            return ExpressionSyntax(.assignment(variable: name, value: value), range: start.range.union(value.range))
        }
        return try parseBinaryExpression(minimumPrecedence: 1)
    }

    @inline(__always)
    private func binaryOperator(_ t: Token) -> BinaryOperator? {
        guard case .punctuation(let p) = t.kind else { return nil }
        switch p {
        case .pipe: return .bitwiseOr
        case .caret: return .bitwiseXor
        case .amp: return .bitwiseAnd
        case .shiftLeft: return .leftShift
        case .shiftRight: return .rightShift
        case .plus: return .add
        case .minus: return .subtract
        case .star: return .multiply
        case .slash: return .divide
        case .starStar: return .power
        default: return nil
        }
    }

    /// BinaryExpression = UnaryExpression { BinaryOperator UnaryExpression }, by precedence climbing.
    mutating func parseBinaryExpression(minimumPrecedence: Int) throws(SyntaxError) -> ExpressionSyntax {
        try binaryExpressionTail(minimumPrecedence: minimumPrecedence, lhs: try parseUnaryExpression())
    }

    /// The operator loop of `parseBinaryExpression`, after its first operand.
    private mutating func binaryExpressionTail(minimumPrecedence: Int, lhs first: consuming ExpressionSyntax)
        throws(SyntaxError) -> ExpressionSyntax
    {
        var lhs = first
        let savedDepth = depth
        defer { depth = savedDepth }
        while let op = binaryOperator(current), op.precedence >= minimumPrecedence {
            let opToken = advance()
            // A left-deep chain nests one level per operator; count it so printing stays bounded.
            try descend()
            guard startsExpression(current) else { throw error(.expectedExpression(after: opToken.text(in: bytes))) }
            let rhs = try parseBinaryExpression(minimumPrecedence: op.precedence + 1)
            lhs = ExpressionSyntax(.binary(operator: op, lhs: lhs, rhs: rhs), range: lhs.range.union(rhs.range))
        }
        return lhs
    }

    /// UnaryExpression = ("-" | "~") UnaryExpression | PostfixExpression
    mutating func parseUnaryExpression() throws(SyntaxError) -> ExpressionSyntax {
        guard StackGuard.hasRoom(below: lowWater) else {
            return try onLargeStack { p throws(SyntaxError) in try p.parseUnaryExpression() }
        }
        let start = current
        if isPunct(.minus) || isPunct(.tilde) {
            let negate = isPunct(.minus)
            _ = advance()
            guard startsExpression(current) else { throw error(.expectedExpression(after: start.text(in: bytes))) }
            // A minus directly before a number literal is part of the literal (so -9223372036854775808 fits).
            if negate, case .integer(let magnitude, let decimal) = current.kind, !continuesPostfix(peek()) {
                let t = advance()
                let range = start.range.union(t.range)
                if magnitude <= UInt64(Int64.max) {
                    return ExpressionSyntax(.constant(value: .integer(-Int64(magnitude))), range: range)
                }
                if magnitude == UInt64(Int64.max) + 1 {
                    return ExpressionSyntax(.constant(value: .integer(Int64.min)), range: range)
                }
                if decimal { return ExpressionSyntax(.constant(value: .double(-Double(magnitude))), range: range) }
                throw error(.numberOutOfRange("-" + t.text(in: bytes)), range)
            }
            try descend()
            defer { depth -= 1 }
            let operand = try parseUnaryExpression()
            let range = start.range.union(operand.range)
            if negate, case .constant(let v) = operand.kind {
                switch v {
                case .integer(let i) where i != Int64.min:
                    return ExpressionSyntax(.constant(value: .integer(-i)), range: range)
                case .double(let d): return ExpressionSyntax(.constant(value: .double(-d)), range: range)
                default: break
                }
            }
            return ExpressionSyntax(.unary(operator: negate ? .negate : .bitwiseNot, operand: operand), range: range)
        }
        return try parsePostfixExpression()
    }

    @inline(__always)
    private func continuesPostfix(_ t: Token) -> Bool {
        if case .punctuation(let p) = t.kind { return p == .dot || p == .leftBracket }
        return false
    }

    /// PostfixExpression = PrimaryExpression { "[" Index "]" | "." KeyPathTail }
    mutating func parsePostfixExpression() throws(SyntaxError) -> ExpressionSyntax {
        try postfixExpressionTail(base: try parsePrimaryExpression())
    }

    /// The suffix loop of `parsePostfixExpression`, after its primary expression.
    private mutating func postfixExpressionTail(base first: consuming ExpressionSyntax) throws(SyntaxError)
        -> ExpressionSyntax
    {
        var base = first
        let savedDepth = depth
        defer { depth = savedDepth }
        while true {
            if isPunct(.leftBracket) {
                _ = advance()
                // The index expression nests inside the new node only: counted before it, a
                // nested index (`a[a[a[0]]]`) would cost two levels each.
                let index = try parseIndex()
                try descend()
                let close = try expect(.rightBracket)
                base = ExpressionSyntax(.index(base: base, index: index), range: base.range.union(close.range))
            } else if isPunct(.dot) {
                let dot = advance()
                base = try parseKeyPathTail(base: base, dot: dot)
            } else {
                return base
            }
        }
    }

    /// Index = "FIRST" | "LAST" | "SIZE" | Expression
    mutating func parseIndex() throws(SyntaxError) -> IndexSyntax {
        if case .keyword(let k) = current.kind, [.first, .last, .size].contains(k),
            case .punctuation(.rightBracket) = peek().kind
        {
            _ = advance()
            return k == .first ? .first : k == .last ? .last : .size
        }
        guard startsExpression(current) else { throw error(.expectedExpression(after: "[")) }
        return .expression(try parseExpression())
    }

    /// KeyPathTail = KeyName | Variable | "(" Expression ")" | "%K" | "%@"
    mutating func parseKeyPathTail(base: ExpressionSyntax, dot: Token) throws(SyntaxError) -> ExpressionSyntax {
        var components: [String]
        let t = current
        switch t.kind {
        case .identifier, .escapedIdentifier, .atIdentifier, .quotedKey: components = [keyName(t)]
        case .keyword:
            throw error(.reservedWord(t.text(in: bytes)))
        case .variable:
            _ = advance()
            try descend()
            let key = ExpressionSyntax(.variable(name: name(t)), range: t.range)
            return ExpressionSyntax(.dynamicKey(base: base, key: key), range: base.range.union(t.range))
        case .punctuation(.leftParen):
            _ = advance()
            try descend()
            let key = try parseExpression()
            let close = try expect(.rightParen)
            return ExpressionSyntax(.dynamicKey(base: base, key: key), range: base.range.union(close.range))
        case .format(let conversion, _) where conversion == UInt8(ascii: "K"):
            components = try keyPathArgument(specifier(t), t)
        case .format(let conversion, _) where conversion == UInt8(ascii: "@"):
            let spec = specifier(t)
            _ = advance()
            try descend()
            let key = ExpressionSyntax(.constant(value: try objectArgument(spec, t)), range: t.range)
            return ExpressionSyntax(.dynamicKey(base: base, key: key), range: base.range.union(t.range))
        default:
            throw error(.expectedKeyPath(after: dot.text(in: bytes)))
        }
        _ = advance()
        let range = base.range.union(t.range)
        switch base.kind {
        case .keyPath(let b, let existing):
            return ExpressionSyntax(.keyPath(base: b, components: existing + components), range: range)
        case .evaluatedObject:
            return ExpressionSyntax(.keyPath(base: nil, components: components), range: range)
        default:
            try descend()
            return ExpressionSyntax(.keyPath(base: base, components: components), range: range)
        }
    }

    // MARK: Primary expressions

    /// PrimaryExpression = Literal | Variable | FormatArgument | Aggregate | "SELF" | KeyPath
    ///                   | FunctionCall | SubqueryExpression | TernaryExpression | CastExpression
    ///                   | CustomFunctionExpression | "(" Expression ")"
    mutating func parsePrimaryExpression() throws(SyntaxError) -> ExpressionSyntax {
        let t = current
        switch t.kind {
        case .string(let index):
            _ = advance()
            return ExpressionSyntax(.constant(value: .string(stringValue(t, index))), range: t.range)
        case .integer(let v, let decimal):
            _ = advance()
            if let i = Int64(exactly: v) { return ExpressionSyntax(.constant(value: .integer(i)), range: t.range) }
            if decimal { return ExpressionSyntax(.constant(value: .double(Double(v))), range: t.range) }
            throw error(.numberOutOfRange(t.text(in: bytes)), t.range)
        case .double(let d):
            _ = advance()
            return ExpressionSyntax(.constant(value: .double(d)), range: t.range)
        case .variable:
            _ = advance()
            return ExpressionSyntax(.variable(name: name(t)), range: t.range)
        case .format:
            return try formatArgumentExpression(t)
        case .punctuation(.leftBrace):
            return try parseAggregate()
        case .punctuation(.leftParen):
            return try parenthesizedExpression(t)
        case .identifier:
            let name = self.name(t)
            if case .punctuation(let p) = peek().kind, p == .leftParen || p == .colon {
                switch name.uppercased() {
                case "TERNARY" where p == .leftParen: return try parseTernaryExpression()
                case "FUNCTION" where p == .leftParen: return try parseCustomFunctionExpression()
                default: return try parseFunctionCall()
                }
            }
            _ = advance()
            return keyPath(startingWith: name, t)
        case .escapedIdentifier, .quotedKey:
            _ = advance()
            return keyPath(startingWith: keyName(t), t)
        case .atIdentifier:
            _ = advance()
            return keyPath(startingWith: keyName(t), t)
        case .keyword(let k):
            return try keywordExpression(k, t)
        default:
            throw expectedExpression()
        }
    }

    /// A format specifier (token `t`, current): `%@` is a constant, `%K` a key path, any other a
    /// number or string converted from its argument.
    @inline(__always)
    private mutating func formatArgumentExpression(_ t: Token) throws(SyntaxError) -> ExpressionSyntax {
        let spec = specifier(t)
        _ = advance()
        switch spec.conversion {
        case UInt8(ascii: "@"):
            return ExpressionSyntax(.constant(value: try objectArgument(spec, t)), range: t.range)
        case UInt8(ascii: "K"):
            position -= 1
            let components = try keyPathArgument(spec, t)
            _ = advance()
            return ExpressionSyntax(.keyPath(base: nil, components: components), range: t.range)
        default:
            let value = try nextArgument(spec, t)
            do {
                return ExpressionSyntax(.constant(value: try FormatArgument.convert(spec, value)), range: t.range)
            } catch { throw self.error(error, t.range) }
        }
    }

    /// One reading of "( Expression )": the state it started in (a reading is reused only from the
    /// same state, which decides it) and its outcome, with the position and argument index after it.
    private struct ExpressionReading {
        var depth: Int
        var groupDepth: Int
        var argumentIndex: Int
        var outcome: Result<(ExpressionSyntax, end: Int, arguments: Int), SyntaxError>
    }

    /// `( Expression )`, the opening parenthesis `t` being current. Inside a group (the only place a
    /// reading can be asked for again) the outcome is remembered by position.
    @inline(__always)
    private mutating func parenthesizedExpression(_ t: Token) throws(SyntaxError) -> ExpressionSyntax {
        guard groupDepth > 0 else { return try readParenthesizedExpression(t) }
        let start = position
        if !parenthesisedExpressions.isEmpty, let memo = parenthesisedExpressions[start], memo.depth == depth,
            memo.groupDepth == groupDepth, memo.argumentIndex == argumentIndex
        {
            let (e, end, arguments) = try memo.outcome.get()
            position = end
            argumentIndex = arguments
            return e
        }
        let (depthBefore, groupDepthBefore, argumentsBefore) = (depth, groupDepth, argumentIndex)
        func remember(_ outcome: Result<(ExpressionSyntax, end: Int, arguments: Int), SyntaxError>) {
            parenthesisedExpressions[start] = ExpressionReading(
                depth: depthBefore, groupDepth: groupDepthBefore, argumentIndex: argumentsBefore, outcome: outcome)
        }
        do {
            let e = try readParenthesizedExpression(t)
            remember(.success((e, position, argumentIndex)))
            return e
        } catch {
            remember(.failure(error))
            throw error
        }
    }

    /// Reads `( Expression )`, the opening parenthesis `t` being current.
    @inline(__always)
    private mutating func readParenthesizedExpression(_ t: Token) throws(SyntaxError) -> ExpressionSyntax {
        _ = advance()
        guard startsExpression(current) else { throw error(.expectedExpression(after: "(")) }
        // The parentheses add no node: they count as a group, and the expression inside
        // starts at the depth of the one they enclose, as a predicate group's does.
        groupDepth += 1
        defer { groupDepth -= 1 }
        if groupDepth > PredicateSyntax.maximumDepth { throw tooDeep() }
        depth -= 1
        defer { depth += 1 }
        var e = try parseExpression()
        let close = try expect(.rightParen)
        e.range = t.range.union(close.range)
        return e
    }

    /// A primary expression that starts with the keyword `k` (token `t`, current): nil, YES, NO,
    /// SELF, SUBQUERY and CAST; any other keyword is unsupported or reserved.
    @inline(__always)
    private mutating func keywordExpression(_ k: Keyword, _ t: Token) throws(SyntaxError) -> ExpressionSyntax {
        switch k {
        case .null, .nil_:
            _ = advance()
            return ExpressionSyntax(.constant(value: .null), range: t.range)
        case .true, .yes, .false, .no:
            _ = advance()
            return ExpressionSyntax(.constant(value: .bool(k == .true || k == .yes)), range: t.range)
        case .self:
            _ = advance()
            return ExpressionSyntax(.evaluatedObject, range: t.range)
        case .subquery:
            return try parseSubqueryExpression()
        case .cast:
            return try parseCastExpression()
        case .anyKey, .fetch:
            throw error(.unsupportedKeyword(t.text(in: bytes)))
        default:
            throw error(.reservedWord(t.text(in: bytes)))
        }
    }

    /// A key path that starts at the evaluated object: the key `first` (token `t`, consumed) and
    /// any `.key` components after it, read at once into one array. `parseKeyPathTail` builds the
    /// same node when the postfix loop meets them one at a time; anything else after a dot is
    /// left to it.
    private mutating func keyPath(startingWith first: String, _ t: Token) -> ExpressionSyntax {
        guard isPunct(.dot), isPlainKey(peek()) else {
            return ExpressionSyntax(.keyPath(base: nil, components: [first]), range: t.range)
        }
        var components: [String] = []
        components.reserveCapacity(4)
        components.append(first)
        var last = t
        while isPunct(.dot), isPlainKey(peek()) {
            _ = advance()
            last = advance()
            components.append(keyName(last))
        }
        return ExpressionSyntax(.keyPath(base: nil, components: components), range: t.range.union(last.range))
    }

    /// Whether `t` is a key component by itself: an identifier, `#word`, `#"key"` or `@operator`.
    private func isPlainKey(_ t: Token) -> Bool {
        switch t.kind {
        case .identifier, .escapedIdentifier, .atIdentifier, .quotedKey: return true
        default: return false
        }
    }

    /// The key component a plain key token names: `@count` keeps its `@`, `#word` drops its `#`,
    /// `#"key"` is decoded like a string literal.
    private func keyName(_ t: Token) -> String {
        switch t.kind {
        case .atIdentifier: return text(t.range)
        case .quotedKey(let index):
            if index >= 0 { return strings[index] }
            return Self.string(bytes, t.range.lowerBound + 2, t.range.upperBound - 1)
        default: return name(t)
        }
    }

    private mutating func nextArgument(_ spec: FormatSpecifier, _ t: Token) throws(SyntaxError) -> Any? {
        guard argumentIndex < arguments.count else { throw error(.missingArgument(specifier: spec.text), t.range) }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    private mutating func objectArgument(_ spec: FormatSpecifier, _ t: Token) throws(SyntaxError) -> LiteralValue {
        let value = try nextArgument(spec, t)
        do { return try LiteralValue(any: value) } catch { throw self.error(error, t.range) }
    }

    private mutating func keyPathArgument(_ spec: FormatSpecifier, _ t: Token) throws(SyntaxError) -> [String] {
        let value = try nextArgument(spec, t)
        do { return try FormatArgument.keyPath(value) } catch { throw self.error(error, t.range) }
    }

    /// Aggregate = "{" [ Expression { "," Expression } ] "}"
    mutating func parseAggregate() throws(SyntaxError) -> ExpressionSyntax {
        let open = advance()
        // Fast path for the common list of plain literals (`IN {…}`, `BETWEEN {…}`): each element
        // is one literal token followed by "," or "}", which the general path would read as that
        // constant (consuming no argument and changing no state), so the constant array is built
        // directly. Anything else, including a depth-limit error, re-reads the list the general way.
        let first = position
        if depth < PredicateSyntax.maximumDepth {
            var values: [LiteralValue] = []
            switch current.kind {
            case .string, .integer, .double, .keyword: values.reserveCapacity(4)  // short lists: one allocation
            default: break
            }
            while let value = plainLiteral(current) {
                let next = peek()
                guard case .punctuation(let p) = next.kind, p == .comma || p == .rightBrace else { break }
                values.append(value)
                _ = advance()
                let separator = advance()
                if p == .rightBrace {
                    return ExpressionSyntax(.constant(value: .array(values)), range: open.range.union(separator.range))
                }
            }
            position = first
        }
        let (elements, close) = try expressionList(closedBy: .rightBrace)
        return Self.aggregate(elements, range: open.range.union(close.range))
    }

    /// The constant a single literal token stands for as a whole expression, as
    /// `parsePrimaryExpression` reads it; nil for any other token or for a literal that is an error.
    private func plainLiteral(_ t: Token) -> LiteralValue? {
        switch t.kind {
        case .string(let index): return .string(stringValue(t, index))
        case .integer(let v, let decimal):
            if let i = Int64(exactly: v) { return .integer(i) }
            return decimal ? .double(Double(v)) : nil
        case .double(let d): return .double(d)
        case .keyword(let k):
            switch k {
            case .null, .nil_: return .null
            case .true, .yes, .false, .no: return .bool(k == .true || k == .yes)
            default: return nil
            }
        default: return nil
        }
    }

    /// `[ Expression { "," Expression } ] closing`, after the opening token has been consumed.
    private mutating func expressionList(closedBy closing: Punctuation) throws(SyntaxError) -> (
        [ExpressionSyntax], Token
    ) {
        var items: [ExpressionSyntax] = []
        if !isPunct(closing) {
            while true {
                guard startsExpression(current) else {
                    throw error(.expectedExpression(after: tokens[position - 1].text(in: bytes)))
                }
                items.append(try parseExpression())
                if isPunct(.comma) {
                    _ = advance()
                    continue
                }
                break
            }
        }
        guard isPunct(closing) else { throw error(.expected(closing.rawValue, found: current.text(in: bytes))) }
        return (items, advance())
    }

    /// An aggregate of constants is a constant array; anything else stays an aggregate.
    static func aggregate(_ elements: [ExpressionSyntax], range: SourceRange) -> ExpressionSyntax {
        var values: [LiteralValue] = []
        values.reserveCapacity(elements.count)
        for e in elements {
            guard case .constant(let v) = e.kind else {
                return ExpressionSyntax(.aggregate(elements: elements), range: range)
            }
            values.append(v)
        }
        return ExpressionSyntax(.constant(value: .array(values)), range: range)
    }

    /// Arguments = "(" [ Expression { "," Expression } ] ")"
    mutating func parseArguments() throws(SyntaxError) -> ([ExpressionSyntax], SourceRange) {
        let open = try expect(.leftParen)
        let (args, close) = try expressionList(closedBy: .rightParen)
        return (args, open.range.union(close.range))
    }

    /// FunctionCall = FunctionName Arguments ;  FunctionName = Identifier { ":" [ Identifier ] }
    mutating func parseFunctionCall() throws(SyntaxError) -> ExpressionSyntax {
        let start = current
        var name = ""
        while true {
            switch current.kind {
            case .identifier where name.isEmpty || name.hasSuffix(":"):
                name += self.name(current)
                _ = advance()
            case .punctuation(.colon):
                name += ":"
                _ = advance()
            default:
                guard isPunct(.leftParen) else { throw error(.expected("(", found: current.text(in: bytes))) }
                let nameRange = start.range.union(tokens[position - 1].range)
                guard let f = BuiltinFunction.named(name) else { throw error(.unknownFunction(name), nameRange) }
                let (args, argsRange) = try parseArguments()
                guard args.count == f.arity else {
                    throw error(
                        .wrongArgumentCount(function: f.selector, expected: f.arity, found: args.count), nameRange)
                }
                let range = start.range.union(argsRange)
                if let op = BinaryOperator.bySelector[f.selector] {
                    return ExpressionSyntax(.binary(operator: op, lhs: args[0], rhs: args[1]), range: range)
                }
                if f.selector == "objectFrom:withIndex:" {
                    return ExpressionSyntax(.index(base: args[0], index: .expression(args[1])), range: range)
                }
                if f.selector == "onesComplement:" {
                    return ExpressionSyntax(.unary(operator: .bitwiseNot, operand: args[0]), range: range)
                }
                return ExpressionSyntax(.function(name: f.selector, arguments: args), range: range)
            }
        }
    }

    /// SubqueryExpression = "SUBQUERY" "(" Expression "," Variable "," Predicate ")"
    mutating func parseSubqueryExpression() throws(SyntaxError) -> ExpressionSyntax {
        let start = advance()
        _ = try expect(.leftParen)
        let collection = try parseExpression()
        let comma = try expect(.comma)
        guard case .variable = current.kind else { throw error(.expectedVariable(after: comma.text(in: bytes))) }
        let name = self.name(advance())
        let comma2 = try expect(.comma)
        guard startsPredicate(current) else { throw error(.expectedPredicate(after: comma2.text(in: bytes))) }
        let predicate = try parsePredicate()
        let close = try expect(.rightParen)
        return ExpressionSyntax(
            .subquery(collection: collection, variable: name, predicate: predicate),
            range: start.range.union(close.range))
    }

    /// TernaryExpression = "TERNARY" "(" Predicate "," Expression "," Expression ")"
    mutating func parseTernaryExpression() throws(SyntaxError) -> ExpressionSyntax {
        let start = advance()
        let open = try expect(.leftParen)
        guard startsPredicate(current) else { throw error(.expectedPredicate(after: open.text(in: bytes))) }
        let condition = try parsePredicate()
        _ = try expect(.comma)
        let then = try parseExpression()
        _ = try expect(.comma)
        let otherwise = try parseExpression()
        let close = try expect(.rightParen)
        return ExpressionSyntax(
            .ternary(condition: condition, then: then, else: otherwise), range: start.range.union(close.range))
    }

    /// CastExpression = "CAST" "(" Expression "," Expression ")"
    mutating func parseCastExpression() throws(SyntaxError) -> ExpressionSyntax {
        let start = advance()
        let (args, argsRange) = try parseArguments()
        guard args.count == 2 else {
            throw error(.wrongArgumentCount(function: "CAST", expected: 2, found: args.count), start.range)
        }
        let range = start.range.union(argsRange)
        if let folded = Self.typedLiteral(args[0], args[1]) {
            return ExpressionSyntax(.constant(value: folded), range: range)
        }
        return ExpressionSyntax(.cast(value: args[0], type: args[1]), range: range)
    }

    /// `CAST(<literal>, "NSDate" | "NSData" | "NSDecimalNumber" | "NSNumber")` is how the printer
    /// writes constants that have no literal syntax of their own; reading one gives the constant back.
    static func typedLiteral(_ value: ExpressionSyntax, _ type: ExpressionSyntax) -> LiteralValue? {
        guard case .constant(let v) = value.kind, case .constant(.string(let t)) = type.kind else { return nil }
        switch (t, v) {
        case ("NSDate", .integer(let i)): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case ("NSDate", .double(let d)): return .date(Date(timeIntervalSinceReferenceDate: d))
        case ("NSData", .string(let s)): return Data(base64Encoded: s).map(LiteralValue.data)
        case ("NSDecimalNumber", .string(let s)):
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")), !d.isNaN,
                PredicatePrinter.decimalText(d) == s
            else { return nil }
            return .decimal(d)
        case ("NSNumber", .string("inf")): return .double(.infinity)
        case ("NSNumber", .string("-inf")): return .double(-.infinity)
        case ("NSNumber", .string("nan")): return .double(.nan)
        default: return nil
        }
    }

    /// CustomFunctionExpression = "FUNCTION" "(" Expression "," String { "," Expression } ")"
    mutating func parseCustomFunctionExpression() throws(SyntaxError) -> ExpressionSyntax {
        let start = advance()
        let (args, argsRange) = try parseArguments()
        guard args.count >= 2 else {
            throw error(.wrongArgumentCount(function: "FUNCTION", expected: 2, found: args.count), start.range)
        }
        guard case .constant(.string(let selector)) = args[1].kind, !selector.isEmpty else {
            throw error(.expectedSelectorString, args[1].range)
        }
        return ExpressionSyntax(
            .customFunction(target: args[0], selector: selector, arguments: Array(args.dropFirst(2))),
            range: start.range.union(argsRange))
    }
}
