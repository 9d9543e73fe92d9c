// `sift store import`: JSON records become objects of one entity, in one context, written by one
// `save()`. Nested JSON follows the model: an object under a to-one relationship and the objects of
// an array under a to-many become related objects of the destination entity (recursively), an
// array under a collection attribute its elements, any JSON under a transformable attribute the
// value it reads as in memory. Every record is converted before anything is saved and the save is
// all or nothing, so a bad record leaves the store exactly as it was; errors name the 0-based
// record index and the key path inside it.

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
    /// Where each inserted object came from, to name the record when the save refuses it.
    private var origins: [String: (record: Int, path: String)] = [:]
    /// The object made of each record, in record order.
    private(set) var roots: [ManagedObject] = []

    package init(context: ManagedObjectContext) {
        self.context = context
        self.model = context.store.model
    }

    /// A conversion problem at a key path inside the current record.
    private struct Problem: Error {
        var path: String
        var message: String
    }

    /// Inserts one object of `entity` per record and saves; returns the number of records.
    package mutating func run(_ records: [JSONValue], entity: String) throws(JSONImportError) -> Int {
        guard model.entity(named: entity) != nil else {
            throw JSONImportError(
                "error: the store's model has no entity '\(entity)' (entities: \(model.entities.map(\.name).joined(separator: ", ")))"
            )
        }
        if model.entity(named: entity)?.document != nil {
            // A document entity: each record is one object, kept whole (its shapes are checked
            // at save).
            roots.reserveCapacity(records.count)
            for (n, record) in records.enumerated() {
                do throws(StoreError) {
                    let o = try context.insert(entity)
                    try o.setDocument(record.value)
                    roots.append(o)
                } catch {
                    throw JSONImportError("error: record \(n): \(error.message)")
                }
                if case .object(let members) = record { noteKeys(entity, members.map(\.0)) }
            }
            do { try context.save() } catch {
                // Which record each refused object came from, worked out only when a save fails.
                for (n, o) in roots.enumerated() { origins[o.objectID.description] = (n, "") }
                throw JSONImportError(lines: error.failures.map { describeSaveFailure($0.message) })
            }
            return records.count
        }
        for (n, record) in records.enumerated() {
            guard case .object(let members) = record, record.date == nil else {
                throw JSONImportError("error: record \(n): not a JSON object (a record becomes one '\(entity)' object)")
            }
            do throws(Problem) {
                roots.append(try insert(entity, members, record: n, path: ""))
            } catch {
                let at = error.path.isEmpty ? "" : "key '\(error.path)': "
                throw JSONImportError("error: record \(n): \(at)\(error.message)")
            }
        }
        do { try context.save() } catch {
            throw JSONImportError(lines: error.failures.map { describeSaveFailure($0.message) })
        }
        return records.count
    }

    /// A save failure with the record and key path of the object it names instead of its
    /// temporary object ID (`Record (temporary 12) 'age': is required`).
    private func describeSaveFailure(_ failure: String) -> String {
        // The longest matching ID: "Record (temporary 1)" is a prefix of nothing else, but
        // entity names can be prefixes of one another.
        let match = origins.keys.filter { failure.hasPrefix($0 + " ") }.max { $0.count < $1.count }
        guard let id = match, let origin = origins[id] else { return JSONImportError.errorLine(failure) }
        var rest = String(failure.dropFirst(id.count + 1))
        var path = origin.path
        // "'key': rule" names a property of the object: fold it into the key path.
        if rest.hasPrefix("'"), let close = rest.dropFirst().firstIndex(of: "'"),
            rest[rest.index(after: close)...].hasPrefix(": ")
        {
            let key = rest[rest.index(after: rest.startIndex)..<close]
            path = path.isEmpty ? String(key) : "\(path).\(key)"
            rest = String(rest[rest.index(close, offsetBy: 3)...])
        }
        let at = path.isEmpty ? "" : "key '\(path)': "
        return "error: record \(origin.record): \(at)\(rest)"
    }

    private mutating func noteKeys(_ entity: String, _ keys: [String]) {
        let i: Int
        if let existing = seenIndex[entity] {
            i = existing
        } else {
            i = seenKeys.count
            seenIndex[entity] = i
            seenKeys.append((entity, []))
        }
        for k in keys where !seenKeys[i].keys.contains(k) { seenKeys[i].keys.append(k) }
    }

    /// Inserts an object of `entity` from a JSON object's members (and its nested objects).
    private mutating func insert(
        _ entity: String, _ members: [(String, JSONValue)], record: Int,
        path: String
    ) throws(Problem) -> ManagedObject {
        let o: ManagedObject
        do { o = try context.insert(entity) } catch { throw Problem(path: path, message: error.message) }
        origins[o.objectID.description] = (record, path)
        let unique = JSONValue.uniqueMembers(members)
        let values = Dictionary(uniqueKeysWithValues: unique)
        let keys = unique.map(\.0)
        noteKeys(entity, keys)
        let attributes = Dictionary(
            model.allAttributes(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let relationships = Dictionary(
            model.allRelationships(of: entity).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for key in keys {
            let json = values[key]!
            let keyPath = path.isEmpty ? key : "\(path).\(key)"
            func set(_ value: Any?) throws(Problem) {
                do { try o.setValue(value, forKey: key) } catch {
                    // The store names the object by its temporary ID; the key path says more.
                    let prefix = "\(o.objectID) '\(key)': "
                    let message =
                        error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
                    throw Problem(path: keyPath, message: message)
                }
            }
            if let a = attributes[key] {
                try set(try attributeValue(json, a, keyPath: keyPath))
            } else if let r = relationships[key] {
                if case .null = json { continue }
                if r.isToMany {
                    guard case .array(let items) = json else {
                        throw Problem(
                            path: keyPath,
                            message:
                                "expected an array of objects (to-many relationship to \(r.destination)), found \(Self.describe(json))"
                        )
                    }
                    var children: [ManagedObject] = []
                    for (i, item) in items.enumerated() {
                        guard case .object(let m) = item, item.date == nil else {
                            throw Problem(
                                path: "\(keyPath)[\(i)]",
                                message:
                                    "expected an object (to-many relationship to \(r.destination)), found \(Self.describe(item))"
                            )
                        }
                        children.append(try insert(r.destination, m, record: record, path: "\(keyPath)[\(i)]"))
                    }
                    try set(children)
                } else {
                    guard case .object(let m) = json, json.date == nil else {
                        throw Problem(
                            path: keyPath,
                            message:
                                "expected an object (to-one relationship to \(r.destination)), found \(Self.describe(json))"
                        )
                    }
                    try set(try insert(r.destination, m, record: record, path: keyPath))
                }
            } else {
                throw Problem(path: keyPath, message: "entity '\(entity)' has no attribute or relationship '\(key)'")
            }
        }
        return o
    }

    /// The value to store for a JSON value under attribute `a` (the store checks and coerces it
    /// to the attribute's type; dates and data are recognised here, as the JSON conventions say).
    private func attributeValue(_ json: JSONValue, _ a: AttributeDescription, keyPath: String) throws(Problem) -> Value
    {
        if case .null = json { return .null }
        guard a.isCollection else { return try scalar(json, a, keyPath: keyPath) }
        guard case .array(let items) = json else {
            throw Problem(
                path: keyPath,
                message: "expected an array (a collection of \(a.type.rawValue)), found \(Self.describe(json))")
        }
        var out: [Value] = []
        for (i, item) in items.enumerated() { out.append(try scalar(item, a, keyPath: "\(keyPath)[\(i)]")) }
        return .array(out)
    }

    /// One value of attribute `a` (an element, for a collection; a null element stays nil).
    private func scalar(_ json: JSONValue, _ a: AttributeDescription, keyPath: String) throws(Problem) -> Value {
        if case .null = json { return .null }
        switch a.type {
        case .transformable, .mixed:
            // A mixed value's shape is the store's to check against the attribute's shapes.
            return json.value
        case .date:
            guard let d = json.date else {
                throw Problem(
                    path: keyPath,
                    message: "expected a date {\"$date\": seconds since 1970}, found \(Self.describe(json))")
            }
            return .date(d)
        case .binary:
            guard case .object(let m) = json, m.count == 1, m[0].0 == "$data", case .string(let b64) = m[0].1,
                let data = Data(base64Encoded: b64)
            else {
                throw Problem(
                    path: keyPath, message: "expected data {\"$data\": \"base64\"}, found \(Self.describe(json))")
            }
            return .data(data)
        default:
            switch json {
            case .object, .array:
                throw Problem(
                    path: keyPath, message: "expected a \(a.type.rawValue) value, found \(Self.describe(json))")
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
