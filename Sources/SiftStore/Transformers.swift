// Value transformers: Core Data's way of storing a value no attribute type holds (a color, a
// shape) in a transformable attribute. The model names a transformer (`valueTransformerName`); the
// app registers one under that name before it opens a store; a value set on the attribute is
// turned into `Data` at once (so a value the transformer refuses is an error at `setValue`), the
// column keeps exactly those bytes, and a fetch turns them back into the value. Predicates read
// the value through `KeyValueCoding` or its `Encodable` form. An attribute naming no transformer
// keeps `Codable` values in the exact binary form, as before.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax

/// Why a value transformer could not turn a value into `Data`, or `Data` back into a value.
///
/// ```swift
/// throw TransformerError(.reverse, "a color takes 32 bytes, not \(data.count)")
/// ```
public struct TransformerError: SiftError, Hashable {
    /// Which way the transformation failed.
    public enum Kind: String, Hashable, Sendable {
        /// The value could not be turned into `Data` (the error's id is `transform-failed`).
        case transform = "transform-failed"
        /// Stored `Data` could not be turned back into a value (`reverse-transform-failed`).
        case reverse = "reverse-transform-failed"
    }

    /// Which way the transformation failed.
    public var kind: Kind
    /// What went wrong, in words.
    public var message: String
    /// `transform-failed` or `reverse-transform-failed`.
    public var id: String { kind.rawValue }
    /// The message.
    public var description: String { message }

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// Turns the values of a transformable attribute into `Data` and back: Core Data's
/// `ValueTransformer` (`NSValueTransformer`) for a model's transformable attribute, with typed
/// values and typed throws. The transformed value is always `Data` (Core Data's
/// `transformedValueClass`). Named apart from Foundation's `ValueTransformer` class so that a file
/// importing both compiles.
///
/// Register a transformer under the name the model's attribute gives (``AttributeDescription/valueTransformerName``)
/// before opening a store with that model:
///
/// ```swift
/// struct UppercaseTransformer: AttributeTransformer {
///     func transformedValue(_ value: String) throws(TransformerError) -> Data { Data(value.uppercased().utf8) }
///     func reverseTransformedValue(_ data: Data) throws(TransformerError) -> String {
///         guard let s = String(data: data, encoding: .utf8) else { throw TransformerError(.reverse, "not UTF-8") }
///         return s
///     }
/// }
/// AttributeTransformers.setValueTransformer(UppercaseTransformer(), forName: "UppercaseTransformer")
/// ```
public protocol AttributeTransformer: Sendable {
    /// The type of the attribute's values (a class or a struct; it need not be `Codable`).
    associatedtype Object

    /// Whether stored `Data` can be turned back into a value. A store needs it to read back what
    /// it wrote: opening a store whose model names a transformer that answers false is an error.
    /// True by default.
    static var allowsReverseTransformation: Bool { get }

    /// The bytes the column keeps for `value`.
    func transformedValue(_ value: Object) throws(TransformerError) -> Data

    /// The value of bytes ``transformedValue(_:)`` made.
    func reverseTransformedValue(_ data: Data) throws(TransformerError) -> Object
}

extension AttributeTransformer {
    /// True: the transformer can read back what it writes.
    public static var allowsReverseTransformation: Bool { true }

    /// `value`'s bytes, or nil when `value` is not an `Object`.
    fileprivate func forward(_ value: Any) throws(TransformerError) -> Data? {
        guard let object = value as? Object else { return nil }
        return try transformedValue(object)
    }

    fileprivate func reverse(_ data: Data) throws(TransformerError) -> Any { try reverseTransformedValue(data) }

    fileprivate var objectTypeName: String { String(describing: Object.self) }
    fileprivate var reversible: Bool { Self.allowsReverseTransformation }
}

/// The registry of value transformers by name (Core Data's `ValueTransformer.setValueTransformer(_:forName:)`);
/// safe to use from any thread.
///
/// ```swift
/// AttributeTransformers.setValueTransformer(ColorTransformer(), forName: "ColorTransformer")
/// AttributeTransformers.valueTransformer(forName: "ColorTransformer") != nil   // true
/// ```
public enum AttributeTransformers {
    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        /// Foundation's keyed-archiving transformers are there from the start, as on Apple's platforms.
        var byName: [String: any AttributeTransformer] = [
            SecureUnarchiveFromDataTransformer.secureName: SecureUnarchiveFromDataTransformer(),
            SecureUnarchiveFromDataTransformer.keyedName: SecureUnarchiveFromDataTransformer(),
        ]
    }
    private static let registry = Registry()

    /// Registers `transformer` under `name` (replacing the one registered before), or removes the
    /// name's transformer when `transformer` is nil. A store reads the registry when it is opened
    /// and whenever a value of the attribute is set or read.
    public static func setValueTransformer(_ transformer: (any AttributeTransformer)?, forName name: String) {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        registry.byName[name] = transformer
    }

    /// The transformer registered under `name`, or nil.
    public static func valueTransformer(forName name: String) -> (any AttributeTransformer)? {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        return registry.byName[name]
    }

    /// The registered names, sorted.
    public static var names: [String] {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        return registry.byName.keys.sorted()
    }

    /// Checks, when a store opens, every attribute of `model` that names a transformer: the name
    /// must be registered (in a Core Data store, its values are otherwise kept as unread bytes),
    /// and its transformer allow reverse transformation. (That the attribute
    /// is transformable and has no default is the model's own rule, checked when it is made.)
    static func check(_ model: ManagedObjectModel) throws(StoreError) {
        for (entity, r) in model.resolved.sorted(by: { $0.key < $1.key }) {
            for a in r.attributes {
                guard let name = a.description.valueTransformerName else { continue }
                let what = "\(entity).\(a.name)"
                guard let t = valueTransformer(forName: name) else {
                    // A Core Data store's values stay unread bytes, kept as stored (`read`).
                    if model.layout == .coreData { continue }
                    throw StoreError(
                        .model,
                        "\(what): no value transformer is registered under the name '\(name)' (register one with AttributeTransformers.setValueTransformer(_:forName:) before opening the store)"
                    )
                }
                guard t.reversible else {
                    throw StoreError(
                        .model, "\(what): the value transformer '\(name)' does not allow reverse transformation")
                }
            }
        }
    }

    static func transformer(_ name: String) throws(CoercionError) -> any AttributeTransformer {
        guard let t = valueTransformer(forName: name) else {
            throw CoercionError(message: "no value transformer is registered under the name '\(name)'")
        }
        return t
    }

    /// The attribute value of `value` (what a caller hands to `setValue`) through transformer
    /// `name`: the value with its bytes, made now, so a value the transformer refuses fails here.
    static func transformed(_ value: Any?, _ name: String) throws(CoercionError) -> Value {
        guard let value, !(value is NSNull) else { return .null }
        if let v = value as? Value { return try coerced(v, name) }
        if let t = value as? TransformedValue, t.transformerName == name { return .object(t) }
        return try make(value, name)
    }

    /// `value` through transformer `name`, whatever its type.
    private static func make(_ value: Any, _ name: String) throws(CoercionError) -> Value {
        let transformer = try transformer(name)
        let data: Data?
        do { data = try transformer.forward(value) } catch {
            throw CoercionError(message: "the value transformer '\(name)' refused \(value): \(error.message)")
        }
        guard let data else {
            throw CoercionError(
                message:
                    "a \(type(of: value)) is not a \(transformer.objectTypeName), the type of the value transformer '\(name)'"
            )
        }
        return .object(TransformedValue(object: value, data: data, transformerName: name))
    }

    /// An attribute value (a typed `setValue`, a batch update's constant or expression) for an
    /// attribute with transformer `name`: nil, a value of this transformer, or a scalar the
    /// transformer takes as its Swift type.
    static func coerced(_ v: Value, _ name: String) throws(CoercionError) -> Value {
        switch v {
        case .null: return .null
        case .object(let t as TransformedValue) where t.transformerName == name: return v
        case .object(let t as TransformedValue): return try make(t.object, name)
        case .bool(let b): return try make(b, name)
        case .integer(let i): return try make(Int(exactly: i).map { $0 as Any } ?? i, name)
        case .double(let d): return try make(d, name)
        case .decimal(let d): return try make(d, name)
        case .string(let s): return try make(s, name)
        case .date(let d): return try make(d, name)
        case .data(let d): return try make(d, name)
        case .object(let o): return try make(o, name)
        case .array, .set, .dictionary: return try make(v, name)
        }
    }

    /// The value of a transformer attribute's column (the transformer's bytes), read back.
    static func read(_ column: SQLValue, _ name: String, of id: ObjectID, key: String) throws(StoreError) -> Value {
        let data: Data
        switch column {
        case .null: return .null
        case .blob(let b): data = Data(b)
        default: throw StoreError(.sqlite, "\(id) '\(key)': its stored value is not the bytes of a value transformer")
        }
        guard let t = valueTransformer(forName: name) else {
            // Not registered (a Core Data store's): reading the attribute says so (`unreadError`).
            return .object(TransformedValue(object: TransformedValue.Unread(), data: data, transformerName: name))
        }
        do {
            return .object(TransformedValue(object: try t.reverse(data), data: data, transformerName: name))
        } catch {
            // Unreadable bytes (an archive of a class the transformer does not know): reading the
            // attribute says why; the object's other values stay usable and a save keeps the bytes.
            let unread = TransformedValue.Unread(reason: error.message)
            return .object(TransformedValue(object: unread, data: data, transformerName: name))
        }
    }
}

/// A transformable attribute's value kept through a value transformer: the caller's value and the
/// bytes the transformer made of it (what a save writes). Predicates read the value's keys through
/// its `KeyValueCoding` conformance, or else its `Encodable` form; a value with neither has no
/// keys (an `unknown-key` error at the key in the predicate).
final class TransformedValue: KeyValueCoding, CustomStringConvertible {
    let object: Any
    let data: Data
    let transformerName: String
    /// The `Encodable` form, made when first asked.
    private lazy var encoded: Value? = (object as? any Encodable).flatMap { try? ValueEncoder.encode($0) }

    init(object: Any, data: Data, transformerName: String) {
        self.object = object
        self.data = data
        self.transformerName = transformerName
    }

    /// The value of bytes read for a transformer that is not registered, or that could not read
    /// them back (`reason` says why): not known.
    struct Unread: CustomStringConvertible {
        var reason: String? = nil
        var description: String { "unread bytes" }
    }

    /// Why the value cannot be read, when its transformer was not registered as it was read: the
    /// bytes are kept, and saving the object writes them back unchanged.
    func unreadError(_ id: ObjectID, _ key: String) -> StoreError? {
        guard let unread = object as? Unread else { return nil }
        if let reason = unread.reason {
            return StoreError(
                .model,
                "\(id) '\(key)': the value transformer '\(transformerName)' cannot read its stored value back: \(reason); its \(data.count) bytes are kept as stored"
            )
        }
        return StoreError(
            .model,
            "\(id) '\(key)': its value was written by the value transformer '\(transformerName)', which is not registered (register one with AttributeTransformers.setValueTransformer(_:forName:) to read it); its \(data.count) bytes are kept as stored"
        )
    }

    func value(forKey key: String) throws -> Value {
        if let kvc = object as? any KeyValueCoding { return try kvc.value(forKey: key) }
        if let e = encoded, case .dictionary = e { return try e.value(forKey: key) }
        throw KeyValueCodingError.unknownKey(
            key,
            in:
                "\(type(of: object)) (the value of transformer '\(transformerName)', which is neither KeyValueCoding nor Encodable)"
        )
    }

    /// The value's keys (for `==` between values and the history's tombstones).
    var dictionaryValue: [String: Value]? {
        if let kvc = object as? any KeyValueCoding { return kvc.dictionaryValue }
        if case .dictionary(let d)? = encoded { return d }
        return nil
    }

    var description: String { "\(object)" }
}
