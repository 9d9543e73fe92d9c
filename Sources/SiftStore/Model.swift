// The managed object model: entities with attributes, relationships (with inverses and delete
// rules), inheritance and uniqueness constraints, in Core Data's vocabulary. A model is a plain
// `Sendable` value, built in Swift or decoded from a JSON model file, validated once when it is
// made (so the store and the context can rely on every name resolving), and identified by a
// version hash over its canonical JSON form, which the store keeps to refuse a model it was not
// created with.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSyntax

/// The types an attribute can have: Core Data's, plus `dynamic` for JSON whose values disagree.
///
/// ```swift
/// let age = AttributeDescription("age", .integer16, optional: false, minValue: 0)
/// AttributeType(rawValue: "string")   // .string, the name a model file uses
/// ```
public enum AttributeType: String, Codable, Hashable, Sendable, CaseIterable {
    /// Core Data's attribute types.
    case integer16, integer32, integer64, double, float, decimal, string, boolean, date, binary
    /// A UUID or a URL, stored as text.
    case uuid, uri
    /// Any value (a `Codable` one through its encoding), kept exactly in Sift's binary value form
    /// (an integer 1 and a double 1.0 stay apart); predicates see the value.
    case transformable
    /// Each value keeps its own kind (integer, double or string), as in a JSON document whose
    /// records disagree; stored in an untyped column.
    case dynamic
    /// A JSON value of any of the attribute's declared `shapes` (scalars, dates, arrays of either):
    /// kept exactly, and stored per shape too, so SQL queries each row by the shape it has.
    case mixed

    /// "a" or "an", for messages.
    var article: String { isInteger ? "an" : "a" }

    var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
    var isNumeric: Bool { isInteger || self == .double || self == .float || self == .decimal }

    /// The inclusive range of an integer type.
    var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}

/// What deleting an object does to the objects a relationship reaches.
///
/// ```swift
/// // A department that still has employees cannot be deleted.
/// let staff = RelationshipDescription("staff", to: "Employee", toMany: true, deleteRule: .deny)
/// ```
public enum DeleteRule: String, Codable, Hashable, Sendable, CaseIterable {
    /// Remove the deleted object from the inverse relationship of the objects left behind.
    case nullify
    /// Delete the destination objects too (each with its own rules).
    case cascade
    /// Refuse the delete while the relationship is not empty.
    case deny
    /// Leave the destination objects untouched (they may keep pointing at the deleted object).
    case noAction
}

/// An attribute: a named value of one type, with its validation rules.
///
/// ```swift
/// let age = AttributeDescription("age", .integer16, optional: true, minValue: 0, maxValue: 150)
/// let email = AttributeDescription("email", .string, regularExpression: "[^@]+@[^@]+")
/// ```
public struct AttributeDescription: Codable, Hashable, Sendable {
    /// The attribute's key.
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether nil is allowed when the object is saved (Core Data's default: true).
    public var isOptional: Bool
    /// The value a newly inserted object starts with (nil: none), in the attribute's type.
    public var defaultValue: StoredValue?
    /// Numeric attributes: inclusive bounds.
    public var minValue: Double?
    /// The inclusive upper bound of a numeric attribute.
    public var maxValue: Double?
    /// Strings (in characters) and binary data (in bytes): inclusive bounds on the length.
    public var minLength: Int?
    /// The inclusive upper bound on the length.
    public var maxLength: Int?
    /// Strings: a regular expression the whole value must match (PCRE2, as `MATCHES`).
    public var regularExpression: String?
    /// A collection of values of `type` (an ordered array, kept in a child table), instead of one.
    public var isCollection: Bool
    /// Mixed attributes only: the shapes their values take.
    public var shapes: MixedShapes?
    /// Whether a store's persistent history keeps this attribute's value when an object is
    /// deleted (the delete's ``HistoryChange/tombstone``; Core Data's "preserve after deletion").
    /// False by default. In a model file: `"preservesValueInHistoryOnDeletion": true`.
    ///
    /// ```swift
    /// let name = AttributeDescription("name", .string, preservesValueInHistoryOnDeletion: true)
    /// ```
    public var preservesValueInHistoryOnDeletion: Bool
    /// Transformable attributes only: the name of the ``AttributeTransformer`` that turns the
    /// attribute's values into the `Data` its column keeps (nil: `Codable` values, kept exactly).
    /// The transformer must be registered under this name (``AttributeTransformers``) before a
    /// store with the model is opened. In a model file: `"valueTransformerName": "ColorTransformer"`.
    ///
    /// ```swift
    /// let color = AttributeDescription("color", .transformable, valueTransformerName: "ColorTransformer")
    /// ```
    public var valueTransformerName: String?
    /// Whether the store keeps an SQL index on the attribute's column, so predicates and sorts on
    /// it read the index instead of every row (Core Data's "Indexed"). In a model file:
    /// `"indexed": true`. Attributes kept in a column of their own only (not collections,
    /// transformable or mixed ones).
    ///
    /// ```swift
    /// let title = AttributeDescription("title", .string, indexed: true)
    /// ```
    public var isIndexed: Bool
    /// The application's own notes on the attribute (Core Data's user info): kept with the model,
    /// never read by the store. In a model file: `"userInfo": {"unit": "kg"}`.
    public var userInfo: [String: String] = [:]
    /// The name this attribute had in an earlier version of the model (Core Data's renaming identifier,
    /// Xcode's "Renaming ID"), for a migration to follow the rename; nil when it was not renamed.
    /// In a model file: `"renamingIdentifier": "fullName"`.
    public var renamingIdentifier: String?
    /// Whether the attribute is transient (Core Data's "Transient"): its objects hold a value
    /// (starting at the default, or nil), a change makes the object updated, but the store keeps no
    /// column for it, a save writes nothing for it, and an object read from the store starts at the
    /// default again. A fetch request cannot name it (kind `invalid-operation`, as Core Data's
    /// SQLite store refuses them): filter the fetched objects in memory instead. Not validated at
    /// save; not indexed. In a model file: `"transient": true`.
    ///
    /// ```swift
    /// var draft = AttributeDescription("draft", .string)
    /// draft.isTransient = true
    /// ```
    public var isTransient = false
    /// The expression a derived attribute's value is computed from (Core Data's derived attributes,
    /// `derivationExpression`): an expression of the predicate language on the object (`SELF`),
    /// such as `posts.@count`, `department.name`, `lowercase:(title)` or `now()`. Each save computes
    /// it for every object it inserts or updates, and for every object whose value reads an object
    /// the save changes (through the inverses of the relationships the expression reads, which must
    /// exist); the result is coerced to the attribute's type, validated and stored, so predicates
    /// and sorts read it as any attribute. An application cannot set it (`invalid-operation`). In a
    /// model file: `"derivationExpression": "posts.@count"`.
    ///
    /// ```swift
    /// var postCount = AttributeDescription("postCount", .integer64)
    /// postCount.derivationExpression = "posts.@count"
    /// ```
    public var derivationExpression: String?

    /// An attribute with its rules; only the name and type are required.
    public init(
        _ name: String, _ type: AttributeType, optional: Bool = true, defaultValue: StoredValue? = nil,
        minValue: Double? = nil, maxValue: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        regularExpression: String? = nil, collection: Bool = false, shapes: MixedShapes? = nil,
        preservesValueInHistoryOnDeletion: Bool = false, valueTransformerName: String? = nil, indexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.regularExpression = regularExpression
        self.isCollection = collection
        self.shapes = shapes
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.valueTransformerName = valueTransformerName
        self.isIndexed = indexed
    }

    /// The keys of an attribute in a model file (what the decoder reads, and all it accepts).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, type, optional
        case defaultValue = "default"
        case minValue = "min"
        case maxValue = "max"
        case
            minLength, maxLength
        case regularExpression = "regex"
        case collection, shapes, preservesValueInHistoryOnDeletion, valueTransformerName
        case isIndexed = "indexed"
        case userInfo, renamingIdentifier
        case isTransient = "transient"
        case derivationExpression
    }

    /// Decodes an attribute from a model file, applying the defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        type = try c.decode(AttributeType.self, forKey: .type)
        isOptional = try c.decodeIfPresent(Bool.self, forKey: .optional) ?? true
        defaultValue = try c.decodeIfPresent(StoredValue.self, forKey: .defaultValue)
        minValue = try c.decodeIfPresent(Double.self, forKey: .minValue)
        maxValue = try c.decodeIfPresent(Double.self, forKey: .maxValue)
        minLength = try c.decodeIfPresent(Int.self, forKey: .minLength)
        maxLength = try c.decodeIfPresent(Int.self, forKey: .maxLength)
        regularExpression = try c.decodeIfPresent(String.self, forKey: .regularExpression)
        isCollection = try c.decodeIfPresent(Bool.self, forKey: .collection) ?? false
        shapes = try c.decodeIfPresent(MixedShapes.self, forKey: .shapes)
        preservesValueInHistoryOnDeletion =
            try c.decodeIfPresent(Bool.self, forKey: .preservesValueInHistoryOnDeletion) ?? false
        valueTransformerName = try c.decodeIfPresent(String.self, forKey: .valueTransformerName)
        isIndexed = try c.decodeIfPresent(Bool.self, forKey: .isIndexed) ?? false
        userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:]
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
        isTransient = try c.decodeIfPresent(Bool.self, forKey: .isTransient) ?? false
        derivationExpression = try c.decodeIfPresent(String.self, forKey: .derivationExpression)
    }

    /// Encodes the attribute; options that are unset are left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(type, forKey: .type)
        if !isOptional { try c.encode(false, forKey: .optional) }
        try c.encodeIfPresent(defaultValue, forKey: .defaultValue)
        try c.encodeIfPresent(minValue, forKey: .minValue)
        try c.encodeIfPresent(maxValue, forKey: .maxValue)
        try c.encodeIfPresent(minLength, forKey: .minLength)
        try c.encodeIfPresent(maxLength, forKey: .maxLength)
        try c.encodeIfPresent(regularExpression, forKey: .regularExpression)
        if isCollection { try c.encode(true, forKey: .collection) }
        try c.encodeIfPresent(shapes, forKey: .shapes)
        if preservesValueInHistoryOnDeletion { try c.encode(true, forKey: .preservesValueInHistoryOnDeletion) }
        try c.encodeIfPresent(valueTransformerName, forKey: .valueTransformerName)
        if isIndexed { try c.encode(true, forKey: .isIndexed) }
        if !userInfo.isEmpty { try c.encode(userInfo, forKey: .userInfo) }
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
        if isTransient { try c.encode(true, forKey: .isTransient) }
        try c.encodeIfPresent(derivationExpression, forKey: .derivationExpression)
    }
}

/// The shapes the values of a mixed attribute take, as JSON whose records disagree: scalars
/// (booleans, numbers, strings, each keeping its kind), dates, and arrays whose elements are all
/// scalars or all dates (nulls allowed). In a model file:
///
/// ```json
/// {"name": "tags", "type": "mixed", "shapes": {"scalar": true, "array": "scalar"}}
/// ```
///
/// ```swift
/// let tags = AttributeDescription("tags", .mixed, shapes: MixedShapes(scalar: true, array: .scalar))
/// ```
public struct MixedShapes: Codable, Hashable, Sendable {
    /// What the elements of the arrays are.
    public enum Elements: String, Codable, Hashable, Sendable {
        /// Booleans, numbers and strings (`"array": "scalar"` in a model file).
        case scalar
        /// Dates (`"array": "date"` in a model file).
        case date
    }

    /// Whether values may be scalars: booleans, numbers or strings, each keeping its kind.
    public var scalar: Bool
    /// Whether values may be dates.
    public var date: Bool
    /// Arrays, and what their elements are (nil: no arrays).
    public var array: Elements?

    /// The shapes a mixed attribute allows; none by default.
    ///
    /// ```swift
    /// MixedShapes(scalar: true, date: true)   // scalars or dates, no arrays
    /// MixedShapes(array: .date)               // arrays of dates only
    /// ```
    public init(scalar: Bool = false, date: Bool = false, array: Elements? = nil) {
        self.scalar = scalar
        self.date = date
        self.array = array
    }

    /// The keys of `shapes` in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case scalar, date, array }

    /// Decodes the shapes from a model file; a missing `scalar` or `date` is `false`, a missing `array` nil.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        scalar = try c.decodeIfPresent(Bool.self, forKey: .scalar) ?? false
        date = try c.decodeIfPresent(Bool.self, forKey: .date) ?? false
        array = try c.decodeIfPresent(Elements.self, forKey: .array)
    }

    /// Encodes the shapes, leaving out those not allowed.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if scalar { try c.encode(true, forKey: .scalar) }
        if date { try c.encode(true, forKey: .date) }
        try c.encodeIfPresent(array, forKey: .array)
    }
}

/// A relationship to objects of another entity.
///
/// ```swift
/// let kids = RelationshipDescription("kids", to: "Kid", toMany: true, inverse: "parent", deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Codable, Hashable, Sendable {
    /// The relationship's key.
    public var name: String
    /// The destination entity.
    public var destination: String
    /// Whether the relationship holds a collection of objects.
    public var isToMany: Bool
    /// To-many only: the objects keep the order they were added in.
    public var isOrdered: Bool
    /// The relationship of the destination that points back (Core Data warns without one).
    public var inverse: String?
    /// What deleting the source object does to the destination objects.
    public var deleteRule: DeleteRule
    /// To-one: whether nil is allowed at save. To-many: see `minCount`.
    public var isOptional: Bool
    /// To-many: bounds on the number of objects checked at save (0 = no bound).
    public var minCount: Int
    /// The upper bound (0 = no bound).
    public var maxCount: Int
    /// To-many only: the relationship may be nil as well as empty, as a JSON array may be null or
    /// missing. Core Data's to-many relationships are never nil; with this set, a new object's
    /// relationship starts nil, `setValue(nil, forKey:)` makes it nil again, adding an object makes
    /// it a collection, and removing the last one leaves it empty (not nil). The store keeps a
    /// count column beside it (NULL for nil), which the lowering reads for `== nil` and `@count`.
    public var allowsNil: Bool
    /// The application's own notes on the relationship (Core Data's user info): kept with the
    /// model, never read by the store. In a model file: `"userInfo": {"shown": "yes"}`.
    public var userInfo: [String: String] = [:]
    /// The name this relationship had in an earlier version of the model (Core Data's renaming identifier,
    /// Xcode's "Renaming ID"), for a migration to follow the rename; nil when it was not renamed.
    /// In a model file: `"renamingIdentifier": "owner"`.
    public var renamingIdentifier: String?

    /// A relationship; to-one, optional and with the nullify rule by default.
    public init(
        _ name: String, to destination: String, toMany: Bool = false, ordered: Bool = false,
        inverse: String? = nil, deleteRule: DeleteRule = .nullify, optional: Bool = true,
        minCount: Int = 0, maxCount: Int = 0, allowsNil: Bool = false
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = toMany
        self.isOrdered = ordered
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.minCount = minCount
        self.maxCount = maxCount
        self.allowsNil = allowsNil
    }

    /// The keys of a relationship in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, destination, toMany, ordered, inverse, deleteRule, optional, minCount, maxCount, allowsNil
        case userInfo, renamingIdentifier
    }

    /// Decodes a relationship from a model file, applying the defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        destination = try c.decode(String.self, forKey: .destination)
        isToMany = try c.decodeIfPresent(Bool.self, forKey: .toMany) ?? false
        isOrdered = try c.decodeIfPresent(Bool.self, forKey: .ordered) ?? false
        inverse = try c.decodeIfPresent(String.self, forKey: .inverse)
        deleteRule = try c.decodeIfPresent(DeleteRule.self, forKey: .deleteRule) ?? .nullify
        isOptional = try c.decodeIfPresent(Bool.self, forKey: .optional) ?? true
        minCount = try c.decodeIfPresent(Int.self, forKey: .minCount) ?? 0
        maxCount = try c.decodeIfPresent(Int.self, forKey: .maxCount) ?? 0
        allowsNil = try c.decodeIfPresent(Bool.self, forKey: .allowsNil) ?? false
        userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:]
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
    }

    /// Encodes the relationship; options that are unset are left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(destination, forKey: .destination)
        if isToMany { try c.encode(true, forKey: .toMany) }
        if isOrdered { try c.encode(true, forKey: .ordered) }
        try c.encodeIfPresent(inverse, forKey: .inverse)
        try c.encode(deleteRule, forKey: .deleteRule)
        if !isOptional { try c.encode(false, forKey: .optional) }
        if minCount != 0 { try c.encode(minCount, forKey: .minCount) }
        if maxCount != 0 { try c.encode(maxCount, forKey: .maxCount) }
        if allowsNil { try c.encode(true, forKey: .allowsNil) }
        if !userInfo.isEmpty { try c.encode(userInfo, forKey: .userInfo) }
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
    }
}

/// An entity: a kind of object, with its properties, its place in an inheritance hierarchy and
/// its uniqueness constraints.
///
/// ```swift
/// let person = EntityDescription("Person", attributes: [AttributeDescription("name", .string)],
///                                uniquenessConstraints: [["name"]])
/// let record = EntityDescription("Record", open: true)   // undeclared keys read nil, as in JSON
/// ```
public struct EntityDescription: Codable, Hashable, Sendable {
    /// The entity's name, used by inserts, fetches and relationships.
    public var name: String
    /// An abstract entity has no objects of its own, only through its sub-entities.
    public var isAbstract: Bool
    /// The entity this one inherits properties from, if any.
    public var parent: String?
    /// The entity's own attributes (inherited ones are resolved by the model).
    public var attributes: [AttributeDescription]
    /// The entity's own relationships.
    public var relationships: [RelationshipDescription]
    /// Each constraint is a list of attribute names whose values together may appear only once
    /// among the objects of the hierarchy (nil values never collide, as SQL's UNIQUE).
    public var uniquenessConstraints: [[String]]
    /// Whether a key the entity (or an ancestor) does not declare reads nil, as a key missing
    /// from a JSON object does, instead of being an `unknown-key` error. Sub-entities inherit it.
    public var isOpen: Bool
    /// Set for a document entity: each object is one JSON document of these shapes (see
    /// ``DocumentDescription``), and the entity declares no attributes or relationships.
    public var document: DocumentDescription?
    /// The name of the Swift class whose instances the entity's objects are (Core Data's class
    /// name): a class registered with the model (``ManagedObjectModel/init(entities:classes:configurations:)``)
    /// serves the entity whose class name is the class's own name. nil means the entity's name.
    /// Model files give it as `"className"`; it does not change the model's version hash.
    public var className: String?
    /// SQL indexes over one or more of the entity's attributes and to-one relationships (Core
    /// Data's compound and fetch indexes), made by the store. In a model file:
    /// `"indexes": [{"name": "byAuthorAndDate", "elements": [{"property": "author"}, {"property": "date", "descending": true}]}]`.
    public var indexes: [IndexDescription]
    /// The application's own notes on the entity (Core Data's user info): kept with the model,
    /// never read by the store. In a model file: `"userInfo": {"table": "legacy_people"}`.
    public var userInfo: [String: String] = [:]
    /// The name this entity had in an earlier version of the model (Core Data's renaming identifier,
    /// Xcode's "Renaming ID"), for a migration to follow the rename; nil when it was not renamed.
    /// In a model file: `"renamingIdentifier": "Customer"`.
    public var renamingIdentifier: String?
    /// Fetched properties (Core Data's): named fetch requests whose results an object reads as
    /// the value of that key, inherited by sub-entities (see ``FetchedPropertyDescription``). In
    /// a model file: `"fetchedProperties": [{"name": "popular", "entity": "Post", "predicate": "author == $FETCH_SOURCE AND likes > 10"}]`.
    public var fetchedProperties: [FetchedPropertyDescription] = []

    /// An entity; concrete, without a parent, properties or constraints by default.
    public init(
        _ name: String, abstract: Bool = false, parent: String? = nil,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [], open: Bool = false, className: String? = nil,
        indexes: [IndexDescription] = []
    ) {
        self.name = name
        self.isAbstract = abstract
        self.parent = parent
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.isOpen = open
        self.className = className
        self.indexes = indexes
    }

    /// A document entity: its objects are JSON documents of `document`'s shapes.
    ///
    /// ```swift
    /// let records = EntityDescription("Record", document: DocumentDescription(shape: shape))
    /// ```
    public init(_ name: String, document: DocumentDescription) {
        self.init(name, open: true)
        self.document = document
    }

    /// The keys of an entity in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, abstract, parent, attributes, relationships, uniquenessConstraints, open, document, className
        case indexes, userInfo, renamingIdentifier, fetchedProperties
    }

    /// Decodes an entity from a model file, applying the defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        isAbstract = try c.decodeIfPresent(Bool.self, forKey: .abstract) ?? false
        parent = try c.decodeIfPresent(String.self, forKey: .parent)
        attributes = try c.decodeIfPresent([AttributeDescription].self, forKey: .attributes) ?? []
        relationships = try c.decodeIfPresent([RelationshipDescription].self, forKey: .relationships) ?? []
        uniquenessConstraints = try c.decodeIfPresent([[String]].self, forKey: .uniquenessConstraints) ?? []
        isOpen = try c.decodeIfPresent(Bool.self, forKey: .open) ?? false
        document = try c.decodeIfPresent(DocumentDescription.self, forKey: .document)
        className = try c.decodeIfPresent(String.self, forKey: .className)
        indexes = try c.decodeIfPresent([IndexDescription].self, forKey: .indexes) ?? []
        userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:]
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
        fetchedProperties =
            try c.decodeIfPresent([FetchedPropertyDescription].self, forKey: .fetchedProperties) ?? []
    }

    /// Encodes the entity; options that are unset are left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        if isAbstract { try c.encode(true, forKey: .abstract) }
        try c.encodeIfPresent(parent, forKey: .parent)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(relationships, forKey: .relationships)
        if !uniquenessConstraints.isEmpty { try c.encode(uniquenessConstraints, forKey: .uniquenessConstraints) }
        if isOpen { try c.encode(true, forKey: .open) }
        try c.encodeIfPresent(document, forKey: .document)
        try c.encodeIfPresent(className, forKey: .className)
        if !indexes.isEmpty { try c.encode(indexes, forKey: .indexes) }
        if !userInfo.isEmpty { try c.encode(userInfo, forKey: .userInfo) }
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
        if !fetchedProperties.isEmpty { try c.encode(fetchedProperties, forKey: .fetchedProperties) }
    }
}

/// A fetched property (Core Data's `NSFetchedPropertyDescription`): reading the key `name` of an
/// object runs a fetch of `entity` with `predicate`, `$FETCH_SOURCE` bound to the object, and
/// answers the objects found as an array, in the store's order (sort them as needed).
/// The store keeps nothing for it. Unlike Core Data, whose fetched property keeps its first
/// result until the object is refreshed, each read fetches again, so it reflects the context's
/// pending changes. A fetch request cannot name it (`invalid-operation`), and it cannot be set.
///
/// ```swift
/// var author = EntityDescription("Author", attributes: [AttributeDescription("name", .string)])
/// author.fetchedProperties = [
///     FetchedPropertyDescription("popular", entity: "Post", predicate: "author == $FETCH_SOURCE AND likes > 10")
/// ]
/// // later: try ann.get("popular", as: [ManagedObject].self)
/// ```
public struct FetchedPropertyDescription: Codable, Hashable, Sendable {
    /// The key objects read it under.
    public var name: String
    /// The entity fetched (its sub-entities included).
    public var entity: String
    /// The predicate, in the format-string language; `$FETCH_SOURCE` is the object read.
    public var predicate: String

    /// A fetched property `name` of the objects of `entity` that `predicate` selects.
    public init(_ name: String, entity: String, predicate: String) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
    }

    /// The keys of a fetched property in a model file (all required).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, entity, predicate
    }
}

/// An SQL index over properties of an entity: attributes kept in a column of their own and
/// to-one relationships, each ascending or descending.
///
/// ```swift
/// let byDate = IndexDescription(name: "byAuthorAndDate", elements: [.init("author"), .init("date", descending: true)])
/// let book = EntityDescription("Book", attributes: attributes, relationships: relationships, indexes: [byDate])
/// ```
public struct IndexDescription: Codable, Hashable, Sendable {
    /// One property of an index.
    public struct Element: Codable, Hashable, Sendable {
        /// The attribute or to-one relationship.
        public var property: String
        /// Whether the index orders this property from the largest value down.
        public var isDescending: Bool

        /// An element over `property`, ascending unless `descending`.
        public init(_ property: String, descending: Bool = false) {
            self.property = property
            self.isDescending = descending
        }

        /// The keys of an index element in a model file.
        enum CodingKeys: String, CodingKey, CaseIterable {
            case property
            case isDescending = "descending"
        }

        /// Decodes an element; `descending` defaults to false.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            property = try c.decode(String.self, forKey: .property)
            isDescending = try c.decodeIfPresent(Bool.self, forKey: .isDescending) ?? false
        }

        /// Encodes the element, leaving out `descending` when false.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(property, forKey: .property)
            if isDescending { try c.encode(true, forKey: .isDescending) }
        }
    }

    /// The index's name (Core Data's fetch index name); nil for one named after its properties.
    public var name: String?
    /// Its properties, in order.
    public var elements: [Element]

    /// An index over `elements`.
    public init(name: String? = nil, elements: [Element]) {
        self.name = name
        self.elements = elements
    }

    /// The keys of an index in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case name, elements }
}

/// What the JSON documents of a document entity may be: the shapes of their keys (nested objects
/// and arrays included) and whether documents that are not objects (strings, numbers, dates,
/// arrays, null) are allowed. The store keeps each document exactly, and also spread over tables
/// as ``DocumentLayout`` plans them, so predicates run in SQL with the answers memory gives on
/// the documents themselves. A document with a key or a shape the description lacks is refused
/// at save.
///
/// ```swift
/// var shape = DocumentShape()
/// shape.object = DocumentObjectShape(keys: [.init(name: "name", shape: DocumentShape(scalar: true))])
/// let d = DocumentDescription(shape: shape)
/// ```
public struct DocumentDescription: Codable, Hashable, Sendable {
    /// The shapes of the documents (their `object` shape lists the keys).
    public var shape: DocumentShape
    /// Documents that are not objects are allowed (their `SELF` is a value, or nil).
    public var allowsValues: Bool

    /// Documents of `shape`; objects only unless `allowsValues`.
    public init(shape: DocumentShape, allowsValues: Bool = false) {
        self.shape = shape
        self.allowsValues = allowsValues
    }

    /// The keys of `document` in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case shape, allowsValues }
}

/// A named set of a model's entities (Core Data's configuration), kept with the model for the
/// application to read; a store holds every entity of the model. In a model file:
/// `"configurations": [{"name": "Cloud", "entities": ["Song"]}]`.
///
/// ```swift
/// let cloud = ConfigurationDescription("Cloud", entities: ["Song", "Album"])
/// let model = try ManagedObjectModel(entities: entities, configurations: [cloud])
/// ```
public struct ConfigurationDescription: Codable, Hashable, Sendable {
    /// The configuration's name.
    public var name: String
    /// The names of its entities.
    public var entities: [String]

    /// A configuration of `entities`.
    public init(_ name: String, entities: [String]) {
        self.name = name
        self.entities = entities
    }

    /// The keys of a configuration in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable { case name, entities }
}

/// A validated model: entities whose names all resolve, with inheritance flattened.
///
/// ```swift
/// let model = try ManagedObjectModel(entities: [
///     EntityDescription("Person", attributes: [AttributeDescription("name", .string, optional: false)],
///                       relationships: [RelationshipDescription("pets", to: "Pet", toMany: true, inverse: "owner")]),
///     EntityDescription("Pet", attributes: [AttributeDescription("name", .string)],
///                       relationships: [RelationshipDescription("owner", to: "Person", inverse: "pets")]),
/// ])
/// model.versionHash   // 16 hex digits, the same for the same model
/// ```
public struct ManagedObjectModel: Hashable, Sendable {
    /// The entities as declared.
    public let entities: [EntityDescription]
    /// Resolved per entity: every property (inherited first), storage names, sub-entities.
    private(set) var resolved: [String: ResolvedEntity]
    /// The derived attributes and what their values read (Derivations.swift).
    private(set) var derivations = Derivations()
    /// Per entity, its fetched properties (inherited ones included) by name (FetchedProperties.swift).
    private(set) var fetchedProperties: [String: [String: FetchedProperty]] = [:]
    /// The schema the SQL lowering reads, derived from the storage layout (never written twice).
    public private(set) var schema: Schema
    /// How its stores lay it out: Sift's layout, unless `laidOut(as:)` chose Core Data's.
    private(set) var layout = StoreLayout.sift
    /// The registered classes and the entities they serve (ObjectClasses.swift).
    let classes: ObjectClasses
    /// Named sets of the entities (Core Data's configurations), in order; part of the model's
    /// equality, not of its version hash (they do not change what a store holds).
    public let configurations: [ConfigurationDescription]
    /// What reading an Xcode model (``init(contentsOf:version:classes:)``) left out or could not
    /// keep exactly, each at its `line:column` in the model's `contents` file; empty otherwise.
    /// Warnings are not part of the model: two models with the same entities are equal.
    public internal(set) var warnings: [ModelWarning] = []
    /// The named fetch requests of an Xcode model (`<fetchRequest>` at model level) or of a JSON
    /// model file (`"fetchRequests"`), in file order; ``fetchRequestTemplate(_:substitutionVariables:)``
    /// makes requests of them. Not part of the model's equality or version hash.
    public internal(set) var fetchRequestTemplates: [FetchRequestTemplate] = []
    /// The version's name (a model file's `"version"`, an Xcode model version's folder name), for
    /// people and for a ``MigrationPlan``'s messages; nil when unnamed. Not part of the model's
    /// equality or version hash: a store's version is told by its hash.
    ///
    /// ```swift
    /// var model = try ManagedObjectModel(json: Data(#"{"version": "v2", "entities": []}"#.utf8))
    /// model.version           // "v2"
    /// model.version = "2.1"   // the name only: the same version hash
    /// ```
    public var version: String?

    /// A model of `entities`, validated: names, parents, destinations and inverses must agree.
    /// `classes` are the `ManagedObject` subclasses its objects are made as, each serving the
    /// entity whose ``EntityDescription/className`` (or name) is the class's name.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(entities: entities, classes: [Employee.self, Manager.self])
    /// ```
    ///
    /// `configurations` name sets of the entities; each names existing entities, once.
    public init(
        entities: [EntityDescription], classes: [ManagedObject.Type] = [],
        configurations: [ConfigurationDescription] = []
    ) throws(ModelError) {
        self.entities = entities
        self.resolved = try ModelResolver.resolve(entities)
        self.schema = Self.deriveSchema(entities, resolved)
        self.classes = try ObjectClasses(classes, entities: entities)
        self.configurations = configurations
        var names = Set<String>()
        for c in configurations {
            guard !c.name.isEmpty, names.insert(c.name).inserted else {
                throw ModelError("configuration names must be unique and not empty ('\(c.name)')")
            }
            for e in c.entities where resolved[e] == nil {
                throw ModelError("configuration '\(c.name)' names '\(e)', which is not an entity of the model")
            }
            if Set(c.entities).count != c.entities.count {
                throw ModelError("configuration '\(c.name)' names an entity twice")
            }
        }
        derivations = try Derivations(self)
        fetchedProperties = try FetchedProperty.resolve(self)
    }

    /// Decodes and validates a JSON model file: `{"entities": [{"name": …, "attributes": […],
    /// "relationships": […]}]}` (the ModelFiles article lists every key). The file is read
    /// strictly: invalid JSON, a key the format does not have, bounds in the wrong order or on a
    /// type they do not apply to, and a default that breaks its attribute's rules are errors, each
    /// with its `line:column` and key path (``ModelError/failures`` lists every one found).
    ///
    /// ```swift
    /// let text = #"{"entities": [{"name": "Item", "attributes": [{"name": "x", "type": "string", "optinal": false}]}]}"#
    /// do { _ = try ManagedObjectModel(json: Data(text.utf8)) } catch {
    ///     print(error)   // model error: 1:79: error: entities[0].attributes[0].optinal: unknown key 'optinal'; did you mean 'optional'?
    /// }
    /// ```
    public init(json data: Data, classes: [ManagedObject.Type] = []) throws(ModelError) {
        let (file, templates) = try ModelFile.read(data)
        try self.init(entities: file.entities, classes: classes, configurations: file.configurations ?? [])
        fetchRequestTemplates = templates
        version = file.version
    }

    /// The model as JSON (pretty-printed, keys sorted): what `init(json:)` reads, its version name
    /// and fetch request templates included.
    public var jsonString: String { Self.json(entities, configurations, fetchRequestTemplates, version: version) }

    static func json(
        _ entities: [EntityDescription], _ configurations: [ConfigurationDescription] = [],
        _ templates: [FetchRequestTemplate] = [], version: String? = nil
    ) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let file = ModelFile.File(
            version: version, entities: entities, configurations: configurations.isEmpty ? nil : configurations,
            fetchRequests: templates.isEmpty ? nil : templates.map(FetchRequestTemplateEntry.init))
        // Plain structs of strings, numbers and enums always encode.
        return String(decoding: try! encoder.encode(file), as: UTF8.self)
    }

    /// A hash of the canonical JSON form (FNV-1a, 64 bits, hex): equal models, equal hashes.
    /// The version name, class names, user info, renaming identifiers and fetched properties are left out: they say
    /// how objects are made, what the application notes, what things were called or what objects
    /// fetch, not how rows are stored.
    public var versionHash: String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var stored = entities
        for i in stored.indices {
            stored[i].className = nil
            stored[i].userInfo = [:]
            stored[i].renamingIdentifier = nil
            stored[i].fetchedProperties = []
            for j in stored[i].attributes.indices {
                stored[i].attributes[j].userInfo = [:]
                stored[i].attributes[j].renamingIdentifier = nil
            }
            for j in stored[i].relationships.indices {
                stored[i].relationships[j].userInfo = [:]
                stored[i].relationships[j].renamingIdentifier = nil
            }
        }
        for byte in Self.json(stored).utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(h, radix: 16).leftPadded(to: 16)
    }

    /// The entity called `name`, with its inherited properties, if any.
    public func entity(named name: String) -> EntityDescription? { resolved[name]?.description }

    func resolvedEntity(_ name: String) throws(StoreError) -> ResolvedEntity {
        guard let r = resolved[name] else { throw StoreError(.unknownEntity, "the model has no entity '\(name)'") }
        return r
    }

    /// The model resolved for `layout` (the same model under other storage names and numbers);
    /// a `ModelError` names what `layout` cannot hold.
    func laidOut(as layout: StoreLayout) throws(ModelError) -> ManagedObjectModel {
        guard layout != self.layout else { return self }
        var m = self
        m.layout = layout
        m.resolved = try ModelResolver.resolve(entities, layout: layout)
        m.schema = Self.deriveSchema(entities, m.resolved, layout: layout)
        return m
    }

    /// Two models are equal when their entities and configurations are.
    public static func == (a: Self, b: Self) -> Bool {
        a.entities == b.entities && a.configurations == b.configurations
    }
    /// Hashes the entities and configurations.
    public func hash(into h: inout Hasher) {
        h.combine(entities)
        h.combine(configurations)
    }
}

extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}

/// A model that does not hold together, or a model file that cannot be read.
///
/// ```swift
/// let person = EntityDescription("Z_Person")
/// do { _ = try ManagedObjectModel(entities: [person]) } catch {
///     print(error.id)   // invalid-model
///     print(error)      // model error: entity: names starting with 'Z_' are reserved …
/// }
/// ```
public struct ModelError: SiftError, Hashable {
    /// The kinds of model failure; the raw value is the error's id.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The model file is not JSON of a model (invalid JSON, an unknown or missing key, a value
        /// of the wrong type, rules that do not hold together).
        case unreadable = "unreadable-model"
        /// The model does not hold together: a name, parent, destination, inverse or rule that is
        /// wrong.
        case invalid = "invalid-model"
    }

    /// One problem of a model file: where it is, the key path of the member it is about, and
    /// what is wrong.
    ///
    /// ```swift
    /// for f in error.failures { print(f) }   // 3:9: error: entities[0].attributes[0].min: the minimum 10.0 is above the maximum 1.0
    /// ```
    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        /// The key path in the file (`entities[0].attributes[2].optinal`; empty for the whole file).
        public var path: String
        /// Where in the file, when the error comes from one.
        public var location: SourceLocation?
        /// What is wrong, without the location or the path.
        public var message: String
        /// The file the location is in, when the model was read from several (an Xcode model's
        /// `contents`); nil for a JSON model file, whose reader knows its one file.
        public var file: String?

        /// A failure at `path` (and `location`, in a file).
        public init(path: String, location: SourceLocation? = nil, message: String, file: String? = nil) {
            self.path = path
            self.location = location
            self.message = message
            self.file = file
        }

        /// `line:column: error: path: message`, the parts it has (`file:` first when it is known).
        public var description: String {
            (file.map { "\($0):" + (location == nil ? " error: " : "") } ?? "")
                + (location.map { "\($0): error: " } ?? "")
                + (path.isEmpty ? "" : path + ": ") + message
        }
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// What is wrong with the model (the first problem, after its key path when it has one).
    public var message: String
    /// Where in the model file the first problem is, when the error comes from a file.
    public var location: SourceLocation? { failures.first?.location }
    /// Every problem found (one for a model built in Swift; all of a file's, in file order).
    public var failures: [Failure]

    /// An error of `kind` with its message.
    public init(_ kind: Kind, _ message: String) {
        self.init(kind, failures: [Failure(path: "", message: message)])
    }
    /// An error of `kind` for `failures` (at least one).
    public init(_ kind: Kind, failures: [Failure]) {
        self.kind = kind
        self.failures = failures
        let first = failures.first
        self.message = (first.map { $0.path.isEmpty ? "" : $0.path + ": " } ?? "") + (first?.message ?? "")
    }
    /// An ``Kind/invalid`` model error with its message.
    public init(_ message: String) { self.init(.invalid, message) }
    /// `unreadable-model` or `invalid-model`.
    public var id: String { kind.rawValue }
    /// `model error: ` followed by the first problem (`line:column: error: ` first when it has a
    /// location), or by every problem when there are several.
    public var description: String {
        guard failures.count > 1 else { return "model error: " + (failures.first?.description ?? message) }
        return "model error: \(failures.count) problems: " + failures.map(\.description).joined(separator: "; ")
    }
}
