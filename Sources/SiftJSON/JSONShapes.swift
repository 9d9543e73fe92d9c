// The one shape inference over JSON records: every record (and every nested object and array
// element) is walked once and the kinds each key takes are merged, with the first record each kind
// was seen in. The store derives both of its readings of JSON from it: the managed object model
// `sift store infer-model` writes (SiftStore's ModelInference) and the document tables SQL queries
// records through (SiftStore's DocumentInference).

import Foundation

/// One kind of JSON value, as the inference tells them apart.
package enum JSONKind: Hashable {
    case boolean, integer, double, string, date, object, array

    /// The kind of a non-null value (`{"$date": seconds}` is a date, not an object).
    package init?(_ v: JSONValue) {
        switch v {
        case .null: return nil
        case .bool: self = .boolean
        case .integer: self = .integer
        case .double: self = .double
        case .string: self = .string
        case .array: self = .array
        case .object: self = v.date != nil ? .date : .object
        }
    }

    /// The plural used in notes ("integers in some records, strings in others").
    package var plural: String {
        switch self {
        case .boolean: "booleans"
        case .integer: "integers"
        case .double: "non-integer numbers"
        case .string: "strings"
        case .date: "dates"
        case .object: "objects"
        case .array: "arrays"
        }
    }
}

/// The merged shape of one key (or of the elements of the arrays a key holds).
package final class FieldShape {
    /// Each kind seen, with the first record it was seen in, in order of first appearance.
    package var kinds: [(kind: JSONKind, record: Int)] = []
    /// The first record where the key was null or absent (for elements: a null element).
    package var nilRecord: Int?
    /// The merged shape of the objects seen.
    package var object: ObjectShape?
    /// The merged shape of the elements of the arrays seen.
    package var elements: FieldShape?

    package init() {}

    package func kindSet() -> Set<JSONKind> { Set(kinds.map(\.kind)) }

    package func merge(_ v: JSONValue, record: Int) {
        guard let kind = JSONKind(v) else {
            if nilRecord == nil { nilRecord = record }
            return
        }
        if !kinds.contains(where: { $0.kind == kind }) { kinds.append((kind, record)) }
        switch v {
        case .object(let members) where kind == .object:
            let o = object ?? ObjectShape()
            object = o
            o.merge(members, record: record)
        case .array(let items):
            let e = elements ?? FieldShape()
            elements = e
            for item in items { e.merge(item, record: record) }
        default:
            break
        }
    }
}

/// The merged shape of the objects found at one place in the records.
package final class ObjectShape {
    /// Keys in order of first appearance.
    package var keys: [String] = []
    package var fields: [String: FieldShape] = [:]
    /// The record of the first object merged (nil until one is).
    package var firstRecord: Int?

    package init() {}

    package func merge(_ members: [(String, JSONValue)], record: Int) {
        let unique = JSONValue.uniqueMembers(members)
        let last = Dictionary(uniqueKeysWithValues: unique)
        for (k, _) in unique {
            let f: FieldShape
            if let existing = fields[k] {
                f = existing
            } else {
                f = FieldShape()
                fields[k] = f
                keys.append(k)
                // Objects merged before this one did not have the key; the first of them is
                // the record to name.
                if let firstRecord { f.nilRecord = firstRecord }
            }
            f.merge(last[k]!, record: record)
        }
        for k in keys where last[k] == nil {
            let f = fields[k]!
            if f.nilRecord == nil { f.nilRecord = record }
        }
        if firstRecord == nil { firstRecord = record }
    }
}
