// Writes keyed archives (NSKeyedArchiver's format: a binary property list of `$objects` that refer
// to each other by UID) for the values the keyed-archiving transformer takes. Foundation's own
// archiver on Linux keeps one object for numbers that compare equal, so `true` beside `1`, or
// `1.0` beside `1`, came back as the first one's type; this writer gives every number its own
// entry, as Apple's archiver does for values of different types, and writes the archive's binary
// property list itself, UIDs included (Foundation offers no way to write a UID).

import Foundation
import SiftEvaluation

/// One keyed archive being written: `add` appends a value's objects and answers its UID.
struct KeyedArchiveWriter {
    /// A property-list value of the archive, UIDs included.
    indirect enum Node {
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case data(Data)
        case uid(Int)
        case array([Node])
        case dictionary([(String, Node)])
    }

    private var objects: [Node] = [.string("$null")]
    private var classes: [String: Int] = [:]

    /// The archive of `value`, whose parts must all be of the allowed types.
    static func archive(_ value: Any) throws(TransformerError) -> Data {
        var w = KeyedArchiveWriter()
        let root = try w.add(value, at: "the value")
        let top: Node = .dictionary([
            ("$archiver", .string("NSKeyedArchiver")), ("$objects", .array(w.objects)),
            ("$top", .dictionary([("root", .uid(root))])), ("$version", .integer(100000)),
        ])
        return BinaryPropertyList.data(top)
    }

    /// Appends `value` and answers its UID.
    mutating func add(_ value: Any, at path: String) throws(TransformerError) -> Int {
        if let n = value as? NSNumber, type(of: value) is NSNumber.Type { return append(Self.number(n)) }
        switch value {
        case let v as SiftEvaluation.Value: return try add(value: v, at: path)
        case let t as TransformedValue: return try add(t.object, at: path)
        case is NSNull: return object("NSNull", [])
        case let b as Bool: return append(.bool(b))
        case let s as String: return append(.string(s))
        case let s as NSString: return append(.string(s as String))
        case let d as Date: return object("NSDate", [("NS.time", .real(d.timeIntervalSinceReferenceDate))])
        case let d as Data: return append(.data(d))
        case let u as URL:
            let relative = append(.string(u.absoluteString))
            return object("NSURL", [("NS.base", .uid(0)), ("NS.relative", .uid(relative))])
        case let u as UUID: return object("NSUUID", [("NS.uuidbytes", .data(withUnsafeBytes(of: u.uuid) { Data($0) }))])
        case let d as Decimal: return append(.real(NSDecimalNumber(decimal: d).doubleValue))
        case let i as any BinaryInteger:
            guard let x = Int64(exactly: i) else {
                throw TransformerError(.transform, "\(path): \(i) does not fit in 64 bits")
            }
            return append(.integer(x))
        case let d as any BinaryFloatingPoint: return append(.real(Double(d)))
        case let d as [String: Any]: return try dictionary(d.map { ($0.key, $0.value) }, at: path)
        case let d as NSDictionary:
            var pairs: [(String, Any)] = []
            for (k, v) in d {
                guard let k = k as? String else {
                    throw TransformerError(.transform, "\(path): a dictionary key \(k) is not a string")
                }
                pairs.append((k, v))
            }
            return try dictionary(pairs, at: path)
        case let a as [Any]:
            return try collection("NSArray", a.enumerated().map { ($0.element, "\(path)[\($0.offset)]") })
        case let a as NSArray:
            return try collection("NSArray", a.enumerated().map { ($0.element, "\(path)[\($0.offset)]") })
        case let s as any SetAlgebra & Sequence:
            return try collection("NSSet", s.map { ($0 as Any, "\(path) (an element of a set)") })
        case let s as NSSet: return try collection("NSSet", s.map { ($0, "\(path) (an element of a set)") })
        default:
            throw TransformerError(
                .transform,
                "\(path) is a \(type(of: value)), not one of the types NSSecureUnarchiveFromData archives (arrays, dictionaries with string keys, sets, strings, numbers, dates, data, URLs, UUIDs, NSNull)"
            )
        }
    }

    /// Appends a Sift value (a transformed value by its object).
    private mutating func add(value v: SiftEvaluation.Value, at path: String) throws(TransformerError) -> Int {
        switch v {
        case .null: return object("NSNull", [])
        case .bool(let b): return append(.bool(b))
        case .integer(let i): return append(.integer(i))
        case .double(let d): return append(.real(d))
        case .decimal(let d): return try add(d, at: path)
        case .string(let s): return append(.string(s))
        case .date(let d): return try add(d, at: path)
        case .data(let d): return append(.data(d))
        case .array(let xs):
            return try collection("NSArray", xs.enumerated().map { ($0.element, "\(path)[\($0.offset)]") })
        case .set(let xs): return try collection("NSSet", xs.map { ($0, "\(path) (an element of a set)") })
        case .dictionary(let d): return try dictionary(d.map { ($0.key, $0.value) }, at: path)
        case .object(let t as TransformedValue): return try add(t.object, at: path)
        case .object(let o):
            guard let d = o.dictionaryValue else {
                throw TransformerError(.transform, "\(path) is a \(type(of: o)), which lists no keys to archive")
            }
            return try dictionary(d.map { ($0.key, $0.value) }, at: path)
        }
    }

    private mutating func dictionary(_ pairs: [(String, Any)], at path: String) throws(TransformerError) -> Int {
        let slot = append(.string(""))
        var keys: [Node] = []
        var values: [Node] = []
        for (k, v) in pairs.sorted(by: { $0.0 < $1.0 }) {
            keys.append(.uid(append(.string(k))))
            values.append(.uid(try add(v, at: "\(path)[\"\(k)\"]")))
        }
        objects[slot] = .dictionary([
            ("$class", .uid(classUID("NSDictionary"))), ("NS.keys", .array(keys)), ("NS.objects", .array(values)),
        ])
        return slot
    }

    private mutating func collection(_ name: String, _ elements: [(Any, String)]) throws(TransformerError) -> Int {
        let slot = append(.string(""))
        var refs: [Node] = []
        for (x, path) in elements { refs.append(.uid(try add(x, at: path))) }
        objects[slot] = .dictionary([("$class", .uid(classUID(name))), ("NS.objects", .array(refs))])
        return slot
    }

    /// An object of class `name` with `fields`.
    private mutating func object(_ name: String, _ fields: [(String, Node)]) -> Int {
        let slot = append(.string(""))
        objects[slot] = .dictionary([("$class", .uid(classUID(name)))] + fields)
        return slot
    }

    /// The UID of class `name`'s entry, written once.
    private mutating func classUID(_ name: String) -> Int {
        if let uid = classes[name] { return uid }
        let uid = append(
            .dictionary([("$classes", .array([.string(name), .string("NSObject")])), ("$classname", .string(name))]))
        classes[name] = uid
        return uid
    }

    private mutating func append(_ node: Node) -> Int {
        objects.append(node)
        return objects.count - 1
    }

    /// A number by its stored type.
    private static func number(_ n: NSNumber) -> Node {
        switch SiftEvaluation.Value(any: n) {
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        default: return .real(n.doubleValue)
        }
    }
}

/// Apple's binary property list format (`bplist00`): a header, the objects, a table of their
/// offsets, and a 32-byte trailer giving the sizes, the object count, the top object and the
/// table's offset. Objects are written in the order they are met, the top one first.
enum BinaryPropertyList {
    static func data(_ top: KeyedArchiveWriter.Node) -> Data {
        var flat: [Flat] = []
        _ = flatten(top, into: &flat)
        let refSize = byteCount(UInt64(flat.count))
        var out = Data("bplist00".utf8)
        var offsets: [Int] = []
        for f in flat {
            offsets.append(out.count)
            write(f, refSize: refSize, to: &out)
        }
        let tableOffset = out.count
        let offsetSize = byteCount(UInt64(tableOffset))
        for o in offsets { appendBigEndian(UInt64(o), size: offsetSize, to: &out) }
        out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
        appendBigEndian(UInt64(flat.count), size: 8, to: &out)
        appendBigEndian(0, size: 8, to: &out)
        appendBigEndian(UInt64(tableOffset), size: 8, to: &out)
        return out
    }

    /// A node with its children replaced by their object numbers.
    private enum Flat {
        case scalar(KeyedArchiveWriter.Node)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private static func flatten(_ node: KeyedArchiveWriter.Node, into flat: inout [Flat]) -> Int {
        let index = flat.count
        switch node {
        case .array(let xs):
            flat.append(.array([]))
            let refs = xs.map { flatten($0, into: &flat) }
            flat[index] = .array(refs)
        case .dictionary(let pairs):
            flat.append(.dictionary(keys: [], values: []))
            let keys = pairs.map { flatten(.string($0.0), into: &flat) }
            let values = pairs.map { flatten($0.1, into: &flat) }
            flat[index] = .dictionary(keys: keys, values: values)
        default:
            flat.append(.scalar(node))
        }
        return index
    }

    private static func write(_ f: Flat, refSize: Int, to out: inout Data) {
        switch f {
        case .array(let refs):
            marker(0xA, refs.count, to: &out)
            for r in refs { appendBigEndian(UInt64(r), size: refSize, to: &out) }
        case .dictionary(let keys, let values):
            marker(0xD, keys.count, to: &out)
            for r in keys + values { appendBigEndian(UInt64(r), size: refSize, to: &out) }
        case .scalar(let node): write(scalar: node, to: &out)
        }
    }

    private static func write(scalar node: KeyedArchiveWriter.Node, to out: inout Data) {
        switch node {
        case .bool(let b): out.append(b ? 0x09 : 0x08)
        case .integer(let i): integer(i, to: &out)
        case .real(let d):
            out.append(0x23)
            appendBigEndian(d.bitPattern, size: 8, to: &out)
        case .data(let d):
            marker(0x4, d.count, to: &out)
            out.append(d)
        case .string(let s):
            if s.utf8.allSatisfy({ $0 < 0x80 }) {
                marker(0x5, s.utf8.count, to: &out)
                out.append(contentsOf: s.utf8)
            } else {
                let units = Array(s.utf16)
                marker(0x6, units.count, to: &out)
                for u in units { appendBigEndian(UInt64(u), size: 2, to: &out) }
            }
        case .uid(let u):
            let size = byteCount(UInt64(u))
            out.append(0x80 | UInt8(size - 1))
            appendBigEndian(UInt64(u), size: size, to: &out)
        case .array, .dictionary: preconditionFailure("collections are flattened before they are written")
        }
    }

    /// An integer object: non-negative ones in 1, 2, 4 or 8 bytes, negative ones in 8.
    private static func integer(_ i: Int64, to out: inout Data) {
        let size = i < 0 ? 8 : byteCount(UInt64(i))
        out.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(bitPattern: i), size: size, to: &out)
    }

    /// A type nibble with a count: in the marker below 15, else 15 and an integer object.
    private static func marker(_ type: UInt8, _ count: Int, to out: inout Data) {
        if count < 15 {
            out.append(type << 4 | UInt8(count))
        } else {
            out.append(type << 4 | 0xF)
            integer(Int64(count), to: &out)
        }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `n`.
    private static func byteCount(_ n: UInt64) -> Int {
        n <= 0xFF ? 1 : n <= 0xFFFF ? 2 : n <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func appendBigEndian(_ v: UInt64, size: Int, to out: inout Data) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
        }
    }
}
