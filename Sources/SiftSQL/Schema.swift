// The schema mapping: how the key paths of a predicate reach tables and columns. It names, per
// entity, the table and its primary key, each attribute's column with its value type and storage
// encoding, and each relationship's shape (to-one through a foreign key in the source table, to-many
// through a foreign key in the destination or a join table, or a to-many of plain values kept in a
// child table). The lowering reads nothing else: every identifier it emits comes from here.
// The same structure is the JSON file the CLI loads (`sift sql --schema FILE`).

import Foundation
import SiftSyntax

/// A database schema as the SQL lowering sees it.
///
/// ```swift
/// let schema = try Schema(json: """
/// {"entities": [
///   {"name": "Person", "table": "person",
///    "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer"}],
///    "relationships": [{"name": "address", "toOne": "Address", "foreignKey": "address_id"}]},
///   {"name": "Address", "table": "address",
///    "attributes": [{"name": "city", "type": "string"}]}
/// ]}
/// """)
/// schema.entity(named: "Person")?.table  // "person"
/// ```
public struct Schema: Codable, Hashable, Sendable {
    /// The entities, each with a unique name.
    public var entities: [Entity]

    /// A schema of `entities`, validated (see ``validate()``).
    public init(entities: [Entity]) throws(SchemaError) {
        self.entities = entities
        try validate()
    }

    /// Decodes and validates a schema from its JSON form.
    public init(json: String) throws(SchemaError) {
        try self.init(jsonData: Data(json.utf8))
    }

    /// Decodes and validates a schema from JSON bytes (the contents of a `--schema` file).
    public init(jsonData: Data) throws(SchemaError) {
        let decoded: Schema
        do {
            decoded = try JSONDecoder().decode(Schema.self, from: jsonData)
        } catch let error as DecodingError {
            throw SchemaError(.unreadable, message: SchemaError.describe(error))
        } catch let error as SchemaError {
            throw error
        } catch {
            throw SchemaError(.unreadable, message: "invalid schema JSON: \(error)")
        }
        try self.init(entities: decoded.entities)
    }

    /// The entity called `name`, if any.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// The schema as pretty-printed JSON, keys sorted.
    public var jsonString: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding plain structs of strings and enums cannot fail.
        let data = try! encoder.encode(self)
        return String(decoding: data, as: UTF8.self)
    }

    /// Checks what decoding cannot: unique names, relationships that point at existing entities,
    /// exactly one shape per relationship, and encodings that fit their attribute types.
    public func validate() throws(SchemaError) {
        var seen = Set<String>()
        for e in entities {
            guard seen.insert(e.name).inserted else { throw SchemaError(message: "duplicate entity '\(e.name)'") }
            var keys = Set<String>()
            for a in e.attributes {
                guard keys.insert(a.name).inserted else {
                    throw SchemaError(message: "entity '\(e.name)' has two properties named '\(a.name)'")
                }
                if let enc = a.encoding, !enc.fits(a.type) {
                    throw SchemaError(
                        message:
                            "attribute '\(e.name).\(a.name)': encoding '\(enc.rawValue)' does not fit type '\(a.type.rawValue)'"
                    )
                }
            }
            for r in e.relationships {
                guard keys.insert(r.name).inserted else {
                    throw SchemaError(message: "entity '\(e.name)' has two properties named '\(r.name)'")
                }
                try validate(r, of: e)
            }
            for m in e.mixedKeys {
                guard keys.insert(m.name).inserted else {
                    throw SchemaError(message: "entity '\(e.name)' has two properties named '\(m.name)'")
                }
                try validate(m, of: e, isSelf: false)
            }
            if let m = e.selfShape { try validate(m, of: e, isSelf: true) }
        }
    }

    private func validate(_ r: Relationship, of e: Entity) throws(SchemaError) {
        let shape: Relationship.Shape
        do { shape = try r.shape() } catch {
            throw SchemaError(message: "relationship '\(e.name).\(r.name)': \(error.message)")
        }
        switch shape {
        case .toOne(let d, _), .toMany(let d, _), .manyToMany(let d, _):
            guard entity(named: d) != nil else {
                throw SchemaError(message: "relationship '\(e.name).\(r.name)' points at unknown entity '\(d)'")
            }
        case .values: break
        }
    }

    /// Tags unique, one property per case named after the key, and the object case only for SELF.
    private func validate(_ m: MixedKey, of e: Entity, isSelf: Bool) throws(SchemaError) {
        let what = isSelf ? "the shapes of '\(e.name)' itself" : "mixed key '\(e.name).\(m.name)'"
        var tags = Set<Int64>()
        for c in m.cases {
            guard tags.insert(c.tag).inserted else {
                throw SchemaError(message: "\(what): two cases with tag \(c.tag)")
            }
            let set = [c.attribute != nil, c.relationship != nil, c.object].filter { $0 }.count
            guard set == 1 else {
                throw SchemaError(
                    message: "\(what): case \(c.tag) needs exactly one of 'attribute', 'relationship' or 'object'")
            }
            if c.object && !isSelf { throw SchemaError(message: "\(what): only SELF has an 'object' case") }
            if let a = c.attribute {
                guard a.name == m.name else { throw SchemaError(message: "\(what): case \(c.tag) names '\(a.name)'") }
                if let enc = a.encoding, !enc.fits(a.type) {
                    throw SchemaError(
                        message: "\(what): encoding '\(enc.rawValue)' does not fit type '\(a.type.rawValue)'")
                }
            }
            if let r = c.relationship {
                guard r.name == m.name else { throw SchemaError(message: "\(what): case \(c.tag) names '\(r.name)'") }
                try validate(r, of: e)
                if isSelf, case .toOne = try? r.shape() {
                    throw SchemaError(
                        message: "\(what): a row that is an object is the 'object' case, not a to-one relationship")
                }
            }
        }
    }
}

extension Schema {
    /// One entity: a table whose rows are the objects a predicate is evaluated against.
    public struct Entity: Codable, Hashable, Sendable {
        /// The name used by `--entity` and by relationship destinations.
        public var name: String
        /// The table holding the entity's rows (default: the entity's name).
        public var table: String
        /// The primary-key column, an integer that identifies the row (default `id`).
        public var primaryKey: String
        /// The keys that read one column each.
        public var attributes: [Attribute]
        /// The keys that lead to other rows or to collections.
        public var relationships: [Relationship]
        /// Whether a key the entity does not declare reads nil, as a missing dictionary key does in
        /// memory (the entities inferred from JSON are open), instead of being an `unknown-key` error.
        public var open: Bool
        /// Set when several entities share one table (an inheritance hierarchy): the rows of this
        /// entity are those whose `column` holds one of `values`. The lowering adds that test to the
        /// top-level query; relationships already point only at rows of their destination.
        public var discriminator: Discriminator?
        /// Keys whose values take different shapes in different rows (see ``Schema/MixedKey``).
        public var mixedKeys: [MixedKey]
        /// Set when the rows are not all objects (JSON records that are strings, numbers, arrays or
        /// null): what `SELF` is in each row. Its `object` case is a row read through the entity's keys.
        public var selfShape: MixedKey?
        /// Set when each row also keeps its whole record (a JSON document) in this column, in the
        /// binary form `ValueCodec` writes: a comparison that needs the record as memory sees it (a
        /// dictionary's `@count` or values, an element that is null, arrays of arrays, a SUBQUERY's
        /// result as a whole…) is then decided by memory on the document, from SQL, in a dialect with
        /// a ``SQLDialect/documentFunction``.
        public var documentColumn: String?

        /// An entity; the table defaults to the name, the primary key to `id`.
        ///
        /// ```swift
        /// let person = Schema.Entity(
        ///     name: "Person", table: "person",
        ///     attributes: [Schema.Attribute(name: "age", type: .integer)],
        ///     relationships: [Schema.Relationship(name: "address", toOne: "Address", foreignKey: "address_id")])
        /// let schema = try Schema(entities: [person, Schema.Entity(name: "Address")])
        /// ```
        public init(
            name: String, table: String? = nil, primaryKey: String = "id",
            attributes: [Attribute] = [], relationships: [Relationship] = [], open: Bool = false,
            discriminator: Discriminator? = nil, mixedKeys: [MixedKey] = [], selfShape: MixedKey? = nil,
            documentColumn: String? = nil
        ) {
            self.name = name
            self.table = table ?? name
            self.primaryKey = primaryKey
            self.attributes = attributes
            self.relationships = relationships
            self.open = open
            self.discriminator = discriminator
            self.mixedKeys = mixedKeys
            self.selfShape = selfShape
            self.documentColumn = documentColumn
        }

        /// The column that tells the entities of one table apart, and the values of this entity (its
        /// own and its sub-entities').
        public struct Discriminator: Codable, Hashable, Sendable {
            /// The column holding each row's entity code.
            public var column: String
            /// The codes of this entity and its sub-entities.
            public var values: [Int64]
            /// A discriminator on `column` with this entity's `values`.
            public init(column: String, values: [Int64]) {
                self.column = column
                self.values = values
            }
        }

        /// The attribute called `key`, if any.
        public func attribute(named key: String) -> Attribute? { attributes.first { $0.name == key } }
        /// The relationship called `key`, if any.
        public func relationship(named key: String) -> Relationship? { relationships.first { $0.name == key } }
        /// The mixed key called `key`, if any.
        public func mixedKey(named key: String) -> MixedKey? { mixedKeys.first { $0.name == key } }

        private enum CodingKeys: String, CodingKey {
            case name, table, primaryKey, attributes, relationships, open, discriminator, mixedKeys, selfShape,
                documentColumn
        }

        /// Decodes an entity from its JSON form, applying the defaults (table, primary key, empty lists).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            table = try c.decodeIfPresent(String.self, forKey: .table) ?? name
            primaryKey = try c.decodeIfPresent(String.self, forKey: .primaryKey) ?? "id"
            attributes = try c.decodeIfPresent([Attribute].self, forKey: .attributes) ?? []
            relationships = try c.decodeIfPresent([Relationship].self, forKey: .relationships) ?? []
            open = try c.decodeIfPresent(Bool.self, forKey: .open) ?? false
            discriminator = try c.decodeIfPresent(Discriminator.self, forKey: .discriminator)
            mixedKeys = try c.decodeIfPresent([MixedKey].self, forKey: .mixedKeys) ?? []
            selfShape = try c.decodeIfPresent(MixedKey.self, forKey: .selfShape)
            documentColumn = try c.decodeIfPresent(String.self, forKey: .documentColumn)
        }

        /// Encodes the entity; options that are unset are left out.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(table, forKey: .table)
            try c.encode(primaryKey, forKey: .primaryKey)
            try c.encode(attributes, forKey: .attributes)
            try c.encode(relationships, forKey: .relationships)
            if open { try c.encode(true, forKey: .open) }
            try c.encodeIfPresent(discriminator, forKey: .discriminator)
            if !mixedKeys.isEmpty { try c.encode(mixedKeys, forKey: .mixedKeys) }
            try c.encodeIfPresent(selfShape, forKey: .selfShape)
            try c.encodeIfPresent(documentColumn, forKey: .documentColumn)
        }
    }

    /// A key whose value has a different shape in different rows: a string in one JSON record, an
    /// array or an object in another. Each row's `shapeColumn` holds the `tag` of the case it uses,
    /// and NULL where the key is nil (a missing row of a to-one join reads NULL too, and is nil).
    /// A predicate naming the key is lowered once per case and each row takes the lowering of its
    /// own case, so every row gets the answer it would get in a table where the key had one shape.
    ///
    /// ```json
    /// {"name": "tags", "shapeColumn": "tags@shape", "cases": [
    ///   {"tag": 1, "attribute": {"name": "tags", "column": "tags", "type": "any"}},
    ///   {"tag": 4, "relationship": {"name": "tags", "countColumn": "tags@count",
    ///     "values": {"table": "Record.tags", "owner": "owner", "type": "any"}}}]}
    /// ```
    public struct MixedKey: Codable, Hashable, Sendable {
        /// The key's name.
        public var name: String
        /// The column of the entity's table holding each row's case tag (NULL for nil).
        public var shapeColumn: String
        /// The shapes, each with its tag.
        public var cases: [Case]

        /// A mixed key with its shape column and cases.
        public init(name: String, shapeColumn: String, cases: [Case]) {
            self.name = name
            self.shapeColumn = shapeColumn
            self.cases = cases
        }

        /// One shape: exactly one of `attribute`, `relationship`, or (for `Entity.selfShape` only)
        /// `object`, the row itself read through the entity's keys.
        public struct Case: Codable, Hashable, Sendable {
            /// The value of the shape column for rows of this case.
            public var tag: Int64
            /// The attribute holding the value, for a scalar shape.
            public var attribute: Attribute?
            /// The relationship holding the value, for an array or object shape.
            public var relationship: Relationship?
            /// Whether the row itself is the value (for ``Schema/Entity/selfShape`` only).
            public var object: Bool

            /// A case; set exactly one of `attribute`, `relationship` and `object`.
            public init(
                tag: Int64, attribute: Attribute? = nil, relationship: Relationship? = nil, object: Bool = false
            ) {
                self.tag = tag
                self.attribute = attribute
                self.relationship = relationship
                self.object = object
            }

            private enum CodingKeys: String, CodingKey { case tag, attribute, relationship, object }

            /// Decodes a case; `object` defaults to false.
            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                tag = try c.decode(Int64.self, forKey: .tag)
                attribute = try c.decodeIfPresent(Attribute.self, forKey: .attribute)
                relationship = try c.decodeIfPresent(Relationship.self, forKey: .relationship)
                object = try c.decodeIfPresent(Bool.self, forKey: .object) ?? false
            }

            /// Encodes a case, leaving out `object` when false.
            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(tag, forKey: .tag)
                try c.encodeIfPresent(attribute, forKey: .attribute)
                try c.encodeIfPresent(relationship, forKey: .relationship)
                if object { try c.encode(true, forKey: .object) }
            }
        }
    }

    /// The value type of an attribute, which decides which comparisons are meaningful and how
    /// constants are encoded.
    public enum ValueType: String, Codable, Hashable, Sendable, CaseIterable {
        /// The static types: each attribute holds values of one kind.
        case string, integer, double, decimal, boolean, date, data
        /// A dynamically typed column: each value keeps its own SQLite storage class (the shape the
        /// CLI infers from JSON). Constants are bound as they are; no type check is possible.
        case any
    }

    /// How an attribute's values are stored in their column.
    public enum StorageEncoding: String, Codable, Hashable, Sendable, CaseIterable {
        /// Dates as REAL seconds since 2001-01-01 00:00:00 UTC (Core Data's choice; the default for dates).
        case secondsSince2001 = "seconds-since-2001"
        /// Dates as REAL seconds since 1970-01-01 00:00:00 UTC.
        case secondsSince1970 = "seconds-since-1970"
        /// Dates as ISO-8601 TEXT in UTC with fractional seconds, `2024-05-01T12:00:00.000Z`, which
        /// sorts chronologically as text.
        case iso8601
        /// Booleans as INTEGER 0 and 1 (the default for booleans).
        case integer01 = "0/1"
        /// Decimals as REAL (the default; exact only to Double precision).
        case real
        /// Decimals as TEXT in canonical decimal notation (exact, but compared as text; equality only).
        case text

        func fits(_ type: ValueType) -> Bool {
            switch self {
            case .secondsSince2001, .secondsSince1970, .iso8601: type == .date
            case .integer01: type == .boolean
            case .real: type == .decimal
            case .text: type == .decimal
            }
        }
    }

    /// An attribute: a key that reads one column of the entity's table.
    public struct Attribute: Codable, Hashable, Sendable {
        /// The key that reads this attribute.
        public var name: String
        /// The column (default: the attribute's name).
        public var column: String
        /// The type of the attribute's values.
        public var type: ValueType
        /// nil means the type's default (seconds since 2001 for dates, 0/1 for booleans, REAL for decimals).
        public var encoding: StorageEncoding?
        /// For a dynamically typed (`any`) attribute in a database whose columns hold one type each
        /// (PostgreSQL): the column holding its strings, while `column` holds its numbers (booleans as
        /// 0/1) as exact NUMERIC. nil in SQLite, where one column holds every kind.
        public var textColumn: String?
        /// For a database that cannot call Sift's Unicode folding (PostgreSQL): columns the writer
        /// keeps holding this attribute's strings folded under `[c]`, `[d]` and `[cd]`, so that
        /// comparisons under those options compare folded text exactly. nil: such comparisons are rejected.
        public var foldedColumns: FoldedColumns?

        /// An attribute; the column defaults to the name, the encoding to the type's default.
        ///
        /// ```swift
        /// let born = Schema.Attribute(name: "born", column: "birth_date", type: .date, encoding: .iso8601)
        /// ```
        public init(
            name: String, column: String? = nil, type: ValueType, encoding: StorageEncoding? = nil,
            textColumn: String? = nil,
            foldedColumns: FoldedColumns? = nil
        ) {
            self.name = name
            self.column = column ?? name
            self.type = type
            self.encoding = encoding
            self.textColumn = textColumn
            self.foldedColumns = foldedColumns
        }

        /// The encoding in effect, defaults applied.
        public var effectiveEncoding: StorageEncoding? {
            if let encoding { return encoding }
            switch type {
            case .date: return .secondsSince2001
            case .boolean: return .integer01
            case .decimal: return .real
            default: return nil
            }
        }

        private enum CodingKeys: String, CodingKey { case name, column, type, encoding, textColumn, foldedColumns }

        /// Decodes an attribute; the column defaults to the name.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            column = try c.decodeIfPresent(String.self, forKey: .column) ?? name
            type = try c.decode(ValueType.self, forKey: .type)
            encoding = try c.decodeIfPresent(StorageEncoding.self, forKey: .encoding)
            textColumn = try c.decodeIfPresent(String.self, forKey: .textColumn)
            foldedColumns = try c.decodeIfPresent(FoldedColumns.self, forKey: .foldedColumns)
        }
    }

    /// The columns holding a text column's strings folded as `[c]`, `[d]` and `[cd]` fold them
    /// (SiftText's `TextFolding`), for databases that cannot call Sift's folding.
    ///
    /// ```swift
    /// let folded = FoldedColumns(c: "name@c", d: "name@d", cd: "name@cd")
    /// folded.column(for: [.caseInsensitive])   // "name@c"
    /// ```
    public struct FoldedColumns: Codable, Hashable, Sendable {
        /// Case folded (`[c]`).
        public var c: String
        /// Diacritics removed (`[d]`).
        public var d: String
        /// Both (`[cd]`).
        public var cd: String
        /// The three columns.
        public init(c: String, d: String, cd: String) {
            self.c = c
            self.d = d
            self.cd = cd
        }
        /// Whether `options` ask for folding: `c` or `d`, without `[n]` (which compares literally).
        public static func fold(_ options: ComparisonOptions) -> Bool {
            !options.contains(.normalized) && !options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive])
        }

        /// The column for the folding `options` ask for; nil when they ask for none (see ``fold(_:)``).
        public func column(for options: ComparisonOptions) -> String? {
            guard Self.fold(options) else { return nil }
            switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
            case (true, true): return cd
            case (true, false): return c
            case (false, true): return d
            case (false, false): return nil
            }
        }
    }

    /// A relationship. Exactly one of `toOne`, `toMany` or `values` is set (JSON keys of the same names):
    ///
    /// - `{"name": "address", "toOne": "Address", "foreignKey": "address_id"}`: the source table's
    ///   `address_id` column holds the destination's primary key, or NULL for nil.
    /// - `{"name": "kids", "toMany": "Kid", "foreignKey": "parent_id"}`: the destination table's
    ///   `parent_id` column holds the source's primary key.
    /// - `{"name": "friends", "toMany": "Person", "joinTable": {"table": "friendship", "source":
    ///   "person_id", "destination": "friend_id"}}`: many-to-many through a join table.
    /// - `{"name": "tags", "values": {"table": "person_tag", "owner": "person_id", "column": "value",
    ///   "type": "string"}}`: a collection of plain values, one row per element.
    ///
    /// A to-many (or `values`) relationship may name a `countColumn` in the source table that holds the
    /// number of elements, and NULL when the collection itself is nil. Without one, the collection is
    /// never nil (Core Data's to-many relationships are empty sets, never nil), so `@count` counts rows.
    public struct Relationship: Codable, Hashable, Sendable {
        /// The key that reads this relationship.
        public var name: String
        /// The destination entity of a to-one relationship.
        public var toOne: String?
        /// The destination entity of a to-many relationship.
        public var toMany: String?
        /// The foreign-key column: in the source table for a to-one, in the destination for a to-many.
        public var foreignKey: String?
        /// The join table of a many-to-many relationship.
        public var joinTable: JoinTable?
        /// The child table of a collection of plain values.
        public var values: ValueTable?
        /// A column of the source table holding the element count, NULL when the collection is nil.
        public var countColumn: String?
        /// For an ordered collection (an array in memory, not a set): the column whose ascending order
        /// is the elements' order, in the destination table (`toMany` with `foreignKey`), the join
        /// table, or the value table. Indexes (`x[0]`, `x[FIRST]`, `x[LAST]`) need it.
        public var orderColumn: String?

        /// A relationship; set exactly one of `toOne`, `toMany` and `values` (see ``shape()``).
        public init(
            name: String, toOne: String? = nil, toMany: String? = nil, foreignKey: String? = nil,
            joinTable: JoinTable? = nil, values: ValueTable? = nil, countColumn: String? = nil,
            orderColumn: String? = nil
        ) {
            self.name = name
            self.toOne = toOne
            self.toMany = toMany
            self.foreignKey = foreignKey
            self.joinTable = joinTable
            self.values = values
            self.countColumn = countColumn
            self.orderColumn = orderColumn
        }

        /// A join table for a many-to-many relationship.
        public struct JoinTable: Codable, Hashable, Sendable {
            /// The join table's name.
            public var table: String
            /// The column holding the source row's primary key.
            public var source: String
            /// The column holding the destination row's primary key.
            public var destination: String
            /// A join table with its two key columns.
            public init(table: String, source: String, destination: String) {
                self.table = table
                self.source = source
                self.destination = destination
            }
        }

        /// A child table holding a to-many collection of plain values.
        public struct ValueTable: Codable, Hashable, Sendable {
            /// The child table's name.
            public var table: String
            /// The column holding the owner's primary key.
            public var owner: String
            /// The column holding the element.
            public var column: String
            /// The type of the elements.
            public var type: ValueType
            /// How the elements are stored; nil means the type's default.
            public var encoding: StorageEncoding?
            /// The column holding the string elements of `any` values in a database whose columns hold
            /// one type each (see ``Schema/Attribute/textColumn``).
            public var textColumn: String?
            /// The columns of the elements' strings folded (see ``Schema/Attribute/foldedColumns``).
            public var foldedColumns: FoldedColumns?
            /// A value table; the element column defaults to `value`.
            public init(
                table: String, owner: String, column: String = "value", type: ValueType,
                encoding: StorageEncoding? = nil,
                textColumn: String? = nil, foldedColumns: FoldedColumns? = nil
            ) {
                self.table = table
                self.owner = owner
                self.column = column
                self.type = type
                self.encoding = encoding
                self.textColumn = textColumn
                self.foldedColumns = foldedColumns
            }

            private enum CodingKeys: String, CodingKey {
                case table, owner, column, type, encoding, textColumn, foldedColumns
            }

            /// Decodes a value table; the element column defaults to `value`.
            public init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                table = try c.decode(String.self, forKey: .table)
                owner = try c.decode(String.self, forKey: .owner)
                column = try c.decodeIfPresent(String.self, forKey: .column) ?? "value"
                type = try c.decode(ValueType.self, forKey: .type)
                encoding = try c.decodeIfPresent(StorageEncoding.self, forKey: .encoding)
                textColumn = try c.decodeIfPresent(String.self, forKey: .textColumn)
                foldedColumns = try c.decodeIfPresent(FoldedColumns.self, forKey: .foldedColumns)
            }

            /// The element as an attribute (named after the relationship), for type checks and encodings.
            public func elementAttribute(named name: String) -> Attribute {
                Attribute(
                    name: name, column: column, type: type, encoding: encoding, textColumn: textColumn,
                    foldedColumns: foldedColumns)
            }
        }

        /// The relationship's shape, with the fields it needs.
        public enum Shape: Hashable, Sendable {
            /// Destination entity, foreign-key column in the source table.
            case toOne(destination: String, foreignKey: String)
            /// Destination entity, foreign-key column in the destination table.
            case toMany(destination: String, foreignKey: String)
            /// Destination entity and join table.
            case manyToMany(destination: String, joinTable: JoinTable)
            /// The child table of plain values.
            case values(ValueTable)

            /// Whether the relationship holds a collection (every shape but to-one).
            public var isToMany: Bool { if case .toOne = self { false } else { true } }
            /// Whether the relationship is a collection of plain values.
            public var isValuesShape: Bool { if case .values = self { true } else { false } }
        }

        /// The shape, or a schema error when the fields do not describe exactly one.
        public func shape() throws(SchemaError) -> Shape {
            let set = [toOne != nil, toMany != nil, values != nil].filter { $0 }.count
            guard set == 1 else { throw SchemaError(message: "needs exactly one of 'toOne', 'toMany' or 'values'") }
            if let d = toOne {
                guard let fk = foreignKey, joinTable == nil else {
                    throw SchemaError(
                        message:
                            "a to-one relationship needs 'foreignKey' (a column of the source table) and no 'joinTable'"
                    )
                }
                guard countColumn == nil else {
                    throw SchemaError(message: "'countColumn' applies to to-many relationships only")
                }
                return .toOne(destination: d, foreignKey: fk)
            }
            if let d = toMany {
                switch (foreignKey, joinTable) {
                case (let fk?, nil): return .toMany(destination: d, foreignKey: fk)
                case (nil, let j?): return .manyToMany(destination: d, joinTable: j)
                default:
                    throw SchemaError(
                        message:
                            "a to-many relationship needs either 'foreignKey' (a column of the destination table) or 'joinTable'"
                    )
                }
            }
            guard foreignKey == nil, joinTable == nil, let v = values else {
                throw SchemaError(message: "a 'values' relationship takes neither 'foreignKey' nor 'joinTable'")
            }
            if let enc = v.encoding, !enc.fits(v.type) {
                throw SchemaError(message: "encoding '\(enc.rawValue)' does not fit type '\(v.type.rawValue)'")
            }
            return .values(v)
        }
    }
}

/// A schema that cannot be decoded or does not hold together.
///
/// ```swift
/// do { _ = try Schema(jsonData: Data(#"{"entities": 3}"#.utf8)) } catch {
///     print(error.id)   // unreadable-schema
///     print(error)      // schema error: … at .entities
/// }
/// ```
public struct SchemaError: SiftError, Hashable {
    /// The kinds of schema failure; the raw value is the error's id.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The JSON does not decode as a schema (a missing key, a value of the wrong type).
        case unreadable = "unreadable-schema"
        /// The schema decodes but does not hold together (a duplicate entity or property, a
        /// relationship to an unknown entity, an encoding that does not fit its type…).
        case invalid = "invalid-schema"
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// What is wrong with the schema.
    public var message: String
    /// An error of `kind` with its message.
    public init(_ kind: Kind = .invalid, message: String) {
        self.kind = kind
        self.message = message
    }
    /// `unreadable-schema` or `invalid-schema`.
    public var id: String { kind.rawValue }
    /// `schema error: ` followed by the message.
    public var description: String { "schema error: \(message)" }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            return
                "missing key '\(key.stringValue)' at \(path(ctx.codingPath).isEmpty ? "top level" : path(ctx.codingPath))"
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx), .dataCorrupted(let ctx):
            return "\(ctx.debugDescription) at \(path(ctx.codingPath).isEmpty ? "top level" : path(ctx.codingPath))"
        @unknown default: return "\(error)"
        }
    }
}
