// Source positions. Nodes and tokens store UTF-8 byte offsets only, so that lexing a megabyte
// predicate stays linear; a `SourceText` turns an offset into the 1-based `line:column` users see
// (a column counts Characters, not bytes) once, when a diagnostic is actually reported.

/// A half-open range of UTF-8 byte offsets into the predicate's source text.
///
/// ```swift
/// let p = try PredicateSyntax.parse("age > 3")
/// p.range  // 0..<7
/// ```
public struct SourceRange: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The offset of the first byte.
    public var lowerBound: Int
    /// The offset just past the last byte.
    public var upperBound: Int

    /// The range from `lowerBound` up to, not including, `upperBound`.
    ///
    /// ```swift
    /// SourceRange(0, 3).description   // "0..<3"
    /// ```
    public init(_ lowerBound: Int, _ upperBound: Int) {
        self.lowerBound = lowerBound
        self.upperBound = Swift.max(lowerBound, upperBound)
    }

    /// The smallest range covering both.
    public func union(_ other: SourceRange) -> SourceRange {
        SourceRange(Swift.min(lowerBound, other.lowerBound), Swift.max(upperBound, other.upperBound))
    }

    /// `lowerBound..<upperBound`.
    public var description: String { "\(lowerBound)..<\(upperBound)" }
}

/// A 1-based line and column; the column counts Characters (grapheme clusters).
///
/// ```swift
/// let at = SourceText("名前 == 'x'").location(of: 7)   // the byte offset of "=="
/// at.line     // 1
/// at.column   // 4: two characters and a space come before it
/// ```
public struct SourceLocation: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, counted in characters.
    public var column: Int
    /// A position from its line and column.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
    /// `line:column`, as diagnostics print it.
    public var description: String { "\(line):\(column)" }
}

/// The text a predicate was parsed from, able to map byte offsets to locations and lines.
public struct SourceText: Sendable {
    /// The whole source.
    public let text: String
    /// Wraps `text` for position lookups.
    ///
    /// ```swift
    /// SourceText("age > 30").location(of: 6).description   // "1:7"
    /// ```
    public init(_ text: String) { self.text = text }

    /// The `line:column` of a UTF-8 offset. Offsets past the end map to just after the last character.
    public func location(of offset: Int) -> SourceLocation {
        let utf8 = text.utf8
        let clamped = Swift.min(Swift.max(offset, 0), utf8.count)
        let target = utf8.index(utf8.startIndex, offsetBy: clamped)
        var line = 1
        var lineStart = text.startIndex
        var i = text.startIndex
        while i < target {
            let c = text[i]
            let next = text.index(after: i)
            if c.isNewline {
                line += 1
                lineStart = next
            }
            i = next
        }
        // An offset inside a multi-byte character belongs to that character's column.
        let column = text[lineStart..<Swift.min(target, text.endIndex)].count + 1
        return SourceLocation(line: line, column: column)
    }

    /// The full text of a 1-based line, without its terminator.
    public func line(_ number: Int) -> Substring {
        var current = 1
        var start = text.startIndex
        var i = text.startIndex
        while i < text.endIndex {
            if text[i].isNewline {
                if current == number { return text[start..<i] }
                current += 1
                start = text.index(after: i)
            }
            i = text.index(after: i)
        }
        return current == number ? text[start...] : ""
    }
}
