// The catalog of every message the syntax stage can produce. Each message has a stable
// identifier (for tests, the corpus and tools) and lower-case text with source tokens in quotes,
// in the style `1:12: error: expected expression after 'AND'`.

/// One kind of syntax error, with whatever detail its message needs.
public enum SyntaxErrorKind: Error, Hashable, Sendable, Codable {
    /// A character that starts no token.
    case unexpectedCharacter(String)
    /// A string literal without its closing quote.
    case unterminatedString
    /// A backslash escape that is not valid in a string literal.
    case invalidEscape(String)
    /// A malformed number literal.
    case invalidNumber(String)
    /// A prefixed (`0x`, `0o`, `0b`) integer literal too large for 64 bits.
    case numberOutOfRange(String)
    /// Input ended, or a predicate began, where an expression was expected after the given token.
    case expectedExpression(after: String)
    /// A token that cannot begin an expression.
    case expectedExpressionFound(String)
    /// The format string holds no predicate.
    case emptyPredicate
    /// Nothing usable as a predicate after the given token (`a == 1 AND`).
    case expectedPredicate(after: String)
    /// An expression not followed by a comparison operator.
    case expectedOperator(found: String)
    /// A specific token was expected (a closing parenthesis, a comma…) and another was found.
    case expected(String, found: String)
    /// Input continues after a complete predicate.
    case unexpectedToken(String)
    /// Two comparisons in a row (`1 < a < 3`).
    case chainedComparison(String)
    /// An option letter other than `c`, `d`, `l` and `n` in `[…]`.
    case unknownOption(letter: String, options: String)
    /// An empty option list, `[]`.
    case emptyOptions
    /// Options after an operator that takes none (`BETWEEN`).
    case optionsNotAllowed(operator: String)
    /// A reserved word used as a key; `#word` makes it a key.
    case reservedWord(String)
    /// A reserved word Sift does not support (`ANYKEY`, `FETCH`).
    case unsupportedKeyword(String)
    /// A function name that is not built in (register it and call it with `FUNCTION`).
    case unknownFunction(String)
    /// A built-in function called with the wrong number of arguments.
    case wrongArgumentCount(function: String, expected: Int, found: Int)
    /// A `.` not followed by a key.
    case expectedKeyPath(after: String)
    /// `@word` that is not one of the eleven collection operators.
    case unknownCollectionOperator(String)
    /// A `$variable` was expected (`SUBQUERY`'s second argument).
    case expectedVariable(after: String)
    /// `FUNCTION`'s second argument is not a selector string.
    case expectedSelectorString
    /// Nesting deeper than ``PredicateSyntax/maximumDepth``.
    case nestedTooDeeply(limit: Int)
    /// A `%` specifier that is not supported.
    case unknownFormatSpecifier(String)
    /// A positional specifier such as `%1$@`, which Sift rejects.
    case positionalSpecifier(String)
    /// More specifiers than arguments.
    case missingArgument(specifier: String)
    /// More arguments than specifiers.
    case extraArguments(expected: Int, given: Int)
    /// An argument whose type does not fit its typed specifier (`%d` given a string).
    case wrongArgumentType(specifier: String, expected: String, found: String)
    /// A `%K` argument that is not a non-empty string.
    case invalidKeyPathArgument(String)
    /// A `%@` argument of a type Sift cannot turn into a constant.
    case unsupportedArgument(String)

    /// A stable, kebab-case identifier for this kind of error.
    public var id: String {
        switch self {
        case .unexpectedCharacter: "unexpected-character"
        case .unterminatedString: "unterminated-string"
        case .invalidEscape: "invalid-escape"
        case .invalidNumber: "invalid-number"
        case .numberOutOfRange: "number-out-of-range"
        case .expectedExpression, .expectedExpressionFound: "expected-expression"
        case .emptyPredicate: "empty-predicate"
        case .expectedPredicate: "expected-predicate"
        case .expectedOperator: "expected-operator"
        case .expected: "expected-token"
        case .unexpectedToken: "unexpected-token"
        case .chainedComparison: "chained-comparison"
        case .unknownOption: "unknown-option"
        case .emptyOptions: "empty-options"
        case .optionsNotAllowed: "options-not-allowed"
        case .reservedWord: "reserved-word"
        case .unsupportedKeyword: "unsupported-keyword"
        case .unknownFunction: "unknown-function"
        case .wrongArgumentCount: "wrong-argument-count"
        case .expectedKeyPath: "expected-key-path"
        case .unknownCollectionOperator: "unknown-collection-operator"
        case .expectedVariable: "expected-variable"
        case .expectedSelectorString: "expected-selector-string"
        case .nestedTooDeeply: "nested-too-deeply"
        case .unknownFormatSpecifier: "unknown-format-specifier"
        case .positionalSpecifier: "positional-specifier"
        case .missingArgument: "missing-argument"
        case .extraArguments: "extra-arguments"
        case .wrongArgumentType: "wrong-argument-type"
        case .invalidKeyPathArgument: "invalid-key-path-argument"
        case .unsupportedArgument: "unsupported-argument"
        }
    }

    /// Source tokens are quoted; the end of the input is not a token and is not.
    private static func quote(_ token: String) -> String {
        token == "end of input" ? token : "'\(token)'"
    }

    /// The human-readable message (lower case, source tokens in single quotes).
    public var message: String {
        switch self {
        case .unexpectedCharacter(let c): "unexpected character '\(c)'"
        case .unterminatedString: "unterminated string literal"
        case .invalidEscape(let e): "invalid escape sequence '\(e)' in string literal"
        case .invalidNumber(let n): "invalid number '\(n)'"
        case .numberOutOfRange(let n): "number '\(n)' does not fit in 64 bits"
        case .expectedExpression(let after): "expected expression after '\(after)'"
        case .expectedExpressionFound(let found): "expected expression, found \(Self.quote(found))"
        case .emptyPredicate: "empty predicate"
        case .expectedPredicate(let after): "expected predicate after '\(after)'"
        case .expectedOperator(let found): "expected comparison operator, found \(Self.quote(found))"
        case .expected(let what, let found): "expected '\(what)', found \(Self.quote(found))"
        case .unexpectedToken(let t): "unexpected '\(t)' after the end of the predicate"
        case .chainedComparison(let op):
            "comparison operators cannot be chained; parenthesise or use 'AND' before '\(op)'"
        case .unknownOption(let letter, let options): "unknown option '\(letter)' in '[\(options)]'"
        case .emptyOptions: "empty option list '[]'"
        case .optionsNotAllowed(let op): "options are not allowed after '\(op)'"
        case .reservedWord(let w): "'\(w)' is a reserved word; write '#\(w)' to use it as a key"
        case .unsupportedKeyword(let w): "'\(w)' is reserved and not supported"
        case .unknownFunction(let f):
            "unknown function '\(f)'; register custom functions and call them with 'FUNCTION(target, \"\(f)\", ...)'"
        case .wrongArgumentCount(let f, let expected, let found):
            "function '\(f)' takes \(expected) argument\(expected == 1 ? "" : "s"), found \(found)"
        case .expectedKeyPath(let after): "expected key after '\(after)'"
        case .unknownCollectionOperator(let op):
            "unknown collection operator '\(op)'; write '#\"\(op)\"' for a key that begins with '@'"
        case .expectedVariable(let after): "expected variable like '$x' after '\(after)'"
        case .expectedSelectorString: "expected a selector string as the second argument of 'FUNCTION'"
        case .nestedTooDeeply(let limit): "predicate is nested too deeply (the limit is \(limit) levels)"
        case .unknownFormatSpecifier(let s): "unknown format specifier '\(s)'"
        case .positionalSpecifier(let s): "positional format specifiers like '\(s)' are not supported"
        case .missingArgument(let s): "no argument given for '\(s)'"
        case .extraArguments(let expected, let given):
            "\(given) argument\(given == 1 ? "" : "s") given but the format uses \(expected)"
        case .wrongArgumentType(let s, let expected, let found): "'\(s)' expects \(expected), found \(found)"
        case .invalidKeyPathArgument(let k): "'\(k)' is not a valid key path for '%K'"
        case .unsupportedArgument(let t): "cannot use a value of type '\(t)' as a predicate argument"
        }
    }
}

/// A syntax error: what went wrong and where.
///
/// ```swift
/// do { _ = try PredicateSyntax.parse("a == 1 AND") }
/// catch let e as SyntaxError { print(e) }  // 1:8: error: expected predicate after 'AND'
/// ```
public struct SyntaxError: SiftError, Hashable {
    /// What went wrong.
    public var kind: SyntaxErrorKind
    /// The offending token's byte range in the source.
    public var range: SourceRange
    /// The 1-based position of the offending token.
    public var location: SourceLocation
    /// The source the error refers to.
    public var source: String

    /// An error of `kind` at `range` in `source`; the location is computed from the range.
    public init(_ kind: SyntaxErrorKind, range: SourceRange, source: String) {
        self.kind = kind
        self.range = range
        self.source = source
        self.location = SourceText(source).location(of: range.lowerBound)
    }

    /// The stable identifier of the kind, e.g. `expected-predicate`.
    public var id: String { kind.id }
    /// The message without position, e.g. `expected predicate after 'AND'`.
    public var message: String { kind.message }

    /// `line:column: error: message`.
    public var description: String { "\(location): error: \(message)" }

    /// The description followed by the source line and a caret under the offending token,
    /// as the command-line tool prints it.
    public var annotated: String {
        let text = SourceText(source)
        let line = text.line(location.line)
        let endLocation = text.location(of: range.upperBound)
        let width = endLocation.line == location.line ? Swift.max(1, endLocation.column - location.column) : 1
        let caretIndent = String(line.prefix(location.column - 1).map { $0 == "\t" ? "\t" : " " })
        return "\(description)\n\(line)\n\(caretIndent)^\(String(repeating: "~", count: width - 1))"
    }
}
