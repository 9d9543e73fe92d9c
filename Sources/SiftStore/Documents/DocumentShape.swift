// The shapes JSON documents take, key by key: scalars, dates, objects (with their keys' shapes)
// and arrays (with their element's shape), several at once for a mixed key. A model carries them
// (they are `Codable`, as in a model file), the import finds them by reading the documents, and
// `DocumentLayout` plans tables from them. `DocumentTag` is how a row's shape column says which
// shape a value took; `DocumentKind` is how a value says it.

import Foundation

/// The shapes one key took over a set of JSON documents (or, for the root, the shapes of the
/// documents themselves). More than one makes a mixed key.
///
/// ```swift
/// var tags = DocumentShape()
/// tags.scalar = true                  // "tags": "a" in some documents
/// tags.array = true                   // "tags": ["a", "b"] in others
/// tags.element = .scalar
/// ```
public struct DocumentShape: Codable, Hashable, Sendable {
    /// Booleans, numbers or strings.
    public var scalar: Bool
    /// `{"$date": seconds since 1970}` values.
    public var date: Bool
    /// Objects, with the shapes of their keys.
    public var object: DocumentObjectShape?
    /// Arrays.
    public var array: Bool
    /// What the arrays hold; nil while only empty arrays and null elements were seen.
    public var element: DocumentElementShape?
    /// Why the key cannot be stored (an array of arrays…): it is left out.
    public var conflict: String?

    /// No shape yet: null or missing everywhere.
    public init(
        scalar: Bool = false, date: Bool = false, object: DocumentObjectShape? = nil, array: Bool = false,
        element: DocumentElementShape? = nil, conflict: String? = nil
    ) {
        self.scalar = scalar
        self.date = date
        self.object = object
        self.array = array
        self.element = element
        self.conflict = conflict
    }

    /// How many of scalar, date, object and array were seen.
    public var kindCount: Int { [scalar, date, object != nil, array].filter { $0 }.count }

    /// The keys of a shape in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case scalar, date, object, array, element, conflict }

    /// Decodes shapes; a shape left out was not seen.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        scalar = try c.decodeIfPresent(Bool.self, forKey: .scalar) ?? false
        date = try c.decodeIfPresent(Bool.self, forKey: .date) ?? false
        object = try c.decodeIfPresent(DocumentObjectShape.self, forKey: .object)
        array = try c.decodeIfPresent(Bool.self, forKey: .array) ?? false
        element = try c.decodeIfPresent(DocumentElementShape.self, forKey: .element)
        conflict = try c.decodeIfPresent(String.self, forKey: .conflict)
    }

    /// Encodes the shapes seen, leaving out the others.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if scalar { try c.encode(true, forKey: .scalar) }
        if date { try c.encode(true, forKey: .date) }
        try c.encodeIfPresent(object, forKey: .object)
        if array { try c.encode(true, forKey: .array) }
        try c.encodeIfPresent(element, forKey: .element)
        try c.encodeIfPresent(conflict, forKey: .conflict)
    }
}

/// The keys of the objects found at one place, in the order they were first seen.
public struct DocumentObjectShape: Codable, Hashable, Sendable {
    /// One key and its shapes.
    public struct Key: Codable, Hashable, Sendable {
        /// The key as it is written in the documents.
        public var name: String
        /// The shapes its values took.
        public var shape: DocumentShape
        /// A key with its shapes.
        public init(name: String, shape: DocumentShape) {
            self.name = name
            self.shape = shape
        }

        /// The keys of a key's entry in a model file.
        enum CodingKeys: String, CodingKey, CaseIterable { case name, shape }
    }

    /// The keys in order of first appearance.
    public var keys: [Key]

    /// The one key of an object shape in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case keys }

    /// Objects with these keys.
    public init(keys: [Key] = []) { self.keys = keys }
}

/// The one kind of element every array of a key holds: `"scalar"`, `"date"` or
/// `{"object": {"keys": […]}}` in a model file.
public indirect enum DocumentElementShape: Codable, Hashable, Sendable {
    /// Booleans, numbers or strings.
    case scalar
    /// Dates.
    case date
    /// Objects, with the shapes of their keys.
    case object(DocumentObjectShape)

    /// The one key of an object element shape in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case object }

    /// Decodes `"scalar"`, `"date"` or `{"object": …}`.
    public init(from decoder: any Decoder) throws {
        if let word = try? decoder.singleValueContainer().decode(String.self) {
            switch word {
            case "scalar": self = .scalar
            case "date": self = .date
            default:
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath,
                        debugDescription: "unknown element shape '\(word)' (scalar, date or {\"object\": …})"))
            }
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = .object(try c.decode(DocumentObjectShape.self, forKey: .object))
    }

    /// Encodes `"scalar"`, `"date"` or `{"object": …}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .scalar:
            var c = encoder.singleValueContainer()
            try c.encode("scalar")
        case .date:
            var c = encoder.singleValueContainer()
            try c.encode("date")
        case .object(let o):
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(o, forKey: .object)
        }
    }
}

/// What a JSON value is, as the layout tells documents apart.
public enum DocumentKind: Sendable {
    /// A boolean, number or string.
    case scalar
    /// `{"$date": seconds since 1970}`.
    case date
    /// An object (not a date).
    case object
    /// An array.
    case array
}

/// The shape tags, stable across stores: what a row's shape column holds.
package enum DocumentTag {
    /// A boolean, number or string.
    package static let scalar: Int64 = 1
    /// A date.
    package static let date: Int64 = 2
    /// An object (for SELF: the row itself).
    package static let object: Int64 = 3
    /// An array.
    package static let array: Int64 = 4
}
