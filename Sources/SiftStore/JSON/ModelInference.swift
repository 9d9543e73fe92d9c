// `sift store infer-model`: a managed object model inferred from JSON records, from their merged
// shapes (SiftJSON's FieldShape, the one shape inference, which the document tables derive from
// too). A key then becomes an attribute of the one type its values share, a to-one relationship (objects), an
// ordered to-many relationship (arrays of objects; one that allows nil where some records have
// null or no array) or a collection attribute (arrays of scalars).
// Where records disagree the inference picks the representation that keeps every value exactly
// (`dynamic` for numbers mixed with strings, `mixed` for scalars, dates and arrays of either
// mixed otherwise, `transformable` where objects are involved) and says so in a note, so
// `sift store import` never rejects the file the model was inferred from.

import Foundation
import SiftJSON

/// What the inference found out: the entities, root first, and one note per key it had to decide.
package struct InferredModel {
    package var entities: [EntityDescription]
    /// `note: key 'tags': …; stored as transformable` lines, in key order.
    package var notes: [String]
}

package enum ModelInference {
    /// Infers a model whose root entity `entity` describes `records` (each a JSON object).
    package static func infer(_ records: [JSONValue], entity: String) throws(JSONImportError) -> InferredModel {
        var rest = records[...]
        return try infer(entity: entity) { () -> JSONValue? in rest.popFirst() }
    }

    /// Infers a model from the records of `stream`, read one at a time (memory holds the merged
    /// shapes, not the records).
    ///
    /// ```swift
    /// var stream = RecordStream(try MappedInput.open("people.ndjson"), name: "people.ndjson")
    /// let inferred = try ModelInference.infer(&stream, entity: "Person")
    /// ```
    package static func infer(_ stream: inout RecordStream, entity: String) throws(JSONImportError) -> InferredModel {
        try infer(entity: entity) { () throws(JSONImportError) -> JSONValue? in
            do throws(RecordsError) { return try stream.next() } catch { throw JSONImportError(error.description) }
        }
    }

    /// Infers a model from the records `next` hands out, in order, until it answers nil.
    private static func infer(entity: String, next: () throws(JSONImportError) -> JSONValue?)
        throws(JSONImportError) -> InferredModel
    {
        let root = ObjectShape()
        var problems: [String] = []
        var n = 0
        while let record = try next() {
            defer { n += 1 }
            guard case .object(let members) = record, record.date == nil else {
                problems.append("error: record \(n) is not a JSON object (a store holds objects)")
                continue
            }
            root.merge(members, record: n)
        }
        if !problems.isEmpty { throw JSONImportError(.notObjects, lines: problems) }
        var builder = Builder()
        builder.usedNames.insert(entity.lowercased())
        builder.build(root, entity: entity, path: [], parent: nil)
        return InferredModel(entities: builder.entities, notes: builder.notes)
    }

    /// `key` as the tail of an entity name, which stays an identifier (`first name` → `first_name`):
    /// property names are any string, entity names are not.
    package static func identifierPart(_ key: String) -> String {
        let part = String(
            String.UnicodeScalarView(
                key.unicodeScalars.map { s in
                    (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s))) || s == "_" ? s : "_"
                }))
        return part.isEmpty ? "_" : part
    }

    /// Builds entities depth first, root first, naming nested entities after their path.
    private struct Builder {
        var entities: [EntityDescription] = []
        var notes: [String] = []
        /// Entity names in use, lower-cased (the store compares them without case).
        var usedNames = Set<String>()

        mutating func uniqueEntityName(_ base: String) -> String {
            var name = base
            var n = 2
            while usedNames.contains(name.lowercased()) {
                name = "\(base)\(n)"
                n += 1
            }
            usedNames.insert(name.lowercased())
            return name
        }

        /// Appends the entity for `shape` (and its nested entities) and returns the name of its
        /// relationship back to `parent`, the parent's relationship that leads here (its entity,
        /// its name and whether it is to-many); nil for the root.
        @discardableResult
        mutating func build(
            _ shape: ObjectShape, entity: String, path: [String],
            parent: (entity: String, relationship: String, toMany: Bool)?
        ) -> String? {
            var attributes: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            let index = entities.count
            // Closed: the model knows every key it saw, so a key no record has is an `unknown-key`
            // error before any row is read (a key some records lack is a nil attribute there).
            entities.append(EntityDescription(entity))
            for key in shape.keys {
                let keyPath = (path + [key]).joined(separator: ".")
                let field = shape.fields[key]!
                switch decide(field, keyPath: keyPath) {
                case .attribute(let type, let collection):
                    attributes.append(AttributeDescription(key, type, collection: collection))
                case .mixed(let shapes):
                    attributes.append(AttributeDescription(key, .mixed, shapes: shapes))
                case .toOne(let child):
                    relationships.append(nest(child, key: key, toMany: false, entity: entity, path: path))
                case .toMany(let child, let allowsNil):
                    var r = nest(child, key: key, toMany: true, entity: entity, path: path)
                    r.allowsNil = allowsNil
                    relationships.append(r)
                }
            }
            guard let parent else {
                entities[index].attributes = attributes
                entities[index].relationships = relationships
                return nil
            }
            // The relationship back: to-many when the parent holds one object here (the model
            // cannot say no two parents share it), to-one when the parent holds an array of them.
            // Named so that it clashes with no key of this entity.
            var name = "owner"
            var n = 2
            while shape.fields[name] != nil {
                name = "owner\(n)"
                n += 1
            }
            relationships.append(
                RelationshipDescription(
                    name, to: parent.entity, toMany: !parent.toMany,
                    inverse: parent.relationship, deleteRule: .nullify))
            entities[index].attributes = attributes
            entities[index].relationships = relationships
            return name
        }

        /// The relationship from `entity` to the new entity for a nested object (or array of
        /// them) under `key`. Parent to child cascades: a nested object belongs to its record.
        mutating func nest(_ child: ObjectShape, key: String, toMany: Bool, entity: String, path: [String])
            -> RelationshipDescription
        {
            let name = uniqueEntityName("\(entity)_\(ModelInference.identifierPart(key))")
            let inverse = build(child, entity: name, path: path + [key], parent: (entity, key, toMany))
            return RelationshipDescription(
                key, to: name, toMany: toMany, ordered: toMany, inverse: inverse, deleteRule: .cascade)
        }

        enum Decision {
            case attribute(AttributeType, collection: Bool)
            case mixed(MixedShapes)
            case toOne(ObjectShape)
            /// `allowsNil` when some records have null or no array there: nil stays apart from [].
            case toMany(ObjectShape, allowsNil: Bool)
        }

        /// The representation of one key, with a note when the records disagree.
        mutating func decide(_ f: FieldShape, keyPath: String) -> Decision {
            let kinds = f.kindSet()
            func note(_ text: String) { notes.append("note: key '\(keyPath)': \(text)") }
            if kinds.isEmpty {
                // Nothing says what the key holds: dynamic keeps it nil here, queryable in SQL.
                note(
                    "null or missing in every record; stored as dynamic (nil in every object; it takes numbers and strings later)"
                )
                return .attribute(.dynamic, collection: false)
            }
            if kinds == [.object] { return .toOne(f.object!) }
            if kinds == [.array] {
                let e = f.elements ?? FieldShape()
                let elementKinds = e.kindSet()
                if elementKinds.isEmpty {
                    // No element says what the arrays hold: a collection of dynamic keeps them
                    // exactly (nil apart from [], null elements nil) and queryable in SQL.
                    if e.nilRecord != nil {
                        note(
                            "arrays of nulls only; stored as a collection of dynamic (its elements take numbers and strings)"
                        )
                    } else {
                        note(
                            "empty arrays only, nothing says what they hold; stored as a collection of dynamic (its elements take numbers and strings)"
                        )
                    }
                    return .attribute(.dynamic, collection: true)
                }
                if elementKinds == [.object] {
                    if let r = e.nilRecord {
                        note(
                            "arrays of objects with null elements (record \(r)); stored as transformable (a to-many relationship holds objects only)"
                        )
                        return .attribute(.transformable, collection: false)
                    }
                    return .toMany(e.object!, allowsNil: f.nilRecord != nil)
                }
                if elementKinds.contains(.object) || elementKinds.contains(.array) {
                    note(
                        "array elements are \(disagreement(e.kinds)); stored as transformable (it keeps any JSON value)"
                    )
                    return .attribute(.transformable, collection: false)
                }
                let (type, why) = scalarType(elementKinds)
                if type == .transformable {
                    if let shapes = mixedShapes(f) {
                        note("array elements are \(disagreement(e.kinds)); stored as mixed (\(Self.mixedWhy))")
                        return .mixed(shapes)
                    }
                    note("array elements are \(disagreement(e.kinds)); stored as transformable (\(why))")
                    return .attribute(.transformable, collection: false)
                }
                if type == .dynamic {
                    note("array elements are \(disagreement(e.kinds)); stored as a collection of dynamic (\(why))")
                }
                return .attribute(type, collection: true)
            }
            if kinds.contains(.object) || kinds.contains(.array) {
                if let shapes = mixedShapes(f) {
                    note("\(disagreement(f.kinds)); stored as mixed (\(Self.mixedWhy))")
                    return .mixed(shapes)
                }
                note("\(disagreement(f.kinds)); stored as transformable (it keeps any JSON value)")
                return .attribute(.transformable, collection: false)
            }
            let (type, why) = scalarType(kinds)
            if type == .transformable, let shapes = mixedShapes(f) {
                note("\(disagreement(f.kinds)); stored as mixed (\(Self.mixedWhy))")
                return .mixed(shapes)
            }
            if type == .transformable || type == .dynamic {
                note("\(disagreement(f.kinds)); stored as \(type.rawValue) (\(why))")
            }
            return .attribute(type, collection: false)
        }

        static let mixedWhy = "each value kept as it is, and queried in SQL by its shape"

        /// The shapes of a mixed attribute that holds every value of `f`, or nil when one is an
        /// object, or an array whose elements are objects, arrays, or dates beside scalars.
        func mixedShapes(_ f: FieldShape) -> MixedShapes? {
            let kinds = f.kindSet()
            let scalars: Set<JSONKind> = [.boolean, .integer, .double, .string]
            guard !kinds.contains(.object) else { return nil }
            var shapes = MixedShapes(scalar: !kinds.isDisjoint(with: scalars), date: kinds.contains(.date))
            if kinds.contains(.array) {
                let elements = f.elements?.kindSet() ?? []
                if elements.isSubset(of: scalars) {
                    shapes.array = .scalar
                } else if elements == [.date] {
                    shapes.array = .date
                } else {
                    return nil
                }
            }
            return shapes
        }

        /// "integers in some records, strings in others (record 3)", naming the record where each
        /// further kind first appears.
        func disagreement(_ kinds: [(kind: JSONKind, record: Int)]) -> String {
            let rest = kinds.dropFirst().map { "\($0.kind.plural) in others (record \($0.record))" }
            return "\(kinds[0].kind.plural) in some records, " + rest.joined(separator: ", ")
        }

        /// The attribute type shared by scalar kinds, and why when it is not a plain one.
        func scalarType(_ kinds: Set<JSONKind>) -> (AttributeType, String) {
            if kinds.count == 1 {
                switch kinds.first! {
                case .boolean: return (.boolean, "")
                case .integer: return (.integer64, "")
                case .double: return (.double, "")
                case .string: return (.string, "")
                case .date: return (.date, "")
                case .object, .array: break
                }
            }
            if kinds.isSubset(of: [.integer, .double, .string]) {
                return (
                    .dynamic,
                    kinds.contains(.string)
                        ? "each value keeps its own kind, number or string"
                        : "each value keeps its own kind, so 1 and 1.0 stay apart"
                )
            }
            if kinds.contains(.boolean) {
                return (.transformable, "a dynamic attribute holds no booleans; transformable keeps any JSON value")
            }
            return (.transformable, "a dynamic attribute holds no dates; transformable keeps any JSON value")
        }
    }
}
