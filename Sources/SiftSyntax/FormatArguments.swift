// Converts the Swift values passed for `%@`, `%K` and the printf-style conversions into constants.
// Swift callers pass typed values, so each conversion checks the value's type instead of reading a
// C va_list: `%d` takes an integer, `%f` a number, `%K` a string key path, `%@` almost anything.

import Foundation

extension LiteralValue {
    /// Converts a Swift value: nil/NSNull, Bool, integers, floating point, Decimal, String,
    /// Character, Date, Data, arrays, sets and `[String: Any]` dictionaries (recursively).
    ///
    /// ```swift
    /// try LiteralValue(any: [1, "a", nil] as [Any?])  // .array([.integer(1), .string("a"), .null])
    /// ```
    public init(any value: Any?) throws(SyntaxErrorKind) {
        guard let value = LiteralValue.unwrap(value) else {
            self = .null
            return
        }
        switch value {
        case let v as LiteralValue: self = v
        case let v as any PredicateArgumentConvertible: self = v.predicateArgument
        case is NSNull: self = .null
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .integer(Int64(v))
        case let v as Int8: self = .integer(Int64(v))
        case let v as Int16: self = .integer(Int64(v))
        case let v as Int32: self = .integer(Int64(v))
        case let v as Int64: self = .integer(v)
        case let v as UInt8: self = .integer(Int64(v))
        case let v as UInt16: self = .integer(Int64(v))
        case let v as UInt32: self = .integer(Int64(v))
        case let v as UInt: self = Int64(exactly: v).map(LiteralValue.integer) ?? .double(Double(v))
        case let v as UInt64: self = Int64(exactly: v).map(LiteralValue.integer) ?? .double(Double(v))
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Decimal: self = .decimal(v)
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Character: self = .string(String(v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as NSNumber: self = LiteralValue(number: v)
        case let v as [Any?]:
            var elements: [LiteralValue] = []
            elements.reserveCapacity(v.count)
            for e in v { elements.append(try LiteralValue(any: e)) }
            self = .array(elements)
        case let v as [String: Any?]:
            var d: [String: LiteralValue] = [:]
            for (k, e) in v { d[k] = try LiteralValue(any: e) }
            self = .dictionary(d)
        case let v as [AnyHashable: Any]:
            var d: [String: LiteralValue] = [:]
            for (k, e) in v {
                guard let key = k.base as? String else {
                    throw .unsupportedArgument("dictionary with \(type(of: k.base)) keys")
                }
                d[key] = try LiteralValue(any: e)
            }
            self = .dictionary(d)
        case let v as any Collection:
            // Sets and other collections become arrays; sets are unordered, so sort for a stable print.
            var elements: [LiteralValue] = []
            for e in v { elements.append(try LiteralValue(any: e)) }
            if v is any SetAlgebra { elements.sort { $0.sortKey < $1.sortKey } }
            self = .array(elements)
        default:
            throw .unsupportedArgument(String(describing: type(of: value)))
        }
    }

    private var sortKey: String { PredicatePrinter.literal(self) }

    init(number n: NSNumber) {
        switch String(cString: n.objCType) {
        case "B": self = .bool(n.boolValue)
        case "f", "d": self = .double(n.doubleValue)
        case "Q", "L", "I", "S", "C":
            self = Int64(exactly: n.uint64Value).map(LiteralValue.integer) ?? .double(n.doubleValue)
        default: self = .integer(n.int64Value)
        }
    }

    /// Strips any level of Optional wrapping hidden inside `Any`.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }
}

/// Converts one argument for one specifier.
enum FormatArgument {
    static func typeName(_ value: Any?) -> String {
        guard let v = LiteralValue.unwrap(value) else { return "nil" }
        if let literal = v as? LiteralValue {
            switch literal {
            case .null: return "nil"
            case .bool: return "a boolean"
            case .integer(let i): return "the integer \(i)"
            case .double(let d): return "the number \(d)"
            case .decimal: return "a decimal number"
            case .string(let s): return "the string \"\(s)\""
            case .date: return "a date"
            case .data: return "data"
            case .array: return "an array"
            case .dictionary: return "a dictionary"
            case .object(let r): return "the object \(r.uri)"
            }
        }
        return String(describing: type(of: v))
    }

    static func integer(_ value: Any?) -> Int64? {
        switch LiteralValue.unwrap(value) {
        case let v as Int: Int64(v)
        case let v as Int8: Int64(v)
        case let v as Int16: Int64(v)
        case let v as Int32: Int64(v)
        case let v as Int64: v
        case let v as UInt: Int64(exactly: v)
        case let v as UInt8: Int64(v)
        case let v as UInt16: Int64(v)
        case let v as UInt32: Int64(v)
        case let v as UInt64: Int64(exactly: v)
        case let v as LiteralValue: if case .integer(let i) = v { i } else { nil }
        default: nil
        }
    }

    /// The constant for a numeric or character conversion such as `%d`, `%hi`, `%f`, `%c`, `%s`.
    static func convert(_ spec: FormatSpecifier, _ value: Any?) throws(SyntaxErrorKind) -> LiteralValue {
        let found = typeName(value)
        switch spec.conversion {
        case UInt8(ascii: "f"), UInt8(ascii: "e"), UInt8(ascii: "g"):
            if let i = integer(value) { return .double(Double(i)) }
            switch LiteralValue.unwrap(value) {
            case let v as Double: return .double(v)
            case let v as Float: return .double(Double(v))
            case let v as LiteralValue: if case .double(let d) = v { return .double(d) }
            default: break
            }
            throw .wrongArgumentType(specifier: spec.text, expected: "a number", found: found)
        case UInt8(ascii: "s"):
            switch LiteralValue.unwrap(value) {
            case let v as String: return .string(v)
            case let v as Substring: return .string(String(v))
            case .string(let v) as LiteralValue: return .string(v)
            default: throw .wrongArgumentType(specifier: spec.text, expected: "a string", found: found)
            }
        case UInt8(ascii: "c"):
            switch LiteralValue.unwrap(value) {
            case let v as Character: return .string(String(v))
            case let v as String where v.count == 1: return .string(v)
            case .string(let v) as LiteralValue where v.count == 1: return .string(v)
            default:
                if let i = integer(value), let s = UInt32(exactly: i).flatMap(Unicode.Scalar.init) {
                    return .string(String(Character(s)))
                }
                throw .wrongArgumentType(specifier: spec.text, expected: "a character", found: found)
            }
        default:
            guard let i = integer(value) else {
                throw .wrongArgumentType(specifier: spec.text, expected: "an integer", found: found)
            }
            let unsigned = [UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "o")].contains(spec.conversion)
            if unsigned && i < 0 {
                throw .wrongArgumentType(specifier: spec.text, expected: "a non-negative integer", found: "\(i)")
            }
            let fits: Bool
            switch spec.bits {
            case 16: fits = unsigned ? UInt16(exactly: i) != nil : Int16(exactly: i) != nil
            case 8: fits = unsigned ? UInt8(exactly: i) != nil : Int8(exactly: i) != nil
            default: fits = true
            }
            guard fits else {
                throw .wrongArgumentType(specifier: spec.text, expected: "an integer that fits its size", found: "\(i)")
            }
            return .integer(i)
        }
    }

    /// The key path components for `%K`: any non-empty string, split at "." as KVC does
    /// (`KeyPathComponent.split`); each component is a key, or a collection operator when it is
    /// one of `KeyPathComponent.collectionOperators` (`"items.@count"` counts, as on Apple).
    static func keyPath(_ value: Any?) throws(SyntaxErrorKind) -> [String] {
        let text: String
        switch LiteralValue.unwrap(value) {
        case let v as String: text = v
        case let v as Substring: text = String(v)
        case let v as LiteralValue:
            guard case .string(let s) = v else { fallthrough }
            text = s
        default: throw .wrongArgumentType(specifier: "%K", expected: "a string key path", found: typeName(value))
        }
        guard !text.isEmpty else { throw .invalidKeyPathArgument(text) }
        return KeyPathComponent.split(text)
    }
}
