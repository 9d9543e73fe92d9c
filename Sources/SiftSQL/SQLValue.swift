// The values that cross into SQL: the five storage classes SQLite (and, for the shapes Sift uses,
// PostgreSQL) knows. The lowering turns every constant of a predicate into one of these, encoded
// the way the schema stores the attribute it is compared with, and never splices one into text.

/// A value bound to a statement parameter, or read back from a result column.
///
/// ```swift
/// let q = try SQLLowering(schema: schema, entity: "Person").select(predicate)
/// q.bindings  // [.integer(30), .text("jo")]
/// ```
public enum SQLValue: Hashable, Sendable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A REAL.
    case double(Double)
    /// TEXT.
    case text(String)
    /// A BLOB.
    case blob([UInt8])

    /// The value as an SQL literal (`NULL`, `42`, `'it''s'`, `X'0aff'`), for logs.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let i): String(i)
        case .double(let d): String(d)
        case .text(let s): "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let b): "X'" + Self.hex(b) + "'"
        }
    }

    /// Bytes as lower-case hexadecimal, two digits each (`[0x0a, 0xff]` → `"0aff"`).
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
