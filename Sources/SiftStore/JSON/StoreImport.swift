// `sift store import`: JSON records become objects of one entity, saved by one context. Nested
// JSON follows the model: an object under a to-one relationship and the objects of an array under
// a to-many become related objects of the destination entity (recursively), an array under a
// collection attribute its elements, any JSON under a transformable attribute the value it reads
// as in memory. Records read from a stream are saved in batches inside one transaction
// (`PersistentStore.bulkWrite`), so memory holds one batch whatever the input's size and a bad
// record (or a syntax error further on) rolls every batch back: the store stays exactly as it was.
// Errors name the 0-based record index and the key path inside it.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSyntax

/// Imports records into a context and saves them, or reports why not.
package struct StoreImporter {
    package let context: ManagedObjectContext
    package let model: ManagedObjectModel
    /// Keys in first-seen order per entity, for `StoreAccess.recordKeyOrder`.
    package private(set) var seenKeys: [(entity: String, keys: [String])] = []
    private var seenIndex: [String: Int] = [:]
    /// `seenKeys`' keys as sets, for the lookup.
    private var seenSets: [Set<String>] = []
    /// The keys of the last object noted per entity, in order: the next one has the same keys as
    /// a rule, which a few comparisons show without hashing them.
    private var lastKeys: [[String]] = []
    /// The objects inserted since the last save, with the record and key path each came from, to
    /// name the record when the save refuses one (their IDs are described only then).
    var pending: [(object: ManagedObject, origin: Origin)] = []
    /// Saved objects of entities with uniqueness constraints, by their ID's description: a later
    /// batch's object that collides with one is reported against its record.
    var storedOrigins: [String: (record: Int, path: String)] = [:]
    /// The object made of each record, in record order (the array form only: the streaming form
    /// keeps no object past its batch).
    private(set) var roots: [ManagedObject] = []
    private var keepsRoots = true
    /// Per entity, its attributes and relationships by name (looked up once, not per object).
    private var properties: [String: Properties] = [:]
    /// Objects made outside the context's bookkeeping and written by `writeBatch` (BulkImport.swift):
    /// the streaming form, unless the store records history or the model has document entities.
    var bulk = false
    /// The entities' shared facts, by name (the bulk form makes its objects from them).
    var infos: [String: EntityInfo] = [:]
    /// The batch's rows, when the streaming form writes rows without objects
    /// (StoreImportRows.swift): bulk, and a model whose every entity the rows can express.
    var rows: ImportRows?
    /// Whether the streaming form may write rows without objects (false: objects always, which
    /// tests compare the rows with).
    package var writesRows = true
    /// The rows written without objects so far.
    package internal(set) var rowsWritten = 0

    /// Where an object came from: its record, and the pending object (by position) and key it was
    /// nested under, with its position when it is an array's element (-1 otherwise; a root's
    /// parent is -1). Key paths are spelled out only for an error.
    struct Origin {
        var record: Int
        var parent = -1
        var key = ""
        var index = -1
    }

    private struct Properties {
        var attributes: [String: AttributeDescription]
        var relationships: [String: RelationshipDescription]
    }

    package init(context: ManagedObjectContext) {
        self.context = context
        self.model = context.store.model
    }

    /// A conversion problem at a key path inside the current record.
    struct Problem: Error {
        var path: String
        var message: String
    }

    /// Inserts one object of `entity` per record and saves; returns the number of records.
    package mutating func run(_ records: [JSONValue], entity: String) throws(JSONImportError) -> Int {
        try checkEntity(entity)
        roots.reserveCapacity(records.count)
        for (n, record) in records.enumerated() { try add(record, number: n, entity: entity) }
        try save()
        return records.count
    }

    /// Inserts one object of `entity` per record of `stream`, saving every `batchSize` objects
    /// (nested ones included) into one transaction that commits after the last record: all
    /// records or none, holding one batch of objects (and the input's current pages) in memory
    /// whatever the input's size. Returns the number of records.
    ///
    /// ```swift
    /// var stream = RecordStream(try MappedInput.open("people.ndjson"), name: "people.ndjson")
    /// var importer = StoreImporter(context: ManagedObjectContext(store: store))
    /// let n = try importer.run(&stream, entity: "Person")
    /// ```
    package mutating func run(_ stream: inout RecordStream, entity: String, batchSize: Int = 4096)
        throws(JSONImportError) -> Int
    {
        try checkEntity(entity)
        keepsRoots = false
        // History records a context's saves, and documents take the context's own checks.
        bulk = !context.store.tracksHistory && model.entities.allSatisfy { $0.document == nil }
        rows = bulk && writesRows ? ImportRows.plans(context.store).map { ImportRows(plans: $0) } : nil
        var count = 0
        var failure: JSONImportError?
        do throws(StoreError) {
            try context.store.bulkWrite { () throws(StoreError) in
                do throws(JSONImportError) {
                    while true {
                        // A batch of rows starts here: its records can be read again from here.
                        if let r = rows, r.start == nil { rows!.start = (stream, count) }
                        guard let record = try Self.next(&stream) else { break }
                        if rows == nil {
                            try add(record, number: count, entity: entity)
                        } else {
                            try addRows(record, number: count, entity: entity)
                        }
                        count += 1
                        if pending.count >= batchSize { try saveBatch() }
                        if let r = rows, r.rows.count >= batchSize { try writeRows() }
                    }
                    try writeRows()
                    try saveBatch()
                } catch {
                    failure = error
                    // Rolls back every batch saved so far.
                    throw StoreError(.sqlite, error.message)
                }
            }
        } catch {
            throw failure ?? JSONImportError(lines: error.failures.map { JSONImportError.errorLine($0.message) })
        }
        context.reset()
        return count
    }

    /// The next record of `stream`; a syntax error is the import's error, as it prints.
    static func next(_ stream: inout RecordStream) throws(JSONImportError) -> JSONValue? {
        do throws(RecordsError) { return try stream.next() } catch { throw JSONImportError(error.description) }
    }

    private func checkEntity(_ entity: String) throws(JSONImportError) {
        guard model.entity(named: entity) != nil else {
            throw JSONImportError(
                "error: the store's model has no entity '\(entity)' (entities: \(model.entities.map(\.name).joined(separator: ", ")))"
            )
        }
    }

    /// Inserts the object (and nested objects) record `n` becomes, unsaved.
    mutating func add(_ record: JSONValue, number n: Int, entity: String) throws(JSONImportError) {
        let o: ManagedObject
        if model.entity(named: entity)?.document != nil {
            // A document entity: each record is one object, kept whole (its shapes are checked
            // at save).
            do throws(StoreError) {
                o = try context.insert(entity)
                try o.setDocument(record.value)
            } catch {
                throw JSONImportError("error: record \(n): \(error.message)")
            }
            pending.append((o, Origin(record: n)))
            if case .object(let members) = record { noteKeys(entity, members) }
        } else {
            guard case .object(let members) = record, record.date == nil else {
                throw JSONImportError("error: record \(n): not a JSON object (a record becomes one '\(entity)' object)")
            }
            do throws(Problem) {
                o = try insert(entity, members, Origin(record: n))
            } catch {
                let at = error.path.isEmpty ? "" : "key '\(error.path)': "
                throw JSONImportError("error: record \(n): \(at)\(error.message)")
            }
        }
        if keepsRoots { roots.append(o) }
    }

    /// Saves the pending objects; a refusal names the records (and key paths) of the objects.
    private mutating func save() throws(JSONImportError) {
        do { try context.save() } catch { throw refused(error) }
        notePending()
    }

    /// Writes one batch of the streaming form and lets its objects go.
    mutating func saveBatch() throws(JSONImportError) {
        if bulk {
            try writeBatch(pending.map(\.object))
        } else {
            try save()
            context.reset()
        }
        notePending()
    }

    /// Remembers the saved objects an object of a later batch may collide with, under their
    /// stored IDs, and forgets the rest.
    private mutating func notePending() {
        for (n, p) in pending.enumerated() where !p.object.info.entity.constraints.isEmpty {
            let stored = p.object.assignedKey.map { ObjectID(p.object.info.names, key: .permanent($0)) }
            storedOrigins[(stored ?? p.object.objectID).description] = (p.origin.record, path(n))
        }
        for p in pending where bulk { p.object.links = [] }
        pending.removeAll(keepingCapacity: true)
    }

    /// Names the records of a refused batch's objects (`describeSaveFailure`).
    func refused(_ error: StoreError) -> JSONImportError {
        // Which record each pending object came from, worked out once, and only when a save fails.
        var origins: [ObjectID: (record: Int, path: String)] = [:]
        for (n, p) in pending.enumerated() { origins[p.object.objectID] = (p.origin.record, path(n)) }
        return JSONImportError(lines: error.failures.map { describeSaveFailure($0, origins) })
    }

    /// A save failure with the record and key path of the object it names instead of its
    /// temporary object ID (`Record (temporary 12) 'age': is required`), and of a stored object it
    /// collides with that an earlier batch of this import saved.
    private func describeSaveFailure(
        _ failure: StoreError.Failure, _ origins: [ObjectID: (record: Int, path: String)]
    ) -> String {
        // The failure names its object; its message starts with that object's ID.
        guard let id = failure.objectID, let origin = origins[id], failure.message.hasPrefix("\(id) ") else {
            return JSONImportError.errorLine(failure.message)
        }
        var rest = String(failure.message.dropFirst("\(id) ".count))
        var path = origin.path
        // "'key': rule" names a property of the object: fold it into the key path.
        if rest.hasPrefix("'"), let close = rest.dropFirst().firstIndex(of: "'"),
            rest[rest.index(after: close)...].hasPrefix(": ")
        {
            let key = rest[rest.index(after: rest.startIndex)..<close]
            path = path.isEmpty ? String(key) : "\(path).\(key)"
            rest = String(rest[rest.index(close, offsetBy: 3)...])
        }
        // "and Record (temporary 7) have the same id 2 (…)": an object of the same batch, named
        // by its record as a stored one is below (its temporary number is no name to a user).
        if let other = failure.relatedObjectIDs.first, let at = origins[other],
            rest.hasPrefix("and \(other) have the same "),
            let constraint = rest.range(of: " (uniqueness constraint")
        {
            let values = rest[
                rest.index(rest.startIndex, offsetBy: "and \(other) have the same ".count)..<constraint.lowerBound]
            let key = at.path.isEmpty ? "" : " (key '\(at.path)')"
            rest = "has the same \(values) as record \(at.record)\(key)\(rest[constraint.lowerBound...])"
        }
        // "as the stored Record 12": an object of this import, saved by an earlier batch.
        let stored = storedOrigins.keys.filter { rest.contains("as the stored \($0) (") }.max { $0.count < $1.count }
        if let stored, let other = storedOrigins[stored] {
            let key = other.path.isEmpty ? "" : " (key '\(other.path)')"
            rest = rest.replacingOccurrences(of: "as the stored \(stored) (", with: "as record \(other.record)\(key) (")
        }
        let at = path.isEmpty ? "" : "key '\(path)': "
        return "error: record \(origin.record): \(at)\(rest)"
    }

    /// Notes the keys of one object of `entity` not seen before (most objects add none: one set
    /// lookup per key).
    mutating func noteKeys(_ entity: String, _ members: [(String, JSONValue)]) {
        let i: Int
        if let existing = seenIndex[entity] {
            i = existing
        } else {
            i = seenKeys.count
            seenIndex[entity] = i
            seenKeys.append((entity, []))
            seenSets.append([])
            lastKeys.append([])
        }
        if lastKeys[i].count == members.count,
            lastKeys[i].withUnsafeBufferPointer({ last in members.indices.allSatisfy { members[$0].0 == last[$0] } })
        {
            return
        }
        for (k, _) in members where seenSets[i].insert(k).inserted { seenKeys[i].keys.append(k) }
        lastKeys[i] = members.map(\.0)
    }

    /// The attributes and relationships of `entity` by name (inherited ones included).
    private mutating func propertiesByName(_ entity: String) -> (
        [String: AttributeDescription], [String: RelationshipDescription]
    ) {
        if let p = properties[entity] { return (p.attributes, p.relationships) }
        let p = Properties(
            attributes: Dictionary(
                model.allAttributes(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }),
            relationships: Dictionary(
                model.allRelationships(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }))
        properties[entity] = p
        return (p.attributes, p.relationships)
    }

    /// The key path of pending object `n` inside its record (`kids[1].address`; "" for a record's
    /// own object).
    private func path(_ n: Int) -> String { path(of: pending[n].origin) { pending[$0].origin } }

    /// The key path of an object nested as `origin` says, `origins` giving the origin of the
    /// pending object (or row) at a position.
    func path(of origin: Origin, _ origins: (Int) -> Origin) -> String {
        guard origin.parent >= 0 else { return "" }
        let base = path(of: origins(origin.parent), origins)
        let key = base.isEmpty ? origin.key : "\(base).\(origin.key)"
        return origin.index < 0 ? key : "\(key)[\(origin.index)]"
    }

    /// Inserts an object of `entity` from a JSON object's members (and its nested objects).
    private mutating func insert(_ entity: String, _ members: [(String, JSONValue)], _ origin: Origin)
        throws(Problem) -> ManagedObject
    {
        let o: ManagedObject
        do { o = try bulk ? newObject(entity) : context.insert(entity) } catch {
            throw Problem(path: path(of: origin) { pending[$0].origin }, message: error.message)
        }
        let me = pending.count
        pending.append((o, origin))
        // A repeated key's last value wins; most objects repeat none, which a few comparisons
        // show without the dictionary `uniqueMembers` builds.
        let unique = Self.repeatsAKey(members) ? JSONValue.uniqueMembers(members) : members
        noteKeys(entity, unique)
        let (attributes, relationships) = propertiesByName(entity)
        for (key, json) in unique {
            func keyPath() -> String {
                let p = path(me)
                return p.isEmpty ? key : "\(p).\(key)"
            }
            func problem(_ error: StoreError) -> Problem {
                // The store names the object by its temporary ID; the key path says more.
                let prefix = "\(o.objectID) '\(key)': "
                let message =
                    error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
                return Problem(path: keyPath(), message: message)
            }
            func set(_ value: Any?) throws(Problem) {
                do { try o.setValue(value, forKey: key) } catch { throw problem(error) }
            }
            if let a = attributes[key] {
                let v = try attributeValue(json, a, keyPath: keyPath())
                // As `setValue` sets an attribute, without boxing the value as `Any` first.
                do throws(StoreError) {
                    if let i = o.info.attributeNumber(key) {
                        try context.setAttribute(v, i, forKey: key, of: o)
                    } else {
                        try o.setValue(v, forKey: key)
                    }
                } catch {
                    throw problem(error)
                }
            } else if let r = relationships[key] {
                if case .null = json { continue }
                if r.isToMany {
                    guard case .array(let items) = json else {
                        throw Problem(
                            path: keyPath(),
                            message:
                                "expected an array of objects (to-many relationship to \(r.destination)), found \(Self.describe(json))"
                        )
                    }
                    var children: [ManagedObject] = []
                    for (i, item) in items.enumerated() {
                        guard case .object(let m) = item, item.date == nil else {
                            throw Problem(
                                path: "\(keyPath())[\(i)]",
                                message:
                                    "expected an object (to-many relationship to \(r.destination)), found \(Self.describe(item))"
                            )
                        }
                        children.append(
                            try insert(r.destination, m, Origin(record: origin.record, parent: me, key: key, index: i)))
                    }
                    try set(children)
                } else {
                    guard case .object(let m) = json, json.date == nil else {
                        throw Problem(
                            path: keyPath(),
                            message:
                                "expected an object (to-one relationship to \(r.destination)), found \(Self.describe(json))"
                        )
                    }
                    try set(try insert(r.destination, m, Origin(record: origin.record, parent: me, key: key)))
                }
            } else {
                throw Problem(path: keyPath(), message: "entity '\(entity)' has no attribute or relationship '\(key)'")
            }
        }
        return o
    }

    /// Whether two of `members` have the same key (true for a large object without looking).
    static func repeatsAKey(_ members: [(String, JSONValue)]) -> Bool {
        guard members.count > 1 else { return false }
        guard members.count <= 16 else { return true }
        for i in 1..<members.count {
            for j in 0..<i where members[i].0 == members[j].0 { return true }
        }
        return false
    }

    /// The value to store for a JSON value under attribute `a` (the store checks and coerces it
    /// to the attribute's type; dates and data are recognised here, as the JSON conventions say).
    func attributeValue(_ json: JSONValue, _ a: AttributeDescription, keyPath: @autoclosure () -> String)
        throws(Problem) -> Value
    {
        if case .null = json { return .null }
        guard a.isCollection else { return try scalar(json, a, keyPath: keyPath()) }
        guard case .array(let items) = json else {
            throw Problem(
                path: keyPath(),
                message: "expected an array (a collection of \(a.type.rawValue)), found \(Self.describe(json))")
        }
        var out: [Value] = []
        for (i, item) in items.enumerated() { out.append(try scalar(item, a, keyPath: "\(keyPath())[\(i)]")) }
        return .array(out)
    }

    /// One value of attribute `a` (an element, for a collection; a null element stays nil).
    private func scalar(_ json: JSONValue, _ a: AttributeDescription, keyPath: @autoclosure () -> String)
        throws(Problem) -> Value
    {
        if case .null = json { return .null }
        switch a.type {
        case .transformable, .mixed:
            // A mixed value's shape is the store's to check against the attribute's shapes.
            return json.value
        case .date:
            guard let d = json.date else {
                throw Problem(
                    path: keyPath(),
                    message: "expected a date {\"$date\": seconds since 1970}, found \(Self.describe(json))")
            }
            return .date(d)
        case .binary:
            guard case .object(let m) = json, m.count == 1, m[0].0 == "$data", case .string(let b64) = m[0].1,
                let data = Data(base64Encoded: b64)
            else {
                throw Problem(
                    path: keyPath(), message: "expected data {\"$data\": \"base64\"}, found \(Self.describe(json))")
            }
            return .data(data)
        default:
            switch json {
            case .object, .array:
                throw Problem(
                    path: keyPath(), message: "expected a \(a.type.rawValue) value, found \(Self.describe(json))")
            default:
                // Scalars go to the store, whose coercion is the rule (integer widths, UUIDs…).
                return json.value
            }
        }
    }

    /// A JSON value in an error message, shortened.
    package static func describe(_ json: JSONValue) -> String {
        let text = json.text
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }
}

/// Why JSON records could not become a model or objects (`sift store infer-model`, `sift store
/// import`): one line per problem, each starting with `error:` (a record's position and key path
/// where there is one), printed on standard error as they are.
package struct JSONImportError: SiftError, Hashable {
    package enum Kind: String, Hashable, Sendable {
        /// Records that are not objects, so no model describes them.
        case notObjects = "not-objects"
        /// The store refused the records.
        case recordsRefused = "records-refused"
    }
    package var kind: Kind
    package var id: String { kind.rawValue }
    package var lines: [String]
    package init(_ lines: String...) { self.init(.recordsRefused, lines: lines) }
    package init(_ kind: Kind = .recordsRefused, lines: [String]) {
        self.kind = kind
        self.lines = lines
    }
    /// The lines, joined.
    package var message: String { lines.joined(separator: "; ") }
    package var description: String { lines.joined(separator: "\n") }

    /// `error: <message>`, without doubling a message that already says `error:` (a predicate
    /// error that reached the store keeps its own `line:column: error:` prefix).
    package static func errorLine(_ message: String) -> String {
        if message.hasPrefix("error: ") || message.range(of: #"^\d+:\d+: error: "#, options: .regularExpression) != nil
        {
            return message
        }
        return "error: \(message)"
    }
}
