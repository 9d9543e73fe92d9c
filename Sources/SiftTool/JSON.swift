// A small, strict JSON reader for command-line arguments and data files. Unlike JSONSerialization
// it keeps the distinction the tool's conventions need: a number written without '.' or an
// exponent is an integer, anything else a Double; `{"$date": seconds}` is a Date.

import Foundation
import SiftSyntax

/// A parsed JSON value.
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Keys in document order.
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.integer(x), .integer(y)): x == y
        case let (.double(x), .double(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .integer(let i): h.combine(i)
        case .double(let d): h.combine(d)
        case .string(let s): h.combine(s)
        case .array(let a): h.combine(a)
        case .object(let o): for (k, v) in o { h.combine(k); h.combine(v) }
        }
    }

    /// The constant this JSON stands for, following the tool's argument conventions.
    public var literal: LiteralValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.literal))
        case .object(let o):
            if let date { return .date(date) }
            var d: [String: LiteralValue] = [:]
            for (k, v) in o { d[k] = v.literal }
            return .dictionary(d)
        }
    }
}

/// A JSON syntax error with its 1-based line and column.
public struct JSONError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public var line: Int
    public var column: Int
    public var description: String { "\(line):\(column): error: \(message)" }
}

public struct JSONReader {
    private let bytes: [UInt8]
    private var i = 0
    private static let maximumDepth = 512

    public init(_ text: String) { bytes = Array(text.utf8) }
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses exactly one JSON value (surrounding whitespace allowed).
    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        var r = JSONReader(text)
        return try r.parseDocument()
    }

    public mutating func parseDocument() throws(JSONError) -> JSONValue {
        skip()
        let v = try value(depth: 0)
        skip()
        if i < bytes.count { throw fail("unexpected '\(char(i))' after the JSON value") }
        return v
    }

    /// Parses a sequence of whitespace-separated values (NDJSON, or concatenated JSON).
    public mutating func parseSequence() throws(JSONError) -> [JSONValue] {
        var out: [JSONValue] = []
        skip()
        while i < bytes.count {
            out.append(try value(depth: 0))
            skip()
        }
        return out
    }

    private func char(_ j: Int) -> String {
        guard j < bytes.count else { return "end of input" }
        var k = j + 1
        while k < bytes.count, bytes[k] & 0xC0 == 0x80 { k += 1 }
        return String(decoding: bytes[j..<k], as: UTF8.self)
    }

    private func fail(_ message: String) -> JSONError {
        var line = 1, col = 1, j = 0
        while j < Swift.min(i, bytes.count) {
            if bytes[j] == 0x0A { line += 1; col = 1 } else if bytes[j] & 0xC0 != 0x80 { col += 1 }
            j += 1
        }
        return JSONError(message: message, line: line, column: col)
    }

    private mutating func skip() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    private mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw fail("JSON nested too deeply") }
        guard i < bytes.count else { throw fail("expected a JSON value, found end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [(String, JSONValue)] = []
            skip()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skip()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key, found '\(char(i))'") }
                let k = try string()
                skip()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':', found '\(char(i))'") }
                i += 1
                skip()
                members.append((k, try value(depth: depth + 1)))
                skip()
                guard i < bytes.count else { throw fail("expected ',' or '}', found end of input") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                throw fail("expected ',' or '}', found '\(char(i))'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skip()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skip()
                items.append(try value(depth: depth + 1))
                skip()
                guard i < bytes.count else { throw fail("expected ',' or ']', found end of input") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail("expected ',' or ']', found '\(char(i))'")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): return try word("true", .bool(true))
        case UInt8(ascii: "f"): return try word("false", .bool(false))
        case UInt8(ascii: "n"): return try word("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected '\(char(i))' where a JSON value was expected")
        }
    }

    private mutating func word(_ w: String, _ v: JSONValue) throws(JSONError) -> JSONValue {
        let u = Array(w.utf8)
        guard i + u.count <= bytes.count, Array(bytes[i..<i + u.count]) == u else { throw fail("unexpected '\(char(i))' where a JSON value was expected") }
        i += u.count
        return v
    }

    private mutating func number() throws(JSONError) -> JSONValue {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits() -> Int { let s = i; while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }; return i - s }
        guard digits() > 0 else { throw fail("invalid number") }
        var isInteger = true
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1; isInteger = false
            guard digits() > 0 else { throw fail("invalid number") }
        }
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1; isInteger = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw fail("invalid number") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .integer(v) }
        guard let d = Double(text) else { throw fail("invalid number '\(text)'") }
        return .double(d)
    }

    private mutating func string() throws(JSONError) -> String {
        let open = i
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { i = open; throw fail("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") { i += 1; return String(decoding: out, as: UTF8.self) }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated string") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var v = try hex4()
                if v >= 0xD800 && v < 0xDC00 {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw fail("unpaired surrogate in string") }
                    i += 2
                    let lo = try hex4()
                    guard lo >= 0xDC00 && lo < 0xE000 else { throw fail("unpaired surrogate in string") }
                    v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                }
                guard let s = Unicode.Scalar(v) else { throw fail("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(s)).utf8))
            default: throw fail("invalid escape '\\\(char(i - 1))'")
            }
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard i < bytes.count else { throw fail("invalid \\u escape") }
            let c = bytes[i] | 0x20
            let d: UInt32
            if c >= 0x30 && c <= 0x39 { d = UInt32(c - 0x30) } else if c >= 0x61 && c <= 0x66 { d = UInt32(c - 0x61 + 10) } else { throw fail("invalid \\u escape") }
            v = v * 16 + d
            i += 1
        }
        return v
    }
}

extension JSONValue {
    /// Compact JSON text.
    public var text: String {
        var s = ""
        write(into: &s)
        return s
    }

    public func write(into s: inout String) {
        switch self {
        case .null: s += "null"
        case .bool(let b): s += b ? "true" : "false"
        case .integer(let i): s += String(i)
        case .double(let d): s += d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)") : "null"
        case .string(let str): JSONValue.quote(str, into: &s)
        case .array(let a):
            s += "["
            for (n, x) in a.enumerated() { if n > 0 { s += "," }; x.write(into: &s) }
            s += "]"
        case .object(let o):
            s += "{"
            for (n, (k, v)) in o.enumerated() { if n > 0 { s += "," }; JSONValue.quote(k, into: &s); s += ":"; v.write(into: &s) }
            s += "}"
        }
    }

    public static func quote(_ str: String, into s: inout String) {
        s += "\""
        for u in str.unicodeScalars {
            switch u {
            case "\"": s += "\\\""
            case "\\": s += "\\\\"
            case "\n": s += "\\n"
            case "\r": s += "\\r"
            case "\t": s += "\\t"
            default:
                if u.value < 0x20 { s += String(format: "\\u%04x", u.value) } else { s.unicodeScalars.append(u) }
            }
        }
        s += "\""
    }
}
