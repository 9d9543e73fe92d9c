// A small XML reader of our own for Xcode's model files (`contents`, `.xccurrentversion`):
// FoundationXML needs libxml2, which a fresh machine may lack. It reads UTF-8 documents into a
// tree of elements (attributes, text, children), each knowing its `line:column`: the XML
// declaration, processing instructions, comments, a DOCTYPE without an internal subset, CDATA,
// the five predefined entities and numeric character references. Anything malformed is an
// `XMLSyntaxError` with its position, never a crash: the parser keeps its own stack of open
// elements instead of recursing, and refuses nesting deeper than `maxDepth` (a tree that deep
// would be freed recursively; Xcode's files nest five levels).

import SiftSyntax

/// One element of an XML document: its name, attributes in document order, children and the text
/// directly inside it (entities and CDATA resolved, comments left out). Not `XMLElement`, which
/// Foundation declares on macOS.
struct XMLTreeElement: Sendable, Hashable {
    /// An attribute with the place of its name.
    struct Attribute: Sendable, Hashable {
        var name: String
        var value: String
        var location: SourceLocation
    }

    var name: String
    var attributes: [Attribute] = []
    var children: [XMLTreeElement] = []
    var text = ""
    /// Where the element's `<` is (columns count Unicode scalars).
    var location: SourceLocation

    /// The value of attribute `name`, if present.
    subscript(_ name: String) -> String? { attributes.first { $0.name == name }?.value }

    /// The children named `name`.
    func children(_ name: String) -> [XMLTreeElement] { children.filter { $0.name == name } }
}

/// Malformed XML: what is wrong and where.
struct XMLSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    var location: SourceLocation
    var message: String
    var description: String { "\(location): error: \(message)" }
}

/// Reads a whole document into its root element.
struct XMLReader {
    /// The deepest nesting read.
    static let maxDepth = 1000
    private let bytes: [UInt8]
    private var i = 0
    private var line = 1
    private var column = 1

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The root element of the UTF-8 document `bytes`.
    ///
    /// ```swift
    /// let root = try XMLReader.parse(Array("<model><entity name=\"A\"/></model>".utf8))
    /// root.children[0]["name"]   // "A"
    /// ```
    static func parse(_ bytes: [UInt8]) throws(XMLSyntaxError) -> XMLTreeElement {
        var reader = XMLReader(bytes)
        try reader.checkUTF8()
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.i = 3 }
        return try reader.document()
    }

    // MARK: Positions

    private var here: SourceLocation { SourceLocation(line: line, column: column) }
    private var atEnd: Bool { i >= bytes.count }
    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }

    private func failure(_ message: String, at location: SourceLocation? = nil) -> XMLSyntaxError {
        XMLSyntaxError(location: location ?? here, message: message)
    }

    /// Moves past one byte, keeping the line and column (a CR LF pair is one line break, and a
    /// UTF-8 continuation byte is no column of its own).
    private mutating func advance() {
        let b = bytes[i]
        i += 1
        if b == 0x0A || (b == 0x0D && current != 0x0A) {
            line += 1
            column = 1
        } else if b & 0xC0 != 0x80 && b != 0x0D {
            column += 1
        }
    }

    private mutating func advance(_ n: Int) { for _ in 0..<n where !atEnd { advance() } }

    private func looking(at s: String) -> Bool { bytes[i...].starts(with: s.utf8) }

    private mutating func skipSpace() {
        while let b = current, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { advance() }
    }

    private mutating func expect(_ s: String, _ what: String) throws(XMLSyntaxError) {
        guard looking(at: s) else { throw failure("expected \(what)") }
        advance(s.utf8.count)
    }

    /// Every byte sequence must be UTF-8; the first that is not is an error at its place.
    private mutating func checkUTF8() throws(XMLSyntaxError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let s): offset += s.count
            case .emptyInput: return
            case .error:
                var probe = XMLReader(bytes)
                probe.advance(offset)
                throw probe.failure("the document is not UTF-8 (invalid byte 0x\(String(bytes[offset], radix: 16)))")
            }
        }
    }

    // MARK: The document

    private mutating func document() throws(XMLSyntaxError) -> XMLTreeElement {
        if looking(at: "<?xml") && (i + 5 < bytes.count && [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i + 5])) {
            try declaration()
        }
        try misc(allowDoctype: true)
        guard !atEnd else { throw failure("the document has no root element") }
        guard current == UInt8(ascii: "<") else { throw failure("text outside the root element") }
        let root = try elementTree()
        try misc(allowDoctype: false)
        guard atEnd else {
            throw failure(current == UInt8(ascii: "<") ? "a second root element" : "text after the root element")
        }
        return root
    }

    /// `<?xml version="1.0" encoding="UTF-8"?>`: only UTF-8 (or its ASCII subset) is read.
    private mutating func declaration() throws(XMLSyntaxError) {
        let start = here
        advance(5)
        let attributes = try attributeList(closing: "?>")
        guard attributes.contains(where: { $0.name == "version" }) else {
            throw failure("the XML declaration has no version", at: start)
        }
        if let e = attributes.first(where: { $0.name == "encoding" }),
            !["utf-8", "utf8", "us-ascii", "ascii"].contains(e.value.lowercased())
        {
            throw failure("encoding '\(e.value)' is not supported (only UTF-8)", at: e.location)
        }
        try expect("?>", "'?>' closing the XML declaration")
    }

    /// Comments, processing instructions, white space (and one DOCTYPE before the root).
    private mutating func misc(allowDoctype: Bool) throws(XMLSyntaxError) {
        var doctype = allowDoctype
        while true {
            skipSpace()
            if looking(at: "<!--") {
                try comment()
            } else if looking(at: "<?") {
                try processingInstruction()
            } else if doctype && looking(at: "<!DOCTYPE") {
                try skipDoctype()
                doctype = false
            } else {
                return
            }
        }
    }

    private mutating func comment() throws(XMLSyntaxError) {
        let start = here
        advance(4)
        try skip(past: "-->", "comment", from: start)
    }

    /// Moves past `terminator`, which must come before the end of the document.
    private mutating func skip(past terminator: String, _ what: String, from start: SourceLocation)
        throws(XMLSyntaxError)
    {
        while !looking(at: terminator) {
            guard !atEnd else { throw failure("unterminated \(what)", at: start) }
            advance()
        }
        advance(terminator.utf8.count)
    }

    private mutating func processingInstruction() throws(XMLSyntaxError) {
        let start = here
        advance(2)
        let target = try name("a processing instruction's target")
        if target.lowercased() == "xml" { throw failure("an XML declaration is only allowed at the start", at: start) }
        try skip(past: "?>", "processing instruction", from: start)
    }

    /// `<!DOCTYPE name PUBLIC "…" "…">`, skipped; an internal subset (`[…]`) is not read.
    private mutating func skipDoctype() throws(XMLSyntaxError) {
        let start = here
        advance(9)
        while current != UInt8(ascii: ">") {
            guard let b = current else { throw failure("unterminated DOCTYPE", at: start) }
            if b == UInt8(ascii: "[") { throw failure("a DOCTYPE with an internal subset is not supported") }
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                advance()
                while current != b {
                    guard !atEnd else { throw failure("unterminated DOCTYPE", at: start) }
                    advance()
                }
            }
            advance()
        }
        advance()
    }

    // MARK: Elements

    /// The element at `<` with everything inside it, read with a stack of open elements.
    private mutating func elementTree() throws(XMLSyntaxError) -> XMLTreeElement {
        var open: [XMLTreeElement] = []
        while true {
            if let (element, selfClosing) = try startTag() {
                if selfClosing {
                    if open.isEmpty { return element }
                    open[open.count - 1].children.append(element)
                } else {
                    guard open.count < Self.maxDepth else {
                        throw failure("elements nested deeper than \(Self.maxDepth) levels", at: element.location)
                    }
                    open.append(element)
                }
            } else {
                // An end tag: `startTag` left us at `</`.
                let start = here
                advance(2)
                let name = try name("an end tag's name")
                skipSpace()
                try expect(">", "'>' closing the end tag")
                let element = open.removeLast()
                guard element.name == name else {
                    throw failure(
                        "end tag '\(name)' does not match start tag '\(element.name)' at \(element.location)",
                        at: start)
                }
                if open.isEmpty { return element }
                open[open.count - 1].children.append(element)
            }
            try content(into: &open[open.count - 1])
        }
    }

    /// A start tag, or nil at an end tag (`</`).
    private mutating func startTag() throws(XMLSyntaxError) -> (XMLTreeElement, Bool)? {
        if looking(at: "</") { return nil }
        let location = here
        advance()
        let name = try name("an element name")
        var element = XMLTreeElement(name: name, location: location)
        element.attributes = try attributeList(closing: "/>")
        if looking(at: "/>") {
            advance(2)
            return (element, true)
        }
        try expect(">", "'>' or '/>' closing the start tag of '\(name)'")
        return (element, false)
    }

    /// Text, CDATA, comments and processing instructions, up to the next tag (left unread).
    private mutating func content(into element: inout XMLTreeElement) throws(XMLSyntaxError) {
        var text: [UInt8] = []
        while true {
            guard let b = current else { throw failure("the element '\(element.name)' is not closed") }
            if looking(at: "<!--") {
                try comment()
            } else if looking(at: "<![CDATA[") {
                let start = here
                advance(9)
                while !looking(at: "]]>") {
                    guard let c = current else { throw failure("unterminated CDATA section", at: start) }
                    text.append(c)
                    advance()
                }
                advance(3)
            } else if looking(at: "<?") {
                try processingInstruction()
            } else if b == UInt8(ascii: "<") {
                element.text += Self.normalizedLineEnds(text)
                return
            } else if b == UInt8(ascii: "&") {
                text += try reference()
            } else {
                if looking(at: "]]>") { throw failure("']]>' is not allowed in text") }
                text.append(b)
                advance()
            }
        }
    }

    /// Attributes up to `>` or `closing`: `name="value"` or `name='value'`, names unique.
    private mutating func attributeList(closing: String) throws(XMLSyntaxError) -> [XMLTreeElement.Attribute] {
        var out: [XMLTreeElement.Attribute] = []
        while true {
            let hadSpace = current.map { [0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? false
            skipSpace()
            guard let b = current else { throw failure("the document ends inside a tag") }
            if b == UInt8(ascii: ">") || looking(at: closing) { return out }
            guard hadSpace else { throw failure("expected white space before an attribute") }
            let location = here
            let name = try name("an attribute name")
            skipSpace()
            try expect("=", "'=' after attribute '\(name)'")
            skipSpace()
            let value = try attributeValue()
            if out.contains(where: { $0.name == name }) {
                throw failure("the attribute '\(name)' appears twice", at: location)
            }
            out.append(.init(name: name, value: value, location: location))
        }
    }

    /// A quoted value: references resolved, white space characters written literally made spaces.
    private mutating func attributeValue() throws(XMLSyntaxError) -> String {
        guard let quote = current, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw failure("an attribute value must be quoted")
        }
        let start = here
        advance()
        var value: [UInt8] = []
        while current != quote {
            guard let b = current else { throw failure("unterminated attribute value", at: start) }
            switch b {
            case UInt8(ascii: "<"): throw failure("'<' is not allowed in an attribute value")
            case UInt8(ascii: "&"): value += try reference()
            case 0x0D:
                value.append(0x20)
                advance()
                if current == 0x0A { advance() }
            case 0x09, 0x0A:
                value.append(0x20)
                advance()
            default:
                value.append(b)
                advance()
            }
        }
        advance()
        return String(decoding: value, as: UTF8.self)
    }

    /// `&lt;` `&gt;` `&amp;` `&apos;` `&quot;`, `&#NN;` or `&#xHH;`, as UTF-8 bytes.
    private mutating func reference() throws(XMLSyntaxError) -> [UInt8] {
        let start = here
        advance()
        var body: [UInt8] = []
        while current != UInt8(ascii: ";") {
            guard let b = current, body.count < 12, b != UInt8(ascii: "<"), b != UInt8(ascii: "&"), b > 0x20 else {
                throw failure("'&' must start a reference ending in ';' (write '&amp;' for '&')", at: start)
            }
            body.append(b)
            advance()
        }
        advance()
        let text = String(decoding: body, as: UTF8.self)
        switch text {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "apos": return [UInt8(ascii: "'")]
        case "quot": return [UInt8(ascii: "\"")]
        default: break
        }
        guard text.hasPrefix("#") else { throw failure("unknown entity '&\(text);'", at: start) }
        let hex = text.hasPrefix("#x")
        let digits = text.dropFirst(hex ? 2 : 1)
        guard !digits.isEmpty, let code = UInt32(digits, radix: hex ? 16 : 10), let scalar = Unicode.Scalar(code),
            code == 0x09 || code == 0x0A || code == 0x0D || code >= 0x20, code != 0xFFFE, code != 0xFFFF
        else {
            throw failure("'&\(text);' is not a character XML allows", at: start)
        }
        return Array(String(Character(scalar)).utf8)
    }

    /// An XML name: a letter, `_` or `:` (or any non-ASCII character) first, then also digits,
    /// `-` and `.`.
    private mutating func name(_ what: String) throws(XMLSyntaxError) -> String {
        func isStart(_ b: UInt8) -> Bool {
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x3A || b >= 0x80
        }
        guard let first = current, isStart(first) else { throw failure("expected \(what)") }
        let start = i
        while let b = current, isStart(b) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E { advance() }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    /// Text with CR LF and lone CR made LF, as XML requires.
    private static func normalizedLineEnds(_ bytes: [UInt8]) -> String {
        guard bytes.contains(0x0D) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (k, b) in bytes.enumerated() where b != 0x0D || k + 1 == bytes.count || bytes[k + 1] != 0x0A {
            out.append(b == 0x0D ? 0x0A : b)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
