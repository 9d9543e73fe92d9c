// Typed access for the entity classes (`employee.salary`, `employee.team`): the accessors a
// `ManagedObject` subclass's properties call, as `sift store codegen` writes them. Plain
// accessors, not property wrappers: a wrapper keeps its key in every object (a string per
// property per object), and the accessors read the object's own values as fast as the string
// API or faster (StoreBench). Core Data's properties neither throw nor return errors, so these
// do not: a read that cannot be fulfilled (a fault whose row is gone, an object deleted in a
// parent) returns the attribute's default, a write that cannot be made changes nothing, and the
// error is kept by the context (`accessErrors`), whose next `save()` throws it and writes nothing.
// `throwing { }` gives the errors of the accesses in its body to its caller at once instead.

import Foundation
import SiftEvaluation

/// A Swift type a typed accessor reads from an attribute and writes to it.
///
/// ```swift
/// let salary: Double? = employee.attribute("salary")
/// ```
public protocol AttributeValue {
    /// The attribute's value as this type, or nil when it is not one.
    static func attributeValue(_ value: Value) -> Self?
    /// Sets attribute `key` of `object` to this value, with `setValue(_:forKey:)`'s checks.
    func store(in object: ManagedObject, forKey key: String) throws(StoreError)
}

extension AttributeValue {
    /// Sets the value through `setValue(_:forKey:)` (coerced to the attribute's type).
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Int: AttributeValue {
    /// An integer that fits.
    public static func attributeValue(_ value: Value) -> Int? {
        if case .integer(let i) = value { return Int(exactly: i) }
        return nil
    }
    /// Through the typed `setValue(_:forKey:)`.
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Int16: AttributeValue {
    /// An integer that fits.
    public static func attributeValue(_ value: Value) -> Int16? {
        if case .integer(let i) = value { return Int16(exactly: i) }
        return nil
    }
}

extension Int32: AttributeValue {
    /// An integer that fits.
    public static func attributeValue(_ value: Value) -> Int32? {
        if case .integer(let i) = value { return Int32(exactly: i) }
        return nil
    }
}

extension Int64: AttributeValue {
    /// An integer.
    public static func attributeValue(_ value: Value) -> Int64? {
        if case .integer(let i) = value { return i }
        return nil
    }
    /// Through the typed `setValue(_:forKey:)`.
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Double: AttributeValue {
    /// A double (or an integer, widened).
    public static func attributeValue(_ value: Value) -> Double? {
        switch value {
        case .double(let d): return d
        case .integer(let i): return Double(i)
        default: return nil
        }
    }
    /// Through the typed `setValue(_:forKey:)`.
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Float: AttributeValue {
    /// A double, narrowed.
    public static func attributeValue(_ value: Value) -> Float? {
        if case .double(let d) = value { return Float(d) }
        return nil
    }
}

extension Decimal: AttributeValue {
    /// A decimal.
    public static func attributeValue(_ value: Value) -> Decimal? {
        if case .decimal(let d) = value { return d }
        return nil
    }
}

extension String: AttributeValue {
    /// A string.
    public static func attributeValue(_ value: Value) -> String? {
        if case .string(let s) = value { return s }
        return nil
    }
    /// Through the typed `setValue(_:forKey:)`.
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Bool: AttributeValue {
    /// A boolean.
    public static func attributeValue(_ value: Value) -> Bool? {
        if case .bool(let b) = value { return b }
        return nil
    }
    /// Through the typed `setValue(_:forKey:)`.
    public func store(in object: ManagedObject, forKey key: String) throws(StoreError) {
        try object.setValue(self, forKey: key)
    }
}

extension Date: AttributeValue {
    /// A date.
    public static func attributeValue(_ value: Value) -> Date? {
        if case .date(let d) = value { return d }
        return nil
    }
}

extension Data: AttributeValue {
    /// Binary data.
    public static func attributeValue(_ value: Value) -> Data? {
        if case .data(let d) = value { return d }
        return nil
    }
}

extension UUID: AttributeValue {
    /// A UUID (stored as its string).
    public static func attributeValue(_ value: Value) -> UUID? {
        if case .string(let s) = value { return UUID(uuidString: s) }
        return nil
    }
}

extension URL: AttributeValue {
    /// A URL (stored as its string).
    public static func attributeValue(_ value: Value) -> URL? {
        if case .string(let s) = value { return URL(string: s) }
        return nil
    }
}

extension Value: AttributeValue {
    /// The value itself (dynamic and mixed attributes).
    public static func attributeValue(_ value: Value) -> Value? { value }
}

extension Array: AttributeValue where Element: AttributeValue {
    /// A collection attribute's values, each an `Element`.
    public static func attributeValue(_ value: Value) -> [Element]? {
        switch value {
        case .array(let a), .set(let a):
            var out: [Element] = []
            out.reserveCapacity(a.count)
            for v in a {
                guard let e = Element.attributeValue(v) else { return nil }
                out.append(e)
            }
            return out
        default: return nil
        }
    }
}

/// Where the accesses inside `throwing { }` leave their errors (a task-local, so nested and
/// concurrent calls each keep their own).
final class AccessCapture: @unchecked Sendable {
    var errors: [StoreError] = []
    @TaskLocal static var current: AccessCapture?
}

extension ManagedObject {
    // MARK: Typed reads

    /// The value of attribute `key` as `T`; nil when nil, and when it cannot be read (the error
    /// kept by the context, see ``ManagedObjectContext/accessErrors``).
    ///
    /// ```swift
    /// var name: String? { attribute("name") }
    /// ```
    public final func attribute<T: AttributeValue>(_ key: String) -> T? { read(key, as: T.self) }

    /// The typed read: the object's own value when it is loaded and of type `T`, else the slow
    /// way (faults, documents, failures).
    @inline(__always)
    final func read<T: AttributeValue>(_ key: String, as type: T.Type) -> T? {
        if !isFault, !info.isDocument, let i = info.attributeNumber(key) {
            let v = attributes[i]
            if case .null = v { return nil }
            if let t = T.attributeValue(v) { return t }
        }
        return slowAttribute(key)
    }

    // Concrete forms for the commonest types (the compiler prefers them to the generic ones): a
    // direct call, where the generic one reached from another module is passed `T`'s metadata
    // and returns through memory.

    /// An integer attribute (see `attribute(_:)`).
    public final func attribute(_ key: String) -> Int? { read(key, as: Int.self) }
    /// A 64-bit integer attribute (see `attribute(_:)`).
    public final func attribute(_ key: String) -> Int64? { read(key, as: Int64.self) }
    /// A double attribute (see `attribute(_:)`).
    public final func attribute(_ key: String) -> Double? { read(key, as: Double.self) }
    /// A string attribute (see `attribute(_:)`).
    public final func attribute(_ key: String) -> String? { read(key, as: String.self) }
    /// A Boolean attribute (see `attribute(_:)`).
    public final func attribute(_ key: String) -> Bool? { read(key, as: Bool.self) }
    /// A non-optional integer attribute (see `attribute(_:default:)`).
    public final func attribute(_ key: String, default fallback: Int) -> Int { read(key, as: Int.self) ?? fallback }
    /// A non-optional 64-bit integer attribute (see `attribute(_:default:)`).
    public final func attribute(_ key: String, default fallback: Int64) -> Int64 {
        read(key, as: Int64.self) ?? fallback
    }
    /// A non-optional double attribute (see `attribute(_:default:)`).
    public final func attribute(_ key: String, default fallback: Double) -> Double {
        read(key, as: Double.self) ?? fallback
    }
    /// A non-optional string attribute (see `attribute(_:default:)`).
    public final func attribute(_ key: String, default fallback: String) -> String {
        read(key, as: String.self) ?? fallback
    }
    /// A non-optional Boolean attribute (see `attribute(_:default:)`).
    public final func attribute(_ key: String, default fallback: Bool) -> Bool {
        read(key, as: Bool.self) ?? fallback
    }

    /// The value of a non-optional attribute: `fallback` (the attribute's default) when it is nil
    /// or cannot be read (the error kept by the context).
    ///
    /// ```swift
    /// var salary: Double { attribute("salary", default: 0) }
    /// ```
    @inline(__always)
    public final func attribute<T: AttributeValue>(_ key: String, default fallback: T) -> T {
        read(key, as: T.self) ?? fallback
    }

    /// `attribute(_:)` the string API's way, for faults, documents and failures.
    private func slowAttribute<T: AttributeValue>(_ key: String) -> T? {
        do throws(StoreError) {
            let v = try storeValue(forKey: key)
            if case .null = v { return nil }
            if let t = T.attributeValue(v) { return t }
            throw StoreError(.typeMismatch, "\(objectID) '\(key)': \(v) is not a \(T.self)")
        } catch {
            accessFailed(error)
            return nil
        }
    }

    /// A transformable attribute's value as `T`: decoded from its `Codable` form, or read back
    /// through the attribute's value transformer (nil when nil or unreadable, the error kept by
    /// the context).
    ///
    /// ```swift
    /// var address: Address? { transformable("address") }
    /// var color: Color? { transformable("color") }   // through its ColorTransformer
    /// ```
    public final func transformable<T>(_ key: String) -> T? {
        do { return try get(key, as: T.self) } catch {
            accessFailed(error)
            return nil
        }
    }

    /// The object of to-one relationship `key` (nil when nil or unreadable).
    ///
    /// ```swift
    /// var team: Team? { toOne("team") }
    /// ```
    public final func toOne<T: ManagedObject>(_ key: String) -> T? {
        do throws(StoreError) {
            guard let i = info.entity.relationshipIndex[key] else {
                throw StoreError(.unknownKey, "entity '\(info.name)' has no relationship '\(key)'")
            }
            guard let o = try one(i) else { return nil }
            return try Self.typed(o, key)
        } catch {
            accessFailed(error)
            return nil
        }
    }

    /// The objects of to-many relationship `key` (empty when nil or unreadable).
    ///
    /// ```swift
    /// var reports: Set<Employee> { toMany("reports") }
    /// ```
    public final func toMany<T: ManagedObject>(_ key: String) -> Set<T> {
        Set(orderedToMany(key) as [T])
    }

    /// The objects of ordered to-many relationship `key`, in order (empty when nil or unreadable).
    ///
    /// ```swift
    /// var steps: [Step] { orderedToMany("steps") }
    /// ```
    public final func orderedToMany<T: ManagedObject>(_ key: String) -> [T] {
        do throws(StoreError) {
            guard let i = info.entity.relationshipIndex[key] else {
                throw StoreError(.unknownKey, "entity '\(info.name)' has no relationship '\(key)'")
            }
            let objects = try many(i)
            if T.self == ManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
            var out: [T] = []
            out.reserveCapacity(objects.count)
            for o in objects { out.append(try Self.typed(o, key)) }
            return out
        } catch {
            accessFailed(error)
            return []
        }
    }

    private static func typed<T: ManagedObject>(_ o: ManagedObject, _ key: String) throws(StoreError) -> T {
        guard let t = o as? T else {
            throw StoreError(
                .typeMismatch,
                "'\(key)': \(o.objectID) is a '\(String(reflecting: type(of: o)))', not a '\(String(reflecting: T.self))'"
            )
        }
        return t
    }

    // MARK: Typed writes

    /// Sets attribute `key` (nil clears it); a write that fails changes nothing and fails the
    /// context's next save.
    ///
    /// ```swift
    /// var salary: Double {
    ///     get { attribute("salary", default: 0) }
    ///     set { setAttribute(newValue, "salary") }
    /// }
    /// ```
    public final func setAttribute<T: AttributeValue>(_ value: T?, _ key: String) { write(value, key) }

    /// The typed write, its error kept.
    @inline(__always)
    final func write<T: AttributeValue>(_ value: T?, _ key: String) {
        do {
            if let value { try value.store(in: self, forKey: key) } else { try setValue(nil as Any?, forKey: key) }
        } catch {
            accessFailed(error)
        }
    }

    /// Sets an integer attribute (a direct call; see the generic `setAttribute`).
    public final func setAttribute(_ value: Int?, _ key: String) { write(value, key) }
    /// Sets a 64-bit integer attribute.
    public final func setAttribute(_ value: Int64?, _ key: String) { write(value, key) }
    /// Sets a double attribute.
    public final func setAttribute(_ value: Double?, _ key: String) { write(value, key) }
    /// Sets a string attribute.
    public final func setAttribute(_ value: String?, _ key: String) { write(value, key) }
    /// Sets a Boolean attribute.
    public final func setAttribute(_ value: Bool?, _ key: String) { write(value, key) }

    /// Sets a transformable attribute to `value`, stored through the attribute's value transformer
    /// when it names one, else through `value`'s `Encodable` form (a value of neither kind is a
    /// type mismatch, kept by the context).
    ///
    /// ```swift
    /// set { setTransformable(newValue, "address") }
    /// ```
    public final func setTransformable<T>(_ value: T?, _ key: String) {
        do { try setValue(value, forKey: key) } catch { accessFailed(error) }
    }

    /// Sets to-one relationship `key` (its inverse follows).
    ///
    /// ```swift
    /// set { setToOne(newValue, "team") }
    /// ```
    public final func setToOne<T: ManagedObject>(_ value: T?, _ key: String) {
        do { try setValue(value as ManagedObject?, forKey: key) } catch { accessFailed(error) }
    }

    /// Sets to-many relationship `key` to `value`'s objects.
    ///
    /// ```swift
    /// set { setToMany(newValue, "reports") }
    /// ```
    public final func setToMany<T: ManagedObject>(_ value: Set<T>, _ key: String) {
        setOrderedToMany(Array(value), key)
    }

    /// Sets ordered to-many relationship `key` to `value`, in its order.
    ///
    /// ```swift
    /// set { setOrderedToMany(newValue, "steps") }
    /// ```
    public final func setOrderedToMany<T: ManagedObject>(_ value: [T], _ key: String) {
        let objects: [ManagedObject] = value.map { $0 }
        do { try setValue(objects, forKey: key) } catch { accessFailed(error) }
    }

    // MARK: Errors

    /// Keeps a typed access's error: for the enclosing `throwing { }`, else for the next save of
    /// the object's context (or of the context a merged delete took it from). An object whose
    /// context was released or reset has no save to fail; only `throwing` reports it.
    final func accessFailed(_ error: StoreError) {
        if let capture = AccessCapture.current {
            capture.errors.append(error)
            return
        }
        (context ?? goneFrom)?.accessErrors.append(error)
    }
}

/// What every `ManagedObject` is: the home of `throwing`, whose closure takes the object as its
/// own class (`$0.salary` on an `Employee`).
public protocol TypedAccessible: AnyObject {}

extension ManagedObject: TypedAccessible {}

extension TypedAccessible where Self: ManagedObject {
    /// Runs `body` (typed reads and writes of this object or others) and throws the first error
    /// an access in it met, instead of leaving it for the context's next save.
    ///
    /// ```swift
    /// let salary = try ann.throwing { $0.salary }
    /// try ann.throwing { $0.team = sales }
    /// ```
    public func throwing<R>(_ body: (Self) -> R) throws(StoreError) -> R {
        let capture = AccessCapture()
        let result = AccessCapture.$current.withValue(capture) { body(self) }
        if let first = capture.errors.first { throw first }
        return result
    }
}

extension ManagedObjectContext {
    /// A new object of the entity `type` is registered for, as `type` (see
    /// ``ManagedObjectModel/init(entities:classes:configurations:)``).
    ///
    /// ```swift
    /// let ann = try context.insert(Employee.self)
    /// ann.salary = 5200
    /// ```
    public func insert<T: ManagedObject>(_ type: T.Type) throws(StoreError) -> T {
        let o = try insert(ObjectClasses.entityName(of: type))
        guard let t = o as? T else {
            // Not made as `type`: take it back out, as if never inserted.
            try? delete(o)
            throw StoreError(
                .typeMismatch,
                "entity '\(o.entityName)' makes '\(String(reflecting: Swift.type(of: o)))' objects, not '\(String(reflecting: type))' (register the class with the model: ManagedObjectModel(entities:classes:))"
            )
        }
        return t
    }

    /// Throws the errors typed accesses kept since the last save (the first, with every message
    /// in `failures` when there were several) and forgets them.
    func throwAccessErrors() throws(StoreError) {
        guard var first = accessErrors.first else { return }
        if accessErrors.count > 1 { first.failures = accessErrors.flatMap(\.failures) }
        accessErrors = []
        throw first
    }
}
