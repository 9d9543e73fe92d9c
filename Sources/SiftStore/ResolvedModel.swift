// Model validation and resolution: every name checked once, inheritance flattened (inherited
// properties first), inverses paired, and the storage layout decided — which table and column
// holds each property. The layout is the one source for the store's SQL and for the lowering's
// `Schema` (derived here, never written twice): one table per hierarchy named after its root,
// `Z_PK` (primary key), `Z_ENT` (entity number), `Z_OPT` (version counter), one column per
// stored attribute and per to-one relationship (siblings declaring one name get one each); a
// to-many whose inverse is to-one uses the inverse's foreign key; other to-manys use a join
// table; collection attributes a child table. Transient attributes have no storage at all.
// Property names are any non-empty string (JSON keys are); the SQL names are derived from them
// by `StorageNames`, unique as SQLite compares them, and only ever written quoted.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSyntax

/// A default value or JSON scalar as the model file writes it.
///
/// ```swift
/// let status = AttributeDescription("status", .string, defaultValue: .string("new"))
/// // in a model file: {"name": "status", "type": "string", "default": "new"}
/// ```
public enum StoredValue: Codable, Hashable, Sendable {
    /// A Boolean.
    case bool(Bool)
    /// An integer.
    case integer(Int64)
    /// A double.
    case double(Double)
    /// A string.
    case string(String)

    /// Decodes a Boolean, an integer, a double or a string, tried in that order.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
            return
        }
        if let i = try? c.decode(Int64.self) {
            self = .integer(i)
            return
        }
        if let d = try? c.decode(Double.self) {
            self = .double(d)
            return
        }
        self = .string(try c.decode(String.self))
    }

    /// Encodes the scalar as JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .bool(let b): try c.encode(b)
        case .integer(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        }
    }
}

/// Where a relationship's links are stored.
enum RelationshipStorage: Hashable, Sendable {
    /// To-one: a column of the source table holding the destination's `Z_PK`.
    case foreignKey(column: String)
    /// To-many whose inverse is to-one: the inverse's column in the destination table, and the
    /// column holding each destination's position when ordered.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// Many-to-many, or to-many without inverse: a join table (`source` holds this side's key).
    case joinTable(table: String, source: String, destination: String, order: String?)
}

// The resolved pieces are classes: per-object loops (saves, fetches) read them by reference
// instead of copying structs full of strings and arrays.
final class ResolvedAttribute: @unchecked Sendable {
    let description: AttributeDescription
    /// The column in the entity's table (a collection's count, NULL for nil).
    let column: String
    /// Decimals: the exact text beside the REAL column the lowering compares.
    let exactColumn: String?
    /// Collections: the child table (`Z_OWNER`, `Z_ORD`, `value`).
    let valueTable: String?
    let defaultValue: Value?
    let name: String
    let type: AttributeType
    /// Mixed attributes: where each shape is stored (`column` keeps the exact value).
    let mixed: MixedStorage?
    /// Whether saving checks anything for it (required, bounds, lengths, pattern, shapes).
    let hasRules: Bool
    /// Whether each save computes it (`derivationExpression`): an application cannot set it.
    let isDerived: Bool

    init(
        description: AttributeDescription, column: String, exactColumn: String?, valueTable: String?,
        defaultValue: Value?,
        mixed: MixedStorage? = nil
    ) {
        self.description = description
        self.column = column
        self.exactColumn = exactColumn
        self.valueTable = valueTable
        self.defaultValue = defaultValue
        self.name = description.name
        self.type = description.type
        self.mixed = mixed
        let d = description
        isDerived = d.derivationExpression != nil
        hasRules =
            !d.isOptional || d.minValue != nil || d.maxValue != nil || d.minLength != nil || d.maxLength != nil
            || d.regularExpression != nil || mixed != nil
    }
}

/// The storage of a mixed attribute beside its exact value: a shape column holding each row's
/// shape tag (NULL for nil), and per declared shape the column or table the lowering reads. The
/// tags are those of `Schema.MixedKey` cases for JSON (1 scalar, 2 date, 4 array; 3, objects, is
/// not a shape an attribute holds).
struct MixedStorage: Sendable {
    static let scalarTag: Int64 = 1, dateTag: Int64 = 2, arrayTag: Int64 = 4
    let shapes: MixedShapes
    let shapeColumn: String
    /// Scalars, each keeping its own storage class (booleans as 0/1).
    let scalarColumn: String?
    /// Dates as seconds since 2001, as date attributes.
    let dateColumn: String?
    /// Arrays: the element count (NULL when the value is not an array) and the elements' table.
    let countColumn: String?
    let valueTable: String?
}

final class ResolvedRelationship: Sendable {
    let description: RelationshipDescription
    let storage: RelationshipStorage
    /// The entity that declares it (its storage is named after that one).
    let declaringEntity: String
    /// A to-many that allows nil: the source table's column holding the number of objects, NULL
    /// for nil.
    let countColumn: String?
    /// A to-one into a hierarchy, in Core Data's layout: the column beside the key holding the
    /// destination's entity number (`Z<n>_<REL>`).
    let entityColumn: String?
    init(
        description: RelationshipDescription, storage: RelationshipStorage, declaringEntity: String,
        countColumn: String? = nil, entityColumn: String? = nil
    ) {
        self.description = description
        self.storage = storage
        self.declaringEntity = declaringEntity
        self.countColumn = countColumn
        self.entityColumn = entityColumn
    }
    var name: String { description.name }
    var isToMany: Bool { description.isToMany }
    var destination: String { description.destination }
    var inverse: String? { description.inverse }
}

final class ResolvedEntity: Sendable {
    let description: EntityDescription
    var name: String { description.name }
    /// 1-based position in the model; the `Z_ENT` value of its rows.
    let number: Int64
    let root: String
    let table: String
    /// Itself and every entity below it.
    let family: [String]
    let attributes: [ResolvedAttribute]
    let relationships: [ResolvedRelationship]
    let attributeIndex: [String: Int]
    let relationshipIndex: [String: Int]
    /// Transient attributes, inherited ones first: held by objects, never stored (no column).
    let transients: [ResolvedAttribute]
    let transientIndex: [String: Int]
    /// Constraints as attribute indices, inherited ones included.
    let constraints: [[Int]]
    /// Undeclared keys read nil (declared open by the entity or an ancestor).
    let isOpen: Bool
    /// Whether saving has anything to check for its objects beyond uniqueness.
    let hasRules: Bool
    let hasCollections: Bool
    let hasToMany: Bool
    /// A document entity's layout: its one attribute (`Storage.documentColumn`) keeps each
    /// document exactly, the layout spreads it over columns and tables for SQL.
    let document: DocumentLayout?

    init(
        description: EntityDescription, number: Int64, root: String, table: String, family: [String],
        attributes: [ResolvedAttribute], relationships: [ResolvedRelationship], attributeIndex: [String: Int],
        relationshipIndex: [String: Int], constraints: [[Int]], isOpen: Bool, document: DocumentLayout? = nil,
        transients: [ResolvedAttribute] = []
    ) {
        self.description = description
        self.transients = transients
        transientIndex = Dictionary(uniqueKeysWithValues: transients.enumerated().map { ($1.name, $0) })
        self.document = document
        self.isOpen = isOpen
        self.number = number
        self.root = root
        self.table = table
        self.family = family
        self.attributes = attributes
        self.relationships = relationships
        self.attributeIndex = attributeIndex
        self.relationshipIndex = relationshipIndex
        self.constraints = constraints
        hasRules =
            attributes.contains { $0.hasRules }
            || relationships.contains {
                !$0.description.isOptional || $0.description.minCount > 0 || $0.description.maxCount > 0
            }
        hasCollections = attributes.contains { $0.valueTable != nil || $0.mixed?.valueTable != nil }
        hasToMany = relationships.contains { $0.isToMany }
    }

    func attribute(_ key: String) -> ResolvedAttribute? { attributeIndex[key].map { attributes[$0] } }
    func relationship(_ key: String) -> ResolvedRelationship? { relationshipIndex[key].map { relationships[$0] } }
}

/// The storage names every store uses.
enum Storage {
    static let primaryKey = "Z_PK"
    static let entityColumn = "Z_ENT"
    static let versionColumn = "Z_OPT"
    static let owner = "Z_OWNER"
    static let order = "Z_ORD"
    static let value = "value"
    static let metadataTable = "sift_metadata"
    /// A document entity's exact documents.
    static let documentColumn = "Z_DOC"
    static let keyTable = "sift_primary_key"
}

/// The SQL names of a model's storage, derived from its names: a property's column is its name
/// and a collection's table `Z_<entity>_<name>`, unless that is taken (SQLite compares names
/// without ASCII case), then `name#2`, `name#3`…; NUL, which the C API cannot pass, becomes `?`.
/// Names are handed out in the model's order and remembered per declaring entity, so every entity
/// of a hierarchy sees the same ones and a store reopened with its model finds its tables again.
/// Sibling sub-entities that declare the same property name each get a column (the second
/// `name#2`), as Core Data gives each its own. A model whose names are identifiers not starting
/// with `Z_` gets exactly the names it had before names were free.
struct StorageNames {
    /// Taken names, lower-cased: tables (and indexes, which share their namespace) database-wide,
    /// columns per table.
    private var tables: Set<String>
    /// Every table name handed out so far, lower-cased.
    var takenTables: Set<String> { tables }
    private var columns: [String: Set<String>] = [:]
    /// What each property (or store-side name) was given, by kind, owner and name.
    private var given: [String: String] = [:]
    /// The layout whose naming rules apply, and its entity numbers.
    let layout: StoreLayout
    let numbers: [String: Int64]

    init(entities: [EntityDescription], layout: StoreLayout = .sift) {
        self.layout = layout
        numbers = layout.entityNumbers(entities)
        tables = Set((entities.map { layout.table(root: $0.name) } + layout.reservedTables).map { $0.lowercased() })
    }

    /// `base`, or its first numbered form not in `used` (the `n`th try adds `suffix(n)`: Sift's
    /// own names `#2`, `#3`…), inserted into `used`.
    static func unique(_ base: String, in used: inout Set<String>, suffix: (Int) -> String = { "#\($0 + 1)" })
        -> String
    {
        let clean = base.replacingOccurrences(of: "\u{0}", with: "?")
        var candidate = clean
        var n = 0
        while !used.insert(candidate.lowercased()).inserted {
            n += 1
            candidate = clean + suffix(n)
        }
        return candidate
    }

    private mutating func remembered(_ key: String, _ make: (inout Self) -> String) -> String {
        if let name = given[key] { return name }
        let name = make(&self)
        given[key] = name
        return name
    }

    private mutating func columnSet(_ table: String) -> Set<String> {
        columns[table]
            ?? Set([Storage.primaryKey, Storage.entityColumn, Storage.versionColumn].map { $0.lowercased() })
    }

    /// The column of property `name`, declared by `entity`, in `table`.
    mutating func column(_ name: String, of entity: String, in table: String) -> String {
        storeColumn(layout.columnBase(name), in: table, for: "column", entity, name)
    }

    /// A column of the store's own (an exact decimal, an order), remembered under `kind` and the
    /// property (`entity`'s `name`) it serves.
    mutating func storeColumn(
        _ base: String, in table: String, for kind: String, _ entity: String, _ name: String
    ) -> String {
        remembered("\(kind)\u{0}\(table)\u{0}\(entity)\u{0}\(name)") { names in
            var used = names.columnSet(table)
            let column = names.layout.unique(base, in: &used)
            names.columns[table] = used
            return column
        }
    }

    /// A table of the store's own (a collection's values, a join), remembered under `kind`, the
    /// declaring entity and the property name.
    mutating func table(_ base: String, for kind: String, _ entity: String, _ name: String) -> String {
        remembered("\(kind)\u{0}\(entity)\u{0}\(name)") { names in Self.unique(base, in: &names.tables) }
    }
}

enum ModelResolver {
    static func resolve(_ entities: [EntityDescription], layout: StoreLayout = .sift) throws(ModelError) -> [String:
        ResolvedEntity]
    {
        let byName = try entitiesByName(entities)
        var chains: [String: [EntityDescription]] = [:]
        for e in entities { chains[e.name] = try chain(e, byName) }
        try checkDocumentEntities(entities)
        for e in entities {
            if let what = layout.unsupported(e) { throw ModelError("Core Data's store layout cannot hold \(what)") }
        }
        var names = StorageNames(entities: entities, layout: layout)
        var resolved: [String: ResolvedEntity] = [:]
        for e in entities {
            resolved[e.name] = try resolveEntity(
                e, number: names.numbers[e.name]!, entities, byName: byName, chains: chains, names: &names)
        }
        // Document entities: their layout is planned once every other table has its name.
        for e in entities {
            guard let d = e.document, let r = resolved[e.name] else { continue }
            resolved[e.name] = documentEntity(e, d, r, names: names)
        }
        return resolved
    }

    /// The entities by name, each name checked: valid, not reserved, unique without case.
    private static func entitiesByName(_ entities: [EntityDescription]) throws(ModelError) -> [String:
        EntityDescription]
    {
        var byName: [String: EntityDescription] = [:]
        var lowerNames = Set<String>()
        for e in entities {
            try checkName(e.name, what: "entity")
            let lower = e.name.lowercased()
            if lower.hasPrefix("sift_") || lower.hasPrefix("sqlite_") {
                throw ModelError("entity name '\(e.name)' is reserved (names starting with 'sift_' or 'sqlite_')")
            }
            guard byName[e.name] == nil, lowerNames.insert(lower).inserted else {
                throw ModelError(
                    "two entities are named '\(e.name)' (names are compared without case, as SQLite compares table names)"
                )
            }
            byName[e.name] = e
        }
        return byName
    }

    /// `e` and its ancestors, root first: parents exist, no cycles.
    private static func chain(_ e: EntityDescription, _ byName: [String: EntityDescription]) throws(ModelError)
        -> [EntityDescription]
    {
        var out = [e]
        var seen: Set<String> = [e.name]
        var current = e
        while let p = current.parent {
            guard let pe = byName[p] else { throw ModelError("entity '\(current.name)' has unknown parent '\(p)'") }
            guard seen.insert(p).inserted else { throw ModelError("entity '\(e.name)' inherits from itself") }
            out.insert(pe, at: 0)
            current = pe
        }
        return out
    }

    /// A document entity stands alone: its objects are documents, not rows of declared keys.
    private static func checkDocumentEntities(_ entities: [EntityDescription]) throws(ModelError) {
        let documents = Set(entities.filter { $0.document != nil }.map(\.name))
        for e in entities {
            if e.document != nil {
                guard e.attributes.isEmpty, e.relationships.isEmpty, e.uniquenessConstraints.isEmpty, e.parent == nil,
                    !e.isAbstract, e.indexes.isEmpty
                else {
                    throw ModelError(
                        "document entity '\(e.name)' declares attributes, relationships, constraints, indexes, a parent or abstract (its documents' keys are its properties)"
                    )
                }
            }
            if let p = e.parent, documents.contains(p) {
                throw ModelError("entity '\(e.name)' cannot inherit from document entity '\(p)'")
            }
            for rel in e.relationships where documents.contains(rel.destination) {
                throw ModelError(
                    "relationship '\(e.name).\(rel.name)' cannot point at document entity '\(rel.destination)'")
            }
        }
    }

    /// One entity with its inherited properties first, their storage, and its uniqueness constraints.
    private static func resolveEntity(
        _ e: EntityDescription, number: Int64, _ entities: [EntityDescription],
        byName: [String: EntityDescription], chains: [String: [EntityDescription]],
        names: inout StorageNames
    ) throws(ModelError) -> ResolvedEntity {
        let ancestors = chains[e.name]!
        let root = ancestors[0].name
        let table = names.layout.table(root: root)
        var attributes: [ResolvedAttribute] = []
        var relationships: [ResolvedRelationship] = []
        var attributeIndex: [String: Int] = [:]
        var relationshipIndex: [String: Int] = [:]
        var transients: [ResolvedAttribute] = []
        var keys = Set<String>()
        for a in ancestors {
            for attr in a.attributes {
                try checkPropertyName(attr.name, what: "attribute '\(a.name).\(attr.name)'")
                guard keys.insert(attr.name).inserted else {
                    throw ModelError("entity '\(e.name)' has two properties named '\(attr.name)'")
                }
                if attr.isTransient {
                    transients.append(try transientAttribute(attr, entity: a.name))
                    continue
                }
                let r = try resolveAttribute(attr, entity: a.name, table: table, names: &names)
                attributeIndex[attr.name] = attributes.count
                attributes.append(r)
            }
            for rel in a.relationships {
                try checkPropertyName(rel.name, what: "relationship '\(a.name).\(rel.name)'")
                guard keys.insert(rel.name).inserted else {
                    throw ModelError("entity '\(e.name)' has two properties named '\(rel.name)'")
                }
                let storage = try resolveStorage(
                    rel, declaringEntity: a.name, byName: byName, chains: chains, names: &names)
                let countColumn =
                    rel.allowsNil
                    ? names.storeColumn("\(rel.name)@count", in: table, for: "to-many count", a.name, rel.name) : nil
                let entityColumn = names.layout.entityColumnBase(
                    relationship: rel.name, destination: names.numbers[rel.destination] ?? 0,
                    destinationHasChildren: entities.contains { $0.parent == rel.destination }
                ).map { names.storeColumn($0, in: table, for: "entity", a.name, rel.name) }
                relationshipIndex[rel.name] = relationships.count
                relationships.append(
                    ResolvedRelationship(
                        description: rel, storage: storage, declaringEntity: a.name,
                        countColumn: countColumn, entityColumn: rel.isToMany ? nil : entityColumn))
            }
        }
        try checkTransientsUnstored(e, ancestors, Set(transients.map(\.name)))
        let constraints = try uniquenessConstraints(ancestors, attributes, attributeIndex)
        try checkIndexes(e, attributes, attributeIndex, relationships, relationshipIndex)
        let family = entities.filter { chains[$0.name]!.contains { $0.name == e.name } }.map(\.name)
        return ResolvedEntity(
            description: e, number: number, root: root, table: table, family: family,
            attributes: attributes, relationships: relationships, attributeIndex: attributeIndex,
            relationshipIndex: relationshipIndex, constraints: constraints,
            isOpen: ancestors.contains { $0.isOpen }, transients: transients)
    }

    /// A transient attribute: its rules checked, its default resolved, no column.
    private static func transientAttribute(_ a: AttributeDescription, entity: String) throws(ModelError)
        -> ResolvedAttribute
    {
        if let p = problems(of: a).first { throw ModelError("attribute '\(entity).\(a.name)': \(p.message)") }
        return ResolvedAttribute(
            description: a, column: "", exactColumn: nil, valueTable: nil, defaultValue: defaultValue(of: a))
    }

    /// Uniqueness constraints and indexes name stored attributes only: a transient one has no column.
    private static func checkTransientsUnstored(
        _ e: EntityDescription, _ ancestors: [EntityDescription], _ transients: Set<String>
    ) throws(ModelError) {
        guard !transients.isEmpty else { return }
        let named =
            ancestors.flatMap { $0.uniquenessConstraints.flatMap { $0 } }
            + e.indexes.flatMap { $0.elements.map(\.property) }
        if let key = named.first(where: transients.contains) {
            throw ModelError(
                "entity '\(e.name)': a uniqueness constraint or index names '\(key)', a transient attribute (the store has no column for it)"
            )
        }
    }

    /// The default of `a` as a value of its type (`problems(of:)` checked that it coerces).
    static func defaultValue(of a: AttributeDescription) -> Value? {
        a.defaultValue.flatMap { try? Value(coercing: $0.value(for: a.type), to: a.type) }
    }

    /// The uniqueness constraints of an entity and its ancestors, as attribute indices; each names
    /// attributes that can be compared (not collections, transformable or mixed).
    private static func uniquenessConstraints(
        _ ancestors: [EntityDescription], _ attributes: [ResolvedAttribute],
        _ attributeIndex: [String: Int]
    ) throws(ModelError) -> [[Int]] {
        var constraints: [[Int]] = []
        for a in ancestors {
            for constraint in a.uniquenessConstraints {
                guard !constraint.isEmpty else {
                    throw ModelError("entity '\(a.name)' has an empty uniqueness constraint")
                }
                var indices: [Int] = []
                for key in constraint {
                    guard let i = attributeIndex[key] else {
                        throw ModelError(
                            "uniqueness constraint \(constraint) of '\(a.name)' names '\(key)', which is not an attribute"
                        )
                    }
                    let t = attributes[i]
                    guard !t.description.isCollection, t.type != .transformable, t.type != .mixed else {
                        throw ModelError(
                            "uniqueness constraint \(constraint) of '\(a.name)' names '\(key)', a \(t.description.isCollection ? "collection" : t.type.rawValue) attribute"
                        )
                    }
                    indices.append(i)
                }
                constraints.append(indices)
            }
        }
        return constraints
    }

    /// Each index of `e` names, once, properties kept in a column of the entity's table: attributes
    /// of their own column and to-one relationships.
    private static func checkIndexes(
        _ e: EntityDescription, _ attributes: [ResolvedAttribute], _ attributeIndex: [String: Int],
        _ relationships: [ResolvedRelationship], _ relationshipIndex: [String: Int]
    ) throws(ModelError) {
        for index in e.indexes {
            let what =
                "index \(index.name.map { "'\($0)'" } ?? index.elements.map(\.property).description) of '\(e.name)'"
            guard !index.elements.isEmpty else { throw ModelError("\(what) has no elements") }
            var seen = Set<String>()
            for element in index.elements {
                let p = element.property
                guard seen.insert(p).inserted else { throw ModelError("\(what) names '\(p)' twice") }
                if let i = attributeIndex[p] {
                    if let problem = indexProblem(attributes[i].description) {
                        throw ModelError("\(what) names '\(p)': \(problem)")
                    }
                } else if let i = relationshipIndex[p] {
                    guard !relationships[i].isToMany else {
                        throw ModelError("\(what) names '\(p)', a to-many relationship (it has no column to index)")
                    }
                } else {
                    throw ModelError("\(what) names '\(p)', which is not an attribute or relationship of '\(e.name)'")
                }
            }
        }
    }

    /// Why attribute `a` cannot be indexed, if it cannot.
    static func indexProblem(_ a: AttributeDescription) -> String? {
        if a.isTransient { return "a transient attribute has no column to index" }
        return a.isCollection || ManagedObjectModel.sqlType(a.type) == nil || a.type == .mixed
            ? "an index applies to attributes kept in a column of their own, not \(a.isCollection ? "collections" : a.type.rawValue + " ones")"
            : nil
    }

    /// A document entity resolved: one attribute (the whole document, in `Z_DOC`) and the layout
    /// of its tables, named after every other table.
    private static func documentEntity(
        _ e: EntityDescription, _ d: DocumentDescription, _ r: ResolvedEntity,
        names: StorageNames
    ) -> ResolvedEntity {
        let layout = DocumentLayout(
            shape: d.shape, entity: e.name, nonObjects: d.allowsValues, takenNames: names.takenTables,
            storeRoot: (
                r.table, Storage.primaryKey, [Storage.entityColumn, Storage.versionColumn, Storage.documentColumn]
            ))
        let doc = ResolvedAttribute(
            description: AttributeDescription("", .transformable), column: Storage.documentColumn,
            exactColumn: nil, valueTable: nil, defaultValue: nil)
        return ResolvedEntity(
            description: e, number: r.number, root: r.root, table: r.table, family: r.family,
            attributes: [doc], relationships: [], attributeIndex: [:], relationshipIndex: [:], constraints: [],
            isOpen: true, document: layout)
    }

    static func checkName(_ name: String, what: String) throws(ModelError) {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { throw ModelError("\(what): the name is empty") }
        func letter(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }
        guard letter(first), bytes.allSatisfy({ letter($0) || ($0 >= 48 && $0 <= 57) }) else {
            throw ModelError(
                "\(what): '\(name)' is not an identifier (letters, digits and '_', not starting with a digit)")
        }
        guard !name.uppercased().hasPrefix("Z_") else {
            throw ModelError("\(what): names starting with 'Z_' are reserved for the store's own columns")
        }
    }

    /// Property names are any non-empty string: SQL never sees them, only names derived from them.
    static func checkPropertyName(_ name: String, what: String) throws(ModelError) {
        guard !name.isEmpty else { throw ModelError("\(what): the name is empty") }
    }

    static func resolveAttribute(
        _ a: AttributeDescription, entity: String, table: String,
        names: inout StorageNames
    ) throws(ModelError) -> ResolvedAttribute {
        let what = "attribute '\(entity).\(a.name)'"
        if let p = problems(of: a).first { throw ModelError("\(what): \(p.message)") }
        var mixed: MixedStorage?
        if a.type == .mixed, let shapes = a.shapes {
            func column(_ suffix: String) -> String {
                names.storeColumn("\(a.name)@\(suffix)", in: table, for: suffix, entity, a.name)
            }
            mixed = MixedStorage(
                shapes: shapes, shapeColumn: column("shape"),
                scalarColumn: shapes.scalar ? column("scalar") : nil,
                dateColumn: shapes.date ? column("date") : nil,
                countColumn: shapes.array != nil ? column("count") : nil,
                valueTable: shapes.array != nil
                    ? names.table("Z_\(entity)_\(a.name)", for: "values", entity, a.name) : nil)
        }
        let defaultValue = defaultValue(of: a)
        return ResolvedAttribute(
            description: a, column: names.column(a.name, of: entity, in: table),
            exactColumn: a.type == .decimal && names.layout.keepsExactDecimals
                ? names.storeColumn("Z_\(a.name)_exact", in: table, for: "exact", entity, a.name) : nil,
            valueTable: a.isCollection ? names.table("Z_\(entity)_\(a.name)", for: "values", entity, a.name) : nil,
            defaultValue: defaultValue, mixed: mixed)
    }

    /// A derived attribute's expression must parse (its keys are checked against the model once
    /// the model is resolved, in `Derivations`), and the attribute must be stored and hold one value.
    static func derivationProblems(of a: AttributeDescription) -> [(key: String, message: String)] {
        guard let text = a.derivationExpression else { return [] }
        var out: [(key: String, message: String)] = []
        do { _ = try ExpressionSyntax.parse(text) } catch {
            out.append(("derivationExpression", "invalid derivation expression at \(error.location): \(error.message)"))
        }
        if a.isTransient {
            out.append(("derivationExpression", "a derived attribute is stored; it cannot be transient"))
        }
        if a.isCollection {
            out.append(("derivationExpression", "a derived attribute holds one value; it cannot be a collection"))
        }
        return out
    }

    /// Every rule of `a` that does not hold together, each with the model file key it is about
    /// (`min`, `maxLength`, `regex`, `default`, …): bounds and patterns on types they do not apply
    /// to, bounds in the wrong order, patterns that do not compile, defaults that break the
    /// attribute's type or its own rules.
    static func problems(of a: AttributeDescription) -> [(key: String, message: String)] {
        var out = boundProblems(of: a)
        if let re = a.regularExpression {
            if ![.string, .uuid, .uri, .dynamic].contains(a.type) {
                out.append(("regex", "a regular expression applies to strings, not \(a.type.rawValue)"))
            } else {
                do { _ = try AttributeValidation.regex(re) } catch {
                    out.append(("regex", "invalid regular expression: \(error.message)"))
                }
            }
        }
        if a.isIndexed, let problem = indexProblem(a) { out.append(("indexed", problem)) }
        if a.isTransient, a.isCollection || a.type == .mixed {
            out.append(("transient", "a transient attribute holds one value; it cannot be a collection or mixed"))
        }
        out += derivationProblems(of: a)
        if a.isCollection, a.type == .transformable {
            out.append(
                ("collection", "a transformable attribute holds any value already; it cannot also be a collection"))
        }
        out += shapeProblems(of: a)
        if let name = a.valueTransformerName {
            if a.type != .transformable {
                out.append(
                    (
                        "valueTransformerName",
                        "a value transformer ('\(name)') applies to transformable attributes, not \(a.type.rawValue)"
                    ))
            } else if a.defaultValue != nil {
                out.append(("default", "an attribute with a value transformer ('\(name)') has no default"))
            }
        }
        if let d = a.defaultValue, !out.contains(where: { $0.key == "default" }) {
            if let p = defaultProblem(d, of: a, rulesHold: out.isEmpty) { out.append(("default", p)) }
        }
        return out
    }

    /// Numeric and length bounds: the types they apply to, their order, lengths not negative.
    private static func boundProblems(of a: AttributeDescription) -> [(key: String, message: String)] {
        var out: [(key: String, message: String)] = []
        let numeric = a.type.isNumeric || a.type == .dynamic
        let lengthy = [.string, .binary, .uuid, .uri, .dynamic].contains(a.type)
        for (key, bound) in [("min", a.minValue), ("max", a.maxValue)] where bound != nil && !numeric {
            out.append((key, "min/max apply to numeric attributes, not \(a.type.rawValue)"))
        }
        for (key, bound) in [("minLength", a.minLength), ("maxLength", a.maxLength)] where bound != nil {
            if !lengthy {
                out.append(
                    (key, "minLength/maxLength apply to string and binary attributes, not \(a.type.rawValue)"))
            } else if bound! < 0 {
                out.append((key, "a length cannot be negative (\(bound!))"))
            }
        }
        if let lo = a.minValue, let hi = a.maxValue, numeric, lo > hi {
            out.append(("min", "the minimum \(lo) is above the maximum \(hi)"))
        }
        if let lo = a.minLength, let hi = a.maxLength, lengthy, lo > hi {
            out.append(("minLength", "the minimum length \(lo) is above the maximum length \(hi)"))
        }
        return out
    }

    /// Mixed attributes name their shapes, and only they do.
    private static func shapeProblems(of a: AttributeDescription) -> [(key: String, message: String)] {
        switch (a.type, a.shapes) {
        case (.mixed, nil):
            return [("type", "a mixed attribute names its 'shapes' (scalar, date, array)")]
        case (.mixed, let shapes?):
            var out: [(key: String, message: String)] = []
            if !(shapes.scalar || shapes.date || shapes.array != nil) {
                out.append(("shapes", "a mixed attribute needs at least one shape (scalar, date or array)"))
            }
            if a.isCollection {
                out.append(
                    (
                        "collection",
                        "a mixed attribute holds arrays through its 'array' shape; it cannot also be a collection"
                    ))
            }
            if a.defaultValue != nil { out.append(("default", "a mixed attribute has no default value")) }
            return out
        case (_, _?):
            return [("shapes", "'shapes' apply to mixed attributes, not \(a.type.rawValue)")]
        case (_, nil):
            return []
        }
    }

    /// What is wrong with default `d` of `a`: a collection's, one not of the type, or (when the
    /// attribute's own rules hold together) one that breaks them.
    private static func defaultProblem(_ d: StoredValue, of a: AttributeDescription, rulesHold: Bool) -> String? {
        guard !a.isCollection else { return "a collection has no default value" }
        let value: Value
        do { value = try Value(coercing: d.value(for: a.type), to: a.type) } catch {
            return "the default value \(d.value) is not \(a.type.article) \(a.type.rawValue)"
        }
        guard rulesHold else { return nil }
        let regex = a.regularExpression.flatMap { try? AttributeValidation.regex($0) }
        return AttributeValidation.problem(scalar: value, a, regex: regex).map {
            "the default value breaks its rule: \($0.message)"
        }
    }

    /// Every rule of `rel` that does not hold together, each with the model file key it is about.
    static func problems(of rel: RelationshipDescription) -> [(key: String, message: String)] {
        var out: [(key: String, message: String)] = []
        if rel.isOrdered, !rel.isToMany { out.append(("ordered", "only to-many relationships are ordered")) }
        if rel.allowsNil, !rel.isToMany {
            out.append(
                ("allowsNil", "'allowsNil' applies to to-many relationships (a to-one is nil when it holds no object)"))
        }
        if !rel.isToMany, rel.minCount != 0 || rel.maxCount != 0 {
            out.append((rel.minCount != 0 ? "minCount" : "maxCount", "count bounds apply to to-many relationships"))
        }
        if rel.minCount < 0 || rel.maxCount < 0 || (rel.maxCount > 0 && rel.minCount > rel.maxCount) {
            out.append(
                (
                    rel.minCount < 0 || rel.maxCount >= 0 ? "minCount" : "maxCount",
                    "invalid count bounds \(rel.minCount)…\(rel.maxCount)"
                ))
        }
        return out
    }

    static func resolveStorage(
        _ rel: RelationshipDescription, declaringEntity: String,
        byName: [String: EntityDescription],
        chains: [String: [EntityDescription]],
        names: inout StorageNames
    ) throws(ModelError) -> RelationshipStorage {
        let what = "relationship '\(declaringEntity).\(rel.name)'"
        guard let destination = byName[rel.destination] else {
            throw ModelError("\(what) points at unknown entity '\(rel.destination)'")
        }
        if let p = problems(of: rel).first { throw ModelError("\(what): \(p.message)") }
        func joinTable(_ entity: String, _ name: String) -> String {
            names.table("Z_\(entity)_\(name)", for: "join", entity, name)
        }
        if !rel.isToMany {
            if let inv = rel.inverse {
                _ = try inverseOf(
                    rel, what: what, declaringEntity: declaringEntity, destination: destination, chains: chains,
                    byName: byName, name: inv)
            }
            return .foreignKey(
                column: names.column(
                    rel.name, of: declaringEntity, in: names.layout.table(root: chains[declaringEntity]![0].name)))
        }
        guard let inv = rel.inverse else {
            return .joinTable(
                table: joinTable(declaringEntity, rel.name), source: "Z_SRC", destination: "Z_DST",
                order: rel.isOrdered ? "Z_SRC_ORD" : nil)
        }
        let (invEntity, inverse) = try inverseOf(
            rel, what: what, declaringEntity: declaringEntity, destination: destination, chains: chains, byName: byName,
            name: inv)
        if !inverse.isToMany {
            let table = names.layout.table(root: chains[destination.name]![0].name)
            return .inverseForeignKey(
                table: table, column: names.column(inverse.name, of: invEntity, in: table),
                orderColumn: rel.isOrdered
                    ? names.storeColumn(
                        names.layout.orderColumnBase(toOne: inverse.name), in: table, for: "order", invEntity,
                        inverse.name)
                    : nil)
        }
        if names.layout == .coreData {
            let join = CoreDataNames.joinTable(
                mine: (names.numbers[declaringEntity]!, rel.name), theirs: (names.numbers[invEntity]!, inverse.name))
            return .joinTable(
                table: join.table, source: join.source, destination: join.destination,
                order: rel.isOrdered ? CoreDataNames.orderColumn(destination: join.destination) : nil)
        }
        // Many-to-many: one join table for the pair, named after the side that sorts first.
        let mine = "\(declaringEntity).\(rel.name)"
        let theirs = "\(invEntity).\(inverse.name)"
        if mine <= theirs {
            return .joinTable(
                table: joinTable(declaringEntity, rel.name), source: "Z_SRC", destination: "Z_DST",
                order: rel.isOrdered ? "Z_SRC_ORD" : nil)
        }
        return .joinTable(
            table: joinTable(invEntity, inverse.name), source: "Z_DST", destination: "Z_SRC",
            order: rel.isOrdered ? "Z_DST_ORD" : nil)
    }

    /// The inverse relationship, checked to point back at this one.
    static func inverseOf(
        _ rel: RelationshipDescription, what: String, declaringEntity: String, destination: EntityDescription,
        chains: [String: [EntityDescription]], byName: [String: EntityDescription],
        name: String
    ) throws(ModelError) -> (String, RelationshipDescription) {
        for owner in chains[destination.name]!.reversed() {
            guard let inverse = owner.relationships.first(where: { $0.name == name }) else { continue }
            guard inverse.inverse == rel.name else {
                throw ModelError(
                    "\(what): its inverse '\(owner.name).\(name)' has inverse \(inverse.inverse.map { "'\($0)'" } ?? "none"), not '\(rel.name)'"
                )
            }
            guard
                chains[declaringEntity]!.contains(where: { $0.name == inverse.destination })
                    || chains[inverse.destination].map({ $0.contains { $0.name == declaringEntity } }) == true
            else {
                throw ModelError(
                    "\(what): its inverse '\(owner.name).\(name)' points at '\(inverse.destination)', not '\(declaringEntity)'"
                )
            }
            return (owner.name, inverse)
        }
        throw ModelError("\(what): the inverse '\(name)' is not a relationship of '\(destination.name)'")
    }
}

extension StoredValue {
    /// The default as a value of attribute type `type`: a date attribute's number is seconds since
    /// 2001-01-01 00:00 UTC (Core Data's reference date, and how the store keeps dates).
    func value(for type: AttributeType) -> Value {
        switch (type, self) {
        case (.date, .integer(let i)): .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case (.date, .double(let d)): .date(Date(timeIntervalSinceReferenceDate: d))
        default: value
        }
    }

    var value: Value {
        switch self {
        case .bool(let b): .bool(b)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        }
    }
}

// MARK: - The lowering's schema

extension ManagedObjectModel {
    /// The schema the SQL lowering reads, derived from the model's storage layout. Transformable
    /// attributes are left out (they are not queryable in SQL; a predicate naming them is
    /// evaluated in memory).
    /// Under Core Data's layout UUIDs are bytes, which the lowering does not compare: memory does.
    static func deriveSchema(
        _ entities: [EntityDescription], _ resolved: [String: ResolvedEntity], layout: StoreLayout = .sift
    ) -> Schema {
        func sqlType(_ t: AttributeType) -> (Schema.ValueType, Schema.StorageEncoding?)? {
            layout.keepsUUIDsAsBytes && t == .uuid ? nil : Self.sqlType(t)
        }
        var out: [Schema.Entity] = []
        for e in entities {
            let r = resolved[e.name]!
            if let layout = r.document {
                // The root entity reads the entity's own table; its children are the layout's.
                out += layout.entities
                continue
            }
            var attributes: [Schema.Attribute] = []
            var relationships: [Schema.Relationship] = []
            var mixedKeys: [Schema.MixedKey] = []
            for a in r.attributes {
                if let m = a.mixed {
                    mixedKeys.append(Self.mixedKey(a.name, m))
                    continue
                }
                if a.description.isCollection {
                    guard let t = Self.sqlType(a.type) else { continue }
                    relationships.append(
                        Schema.Relationship(
                            name: a.name,
                            values: Schema.Relationship.ValueTable(
                                table: a.valueTable!, owner: Storage.owner, column: Storage.value,
                                type: t.0, encoding: t.1),
                            countColumn: a.column, orderColumn: Storage.order))
                    continue
                }
                guard let t = sqlType(a.type) else { continue }
                attributes.append(Schema.Attribute(name: a.name, column: a.column, type: t.0, encoding: t.1))
            }
            for rel in r.relationships {
                switch rel.storage {
                case .foreignKey(let column):
                    relationships.append(
                        Schema.Relationship(name: rel.name, toOne: rel.destination, foreignKey: column))
                case .inverseForeignKey(_, let column, let order):
                    relationships.append(
                        Schema.Relationship(
                            name: rel.name, toMany: rel.destination, foreignKey: column,
                            countColumn: rel.countColumn, orderColumn: order))
                case .joinTable(let table, let source, let destination, let order):
                    relationships.append(
                        Schema.Relationship(
                            name: rel.name, toMany: rel.destination,
                            joinTable: .init(table: table, source: source, destination: destination),
                            countColumn: rel.countColumn, orderColumn: order))
                }
            }
            let hierarchy = entities.filter { resolved[$0.name]!.root == r.root }
            let discriminator =
                hierarchy.count > 1
                ? Schema.Entity.Discriminator(
                    column: Storage.entityColumn, values: r.family.map { resolved[$0]!.number })
                : nil
            // Open only when SQL sees every property of every row: a key left to memory (a
            // transformable) or declared by a sub-entity would otherwise read nil in SQL where
            // memory reads a value.
            let inSQL = r.attributes.allSatisfy { sqlType($0.type) != nil || $0.mixed != nil }
            let ownKeys = r.attributes.count + r.relationships.count
            let subEntityKeys = r.family.contains {
                resolved[$0]!.attributes.count + resolved[$0]!.relationships.count > ownKeys
            }
            out.append(
                Schema.Entity(
                    name: e.name, table: r.table, primaryKey: Storage.primaryKey,
                    attributes: attributes, relationships: relationships, open: r.isOpen && inSQL && !subEntityKeys,
                    discriminator: discriminator, mixedKeys: mixedKeys))
        }
        // The layout is made from a validated model; a schema error here is a bug in this file.
        do { return try Schema(entities: out) } catch { preconditionFailure("derived schema is invalid: \(error)") }
    }

    /// A mixed attribute as the lowering sees it: one case per declared shape, each row taking
    /// the case its shape column names.
    static func mixedKey(_ name: String, _ m: MixedStorage) -> Schema.MixedKey {
        var cases: [Schema.MixedKey.Case] = []
        if let c = m.scalarColumn {
            cases.append(
                Schema.MixedKey.Case(
                    tag: MixedStorage.scalarTag, attribute: Schema.Attribute(name: name, column: c, type: .any)))
        }
        if let c = m.dateColumn {
            cases.append(
                Schema.MixedKey.Case(
                    tag: MixedStorage.dateTag,
                    attribute: Schema.Attribute(name: name, column: c, type: .date, encoding: .secondsSince2001)))
        }
        if let elements = m.shapes.array, let table = m.valueTable {
            let dates = elements == .date
            let values = Schema.Relationship.ValueTable(
                table: table, owner: Storage.owner, column: Storage.value,
                type: dates ? .date : .any, encoding: dates ? .secondsSince2001 : nil)
            cases.append(
                Schema.MixedKey.Case(
                    tag: MixedStorage.arrayTag,
                    relationship: Schema.Relationship(
                        name: name, values: values, countColumn: m.countColumn, orderColumn: Storage.order)))
        }
        return Schema.MixedKey(name: name, shapeColumn: m.shapeColumn, cases: cases)
    }

    /// The lowering's type and encoding for an attribute type; nil when SQL cannot read it.
    static func sqlType(_ t: AttributeType) -> (Schema.ValueType, Schema.StorageEncoding?)? {
        switch t {
        case .integer16, .integer32, .integer64: (.integer, nil)
        case .double, .float: (.double, nil)
        case .decimal: (.decimal, .real)
        case .string, .uuid, .uri: (.string, nil)
        case .boolean: (.boolean, .integer01)
        case .date: (.date, .secondsSince2001)
        case .binary: (.data, nil)
        case .dynamic: (.any, nil)
        case .transformable, .mixed: nil
        }
    }
}

extension ManagedObjectModel {
    /// The order columns of each join table: one for each ordered side (both sides of a
    /// many-to-many may be ordered, each keeping its own order in the pair's row), sorted.
    var joinTableOrders: [String: [String]] {
        var out: [String: Set<String>] = [:]
        for r in resolved.values {
            for rel in r.relationships {
                guard case .joinTable(let table, _, _, let order) = rel.storage else { continue }
                out[table, default: []].formUnion(order.map { [$0] } ?? [])
            }
        }
        return out.mapValues { $0.sorted() }
    }
}
