// Foundation's keyed archives as a transformable attribute's bytes: what Core Data writes for a
// transformable attribute that names `NSSecureUnarchiveFromData`, `NSKeyedUnarchiveFromData` or
// no transformer at all (its default archives the value with NSCoding). Sift decodes the classes
// `NSSecureUnarchiveFromData` allows (arrays, dictionaries, sets, strings, numbers, dates, data,
// URLs, UUIDs, null) with Foundation's own `NSKeyedUnarchiver`, after checking the archive's class
// names itself so that an archive of any other class (an app's `UIColor`) is a clear error naming
// the class rather than Foundation's log line; archives are written by `KeyedArchiveWriter`.

import Foundation
import SiftEvaluation

/// The value transformer Core Data's keyed archiving transformers stand for: values of the classes
/// Foundation's `NSSecureUnarchiveFromDataTransformer` allows — arrays, dictionaries with string
/// keys, sets, strings, numbers (`Bool`, integers, `Double`), dates, `Data`, `URL`, `UUID` and
/// `NSNull` — kept as an `NSKeyedArchiver` archive, the bytes Core Data writes and reads.
///
/// It is registered under both of Foundation's names, `NSSecureUnarchiveFromData` and
/// `NSKeyedUnarchiveFromData`, and an Xcode model's transformable attribute that names no
/// transformer uses the second, as Core Data does. Values read back are Swift's own types
/// (`[Any]`, `[String: Any]`, `Set<AnyHashable>`, `String`, `Int`, `Double`, `Bool`, `Date`,
/// `Data`, `URL`, `UUID`, `NSNull`); an archive of another class (a `UIColor`) cannot be read, and
/// its bytes are kept as stored.
///
/// ```swift
/// let tags = AttributeDescription("tags", .transformable, valueTransformerName: "NSSecureUnarchiveFromData")
/// try note.setValue(["home", "urgent"], forKey: "tags")
/// let back = try note.get("tags", as: [Any].self)   // ["home", "urgent"]
/// ```
public struct SecureUnarchiveFromDataTransformer: AttributeTransformer {
    /// `NSSecureUnarchiveFromData`, Foundation's `NSValueTransformerName.secureUnarchiveFromDataTransformerName`.
    public static let secureName = "NSSecureUnarchiveFromData"
    /// `NSKeyedUnarchiveFromData`, Foundation's older `keyedUnarchiveFromDataTransformerName` and
    /// Core Data's transformer for a transformable attribute that names none.
    public static let keyedName = "NSKeyedUnarchiveFromData"

    /// The class names an archive may hold, as Foundation's `allowedTopLevelClasses` lists them, with
    /// their mutable subclasses, which archives written by apps name.
    static let allowedClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSSet", "NSMutableSet",
        "NSString", "NSMutableString", "NSNumber", "NSDate", "NSData", "NSMutableData", "NSURL", "NSUUID",
        "NSNull", "NSObject",
    ]

    /// A transformer for the archivable classes.
    public init() {}

    /// The archive of `value`: one of the allowed types, nested as deep as it likes.
    public func transformedValue(_ value: Any) throws(TransformerError) -> Data {
        try KeyedArchiveWriter.archive(value)
    }

    /// The value `data` archives, in Swift's types.
    public func reverseTransformedValue(_ data: Data) throws(TransformerError) -> Any {
        try Self.checkClasses(data)
        let classes: [AnyClass] = [
            NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
            NSURL.self, NSUUID.self, NSNull.self,
        ]
        let object: Any?
        do { object = try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data) } catch {
            throw TransformerError(.reverse, "not a keyed archive Foundation can read: \(error.localizedDescription)")
        }
        guard let object else { throw TransformerError(.reverse, "the keyed archive holds no root object") }
        return try Self.swiftValue(object)
    }

    /// Refuses, before Foundation sees them, bytes that are not a keyed archive and archives naming
    /// a class outside the allowed ones (Foundation would log a line and fail without the name).
    static func checkClasses(_ data: Data) throws(TransformerError) {
        guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            plist["$archiver"] as? String == "NSKeyedArchiver", let objects = plist["$objects"] as? [Any]
        else {
            throw TransformerError(
                .reverse, "the \(data.count) bytes are not a keyed archive (NSKeyedArchiver's property list)")
        }
        for case let entry as [String: Any] in objects {
            guard let name = entry["$classname"] as? String else { continue }
            if !allowedClassNames.contains(name) {
                throw TransformerError(
                    .reverse,
                    "the keyed archive holds a \(name), which is not one of the classes NSSecureUnarchiveFromData decodes (arrays, dictionaries, sets, strings, numbers, dates, data, URLs, UUIDs, null)"
                )
            }
        }
    }

    /// A decoded Foundation object in Swift's types: numbers by their stored type (a Boolean as
    /// `Bool`, an integer as `Int`, a floating-point number as `Double`).
    static func swiftValue(_ object: Any) throws(TransformerError) -> Any {
        switch object {
        case is NSNull: return NSNull()
        case let n as NSNumber:
            switch SiftEvaluation.Value(any: n) {
            case .bool(let b): return b
            case .integer(let i): return Int(i)
            default: return n.doubleValue
            }
        case let s as String: return s
        case let s as NSString: return s as String
        case let d as Date: return d
        case let d as Data: return d
        case let u as URL: return u
        case let u as UUID: return u
        case let d as NSDictionary:
            var out: [String: Any] = [:]
            for (k, v) in d {
                guard let k = k as? String else {
                    throw TransformerError(.reverse, "a dictionary key \(k) is not a string")
                }
                out[k] = try swiftValue(v)
            }
            return out
        case let a as NSArray:
            var out: [Any] = []
            for x in a { out.append(try swiftValue(x)) }
            return out
        case let s as NSSet:
            var out = Set<AnyHashable>()
            for x in s {
                guard let h = try swiftValue(x) as? AnyHashable else {
                    throw TransformerError(.reverse, "a set element \(x) is not hashable")
                }
                out.insert(h)
            }
            return out
        case let a as [Any]:
            var out: [Any] = []
            for x in a { out.append(try swiftValue(x)) }
            return out
        case let d as [String: Any]:
            var out: [String: Any] = [:]
            for (k, v) in d { out[k] = try swiftValue(v) }
            return out
        case let s as Set<AnyHashable>:
            var out = Set<AnyHashable>()
            for x in s { if let h = try swiftValue(x.base) as? AnyHashable { out.insert(h) } }
            return out
        default:
            throw TransformerError(.reverse, "the keyed archive holds a \(type(of: object)), not a class it may hold")
        }
    }
}
