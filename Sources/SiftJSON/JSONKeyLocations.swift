// Where each part of a JSON document is written, by key path, for readers of small configuration-
// like files (a store's model file) that report a mistake at the member that holds it, not only at
// a syntax error. The document is read by `JSONReader` (so its errors and their `line:column` are
// the usual ones), then walked once more by the same scanner, which records the byte offset of
// every member key and array element; the offsets become line and column in one pass, counted as
// `JSONScanError.located` counts them.

import SiftSyntax

/// A JSON document and the `line:column` of each of its members and elements, by key path:
/// `entities[0].attributes[2].optinal` is the key `optinal` of the third element of the
/// `attributes` of the first element of the top-level `entities`.
///
/// ```swift
/// let doc = try LocatedJSON(bytes: Array("{\n  \"a\": [1, {\"b\": 2}]\n}".utf8))
/// doc.location(of: "a[1].b")   // 2:14
/// ```
package struct LocatedJSON: Sendable {
    /// The document.
    package let value: JSONValue
    /// The location of each member (its key's opening quote) and element (its first byte).
    package let locations: [String: SourceLocation]

    /// Reads `bytes` (UTF-8); a syntax error is `JSONReader`'s.
    package init(bytes: [UInt8]) throws(JSONError) {
        value = try JSONReader(bytes: bytes).parseDocument()
        var offsets: [(path: String, offset: Int)] = []
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            scanner.skipSpace()
            // The reader above accepted the document, so the walk cannot fail.
            try? scanner.recordOffsets(path: "", into: &offsets)
        }
        locations = Self.locate(offsets, in: bytes)
    }

    /// The location of the member or element at `path`, if the document has one.
    package func location(of path: String) -> SourceLocation? { locations[path] }

    /// `offsets` (increasing, as the scanner met them) as 1-based lines and columns, columns
    /// counted in Unicode scalars.
    private static func locate(_ offsets: [(path: String, offset: Int)], in bytes: [UInt8]) -> [String: SourceLocation]
    {
        var out: [String: SourceLocation] = [:]
        var line = 1
        var column = 1
        var j = 0
        for (path, offset) in offsets {
            while j < offset {
                if bytes[j] == 0x0A {
                    line += 1
                    column = 1
                } else if bytes[j] & 0xC0 != 0x80 {
                    column += 1
                }
                j += 1
            }
            out[path] = SourceLocation(line: line, column: column)
        }
        return out
    }
}

extension JSONScanner {
    /// Walks the (valid) value at `i`, appending the offset of each member key and array
    /// element under its key path below `path`.
    mutating func recordOffsets(path: String, into offsets: inout [(path: String, offset: Int)])
        throws(JSONScanError)
    {
        switch base[i] {
        case UInt8(ascii: "{"):
            guard !open(UInt8(ascii: "}")) else { return }
            repeat {
                skipSpace()
                let at = i
                let key = try memberKey()
                let name = stringContent(key.start, key.end, escaped: key.escaped)
                let member = path.isEmpty ? name : path + "." + name
                offsets.append((member, at))
                try recordOffsets(path: member, into: &offsets)
            } while try separator(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            guard !open(UInt8(ascii: "]")) else { return }
            var n = 0
            repeat {
                skipSpace()
                let element = "\(path)[\(n)]"
                offsets.append((element, i))
                try recordOffsets(path: element, into: &offsets)
                n += 1
            } while try separator(UInt8(ascii: "]"))
        default:
            try skipValue(depth: 0)
        }
    }
}
