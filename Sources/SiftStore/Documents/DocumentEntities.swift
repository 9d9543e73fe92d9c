// Document entities: objects that are whole JSON documents. Each object keeps its document as an
// evaluation `Value` (dictionaries for objects, `.date` for `{"$date": s}`), stored exactly in the
// row's `Z_DOC` column (a small tagged binary form: JSON through Foundation would turn 1.0 into
// 1) and spread over the entity's `DocumentLayout` for SQL. Predicates evaluate on the document
// itself, so memory's answer over a document entity is memory's answer over the JSON, and the
// layout's SQL is the lowering's exact counterpart. A document must fit the entity's declared
// shapes (keys and kinds), checked at save.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftText

extension ManagedObject {
    /// The document of an object of a document entity (`.null` until set), or nil for an object
    /// of another entity.
    ///
    /// ```swift
    /// let r = try context.insert("Record")
    /// try r.setDocument(.dictionary(["name": .string("Ann")]))
    /// r.document   // .dictionary(["name": .string("Ann")])
    /// ```
    public var document: Value? {
        guard info.entity.document != nil else { return nil }
        try? fire()
        return attributes.first ?? .null
    }

    /// Replaces the document of an object of a document entity (checked against the entity's
    /// shapes at save).
    public func setDocument(_ value: Value) throws(StoreError) {
        guard let context else { throw StoreError(.invalidOperation, "\(objectID) no longer belongs to a context") }
        guard info.entity.document != nil else {
            throw StoreError(.invalidOperation, "\(objectID): entity '\(info.name)' is not a document entity")
        }
        try context.checkOwned(self)
        try fire()
        try context.willChange(self)
        attributes[0] = value
    }

    /// What predicates and sort keys read: the document for a document entity, the object itself
    /// otherwise.
    var evaluationRoot: Value {
        if info.entity.document != nil { return document ?? .null }
        return .object(self)
    }
}

extension ManagedObjectModel {
    /// The keys of document entity `entity`'s documents that its tables leave out (an array of
    /// arrays, an array mixing objects with values), by key path, with the reason: predicates
    /// naming them are evaluated in memory.
    public func unsupportedDocumentKeys(of entity: String) -> [String: String] {
        resolved[entity]?.document?.unsupportedKeys ?? [:]
    }
}

// MARK: - Shapes

extension DocumentDescription {
    /// Why `v` does not fit, or nil when it does.
    func problem(_ v: Value) -> String? {
        if case .dictionary = v { return shape.problem(v, path: "") }
        if !allowsValues { return "the document is \(v.kindName), not an object (the entity allows objects only)" }
        return shape.problem(v, path: "")
    }
}

extension DocumentShape {
    /// Why `v`, found at `path`, is not one of these shapes (nil when it is; nil always is).
    func problem(_ v: Value, path: String) -> String? {
        // A key the tables leave out (an array of arrays…) is kept in the document only, as it is.
        if conflict != nil { return nil }
        let at = path.isEmpty ? "" : "key '\(path)': "
        switch v {
        case .null:
            return nil
        case .bool, .integer, .double, .string:
            return scalar ? nil : "\(at)\(v) (\(v.kindName)) is not among the declared shapes"
        case .date:
            return date ? nil : "\(at)a date is not among the declared shapes"
        case .dictionary(let d):
            guard let object else { return "\(at)an object is not among the declared shapes" }
            return object.problem(d, path: path)
        case .array(let items):
            guard array else { return "\(at)an array is not among the declared shapes" }
            for (i, item) in items.enumerated() {
                let here = "\(path)[\(i)]"
                switch (item, element) {
                case (.null, _): continue
                case (.bool, .scalar?), (.integer, .scalar?), (.double, .scalar?), (.string, .scalar?), (.date, .date?):
                    continue
                case (.dictionary(let d), .object(let o)?):
                    if let p = o.problem(d, path: here) { return p }
                default:
                    return "key '\(here)': \(item.kindName) is not the arrays' declared element shape"
                }
            }
            return nil
        default:
            return "\(at)\(v.kindName) cannot be part of a JSON document"
        }
    }
}

extension DocumentObjectShape {
    func problem(_ d: [String: Value], path: String) -> String? {
        // Most documents fit: check in the dictionary's own order, and sort only to name the
        // first broken key the same way every time.
        guard
            d.contains(where: { k, v in
                keys.first(where: { $0.name == k }).map { $0.shape.problem(v, path: "") != nil } ?? true
            })
        else {
            return nil
        }
        for (k, v) in d.sorted(by: { $0.key < $1.key }) {
            let here = path.isEmpty ? k : "\(path).\(k)"
            guard let key = keys.first(where: { $0.name == k }) else { return "key '\(here)' is not declared" }
            if let p = key.shape.problem(v, path: here) { return p }
        }
        return nil
    }
}

// MARK: - Writing the layout

/// Documents are written from their evaluation values.
extension Value: DocumentValue {
    package var documentKind: DocumentKind? {
        switch self {
        case .null: nil
        case .bool, .integer, .double, .string: .scalar
        case .date: .date
        case .dictionary, .object: .object
        case .array, .set: .array
        case .decimal, .data: .scalar
        }
    }

    package var documentScalar: SQLValue {
        switch self {
        case .bool(let b): .integer(b ? 1 : 0)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .string(let s): .text(TextFolding.nfc(s))
        default: .null
        }
    }

    package var documentDate: SQLValue {
        if case .date(let d) = self { return .double(d.timeIntervalSince1970) }
        return .null
    }

    package var documentMembers: [String: Value] {
        if case .dictionary(let d) = self { return d }
        return [:]
    }

    package var documentElements: [Value] {
        switch self {
        case .array(let a), .set(let a): a
        default: []
        }
    }
}

extension RowWriter {
    /// Spreads `o`'s document over its entity's layout (after its row is written); `replacing`
    /// removes the rows of its previous document first.
    func writeDocument(_ o: ManagedObject, replacing: Bool) throws(SQLiteError) {
        guard let layout = o.info.entity.document, let pk = key(o) else { return }
        if replacing { try deleteDocumentRows(layout, pk) }
        // The loader is used where it is kept: a copy taken out and put back would copy its
        // statement and counter tables for every document.
        let id = ObjectIdentifier(layout)
        if store.documentLoaders[id] == nil {
            store.documentLoaders[id] = try DocumentLoader(connection: store.connection, layout: layout)
        }
        try store.documentLoaders[id]!.insert(o.attributes.first ?? .null, primaryKey: pk)
    }

    /// Removes the child and value rows of document `pk`.
    func deleteDocumentRows(_ layout: DocumentLayout, _ pk: Int64) throws(SQLiteError) {
        for t in layout.tables {
            guard let root = t.rootColumn else { continue }
            try store.run("DELETE FROM \(q(t.table)) WHERE \(q(root)) = ?", [.integer(pk)])
        }
    }
}

extension PersistentStore {
    /// Runs one SQL statement on the store's connection and returns its rows: for tools and tests
    /// that inspect the storage (`sift filter --backend sqlite` runs the lowering's queries with
    /// it). Use fetch requests for objects; writes made here bypass contexts and validation.
    ///
    /// ```swift
    /// try store.query("SELECT count(*) FROM \"Record\"")   // [[.integer(3)]]
    /// ```
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> [[SQLValue]] {
        try locked { () throws(StoreError) in
            // SQLite's own words and code ("sqlite error 1: …"), as a tool prints them.
            do throws(SQLiteError) { return try rows(sql, bindings) } catch {
                throw error.raised != nil ? error.storeError : StoreError(.sqlite, error.description)
            }
        }
    }
}
