// A JSON document as a value: Sift's conventions keep what JSONSerialization loses (a number written
// without '.' or an exponent is an integer, anything else a Double; `{"$date": seconds}` is a Date;
// object members stay in document order, duplicates included), and its compact text.

import Foundation
import SiftSyntax

/// A parsed JSON value, as ``JSONReader`` reads it.
///
/// ```swift
/// let v = try JSONReader.parse(#"{"name": "Ann", "age": 40, "born": {"$date": 0}}"#)
/// v.text      // {"name":"Ann","age":40,"born":{"$date":0}}
/// v.value     // the dictionary a predicate evaluates against (born is a Date)
/// ```
public indirect enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without `.` or an exponent that fits 64 bits, such as `40` or `-7`.
    case integer(Int64)
    /// Any other number, such as `1.0`, `2e3`, or an integer too large for 64 bits.
    case double(Double)
    /// A string, its escapes decoded.
    case string(String)
    /// An array, elements in document order.
    case array([JSONValue])
    /// An object: its members as (key, value) pairs in document order, duplicate keys included.
    case object([(String, JSONValue)])

    /// Equal kinds with equal contents (members compared in order); `1` and `1.0` differ.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// Hashes the kind's contents, consistently with `==`.
    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .integer(let i): h.combine(i)
        case .double(let d): h.combine(d)
        case .string(let s): h.combine(s)
        case .array(let a): h.combine(a)
        case .object(let o):
            for (k, v) in o {
                h.combine(k)
                h.combine(v)
            }
        }
    }

    /// The constant this JSON stands for, following the tool's argument conventions: the constant
    /// of its ``value`` (which a JSON document always has: it holds no objects, only dictionaries).
    public var literal: LiteralValue {
        guard let literal = value.literal else {
            preconditionFailure("a JSON value converts to values that all have a literal form")
        }
        return literal
    }
}

/// A JSON syntax error with its 1-based line and column.
///
/// ```swift
/// do { _ = try JSONReader.parse("[1,,2]") } catch {
///     print(error.location)   // 1:4
///     print(error)            // 1:4: error: unexpected ',' where a JSON value was expected
/// }
/// ```
public struct JSONError: SiftError, Hashable {
    /// The one kind: the text is not JSON.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A byte where the JSON grammar allows none, or text cut short.
        case invalidJSON = "invalid-json"
    }

    /// Always ``Kind/invalidJSON``.
    public var kind: Kind { .invalidJSON }
    /// `invalid-json`.
    public var id: String { kind.rawValue }
    /// What is wrong.
    public var message: String
    /// The 1-based line and column of the offending byte (columns counted in Unicode scalars).
    public var location: SourceLocation

    /// An error at `location`.
    public init(message: String, location: SourceLocation) {
        self.message = message
        self.location = location
    }

    /// An error at `line` and `column` (what the scanner counts).
    init(message: String, line: Int, column: Int) {
        self.init(message: message, location: SourceLocation(line: line, column: column))
    }

    /// `line:column: error: message`.
    public var description: String { "\(location): error: \(message)" }
}

extension JSONValue {
    /// Compact JSON text.
    public var text: String {
        var s = ""
        write(into: &s)
        return s
    }

    /// Appends the compact JSON text to `s` (doubles with a fraction or exponent, so they read back
    /// as doubles; non-finite doubles as `null`).
    public func write(into s: inout String) {
        switch self {
        case .null: s += "null"
        case .bool(let b): s += b ? "true" : "false"
        case .integer(let i): s += String(i)
        case .double(let d):
            s += d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)") : "null"
        case .string(let str): JSONValue.quote(str, into: &s)
        case .array(let a):
            s += "["
            for (n, x) in a.enumerated() {
                if n > 0 { s += "," }
                x.write(into: &s)
            }
            s += "]"
        case .object(let o):
            s += "{"
            for (n, (k, v)) in o.enumerated() {
                if n > 0 { s += "," }
                JSONValue.quote(k, into: &s)
                s += ":"
                v.write(into: &s)
            }
            s += "}"
        }
    }

    /// Appends `str` as a JSON string literal to `s`.
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
