// Turns any `Encodable` value into a `Value` tree, so Codable types can be filtered without writing
// a conformance: the keys a predicate sees are the type's coding keys, exactly as its JSON would
// have them. Dates and Data stay dates and data (not numbers or base64), which JSON could not keep.

import Foundation

/// Encodes `Encodable` values into ``Value``.
///
/// ```swift
/// struct Person: Codable { var name: String; var age: Int? }
/// try ValueEncoder.encode(Person(name: "Ann", age: nil))   // ["name": "Ann"] (age is nil)
/// ```
public enum ValueEncoder {
    /// The value tree of `value`.
    public static func encode(_ value: some Encodable) throws -> Value {
        let root = EncodingNode()
        try EncoderState(node: root, codingPath: []).encodeValue(value)
        return root.value
    }

    /// Encodes values that already have a direct `Value` form without going through `encode(to:)`.
    static func direct(_ value: Any) -> Value? {
        switch value {
        case let d as Date: .date(d)
        case let d as Data: .data(d)
        case let d as Decimal: .decimal(d)
        case let u as URL: .string(u.absoluteString)
        case let u as UUID: .string(u.uuidString)
        default: nil
        }
    }
}

/// A mutable slot the containers write into; turned into a `Value` once encoding finishes.
private final class EncodingNode {
    enum Content {
        case empty
        case single(Value)
        case keyed([String: EncodingNode])
        case unkeyed([EncodingNode])
    }
    var content: Content = .empty

    var value: Value {
        switch content {
        case .empty: .null
        case .single(let v): v
        case .keyed(let d): .dictionary(d.mapValues(\.value))
        case .unkeyed(let a): .array(a.map(\.value))
        }
    }
}

private struct EncoderState: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed([:]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(state: self) }

    func encodeValue(_ value: some Encodable) throws {
        if let v = ValueEncoder.direct(value) {
            node.content = .single(v)
            return
        }
        try value.encode(to: self)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> EncodingNode {
        guard case .keyed(var d) = node.content else { return EncodingNode() }
        let n = EncodingNode()
        d[key.stringValue] = n
        node.content = .keyed(d)
        return n
    }

    mutating func encodeNil(forKey key: Key) throws { child(key).content = .single(.null) }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try EncoderState(node: child(key), codingPath: codingPath + [key]).encodeValue(value)
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type, forKey key: Key) -> KeyedEncodingContainer<N> {
        EncoderState(node: child(key), codingPath: codingPath + [key]).container(keyedBy: N.self)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        EncoderState(node: child(key), codingPath: codingPath + [key]).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { EncoderState(node: node, codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        EncoderState(node: child(key), codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ i: Int) { intValue = i }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var count: Int { if case .unkeyed(let a) = node.content { a.count } else { 0 } }

    private func append() -> EncodingNode {
        guard case .unkeyed(var a) = node.content else { return EncodingNode() }
        let n = EncodingNode()
        a.append(n)
        node.content = .unkeyed(a)
        return n
    }

    mutating func encodeNil() throws { append().content = .single(.null) }
    mutating func encode(_ value: some Encodable) throws {
        let path = codingPath + [IndexKey(count)]
        try EncoderState(node: append(), codingPath: path).encodeValue(value)
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy: N.Type) -> KeyedEncodingContainer<N> {
        EncoderState(node: append(), codingPath: codingPath).container(keyedBy: N.self)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        EncoderState(node: append(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { EncoderState(node: append(), codingPath: codingPath) }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let state: EncoderState
    var codingPath: [any CodingKey] { state.codingPath }

    mutating func encodeNil() throws { state.node.content = .single(.null) }
    mutating func encode(_ value: Bool) throws { state.node.content = .single(.bool(value)) }
    mutating func encode(_ value: String) throws { state.node.content = .single(.string(value)) }
    mutating func encode(_ value: Double) throws { state.node.content = .single(.double(value)) }
    mutating func encode(_ value: Float) throws { state.node.content = .single(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { state.node.content = .single(.integer(value)) }
    mutating func encode(_ value: UInt) throws { state.node.content = .single(Value(any: value)) }
    mutating func encode(_ value: UInt8) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { state.node.content = .single(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { state.node.content = .single(Value(any: value)) }
    mutating func encode(_ value: some Encodable) throws { try state.encodeValue(value) }
}
