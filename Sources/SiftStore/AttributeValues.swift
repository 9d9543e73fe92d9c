// Attribute values: what a managed object holds for each attribute type (an evaluation `Value`, so
// predicates read it without conversion), how a value the caller hands in is checked and coerced
// to its attribute's type, how it is written to and read from SQLite (dates as seconds since 2001,
// text in NFC, decimals as REAL for queries plus their exact text, transformables in the exact
// binary form `ValueCodec` writes), and the validation rules of the model (required, min/max,
// length, regular expression).

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftText

/// Why a value does not fit its attribute.
struct CoercionError: Error { var message: String }

extension Value {
    /// A value the caller hands in, read as the evaluator reads it, except that a `Decimal` stays
    /// a decimal (Foundation would bridge it to a double-valued NSNumber on the way).
    init(storing value: Any?) {
        if let value, type(of: value) == Decimal.self {
            self = .decimal(value as! Decimal)
            return
        }
        self = Value(any: value)
    }

    /// A value the caller hands in for attribute `a`: through its value transformer when it names
    /// one (the bytes made now), read as `init(storing:)` reads it otherwise.
    init(storing value: Any?, for a: ResolvedAttribute) throws(CoercionError) {
        if a.type == .transformable, let name = a.description.valueTransformerName {
            self = try AttributeTransformers.transformed(value, name)
        } else {
            self = Value(storing: value)
        }
    }

    /// `value` as a value of attribute `a`: `init(coercing:to:)`, except that an attribute with a
    /// value transformer takes its transformer's values (a scalar as the transformer's Swift type).
    init(coercing value: Value, for a: ResolvedAttribute) throws(CoercionError) {
        if a.type == .transformable, let name = a.description.valueTransformerName {
            self = try AttributeTransformers.coerced(value, name)
        } else {
            self = try Value(coercing: value, to: a.type)
        }
    }

    /// `value` as attribute `a` holds it: a collection's elements each coerced to its type (nil
    /// passes), any other attribute's value by `init(coercing:for:)`.
    init(coercing value: Value, into a: ResolvedAttribute) throws(CoercionError) {
        guard a.description.isCollection else {
            try self.init(coercing: value, for: a)
            return
        }
        self = try Value(collection: value, of: a.type)
    }

    /// `value` as a collection attribute of element type `type` holds it: an array of its elements
    /// each coerced to `type` (a set's in its order); nil passes.
    init(collection value: Value, of type: AttributeType) throws(CoercionError) {
        switch value {
        case .null: self = .null
        case .array(let xs), .set(let xs):
            var out: [Value] = []
            out.reserveCapacity(xs.count)
            for x in xs { out.append(try Value(coercing: x, to: type)) }
            self = .array(out)
        default: throw CoercionError(message: "\(value) is not a collection")
        }
    }

    /// `value` as attribute type `type`: integers checked against their width, floats rounded to
    /// Float, UUIDs and URLs as their strings, transformable values kept as they are. nil passes.
    init(coercing value: Value, to type: AttributeType) throws(CoercionError) {
        if case .null = value {
            self = .null
            return
        }
        func fail() -> CoercionError {
            CoercionError(message: "\(value) (\(value.kindName)) is not \(type.article) \(type.rawValue)")
        }
        switch type {
        case .integer16, .integer32, .integer64:
            let i: Int64
            switch value {
            case .integer(let v): i = v
            case .double(let d) where d.rounded() == d && d >= -9.223372036854776e18 && d < 9.223372036854776e18:
                i = Int64(d)
            case .decimal(let d) where NSDecimalNumber(decimal: d).int64Value.description == d.description:
                i = NSDecimalNumber(decimal: d).int64Value
            default: throw fail()
            }
            guard type.integerRange!.contains(i) else {
                throw CoercionError(message: "\(i) does not fit in a \(type.rawValue)")
            }
            self = .integer(i)
        case .double, .float:
            let d: Double
            switch value {
            case .integer(let v): d = Double(v)
            case .double(let v): d = v
            case .decimal(let v): d = NSDecimalNumber(decimal: v).doubleValue
            default: throw fail()
            }
            self = .double(type == .float ? Double(Float(d)) : d)
        case .decimal:
            switch value {
            case .integer(let v): self = .decimal(Decimal(v))
            case .double(let v):
                guard v.isFinite else { throw fail() }
                self = .decimal(Decimal(string: "\(v)") ?? Decimal(v))
            case .decimal: self = value
            default: throw fail()
            }
        case .string:
            guard case .string = value else { throw fail() }
            self = value
        case .boolean:
            guard case .bool = value else { throw fail() }
            self = value
        case .date:
            guard case .date = value else { throw fail() }
            self = value
        case .binary:
            guard case .data = value else { throw fail() }
            self = value
        case .uuid:
            guard case .string(let s) = value, let u = UUID(uuidString: s) else { throw fail() }
            self = .string(u.uuidString)
        case .uri:
            guard case .string(let s) = value, let u = URL(string: s), u.scheme != nil else { throw fail() }
            self = .string(u.absoluteString)
        case .dynamic:
            switch value {
            case .integer, .double, .string: self = value
            default:
                throw CoercionError(
                    message:
                        "\(value) (\(value.kindName)) cannot be stored in a dynamic attribute (integers, doubles and strings only; use transformable)"
                )
            }
        case .transformable, .mixed:
            // A mixed value's shape is checked at save, against the attribute's declared shapes.
            self = try TransformableCodec.normalized(value)
        }
    }
}

/// Reading and writing attribute values as SQLite values.
enum ColumnCodec {
    /// The SQLite value of an attribute value (non-collection).
    static func encode(_ v: Value, _ type: AttributeType) -> SQLValue {
        // A transformable keeps every value in its exact binary form, scalars included (so "123"
        // stays a string and 1.0 a double).
        if type == .transformable || type == .mixed {
            // A value transformer's value: the bytes it made, exactly.
            if case .object(let t as TransformedValue) = v { return .blob([UInt8](t.data)) }
            return v.isNull ? .null : .blob(TransformableCodec.encode(v))
        }
        switch v {
        case .null: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .integer(let i): return .integer(i)
        case .double(let d): return d.isNaN ? .null : .double(d)
        case .decimal(let d): return .double(NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s): return .text(TextFolding.nfc(s))
        case .date(let d): return .double(d.timeIntervalSinceReferenceDate)
        case .data(let d): return .blob([UInt8](d))
        default:
            return .null
        }
    }

    /// Binds `encode(v.pointee, type)` to parameter `position` of `s`. The kinds a row mostly holds are
    /// bound straight from the value: a bulk save binds every column of every row, and making,
    /// switching on and destroying a `SQLValue` for each cost as much as the bind itself.
    @inline(__always)
    static func bind(_ v: UnsafePointer<Value>, _ type: AttributeType, to s: SQLiteStatement, at position: Int)
        throws(SQLiteError)
    {
        // No `where` clauses: a guarded pattern makes the switch copy the whole value first.
        guard type != .transformable && type != .mixed else {
            try s.bind(encode(v.pointee, type), at: position)
            return
        }
        switch v.pointee {
        case .null: try s.bindNull(at: position)
        case .bool(let b): try s.bind(int64: b ? 1 : 0, at: position)
        case .integer(let i): try s.bind(int64: i, at: position)
        case .double(let d): if d.isNaN { try s.bindNull(at: position) } else { try s.bind(double: d, at: position) }
        case .string(let t): try s.bind(text: TextFolding.nfc(t), at: position)
        case .date(let d): try s.bind(double: d.timeIntervalSinceReferenceDate, at: position)
        default: try s.bind(encode(v.pointee, type), at: position)
        }
    }

    /// A UUID as the 16 bytes Core Data's stores keep (NULL for nil).
    static func uuidBytes(_ v: Value) -> SQLValue {
        guard case .string(let s) = v, let u = UUID(uuidString: s) else { return .null }
        return .blob(withUnsafeBytes(of: u.uuid) { [UInt8]($0) })
    }

    /// The exact text of a decimal (beside its REAL column).
    static func exactText(_ v: Value) -> SQLValue {
        if case .decimal(let d) = v { return .text(d.description) }
        return .null
    }

    /// The attribute value of a SQLite value.
    static func decode(_ s: SQLValue, _ type: AttributeType, exact: SQLValue = .null) -> Value {
        if case .null = s { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .integer(let i) = s { return .integer(i) }
        case .double, .float:
            if case .double(let d) = s { return .double(d) }
            if case .integer(let i) = s { return .double(Double(i)) }
        case .decimal:
            if case .text(let t) = exact, let d = Decimal(string: t) { return .decimal(d) }
            if case .double(let d) = s { return .decimal(Decimal(d)) }
            // A whole number in a DECIMAL column (Core Data's), which SQLite keeps as an integer.
            if case .integer(let i) = s { return .decimal(Decimal(i)) }
        case .string, .uuid, .uri:
            if case .text(let t) = s { return .string(t) }
            // Core Data's stores keep a UUID as its 16 bytes.
            if type == .uuid, case .blob(let b) = s, b.count == 16 {
                return .string(
                    UUID(
                        uuid: (
                            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                            b[14], b[15]
                        )
                    ).uuidString)
            }
        case .boolean:
            if case .integer(let i) = s { return .bool(i != 0) }
        case .date:
            if case .double(let d) = s { return .date(Date(timeIntervalSinceReferenceDate: d)) }
            if case .integer(let i) = s { return .date(Date(timeIntervalSinceReferenceDate: Double(i))) }
        case .binary:
            if case .blob(let b) = s { return .data(Data(b)) }
        case .dynamic:
            switch s {
            case .integer(let i): return .integer(i)
            case .double(let d): return .double(d)
            case .text(let t): return .string(t)
            default: break
            }
        case .transformable, .mixed:
            if case .blob(let b) = s { return TransformableCodec.decode(b) }
            // TEXT is never the binary form: JSON another program wrote.
            if case .text(let t) = s { return TransformableCodec.decodeJSON(Array(t.utf8)) }
        }
        // A value another program wrote with the wrong storage class: read it as it is.
        switch s {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .text(let t): return .string(t)
        case .blob(let b): return .data(Data(b))
        }
    }
}

/// Transformable (and mixed) attribute values as their column keeps them: `ValueCodec`'s binary
/// form, which keeps every kind apart (an integer 1 and a double 1.0, NaN, dates, data, decimals).
/// Stores written before kept them as JSON text (dates as `{"$date": seconds since 1970}`, data as
/// `{"$data": base64}`); those still read as they always did. The two cannot be confused: JSON
/// starts with a printable byte, the binary form with a tag from 0 to 10, and JSON text never reads
/// as the binary form (its first 8 bytes after the tag, read as a length, run past the end).
enum TransformableCodec {
    /// A value with the shapes the column can keep: sets become arrays, objects their dictionaries.
    /// A value only reflection could read (neither `Encodable` nor `KeyValueCoding`) is refused,
    /// not stored as the dictionary of its stored properties; so is a value transformer's value
    /// whose object is such a value (an attribute without a transformer keeps `Codable` values).
    static func normalized(_ v: Value) throws(CoercionError) -> Value {
        if case .object(let o) = v {
            if let t = o as? TransformedValue { return try normalized(Value(storing: t.object)) }
            if let m = o as? MirrorObject {
                let subject = type(of: m.subject)
                let why =
                    m.subject is any Encodable
                    ? "its encoding failed" : "it is neither Encodable nor KeyValueCoding"
                throw CoercionError(
                    message:
                        "a \(subject) cannot be stored: \(why), and the attribute names no value transformer (valueTransformerName)"
                )
            }
        }
        switch v {
        case .null, .bool, .integer, .double, .decimal, .string, .date, .data: return v
        case .array(let a), .set(let a):
            var out: [Value] = []
            for e in a { out.append(try normalized(e)) }
            return .array(out)
        case .dictionary(let d):
            var out: [String: Value] = [:]
            for (k, e) in d { out[k] = try normalized(e) }
            return .dictionary(out)
        case .object(let o):
            guard let d = o.dictionaryValue else {
                throw CoercionError(
                    message:
                        "a \(type(of: o)) cannot be stored: it lists no keys (KeyValueCoding's dictionaryValue), and the attribute names no value transformer (valueTransformerName)"
                )
            }
            return try normalized(.dictionary(d))
        }
    }

    /// The column's bytes for `v`.
    static func encode(_ v: Value) -> [UInt8] { ValueCodec.encode(v) }

    /// The value of a column's bytes, in either form; nil for bytes neither form reads (a
    /// damaged file), as before the binary form.
    static func decode(_ bytes: [UInt8]) -> Value {
        if let first = bytes.first, ValueCodec.Tag(rawValue: first) != nil, let v = try? ValueCodec.decode(bytes) {
            return v
        }
        return decodeJSON(bytes)
    }

    /// The value of the JSON text stores kept before the binary form (or another program wrote
    /// as TEXT), read as it always was.
    static func decodeJSON(_ bytes: [UInt8]) -> Value {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return .null
        }
        return fromFoundation(object)
    }

    static func fromFoundation(_ o: Any) -> Value {
        if let d = o as? [String: Any] {
            if d.count == 1, let s = d["$date"] as? NSNumber {
                return .date(Date(timeIntervalSince1970: s.doubleValue))
            }
            if d.count == 1, let s = d["$data"] as? String, let data = Data(base64Encoded: s) { return .data(data) }
            return .dictionary(d.mapValues(fromFoundation))
        }
        if let a = o as? [Any] { return .array(a.map(fromFoundation)) }
        return Value(any: o)
    }

    /// `v` as JSON for `JSONDecoder` (`ManagedObject.get(_:as:)` with a `Decodable` type) and for
    /// history tombstones: dates as `{"$date": seconds since 1970}`, data as `{"$data": base64}`
    /// (a value transformer's value as its bytes), NaN and infinities as null.
    static func json(_ v: Value) -> Data {
        // Fragments (a bare string or number) are allowed; every value `foundation` makes is JSON-safe.
        (try? JSONSerialization.data(withJSONObject: foundation(v), options: [.fragmentsAllowed, .sortedKeys]))
            ?? Data("null".utf8)
    }

    static func foundation(_ v: Value) -> Any {
        switch v {
        case .null: return NSNull()
        case .bool(let b): return b
        case .integer(let i): return i
        case .double(let d): return d.isFinite ? d as Any : NSNull()
        case .decimal(let d): return NSDecimalNumber(decimal: d)
        case .string(let s): return s
        case .date(let d): return ["$date": d.timeIntervalSince1970]
        case .data(let d): return ["$data": d.base64EncodedString()]
        case .array(let a), .set(let a): return a.map(foundation)
        case .dictionary(let d): return d.mapValues(foundation)
        case .object(let t as TransformedValue): return ["$data": t.data.base64EncodedString()]
        case .object(let o): return o.dictionaryValue.map { foundation(.dictionary($0)) } ?? NSNull()
        }
    }
}

/// A mixed attribute's value stored per shape: its tag, and the value in the column of its shape
/// (the exact value goes to the attribute's own column, the elements of an array to its table).
enum MixedCodec {
    /// The tag of `v`'s shape, or nil when it has none of these (or is nil).
    static func tag(_ v: Value) -> Int64? {
        switch v {
        case .bool, .integer, .double, .string: MixedStorage.scalarTag
        case .date: MixedStorage.dateTag
        case .array, .set: MixedStorage.arrayTag
        default: nil
        }
    }

    /// Why `v` is not one of `shapes`, or nil when it is (nil values always are).
    static func problem(_ v: Value, _ shapes: MixedShapes) -> String? {
        if case .null = v { return nil }
        let allowed = [
            shapes.scalar ? "scalars" : nil, shapes.date ? "dates" : nil,
            shapes.array.map { "arrays of \($0 == .date ? "dates" : "scalars")" },
        ].compactMap { $0 }
        let refused = "\(v) (\(v.kindName)) is not one of the attribute's shapes (\(allowed.joined(separator: ", ")))"
        switch tag(v) {
        case MixedStorage.scalarTag?: return shapes.scalar ? nil : refused
        case MixedStorage.dateTag?: return shapes.date ? nil : refused
        case MixedStorage.arrayTag?:
            guard let elements = shapes.array, case .array(let xs) = v else { return refused }
            let want = elements == .date ? MixedStorage.dateTag : MixedStorage.scalarTag
            for x in xs where !x.isNull && tag(x) != want { return "element \(x): \(refused)" }
            return nil
        default: return refused
        }
    }

    /// The shape, scalar, date and count cells of a valid value (`columns` as `EntityInfo.mixedColumns`).
    static func cells(_ v: Value, _ columns: [Int?], into row: inout [SQLValue]) {
        let tag = tag(v)
        for c in columns.compactMap({ $0 }) { row[c] = .null }
        if let shape = columns[0], let tag { row[shape] = .integer(tag) }
        switch (tag, v) {
        case (MixedStorage.scalarTag?, _): if let c = columns[1] { row[c] = ColumnCodec.encode(v, .dynamic) }
        case (MixedStorage.dateTag?, _): if let c = columns[2] { row[c] = ColumnCodec.encode(v, .date) }
        case (MixedStorage.arrayTag?, .array(let xs)): if let c = columns[3] { row[c] = .integer(Int64(xs.count)) }
        default: break
        }
    }

    /// One array element as its table stores it.
    static func element(_ x: Value, _ m: MixedStorage) -> SQLValue {
        ColumnCodec.encode(x, m.shapes.array == .date ? .date : .dynamic)
    }
}

/// The model's validation rules for one attribute.
enum AttributeValidation {
    static func regex(_ pattern: String) throws(TextError) -> RegexPattern {
        try RegexPattern.compile(pattern, [])
    }

    /// The broken rule, or nil when `v` is valid for `a`: its words and which rule it is.
    static func problem(_ v: Value, _ a: ResolvedAttribute, regex: RegexPattern?) -> Problem? {
        let d = a.description
        if case .null = v { return d.isOptional ? nil : ("is required", .required) }
        if let shapes = a.mixed?.shapes { return MixedCodec.problem(v, shapes).map { ($0, .type) } }
        if d.isCollection {
            guard case .array(let elements) = v else { return nil }
            for e in elements where !e.isNull {
                if let p = problem(scalar: e, d, regex: regex) { return ("element \(e): \(p.message)", p.constraint) }
            }
            return nil
        }
        return problem(scalar: v, d, regex: regex)
    }

    /// The words of a broken rule and the rule.
    typealias Problem = (message: String, constraint: StoreError.Constraint)

    /// The rule a single value `v` breaks (bounds, length, pattern), if any.
    static func problem(scalar v: Value, _ d: AttributeDescription, regex: RegexPattern?) -> Problem? {
        if d.minValue != nil || d.maxValue != nil {
            let x: Double
            switch v {
            case .integer(let i): x = Double(i)
            case .double(let f): x = f
            case .decimal(let dec): x = NSDecimalNumber(decimal: dec).doubleValue
            default: return nil
            }
            if let lo = d.minValue, !(x >= lo) { return ("\(v) is below the minimum \(lo)", .minValue) }
            if let hi = d.maxValue, !(x <= hi) { return ("\(v) is above the maximum \(hi)", .maxValue) }
        }
        if d.minLength != nil || d.maxLength != nil {
            let n: Int
            switch v {
            case .string(let s): n = s.count
            case .data(let b): n = b.count
            default: return nil
            }
            if let lo = d.minLength, n < lo { return ("length \(n) is below the minimum length \(lo)", .minLength) }
            if let hi = d.maxLength, n > hi { return ("length \(n) is above the maximum length \(hi)", .maxLength) }
        }
        if let regex, case .string(let s) = v {
            do {
                if try !regex.matches(s) {
                    return (
                        "\(v) does not match the regular expression \"\(d.regularExpression ?? "")\"",
                        .regularExpression
                    )
                }
            } catch {
                return ("the regular expression \"\(d.regularExpression ?? "")\" failed: \(error)", .regularExpression)
            }
        }
        return nil
    }
}
