// JSON documents as the values predicates evaluate against, with the tool's conventions: integers
// stay integers, other numbers are Double, `{"$date": seconds since 1970}` is a Date, and null is
// nil. Every command that reads data (filter, batch, the corpus runner) converts through here.

import Foundation
import SiftEvaluation

extension JSONValue {
    /// The evaluation value of this JSON document.
    public var value: Value {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(\.value))
        case .object(let o):
            if let date { return .date(date) }
            var d: [String: Value] = [:]
            d.reserveCapacity(o.count)
            for (k, v) in o { d[k] = v.value }
            return .dictionary(d)
        }
    }

    /// The date of `{"$date": seconds since 1970}`, the tool's one date convention.
    public var date: Date? {
        guard case .object(let o) = self, o.count == 1, o[0].0 == "$date" else { return nil }
        switch o[0].1 {
        case .integer(let i): return Date(timeIntervalSince1970: Double(i))
        case .double(let d): return Date(timeIntervalSince1970: d)
        default: return nil
        }
    }
}

extension JSONValue {
    /// An object's members as predicates read them: one per key, a duplicate key's last value
    /// winning (as it does in `value`), each key where it first appears.
    ///
    /// ```swift
    /// JSONValue.uniqueMembers([("a", .integer(1)), ("b", .null), ("a", .integer(2))])
    /// // [("a", .integer(2)), ("b", .null)]
    /// ```
    public static func uniqueMembers(_ members: [(String, JSONValue)]) -> [(String, JSONValue)] {
        var position: [String: Int] = [:]
        var out: [(String, JSONValue)] = []
        out.reserveCapacity(members.count)
        for (key, value) in members {
            if let i = position[key] {
                out[i].1 = value
            } else {
                position[key] = out.count
                out.append((key, value))
            }
        }
        return out
    }
}
