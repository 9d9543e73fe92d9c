// JSONReader: whole JSON documents read into `JSONValue`s (command-line arguments, `--var`
// bindings, data files loaded whole), built on the one scanner (`JSONScanner`) that `sift filter`
// reads with, so both accept the same language and report the same error at the same byte.

import Foundation

/// A strict JSON reader that keeps integers apart from doubles and object members in order.
///
/// ```swift
/// let one = try JSONReader.parse("[1, 1.0]")        // .array([.integer(1), .double(1.0)])
/// var r = JSONReader("{\"a\": 1}\n{\"a\": 2}\n")
/// let records = try r.parseSequence()               // two objects (NDJSON)
/// ```
/// Errors carry the 1-based line and column: `JSONReader.parse("[1,]")` throws
/// `1:4: error: unexpected ']' where a JSON value was expected`.
public struct JSONReader {
    private let bytes: [UInt8]

    /// A reader of `text`'s UTF-8 bytes.
    public init(_ text: String) { bytes = Array(text.utf8) }
    /// A reader of `bytes` (UTF-8).
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses exactly one JSON value (surrounding whitespace allowed).
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        try JSONReader(text).parseDocument()
    }

    /// Parses exactly one JSON value (surrounding whitespace allowed).
    public func parseDocument() throws(JSONError) -> JSONValue {
        try scan { (s: inout JSONScanner) throws(JSONScanError) -> JSONValue in
            s.skipSpace()
            let v = try s.jsonValue(depth: 0)
            s.skipSpace()
            if !s.atEnd { throw s.trailing() }
            return v
        }
    }

    /// Parses a sequence of whitespace-separated values (NDJSON, or concatenated JSON).
    public func parseSequence() throws(JSONError) -> [JSONValue] {
        try scan { (s: inout JSONScanner) throws(JSONScanError) -> [JSONValue] in
            var out: [JSONValue] = []
            s.skipSpace()
            while !s.atEnd {
                out.append(try s.jsonValue(depth: 0))
                s.skipSpace()
            }
            return out
        }
    }

    /// Runs `body` on a scanner over the bytes, locating its error.
    private func scan<T>(_ body: (inout JSONScanner) throws(JSONScanError) -> T) throws(JSONError) -> T {
        let result: Result<T, JSONError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            do throws(JSONScanError) { return .success(try body(&scanner)) } catch {
                return .failure(error.located(in: buffer))
            }
        }
        return try result.get()
    }
}

extension JSONScanner {
    /// The value at `i` as a `JSONValue`: every member kept, in document order.
    mutating func jsonValue(depth: Int) throws(JSONScanError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw fail("JSON nested too deeply") }
        guard i < count else { throw fail("expected a JSON value, found end of input") }
        switch base[i] {
        case UInt8(ascii: "{"):
            var members: [(String, JSONValue)] = []
            guard !open(UInt8(ascii: "}")) else { return .object(members) }
            repeat {
                let key = try memberKey()
                members.append(
                    (stringContent(key.start, key.end, escaped: key.escaped), try jsonValue(depth: depth + 1)))
            } while try separator(UInt8(ascii: "}"))
            return .object(members)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            guard !open(UInt8(ascii: "]")) else { return .array(items) }
            repeat {
                skipSpace()
                items.append(try jsonValue(depth: depth + 1))
            } while try separator(UInt8(ascii: "]"))
            return .array(items)
        default:
            return try scalar(
                string: JSONValue.string, bool: JSONValue.bool, null: .null, integer: JSONValue.integer,
                double: JSONValue.double)
        }
    }
}
