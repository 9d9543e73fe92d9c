// How `sift store query` prints what it fetched: managed objects as compact JSON objects in the
// conventions `sift filter` prints records with (integers as integers, doubles as doubles, dates as
// `{"$date": seconds since 1970}`, data as `{"$data": base64}`), to-one relationships as nested
// objects and to-many relationships as arrays of them. Keys come in the order `sift store import`
// first saw them, then any others in model order (inherited properties first, attributes before
// relationships). A nil attribute or to-one is left out (so a record whose key was absent prints
// as it was read) unless nils are asked for, and so is a nil to-many (one that allows nil); an
// empty one prints `[]`. The relationship back to the object a nested object was reached from is
// not printed, and no object is printed inside itself, so output never recurses.

import Foundation
import SiftEvaluation
import SiftJSON

/// Turns fetched objects and dictionaries into JSON lines.
package struct StoreRenderer {
    package let model: ManagedObjectModel
    /// Per entity, keys in the order an import first saw them.
    package let keyOrder: [String: [String]]
    /// Print nil attributes and to-ones as `null` instead of leaving them out.
    package let printsNils: Bool

    /// Each entity's properties in output order, worked out once rather than for every object.
    private let outputOrder: [String: [Property]]

    package init(model: ManagedObjectModel, keyOrder: [String: [String]], printsNils: Bool) {
        self.model = model
        self.keyOrder = keyOrder
        self.printsNils = printsNils
        var orders: [String: [Property]] = [:]
        for e in model.entities { orders[e.name] = Self.properties(of: e.name, model: model, keyOrder: keyOrder) }
        outputOrder = orders
    }

    package enum Property {
        case attribute(String)
        case relationship(RelationshipDescription)

        var name: String {
            switch self {
            case .attribute(let n): n
            case .relationship(let r): r.name
            }
        }
    }

    /// The properties of `entity` in output order.
    package func properties(of entity: String) -> [Property] {
        outputOrder[entity] ?? Self.properties(of: entity, model: model, keyOrder: keyOrder)
    }

    private static func properties(of entity: String, model: ManagedObjectModel, keyOrder: [String: [String]])
        -> [Property]
    {
        var modelOrder: [Property] = model.allAttributes(of: entity).map { Property.attribute($0.name) }
        modelOrder += model.allRelationships(of: entity).map { Property.relationship($0) }
        guard let seen = keyOrder[entity], !seen.isEmpty else { return modelOrder }
        let position = Dictionary(seen.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        // A stable sort: recorded keys in their recorded order, the rest after them in model order.
        return modelOrder.enumerated().sorted { a, b in
            (position[a.element.name] ?? seen.count + a.offset, a.offset) < (
                position[b.element.name] ?? seen.count + b.offset, b.offset
            )
        }.map(\.element)
    }

    /// The relationship key paths printing an object of `entity` follows (each as far as it goes,
    /// without the relationship back and without entering an entity already on the path), to
    /// prefetch them: a fetch then reads each table once instead of a row per related object.
    package func printedPaths(of entity: String) -> [String] {
        var out: [String] = []
        func walk(_ entity: String, skipping: String?, path: [String], entities: Set<String>) {
            var leaf = true
            for r in model.allRelationships(of: entity) where r.name != skipping {
                guard !entities.contains(r.destination) else { continue }
                leaf = false
                walk(
                    r.destination, skipping: r.inverse, path: path + [r.name], entities: entities.union([r.destination])
                )
            }
            if leaf && !path.isEmpty { out.append(path.joined(separator: ".")) }
        }
        walk(entity, skipping: nil, path: [], entities: [entity])
        return out
    }

    /// One fetched object as a JSON object.
    package func render(_ o: ManagedObject) throws(StoreError) -> JSONValue {
        try render(o, skipping: nil, inside: [])
    }

    private func render(_ o: ManagedObject, skipping: String?, inside: Set<ObjectIdentifier>) throws(StoreError)
        -> JSONValue
    {
        if let document = o.document { return json(document: document, of: o.entityName) }
        let properties = self.properties(of: o.entityName)
        var inside = inside
        inside.insert(ObjectIdentifier(o))
        var members: [(String, JSONValue)] = []
        for p in properties where p.name != skipping {
            let v = try o.storeValue(forKey: p.name)
            switch p {
            case .attribute(let name):
                if v.isNull && !printsNils { continue }
                members.append((name, json(v)))
            case .relationship(let r):
                if r.isToMany, v.isNull {
                    // A nil to-many (one that allows nil): printed or left out as a nil attribute is.
                    if printsNils { members.append((r.name, .null)) }
                } else if r.isToMany {
                    var items: [JSONValue] = []
                    for case .object(let x) in v.collectionElements ?? [] {
                        guard let m = x as? ManagedObject, !inside.contains(ObjectIdentifier(m)) else { continue }
                        items.append(try render(m, skipping: r.inverse, inside: inside))
                    }
                    members.append((r.name, .array(items)))
                } else if case .object(let x) = v, let m = x as? ManagedObject {
                    // An object already being printed further out: printing it again would recurse.
                    if inside.contains(ObjectIdentifier(m)) { continue }
                    members.append((r.name, try render(m, skipping: r.inverse, inside: inside)))
                } else if printsNils {
                    members.append((r.name, .null))
                }
            }
        }
        return .object(members)
    }

    /// The document of an object of document entity `entity`, as it prints: as it is, null keys
    /// included (they are part of it); its top-level keys in the order the import saw them, nested
    /// objects' keys sorted (a document's objects keep no order).
    func json(document: Value, of entity: String) -> JSONValue {
        guard case .dictionary(let d) = document else { return json(document) }
        let seen = (keyOrder[entity] ?? []).filter { d[$0] != nil }
        let rest = d.keys.filter { !seen.contains($0) }.sorted()
        return .object((seen + rest).map { ($0, json(d[$0]!)) })
    }

    /// Appends `json(v)`'s compact text to `out`; the scalars a row mostly holds straight from the
    /// value, without a `JSONValue` or a `String`.
    func write(_ v: Value, into out: inout [UInt8]) {
        switch v {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .integer(let i): JSONScanner.write(i, into: &out)
        case .double(let d): JSONScanner.write(d, into: &out)
        case .string(let s): JSONScanner.writeQuoted(s, into: &out)
        default: write(json(v), into: &out)
        }
    }

    /// Appends `j`'s compact text to `out`.
    func write(_ j: JSONValue, into out: inout [UInt8]) {
        var s = ""
        j.write(into: &s)
        out.append(contentsOf: s.utf8)
    }

    /// The value a dictionary fetch read for `keyPath` from an object of `entity`, as JSON.
    /// Objects it reached print as nested objects without the relationship back (the inverse
    /// of the key path's last relationship), as they do under their parent.
    package func json(_ v: Value, keyPath: String, from entity: String) -> JSONValue {
        var current = entity
        var last: RelationshipDescription?
        for component in keyPath.split(separator: ".").map(String.init) {
            guard let r = model.allRelationships(of: current).first(where: { $0.name == component }) else {
                last = nil
                break
            }
            last = r
            current = r.destination
        }
        func convert(_ v: Value) -> JSONValue {
            switch v {
            case .object(let x):
                guard let m = x as? ManagedObject else { return .null }
                return (try? render(m, skipping: last?.inverse, inside: [])) ?? .null
            case .array(let a), .set(let a): return .array(a.map(convert))
            default: return json(v)
            }
        }
        return convert(v)
    }

    /// A value as JSON, in `sift filter`'s conventions. Objects reached through a key path (a
    /// dictionary fetch of `address`) print as nested objects.
    package func json(_ v: Value) -> JSONValue {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .decimal(let d):
            // JSON has one number syntax: an integral decimal prints as an integer.
            if let i = Int64(d.description) { return .integer(i) }
            return .double(NSDecimalNumber(decimal: d).doubleValue)
        case .string(let s): return .string(s)
        case .date(let d):
            let s = d.timeIntervalSince1970
            // Whole seconds print as an integer, as they are usually written.
            if s == s.rounded(), abs(s) < 9.007_199_254_740_992e15 { return .object([("$date", .integer(Int64(s)))]) }
            return .object([("$date", .double(s))])
        case .data(let d): return .object([("$data", .string(d.base64EncodedString()))])
        case .array(let a), .set(let a): return .array(a.map(json))
        case .dictionary(let d):
            // Transformable values come back as dictionaries, whose key order is gone.
            return .object(d.keys.sorted().map { ($0, json(d[$0]!)) })
        case .object(let x):
            guard let m = x as? ManagedObject, let rendered = try? render(m) else { return .null }
            return rendered
        }
    }
}
