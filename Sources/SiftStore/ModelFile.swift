// Reading a model file strictly. `JSONDecoder` alone ignores keys it does not know (so a misspelled
// `"optinal": false` was silently dropped) and says where nothing is; here the file is first read
// with SiftJSON's reader, which knows the `line:column` of every member, then checked three ways,
// every problem collected before one error is thrown: keys the format does not have (at every
// level, with a "did you mean"), values the decoder cannot take, and rules that do not hold
// together (the resolver's own checks, `ModelResolver.problems(of:)`, pointed at their key). The
// keys each level accepts are the decoders' own `CodingKeys`, which the published JSON Schema
// (Schemas/model.schema.json) is tested against.

import Foundation
import SiftJSON
import SiftSyntax

enum ModelFile {
    /// The whole of a model file: its version name, entities, configurations and fetch request
    /// templates (nil: none written).
    struct File: Codable {
        var version: String?
        var entities: [EntityDescription]
        var configurations: [ConfigurationDescription]?
        var fetchRequests: [FetchRequestTemplateEntry]?

        enum CodingKeys: String, CodingKey, CaseIterable { case version, entities, configurations, fetchRequests }
    }

    /// Model file `data` and its fetch request templates, or every problem found in it.
    static func read(_ data: Data) throws(ModelError) -> (file: File, templates: [FetchRequestTemplate]) {
        let doc: LocatedJSON
        do { doc = try LocatedJSON(bytes: Array(data)) } catch {
            throw ModelError(
                .unreadable,
                failures: [.init(path: "", location: error.location, message: "invalid JSON: \(error.message)")])
        }
        var failures: [ModelError.Failure] = []
        unknownKeys(in: doc.value, of: .file, path: "", doc, into: &failures)
        var file: File?
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            failures.append(decodingFailure(error, doc))
        }
        var templates: [FetchRequestTemplate] = []
        if let file {
            failures += ruleFailures(file.entities, doc)
            let names = Set(file.entities.map(\.name))
            for (i, entry) in (file.fetchRequests ?? []).enumerated() {
                let at = "fetchRequests[\(i)]"
                let (template, problems) = entry.template(
                    entityNames: names, at: doc.location(of: at) ?? SourceLocation(line: 1, column: 1))
                if let template { templates.append(template) }
                for p in problems {
                    let key = at + "." + p.key
                    failures.append(
                        .init(path: key, location: doc.location(of: key) ?? doc.location(of: at), message: p.message))
                }
            }
            var seen = Set<String>()
            for (i, entry) in (file.fetchRequests ?? []).enumerated() where !seen.insert(entry.name).inserted {
                let at = "fetchRequests[\(i)].name"
                failures.append(
                    .init(path: at, location: doc.location(of: at), message: "a second template named '\(entry.name)'"))
            }
        }
        guard failures.isEmpty, let file else {
            // File order; problems without a place last.
            let sorted = failures.enumerated().sorted { a, b in
                let x = a.element.location.map { ($0.line, $0.column) } ?? (Int.max, Int.max)
                let y = b.element.location.map { ($0.line, $0.column) } ?? (Int.max, Int.max)
                return x != y ? x < y : a.offset < b.offset
            }
            throw ModelError(.unreadable, failures: sorted.map(\.element))
        }
        return (file, templates)
    }

    /// The kinds of object a model file holds, each with the keys its decoder reads.
    enum Node: CaseIterable {
        case file, entity, attribute, relationship, shapes, document, documentShape, objectShape, objectKey
        case elementShape, index, indexElement, configuration, fetchRequest, fetchedProperty

        /// Every key an object of this kind may have.
        var keys: [String] {
            switch self {
            case .file: File.CodingKeys.allCases.map(\.stringValue)
            case .entity: EntityDescription.CodingKeys.allCases.map(\.stringValue)
            case .attribute: AttributeDescription.CodingKeys.allCases.map(\.stringValue)
            case .relationship: RelationshipDescription.CodingKeys.allCases.map(\.stringValue)
            case .shapes: MixedShapes.CodingKeys.allCases.map(\.stringValue)
            case .document: DocumentDescription.CodingKeys.allCases.map(\.stringValue)
            case .documentShape: DocumentShape.CodingKeys.allCases.map(\.stringValue)
            case .objectShape: DocumentObjectShape.CodingKeys.allCases.map(\.stringValue)
            case .objectKey: DocumentObjectShape.Key.CodingKeys.allCases.map(\.stringValue)
            case .elementShape: DocumentElementShape.CodingKeys.allCases.map(\.stringValue)
            case .index: IndexDescription.CodingKeys.allCases.map(\.stringValue)
            case .indexElement: IndexDescription.Element.CodingKeys.allCases.map(\.stringValue)
            case .configuration: ConfigurationDescription.CodingKeys.allCases.map(\.stringValue)
            case .fetchRequest: FetchRequestTemplateEntry.CodingKeys.allCases.map(\.stringValue)
            case .fetchedProperty: FetchedPropertyDescription.CodingKeys.allCases.map(\.stringValue)
            }
        }

        /// The kind of the objects under `key` (the elements', for an array), if they are objects
        /// of the format.
        func child(_ key: String) -> Node? {
            switch (self, key) {
            case (.file, "entities"): .entity
            case (.file, "configurations"): .configuration
            case (.file, "fetchRequests"): .fetchRequest
            case (.entity, "attributes"): .attribute
            case (.entity, "relationships"): .relationship
            case (.entity, "document"): .document
            case (.entity, "indexes"): .index
            case (.entity, "fetchedProperties"): .fetchedProperty
            case (.index, "elements"): .indexElement
            case (.attribute, "shapes"): .shapes
            case (.document, "shape"), (.objectKey, "shape"): .documentShape
            case (.documentShape, "object"), (.elementShape, "object"): .objectShape
            case (.documentShape, "element"): .elementShape
            case (.objectShape, "keys"): .objectKey
            default: nil
            }
        }
    }

    /// The names of the Swift properties, which a file might use by mistake, and the file's keys
    /// for them.
    static let swiftNames = [
        "minValue": "min", "maxValue": "max", "regularExpression": "regex", "defaultValue": "default",
        "isOptional": "optional", "isCollection": "collection", "isToMany": "toMany", "isOrdered": "ordered",
        "isAbstract": "abstract", "isOpen": "open", "isIndexed": "indexed", "isDescending": "descending",
        "isTransient": "transient",
    ]

    /// Appends a failure for each key of `value` (and the objects inside it) that `node` does not
    /// have, or has twice.
    static func unknownKeys(
        in value: JSONValue, of node: Node, path: String, _ doc: LocatedJSON, into out: inout [ModelError.Failure]
    ) {
        switch value {
        case .object(let members):
            let keys = node.keys
            var seen = Set<String>()
            for (key, member) in members {
                let at = path.isEmpty ? key : path + "." + key
                guard keys.contains(key) else {
                    let hint =
                        swiftNames[key].flatMap { keys.contains($0) ? "; did you mean '\($0)'?" : nil }
                        ?? KeyCheck.suggestion(for: key, among: keys)
                    out.append(.init(path: at, location: doc.location(of: at), message: "unknown key '\(key)'\(hint)"))
                    continue
                }
                if !seen.insert(key).inserted {
                    out.append(
                        .init(path: at, location: doc.location(of: at), message: "the key '\(key)' appears twice"))
                }
                if let child = node.child(key) { unknownKeys(in: member, of: child, path: at, doc, into: &out) }
            }
        case .array(let items):
            for (i, item) in items.enumerated() {
                unknownKeys(in: item, of: node, path: "\(path)[\(i)]", doc, into: &out)
            }
        default:
            break
        }
    }

    /// A decoder's error (a missing key, a value of the wrong type) at its key path.
    static func decodingFailure(_ error: any Error, _ doc: LocatedJSON) -> ModelError.Failure {
        guard let error = error as? DecodingError else {
            return .init(path: "", message: "invalid model JSON: \(error)")
        }
        func path(_ keys: [any CodingKey]) -> String {
            keys.enumerated().map { i, k in k.intValue.map { "[\($0)]" } ?? (i == 0 ? "" : ".") + k.stringValue }
                .joined()
        }
        let at: String
        let message: String
        switch error {
        case .keyNotFound(let key, let ctx):
            at = path(ctx.codingPath)
            message = "missing key '\(key.stringValue)'"
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx), .dataCorrupted(let ctx):
            at = path(ctx.codingPath)
            message = "invalid model JSON: \(ctx.debugDescription)"
        @unknown default:
            at = ""
            message = "invalid model JSON: \(error)"
        }
        return .init(path: at, location: doc.location(of: at), message: message)
    }

    /// The rules of each attribute and relationship that do not hold together, at their keys (or
    /// at the property, when the key is not written).
    static func ruleFailures(_ entities: [EntityDescription], _ doc: LocatedJSON) -> [ModelError.Failure] {
        var out: [ModelError.Failure] = []
        func add(_ problems: [(key: String, message: String)], at property: String) {
            for p in problems {
                let at = property + "." + p.key
                out.append(
                    .init(path: at, location: doc.location(of: at) ?? doc.location(of: property), message: p.message))
            }
        }
        for (i, e) in entities.enumerated() {
            for (j, a) in e.attributes.enumerated() {
                add(ModelResolver.problems(of: a), at: "entities[\(i)].attributes[\(j)]")
            }
            for (j, r) in e.relationships.enumerated() {
                add(ModelResolver.problems(of: r), at: "entities[\(i)].relationships[\(j)]")
            }
        }
        return out
    }
}
