// How predicates read keys from user values: the `KeyValueCoding` protocol, the conversion of any
// Swift or Foundation value into a `Value`, and the key lookup rules KVC gives Apple's predicates
// (a key on a dictionary is a lookup that answers nil when missing, a key on an array maps over its
// elements, a key on nil is nil). Conformances ship for `[String: Any]`-style dictionaries,
// Foundation JSON, `Encodable` values (through `ValueEncoder`) and, as a last resort, `Mirror`.

import Foundation
import SiftSyntax

/// A value predicates read keys of: ``value(forKey:)`` per object. ``KeyValueCoding`` adds typed
/// readers; a class that is subclassed (a non-final class cannot hand out `KeyReader<Self>`)
/// conforms to this alone, and its subclasses' objects are read through `value(forKey:)`.
///
/// ```swift
/// class Shape: KeyValueReading {
///     func value(forKey key: String) throws -> Value { key == "sides" ? .integer(4) : .null }
/// }
/// try SiftPredicate("sides == 4").evaluate(with: Shape())   // true
/// ```
public protocol KeyValueReading: SendableMetatype {
    /// The value for `key`: `.null` when the value is nil, or throw
    /// ``KeyValueCodingError/unknownKey(_:in:)`` when the type has no such key.
    func value(forKey key: String) throws -> Value

    /// The whole content as a dictionary, when the type can list it (used for `==` between
    /// objects and for `@count`). The default is nil.
    var dictionaryValue: [String: Value]? { get }
}

extension KeyValueReading {
    /// No dictionary form by default.
    public var dictionaryValue: [String: Value]? { nil }
}

/// A type that answers keys for predicates, like Key-Value Coding on Apple platforms.
///
/// Conform your own types for the fastest evaluation; `Encodable` types and plain structs work
/// without any code, through encoding or reflection. Implement either method: ``reader(forKey:)``
/// (typed, resolved once per key when a predicate is compiled for the type; the fast one) or
/// ``value(forKey:)`` (asked per object); each has a default written in terms of the other.
///
/// ```swift
/// struct Person: KeyValueCoding {
///     var name: String, age: Int
///     static func reader(forKey key: String) -> KeyReader<Person>? {
///         switch key {
///         case "name": .string { $0.name }
///         case "age": .integer { $0.age }
///         default: nil
///         }
///     }
/// }
/// try SiftPredicate("age > 30").evaluate(with: Person(name: "Ann", age: 41))   // true
/// let adults = try SiftPredicate("age >= 18").compiled(for: Person.self)      // for many objects
/// ```
///
/// The type itself (its metatype) must be shareable between threads, because a compiled predicate
/// keeps the type's readers and is `Sendable`; only a type whose conformance is isolated to an actor
/// fails that, and such a type cannot be evaluated off that actor anyway.
public protocol KeyValueCoding: KeyValueReading {
    /// The value for `key`: `.null` when the value is nil, or throw
    /// ``KeyValueCodingError/unknownKey(_:in:)`` when the type has no such key. The default asks
    /// ``reader(forKey:)``.
    func value(forKey key: String) throws -> Value

    /// A reader for `key`, asked once per key when a predicate is compiled for this type, or nil
    /// to read the key through ``value(forKey:)`` instead (which reports an unknown key when the
    /// predicate is evaluated, as Apple's predicates raise then). The default is nil.
    static func reader(forKey key: String) -> KeyReader<Self>?

    /// The whole content as a dictionary, when the type can list it (used for `==` between
    /// objects and for `@count`). The default is nil.
    var dictionaryValue: [String: Value]? { get }
}

extension KeyValueCoding {
    /// No typed readers by default: keys are read through ``KeyValueCoding/value(forKey:)``.
    public static func reader(forKey key: String) -> KeyReader<Self>? { nil }

    /// Reads `key` through ``KeyValueCoding/reader(forKey:)``; a key without a reader throws ``KeyValueCodingError/unknownKey(_:in:)``.
    public func value(forKey key: String) throws -> Value {
        guard let reader = Self.reader(forKey: key) else {
            throw KeyValueCodingError.unknownKey(key, in: String(describing: Self.self))
        }
        return try reader.value(of: self)
    }
}

/// Why a key could not be read: the evaluator reports it as an
/// ``EvaluationErrorKind/unknownKey(key:type:)`` error at the key in the predicate.
///
/// ```swift
/// struct Point: KeyValueCoding {
///     var x = 1.0
///     func value(forKey key: String) throws -> Value {
///         guard key == "x" else { throw KeyValueCodingError.unknownKey(key, in: "Point") }
///         return .double(x)
///     }
/// }
/// // try SiftPredicate("y > 0").evaluate(with: Point()) raises: Point has no key 'y'
/// ```
public struct KeyValueCodingError: SiftError, Hashable {
    /// What could not be read.
    public enum Kind: Hashable, Sendable {
        /// The type (named as the message names it) has no property or key of that name.
        case unknownKey(key: String, type: String)
    }

    /// What could not be read.
    public var kind: Kind
    /// `unknown-key`, as the evaluator's error for it.
    public var id: String { "unknown-key" }
    /// `Point has no key 'y'`.
    public var message: String {
        switch kind {
        case .unknownKey(let key, let type): "\(type) has no key '\(key)'"
        }
    }
    /// The message.
    public var description: String { message }

    /// An error of `kind`.
    public init(_ kind: Kind) { self.kind = kind }

    /// The error for a type (`type` names it) without the property or key `key`.
    public static func unknownKey(_ key: String, in type: String) -> KeyValueCodingError {
        KeyValueCodingError(.unknownKey(key: key, type: type))
    }
}

// MARK: - Dictionaries

/// Dictionaries with string keys are read by key (see the ``KeyValueCoding`` conformance).
extension Dictionary: KeyValueReading where Key == String {}

/// Dictionaries with string keys answer keys by lookup, as `NSDictionary`'s `valueForKey:` does.
extension Dictionary: KeyValueCoding where Key == String {
    /// A missing key is nil, as `valueForKey:` on an NSDictionary answers.
    public func value(forKey key: String) throws -> SiftEvaluation.Value {
        guard let v = self[key] else { return .null }
        return SiftEvaluation.Value(any: v)
    }

    /// The dictionary's values, each converted with `Value(any:)`.
    public var dictionaryValue: [String: SiftEvaluation.Value]? { mapValues { SiftEvaluation.Value(any: $0) } }

    /// Reads through `Value(any:)`. (`[String: Any]` gets code specialised for it in
    /// ``SiftPredicate/compiled(for:)``.)
    public static func reader(forKey key: String) -> KeyReader<Self>? {
        return .value { d in
            guard let v = d[key] else { return .null }
            return SiftEvaluation.Value(any: v)
        }
    }
}

// MARK: - Conversion from Swift and Foundation values

/// Lets `Value(any:)` unwrap an `Any` that holds an optional (`Int?` stored in `[String: Any]`).
private protocol OptionalProtocol { var wrappedAny: Any? { get } }
extension Optional: OptionalProtocol {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}

private let nsBooleanType = ObjectIdentifier(type(of: NSNumber(value: true)))

extension Value {
    /// Reads any Swift or Foundation value: nil, `NSNull`, Bool, every integer and floating-point
    /// type, `NSNumber`, `Decimal`, `String`, `Substring`, `Date`, `Data`, `URL` (as its string),
    /// `UUID` (as its string), arrays, sets, dictionaries with string keys, ``KeyValueCoding``
    /// types, `Encodable` types (encoded to a dictionary), and any other struct or class by
    /// reflection of its stored properties.
    public init(any value: Any?) {
        guard let value else {
            self = .null
            return
        }
        // The common types first, by exact dynamic type: a cast that matches exactly is cheap,
        // while trying NSNumber first would route every native Int through bridging.
        let t = type(of: value)
        if t == String.self {
            self = .string(value as! String)
            return
        }
        if t == Int.self {
            self = .integer(Int64(value as! Int))
            return
        }
        if t == Double.self {
            self = .double(value as! Double)
            return
        }
        if t == Bool.self {
            self = .bool(value as! Bool)
            return
        }
        if t == Value.self {
            self = value as! Value
            return
        }
        // Collections as JSON and dictionaries hold them, again by exact type: the generic casts
        // below would bridge each one element by element.
        if t == [String: Any].self {
            self = .object(value as! [String: Any])
            return
        }
        if t == [String].self {
            self = .array((value as! [String]).map { .string($0) })
            return
        }
        if t == [Any].self {
            self = .array((value as! [Any]).map { Value(any: $0) })
            return
        }
        if t == [Int].self {
            self = .array((value as! [Int]).map { .integer(Int64($0)) })
            return
        }
        if t == [Double].self {
            self = .array((value as! [Double]).map { .double($0) })
            return
        }
        if t == [[String: Any]].self {
            self = .array((value as! [[String: Any]]).map { .object($0) })
            return
        }
        if let o = value as? any OptionalProtocol {
            self = Value(any: o.wrappedAny)
            return
        }
        self = Value(casting: value, type: t)
    }

    /// What `init(any:)` does not know by its exact type, by dynamic casts: `NSNull`, NSNumber and
    /// the other integer and floating-point types, Foundation's types, ``KeyValueCoding`` types,
    /// arrays, sets and dictionaries of any element type, then `Encodable` and reflection.
    private init(casting value: Any, type t: Any.Type) {
        switch value {
        case is NSNull:
            self = .null
        case let n as NSNumber where !(t is any BinaryInteger.Type) && !(t is any BinaryFloatingPoint.Type):
            self = Value(number: n)
        case let i as any BinaryInteger:
            if let x = Int64(exactly: i) { self = .integer(x) } else { self = .double(Double(i)) }
        case let d as any BinaryFloatingPoint:
            self = .double(Double(d))
        case let d as Decimal:
            self = .decimal(d)
        case let s as Substring:
            self = .string(String(s))
        case let s as NSString:
            self = .string(s as String)
        case let d as Date:
            self = .date(d)
        case let d as Data:
            self = .data(d)
        case let u as URL:
            self = .string(u.absoluteString)
        case let u as UUID:
            self = .string(u.uuidString)
        case let kvc as any KeyValueReading:
            self = .object(kvc)
        case let a as [Any?]:
            self = .array(a.map { Value(any: $0) })
        case let a as [Any]:
            self = .array(a.map { Value(any: $0) })
        case let s as any SetAlgebra & Sequence:
            self = .set(Value.distinct(s.map { Value(any: $0 as Any) }))
        case let d as NSDictionary:
            var out: [String: Value] = [:]
            for (k, v) in d { if let k = k as? String { out[k] = Value(any: v) } }
            self = .dictionary(out)
        case let s as NSSet:
            self = .set(Value.distinct(s.map { Value(any: $0) }))
        case let a as NSArray:
            self = .array(a.map { Value(any: $0) })
        case let e as any Encodable:
            self = (try? ValueEncoder.encode(e)) ?? .object(MirrorObject(value))
        default:
            self = .object(MirrorObject(value))
        }
    }

    /// An NSNumber by its stored type: booleans, integers (unsigned ones beyond Int64 as
    /// doubles) and doubles.
    init(number n: NSNumber) {
        if ObjectIdentifier(type(of: n)) == nsBooleanType {
            self = .bool(n.boolValue)
            return
        }
        switch UInt8(bitPattern: n.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"): self = .double(n.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            let u = n.uint64Value
            self = u <= UInt64(Int64.max) ? .integer(Int64(u)) : .double(Double(u))
        default: self = .integer(n.int64Value)
        }
    }

    /// The values with duplicates (by ``isEqual(to:)``) removed, first occurrences kept.
    static func distinct(_ values: [Value]) -> [Value] {
        var out: [Value] = []
        out.reserveCapacity(values.count)
        var seen = Set<HashKey>()
        for v in values {
            if let k = HashKey(v) {
                if seen.insert(k).inserted { out.append(v) }
            } else if !out.contains(where: { $0.isEqual(to: v) }) {
                out.append(v)
            }
        }
        return out
    }
}

/// A hashable stand-in for the scalar values, consistent with ``Value/isEqual(to:)``: numbers
/// hash by numeric value (so `1`, `1.0` and `true` collide as they compare equal).
enum HashKey: Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case string(String)
    case date(Date)

    init?(_ v: Value) {
        switch v {
        case .null: self = .null
        case .string(let s): self = .string(s)
        case .date(let d): self = .date(d)
        default:
            guard let n = v.number else { return nil }
            switch n {
            case .integer(let i): self = .integer(i)
            case .double(let d):
                if let i = Int64(exactly: d) { self = .integer(i) } else { self = .double(d) }
            }
        }
    }
}

// MARK: - Reflection fallback

/// Reads the stored properties of a plain struct or class by name, through `Mirror`. (`package`:
/// the store refuses to keep such a value, which only reflection could read.)
package struct MirrorObject: KeyValueCoding {
    package let subject: Any
    init(_ subject: Any) { self.subject = subject }

    package func value(forKey key: String) throws -> Value {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let m = mirror {
            for child in m.children where child.label == key { return Value(any: child.value) }
            mirror = m.superclassMirror
        }
        throw KeyValueCodingError.unknownKey(key, in: String(describing: type(of: subject)))
    }

    package var dictionaryValue: [String: Value]? {
        var out: [String: Value] = [:]
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let m = mirror {
            for child in m.children { if let l = child.label, out[l] == nil { out[l] = Value(any: child.value) } }
            mirror = m.superclassMirror
        }
        return out
    }
}

// MARK: - Key lookup on values

extension Value {
    /// The value for `key`, with KVC's rules: a dictionary looks the key up (nil when missing),
    /// an array or set maps the key over its elements, nil gives nil. Collection operators
    /// (`@count`…) are handled by the evaluator, not here.
    public func value(forKey key: String) throws -> Value {
        switch self {
        case .null: return .null
        case .dictionary(let d): return d[key] ?? .null
        case .object(let o): return try o.value(forKey: key)
        case .array(let a): return .array(try a.map { try $0.value(forKey: key) })
        case .set(let a): return .set(Value.distinct(try a.map { try $0.value(forKey: key) }))
        default: throw KeyValueCodingError.unknownKey(key, in: kindName)
        }
    }

    /// The content of a dictionary or a listable object.
    var dictionaryContent: [String: Value]? {
        switch self {
        case .dictionary(let d): d
        case .object(let o): o.dictionaryValue
        default: nil
        }
    }
}

/// A `%@` object reference evaluates as an object that equals the store objects it names; it has
/// no keys of its own (`%@.name` raises `unknown-key`).
extension ObjectReference: KeyValueReading {
    /// Throws ``KeyValueCodingError/unknownKey(_:in:)``: a reference carries only an identity.
    public func value(forKey key: String) throws -> Value {
        throw KeyValueCodingError.unknownKey(key, in: "object reference")
    }
}
