// Batch update and batch delete: straight on the store, in one transaction, without registering
// objects in a context. The rows are chosen as a fetch chooses them (SQL where the lowering is
// exact, memory for the rest, read into a scratch context that is thrown away); new values are
// computed with memory's semantics (an expression is evaluated per row, exactly as in memory),
// checked against the attribute's type and validation rules, and uniqueness is checked after the
// update. Batch delete honours delete rules: cascade deletes further rows, nullify clears the
// foreign keys and join rows that pointed at deleted rows, deny refuses the whole batch.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax

/// What a batch request returns: the IDs of the objects it changed or deleted.
///
/// ```swift
/// let result = try context.execute(try BatchDeleteRequest("Session", predicate: "expires < %@", Date()))
/// print(result.deleted, result.count)   // true, and how many objects went
/// try context.mergeChanges(from: result)
/// ```
public struct BatchResult: Sendable, Hashable {
    /// The objects changed (updated) or deleted, cascades included for deletes.
    public var objectIDs: [ObjectID]
    /// The number of objects changed or deleted.
    public var count: Int { objectIDs.count }
    /// Whether the request deleted (rather than updated) the objects.
    public var deleted: Bool
    /// The objects a batch delete's nullify rules changed: their relationships to deleted objects
    /// were cleared (and their rows' versions raised). Empty for updates.
    public var nullified: [ObjectID] = []
}

/// Sets properties of every object a predicate selects, without loading objects into a context.
///
/// ```swift
/// var raise = try BatchUpdateRequest("Employee", predicate: "department.name == %@", "R&D")
/// raise.propertiesToUpdate = ["salary": .expression("salary * 1.1")]
/// let result = try context.execute(raise)   // result.count rows updated
/// try context.mergeChanges(from: result)
/// ```
public struct BatchUpdateRequest: PredicateRequest, Sendable {
    /// A new value for a property: a constant, or an expression computed per object.
    public enum NewValue: Sendable, Hashable {
        /// A constant, checked against the attribute's type and rules.
        case constant(LiteralValue)
        /// An expression of the object (`salary * 1.1`, `name`), evaluated as in memory.
        case expression(String)
    }
    /// The entity whose objects are updated.
    public var entityName: String
    /// Which objects to update (nil: all of the entity's).
    public var predicate: SiftPredicate?
    /// Values for the predicate's `$VARIABLES`.
    public var variables: [String: LiteralValue] = [:]
    /// The new values, by property name.
    public var propertiesToUpdate: [String: NewValue] = [:]
    /// Whether objects of sub-entities are updated too (default true).
    public var includesSubentities = true

    /// An update of `entityName`'s objects that match `predicate`; set ``propertiesToUpdate`` next.
    public init(_ entityName: String, predicate: SiftPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

/// Deletes every object a predicate selects, with the model's delete rules.
///
/// ```swift
/// let result = try context.execute(try BatchDeleteRequest("Session", predicate: "expires < %@", Date()))
/// ```
public struct BatchDeleteRequest: PredicateRequest, Sendable {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// Which objects to delete (nil: all of the entity's).
    public var predicate: SiftPredicate?
    /// Values for the predicate's `$VARIABLES`.
    public var variables: [String: LiteralValue] = [:]
    /// Whether objects of sub-entities are deleted too (default true).
    public var includesSubentities = true

    /// A delete of `entityName`'s objects that match `predicate`.
    public init(_ entityName: String, predicate: SiftPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

extension ManagedObjectContext {
    /// Runs a batch update on the store (this context's unsaved changes are not part of it).
    public func execute(_ request: BatchUpdateRequest) throws(StoreError) -> BatchResult {
        let info = try store.info(request.entityName)
        if info.entity.document != nil {
            throw StoreError(
                .invalidOperation,
                "entity '\(info.name)' holds documents: a batch update sets attributes, and a document has none (change documents with setDocument and save)"
            )
        }
        let setters = try batchSetters(request, info)
        return try store.writeTransaction { () throws(StoreError) -> BatchResult in
            let scratch = ManagedObjectContext(store: store)
            var fetch = FetchRequest(request.entityName, predicate: request.predicate)
            fetch.variables = request.variables
            fetch.includesSubentities = request.includesSubentities
            fetch.includesPendingChanges = false
            let objects = try scratch.fetch(fetch)
            var ids: [ObjectID] = []
            var failures: [StoreError.Failure] = []
            let writer = RowWriter(store: store)
            for o in objects {
                try set(setters, on: o, failures: &failures)
                if failures.isEmpty {
                    do throws(SQLiteError) { try writer.update(o) } catch { throw error.storeError }
                    ids.append(o.objectID)
                }
            }
            if !failures.isEmpty { throw StoreError(.validation, failures: failures) }
            try writeDerivedValues(from: objects, in: scratch, writer)
            try checkUniqueness(of: info)
            if store.tracksHistory {
                do throws(SQLiteError) { try recordHistory(inserted: [], updated: objects, deleted: []) } catch {
                    throw error.storeError
                }
            }
            return BatchResult(objectIDs: ids, deleted: false)
        }
    }

    /// One attribute a batch update sets: its index, the attribute, the new value, and the reader
    /// of the value's expression (nil for a constant).
    private struct BatchSetter {
        var index: Int
        var attribute: ResolvedAttribute
        var value: BatchUpdateRequest.NewValue
        var reader: SiftSortDescriptor?
    }

    /// The setters of `request`'s properties, by key: each key an attribute of `info`'s entity that
    /// is not derived, each expression one that reads the entity's keys.
    private func batchSetters(_ request: BatchUpdateRequest, _ info: EntityInfo) throws(StoreError) -> [BatchSetter] {
        var setters: [BatchSetter] = []
        for (key, v) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            guard let i = info.entity.attributeIndex[key] else {
                throw StoreError(
                    .unknownKey,
                    failures: [
                        .init(
                            "entity '\(info.name)' has no attribute '\(key)' (a batch update sets attributes)"
                                + KeyCheck.suggestion(for: key, among: info.entity.attributes.map(\.name)),
                            entity: info.name, keys: [key], constraint: .unknownKey)
                    ])
            }
            if let derivation = info.entity.attributes[i].description.derivationExpression {
                throw StoreError(
                    .invalidOperation,
                    "'\(info.name).\(key)' is derived from \(derivation): each save computes it, a batch update cannot set it"
                )
            }
            var reader: SiftSortDescriptor?
            if case .expression(let text) = v {
                try KeyCheck.expression(text, of: info.name, in: store.model)
                do { reader = try SiftSortDescriptor(text) } catch { throw StoreError(error) }
            }
            setters.append(BatchSetter(index: i, attribute: info.entity.attributes[i], value: v, reader: reader))
        }
        return setters
    }

    /// Sets `setters`' values on `o` (its snapshot kept first), each coerced to its attribute and
    /// validated; a value that fails is left unset and its failure added to `failures`. Throws
    /// what an expression raises on `o`.
    private func set(_ setters: [BatchSetter], on o: ManagedObject, failures: inout [StoreError.Failure])
        throws(StoreError)
    {
        for s in setters {
            let raw: Value
            switch s.value {
            case .constant(let l): raw = Value(l)
            case .expression(let text):
                do throws(EvaluationError) { raw = try s.reader!.key(of: .object(o)) } catch {
                    throw StoreError(error, object: o.objectID, in: text)
                }
            }
            let v: Value
            do throws(CoercionError) {
                v =
                    s.attribute.description.isCollection
                    ? try Value(collection: raw, of: s.attribute.type)
                    : try Value(coercing: raw, for: s.attribute)
            } catch {
                failures.append(ManagedObjectContext.failure(o, s.attribute.name, raw, (error.message, .type)))
                continue
            }
            if let p = AttributeValidation.problem(v, s.attribute, regex: o.info.regexes[s.index]) {
                failures.append(ManagedObjectContext.failure(o, s.attribute.name, v, p))
                continue
            }
            if o.snapshot == nil { o.snapshot = Snapshot(attributes: o.attributes, links: o.links) }
            o.attributes[s.index] = v
        }
    }

    /// After a batch request changed `objects` in `scratch`: the derived values that read them,
    /// computed, validated and written (Derivations.swift).
    private func writeDerivedValues(
        from objects: [ManagedObject], in scratch: ManagedObjectContext, _ writer: RowWriter
    )
        throws(StoreError)
    {
        var changed: [ManagedObject] = []
        try scratch.deriveValues(from: objects, deleted: scratch.deletedSet) { (o, i, v) throws(StoreError) in
            if o.snapshot == nil { o.snapshot = Snapshot(attributes: o.attributes, links: o.links) }
            o.attributes[i] = v
            if !changed.contains(where: { $0 === o }) { changed.append(o) }
        }
        guard !changed.isEmpty else { return }
        try scratch.validate(changed, others: [], deleted: scratch.deletedSet)
        do throws(SQLiteError) { for o in changed { _ = try writer.update(o) } } catch { throw error.storeError }
    }

    /// After a batch update: no two rows of the hierarchy may share a constraint's values.
    func checkUniqueness(of info: EntityInfo) throws(StoreError) {
        let root = try store.info(info.entity.root)
        let q = PersistentStore.q
        var seen = Set<[Int]>()
        for name in root.entity.family {
            let info = try store.info(name)
            let e = info.entity
            for c in e.constraints where seen.insert(c.map { e.attributes[$0].name.hashValue }).inserted {
                let cols = c.map { q(e.attributes[$0].column) }
                let sql =
                    "SELECT MIN(\(q(Storage.primaryKey))), MAX(\(q(Storage.primaryKey))) FROM \(q(e.table)) WHERE \(cols.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")) GROUP BY \(cols.joined(separator: ", ")) HAVING COUNT(*) > 1 LIMIT 1"
                let rows: [[SQLValue]]
                do throws(SQLiteError) { rows = try store.rows(sql, []) } catch { throw error.storeError }
                if let r = rows.first, case .integer(let a) = r[0], case .integer(let b) = r[1] {
                    let names = c.map { e.attributes[$0].name }.joined(separator: ", ")
                    throw StoreError(
                        .uniqueness,
                        failures: [
                            .init(
                                "the update gives \(e.name) \(a) and \(e.name) \(b) the same values for the uniqueness constraint [\(names)]; nothing was changed",
                                objectID: ObjectID(info.names, key: .permanent(a)), entity: e.name,
                                keys: c.map { e.attributes[$0].name }, constraint: .uniqueness,
                                relatedObjectIDs: [ObjectID(info.names, key: .permanent(b))])
                        ])
                }
            }
        }
    }

    /// Runs a batch delete on the store, with delete rules; deny refuses the whole batch.
    public func execute(_ request: BatchDeleteRequest) throws(StoreError) -> BatchResult {
        try store.writeTransaction { () throws(StoreError) -> BatchResult in
            let scratch = ManagedObjectContext(store: store)
            var fetch = FetchRequest(request.entityName, predicate: request.predicate)
            fetch.variables = request.variables
            fetch.includesSubentities = request.includesSubentities
            fetch.includesPendingChanges = false
            for o in try scratch.fetch(fetch) { try scratch.delete(o) }
            // The scratch context applies the rules exactly as a save would, then writes.
            try scratch.propagateDeletes()
            // Derived values reading what the rules changed join the objects written below.
            if !store.model.derivations.isEmpty {
                var derived: [ManagedObject] = []
                try scratch.deriveValues(from: Array(scratch.updatedSet), deleted: scratch.deletedSet) {
                    (o, i, v) throws(StoreError) in
                    try scratch.willChange(o)
                    o.attributes[i] = v
                    derived.append(o)
                }
                if !derived.isEmpty { try scratch.validate(derived, others: [], deleted: scratch.deletedSet) }
            }
            let deleted = Array(scratch.deletedSet).sorted {
                ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0)
            }
            let updated = Array(scratch.updatedSet)
            let writer = RowWriter(store: store)
            do throws(SQLiteError) {
                for o in deleted { try writer.delete(o) }
                for o in updated { try writer.update(o) }
                try writer.writeRelationships(of: updated)
                if store.tracksHistory { try recordHistory(inserted: [], updated: updated, deleted: deleted) }
            } catch { throw error.storeError }
            return BatchResult(
                objectIDs: deleted.map(\.objectID), deleted: true,
                nullified: updated.map(\.objectID).sorted { ($0.primaryKey ?? 0) < ($1.primaryKey ?? 0) })
        }
    }

    /// Brings this context up to date after a batch request: objects it holds that were updated
    /// are read again (their unsaved changes kept on top); deleted ones report `isDeleted` and can
    /// no longer be read, as after ``mergeChanges(fromContextDidSave:)``.
    ///
    /// ```swift
    /// let result = try context.execute(BatchDeleteRequest("Item", predicate: "price == 0"))
    /// try context.mergeChanges(from: result)
    /// ```
    public func mergeChanges(from result: BatchResult) throws(StoreError) {
        let ids = result.objectIDs
        try mergeChanges(
            fromContextDidSave: result.deleted
                ? ChangeSet(updated: result.nullified, deleted: ids) : ChangeSet(updated: ids))
    }
}
