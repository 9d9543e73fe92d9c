// Mapping an Xcode model's `contents` XML onto Sift's model: entities, attributes, relationships,
// uniqueness constraints and model-level fetch request templates. Every element and attribute is
// accounted for: mapped, known and ignored (diagram positions, code generation, tool versions,
// CloudKit and hash details that do not change what the store holds), or reported as a warning
// naming its `line:column`. What cannot be left out without changing what the store holds (an
// attribute type Sift has no column for, a value that does not parse) is an error at its place.
// Every problem of the file is collected before one error is thrown, as the JSON model reader does.

import Foundation
import SiftEvaluation
import SiftSyntax

enum ModelXML {
    /// What a `contents` file holds, mapped.
    struct Read {
        var file: String
        var entities: [EntityDescription] = []
        var warnings: [ModelWarning] = []
        var templates: [FetchRequestTemplate] = []
        var configurations: [ConfigurationDescription] = []
        /// Where each entity (`E`) and property (`E.p`) is, for errors found after mapping.
        var locations: [String: SourceLocation] = [:]

        /// `error` from validating the entities, each failure placed at the first entity or
        /// property its message names (`'E'`, `'E.p'`).
        func located(_ error: ModelError) -> ModelError {
            ModelError(
                error.kind,
                failures: error.failures.map { f in
                    var f = f
                    f.file = file
                    if f.location == nil {
                        let quoted = f.message.split(separator: "'", omittingEmptySubsequences: false)
                        f.location =
                            stride(from: 1, to: quoted.count, by: 2).lazy.compactMap {
                                locations[String(quoted[$0])]
                            }.first
                    }
                    return f
                })
        }
    }

    /// Maps the `contents` document `bytes` (read from `file`, for messages).
    static func read(_ bytes: [UInt8], file: String) throws(ModelError) -> Read {
        let root: XMLTreeElement
        do { root = try XMLReader.parse(bytes) } catch {
            throw ModelError(
                .unreadable,
                failures: [
                    .init(path: "", location: error.location, message: "invalid XML: \(error.message)", file: file)
                ]
            )
        }
        var mapper = Mapper(read: Read(file: file))
        mapper.model(root)
        mapper.checkInverses()
        mapper.checkConfigurations()
        guard mapper.failures.isEmpty else { throw ModelError(.unreadable, failures: mapper.failures) }
        return mapper.read
    }

    /// Xcode's attribute type names.
    static let types: [String: AttributeType] = [
        "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64, "Decimal": .decimal,
        "Double": .double, "Float": .float, "String": .string, "Boolean": .boolean, "Date": .date,
        "Binary": .binary, "UUID": .uuid, "URI": .uri, "Transformable": .transformable,
    ]

    static let deleteRules: [String: DeleteRule] = [
        "Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction,
    ]

    /// XML attributes known and ignored without a warning, per element: they say how Xcode
    /// draws, generates code, versions or syncs, not what the store holds.
    static let ignored: [String: Set<String>] = [
        "model": [
            "type", "documentVersion", "lastSavedToolsVersion", "systemVersion", "minimumToolsVersion",
            "sourceLanguage", "userDefinedModelVersionIdentifier", "usedWithCloudKit", "usedWithSwiftData",
        ],
        "entity": ["syncable", "codeGenerationType", "versionHashModifier"],
        "attribute": [
            "syncable", "usesScalarValueType", "versionHashModifier", "allowsExternalBinaryDataStorage",
            "allowsCloudEncryption",
        ],
        "relationship": ["syncable", "versionHashModifier", "inverseEntity"],
        "fetchRequest": ["returnObjectsAsFaults", "includesPropertyValues"],
        "configuration": ["usedWithCloudKit"],
        "fetchedProperty": ["optional", "syncable", "versionHashModifier"],
    ]

    /// What a known attribute Sift does not support yet leaves out (when it is not `NO`).
    static let notKept: [String: String] = [
        "customClassName": "the value class is not kept (a transformable's values are what its transformer makes)"
    ]

    /// What a known element Sift does not support yet leaves out.
    static let elementsNotKept: [String: String] = [:]
}

/// One pass over the document, collecting the model, warnings and failures.
private struct Mapper {
    var read: ModelXML.Read
    var failures: [ModelError.Failure] = []
    /// Each configuration member, for `checkConfigurations`.
    var memberLocations: [(String, SourceLocation, String)] = []

    mutating func warn(_ at: SourceLocation, _ path: String, _ message: String) {
        read.warnings.append(ModelWarning(file: read.file, location: at, path: path, message: message))
    }

    mutating func fail(_ at: SourceLocation, _ path: String, _ message: String) {
        failures.append(.init(path: path, location: at, message: message, file: read.file))
    }

    /// Warnings for the attributes of `x` that are neither in `mapped` nor ignored.
    mutating func checkAttributes(_ x: XMLTreeElement, mapped: Set<String>, path: String) {
        let ignored = ModelXML.ignored[x.name] ?? []
        for a in x.attributes where !mapped.contains(a.name) && !ignored.contains(a.name) {
            if let note = ModelXML.notKept[a.name] {
                if a.value != "NO" { warn(a.location, path, "\(a.name)=\"\(a.value)\": \(note)") }
            } else {
                warn(a.location, path, "the attribute \(a.name)=\"\(a.value)\" is not read by Sift; ignored")
            }
        }
    }

    /// A warning for a child element Sift does not map.
    mutating func unmapped(_ child: XMLTreeElement, path: String) {
        let name = child["name"].map { " '\($0)'" } ?? ""
        if let note = ModelXML.elementsNotKept[child.name] {
            warn(child.location, path, "<\(child.name)>\(name): \(note)")
        } else {
            warn(child.location, path, "the element <\(child.name)>\(name) is not read by Sift; ignored")
        }
    }

    func location(_ x: XMLTreeElement, _ attribute: String) -> SourceLocation {
        x.attributes.first { $0.name == attribute }?.location ?? x.location
    }

    /// A `YES`/`NO` attribute (absent: false).
    mutating func flag(_ x: XMLTreeElement, _ key: String, _ path: String) -> Bool {
        guard let v = x[key] else { return false }
        if v == "YES" { return true }
        if v != "NO" { fail(location(x, key), path, "\(key)=\"\(v)\" is not YES or NO") }
        return false
    }

    /// A whole-number attribute.
    mutating func integer(_ x: XMLTreeElement, _ key: String, _ path: String) -> Int? {
        guard let v = x[key] else { return nil }
        guard let n = Int(v.trimmingCharacters(in: .whitespaces)) else {
            fail(location(x, key), path, "\(key)=\"\(v)\" is not a whole number")
            return nil
        }
        return n
    }

    /// A required name attribute.
    mutating func name(_ x: XMLTreeElement, _ what: String, _ path: String) -> String? {
        guard let n = x["name"], !n.isEmpty else {
            fail(x.location, path, "\(what) without a name")
            return nil
        }
        return n
    }

    mutating func model(_ root: XMLTreeElement) {
        guard root.name == "model" else {
            fail(root.location, "", "the root element is <\(root.name)>, not <model>: not a Core Data model")
            return
        }
        checkAttributes(root, mapped: [], path: "")
        for child in root.children {
            switch child.name {
            case "entity": entity(child)
            case "fetchRequest": template(child)
            case "configuration": configuration(child)
            case "elements": break  // diagram positions
            default: unmapped(child, path: "")
            }
        }
    }

    /// `<configuration name="C"><memberEntity name="E"/>…`, its entities checked once all are read.
    mutating func configuration(_ x: XMLTreeElement) {
        guard let name = name(x, "a configuration", "") else { return }
        let path = "configuration '\(name)'"
        checkAttributes(x, mapped: ["name"], path: path)
        var members: [String] = []
        for m in x.children {
            guard m.name == "memberEntity", let entity = m["name"] else {
                unmapped(m, path: path)
                continue
            }
            if !members.contains(entity) { members.append(entity) }
            memberLocations.append((entity, m.location, path))
        }
        read.configurations.append(ConfigurationDescription(name, entities: members))
    }

    /// Each configuration's members are entities of the model.
    mutating func checkConfigurations() {
        let names = Set(read.entities.map(\.name))
        for (entity, location, path) in memberLocations where !names.contains(entity) {
            fail(location, path, "the model has no entity '\(entity)'")
        }
    }

    mutating func entity(_ x: XMLTreeElement) {
        guard let name = name(x, "an entity", "") else { return }
        read.locations[name] = read.locations[name] ?? x.location
        checkAttributes(
            x, mapped: ["name", "representedClassName", "parentEntity", "isAbstract", "elementID"], path: name)
        var e = EntityDescription(name, abstract: flag(x, "isAbstract", name), parent: x["parentEntity"])
        e.renamingIdentifier = x["elementID"]
        if let c = x["representedClassName"], c != "NSManagedObject" {
            let stripped = c.hasPrefix(".") ? String(c.dropFirst()) : c
            e.className = stripped.isEmpty ? nil : stripped
        }
        for child in x.children {
            switch child.name {
            case "attribute": if let a = attribute(child, entity: name) { e.attributes.append(a) }
            case "relationship": if let r = relationship(child, entity: name) { e.relationships.append(r) }
            case "uniquenessConstraints": e.uniquenessConstraints += constraints(child, entity: name)
            case "userInfo": e.userInfo.merge(userInfo(child, path: name)) { _, b in b }
            case "compoundIndexes": e.indexes += compoundIndexes(child, entity: name)
            case "fetchIndex": if let i = fetchIndex(child, entity: name) { e.indexes.append(i) }
            case "fetchedProperty":
                if let f = fetchedProperty(child, entity: name) { e.fetchedProperties.append(f) }
            default: unmapped(child, path: name)
            }
        }
        read.entities.append(e)
    }

    /// `<fetchedProperty name><fetchRequest entity predicateString/></fetchedProperty>`: the
    /// request's other settings (a limit, say) are warned about and left out.
    mutating func fetchedProperty(_ x: XMLTreeElement, entity: String) -> FetchedPropertyDescription? {
        guard let name = name(x, "a fetched property", entity) else { return nil }
        let path = "\(entity).\(name)"
        read.locations[path] = x.location
        checkAttributes(x, mapped: ["name"], path: path)
        var request: XMLTreeElement?
        for child in x.children {
            if child.name == "fetchRequest", request == nil { request = child } else { unmapped(child, path: path) }
        }
        guard let request, let destination = request["entity"] else {
            fail(x.location, path, "a fetched property needs a <fetchRequest> naming its entity")
            return nil
        }
        checkAttributes(request, mapped: ["name", "entity", "predicateString"], path: path)
        for child in request.children { unmapped(child, path: path) }
        return FetchedPropertyDescription(
            name, entity: destination, predicate: request["predicateString"] ?? "TRUEPREDICATE")
    }

    /// `<uniquenessConstraints><uniquenessConstraint><constraint value="a"/>…`.
    mutating func constraints(_ x: XMLTreeElement, entity: String) -> [[String]] {
        var out: [[String]] = []
        for c in x.children {
            guard c.name == "uniquenessConstraint" else {
                unmapped(c, path: entity)
                continue
            }
            var keys: [String] = []
            for k in c.children {
                guard k.name == "constraint", let v = k["value"] else {
                    fail(k.location, entity, "a uniqueness constraint holds <constraint value=\"…\"/> elements")
                    continue
                }
                keys.append(v)
            }
            out.append(keys)
        }
        return out
    }

    /// `<userInfo><entry key="k" value="v"/>…`.
    mutating func userInfo(_ x: XMLTreeElement, path: String) -> [String: String] {
        var out: [String: String] = [:]
        for entry in x.children {
            guard entry.name == "entry", let key = entry["key"] else {
                unmapped(entry, path: path)
                continue
            }
            out[key] = entry["value"] ?? ""
        }
        return out
    }

    /// `<compoundIndexes><compoundIndex><index value="a"/>…` (older Xcode): ascending indexes.
    mutating func compoundIndexes(_ x: XMLTreeElement, entity: String) -> [IndexDescription] {
        var out: [IndexDescription] = []
        for c in x.children {
            guard c.name == "compoundIndex" else {
                unmapped(c, path: entity)
                continue
            }
            var elements: [IndexDescription.Element] = []
            for k in c.children {
                guard k.name == "index", let v = k["value"] else {
                    fail(k.location, entity, "a compound index holds <index value=\"…\"/> elements")
                    continue
                }
                elements.append(.init(v))
            }
            out.append(IndexDescription(elements: elements))
        }
        return out
    }

    /// `<fetchIndex name><fetchIndexElement property type order/>…` (newer Xcode). An R-tree index
    /// or one over an expression is left out with a warning: SQLite has no plain index for them.
    mutating func fetchIndex(_ x: XMLTreeElement, entity: String) -> IndexDescription? {
        let name = x["name"]
        checkAttributes(x, mapped: ["name"], path: entity)
        var elements: [IndexDescription.Element] = []
        for k in x.children {
            guard k.name == "fetchIndexElement" else {
                unmapped(k, path: entity)
                continue
            }
            checkAttributes(k, mapped: ["property", "type", "order", "expression", "expressionType"], path: entity)
            guard let property = k["property"], k["type"] ?? "Binary" == "Binary" else {
                let what = k["property"] == nil ? "an expression" : "an index of type \(k["type"] ?? "")"
                warn(
                    k.location, entity,
                    "fetch index '\(name ?? "")' over \(what) is not created (only plain indexes on properties are)")
                return nil
            }
            let order = k["order"] ?? "ascending"
            if order != "ascending" && order != "descending" {
                fail(location(k, "order"), entity, "order=\"\(order)\" is not ascending or descending")
            }
            elements.append(.init(property, descending: order == "descending"))
        }
        return IndexDescription(name: name, elements: elements)
    }

    /// The name, path (`E.p`) and user info of property `x` of `entity` (an `attribute` or a
    /// `relationship`), placed, its XML attributes beyond `mapped` and its other children warned
    /// about; nil without a name, or for a transient relationship, left out with a warning.
    mutating func property(_ x: XMLTreeElement, _ kind: String, entity: String, mapped: Set<String>) -> (
        String, String, [String: String]
    )? {
        guard let name = name(x, "\(kind == "attribute" ? "an" : "a") \(kind)", entity) else { return nil }
        let path = "\(entity).\(name)"
        read.locations[path] = x.location
        checkAttributes(x, mapped: mapped, path: path)
        var info: [String: String] = [:]
        for child in x.children {
            if child.name == "userInfo" {
                info.merge(userInfo(child, path: path)) { _, b in b }
            } else {
                unmapped(child, path: path)
            }
        }
        if kind == "relationship", flag(x, "transient", path) {
            warn(x.location, path, "transient relationship left out (not supported yet; the store does not hold it)")
            return nil
        }
        return (name, path, info)
    }
}

// MARK: - Attributes

extension Mapper {
    static let attributeKeys: Set<String> = [
        "name", "attributeType", "optional", "transient", "defaultValueString", "defaultDateTimeInterval",
        "minValueString", "maxValueString", "regularExpressionString", "valueTransformerName",
        "preserveAfterDeletion", "indexed", "elementID", "derived", "derivationExpression",
    ]

    /// The XML attribute each key of the JSON model comes from, for placing the resolver's problems.
    static let xmlKey: [String: String] = [
        "type": "attributeType", "min": "minValueString", "max": "maxValueString", "minLength": "minValueString",
        "maxLength": "maxValueString", "regex": "regularExpressionString",
        "valueTransformerName": "valueTransformerName", "indexed": "indexed",
        "derivationExpression": "derivationExpression",
    ]

    mutating func attribute(_ x: XMLTreeElement, entity: String) -> AttributeDescription? {
        guard let (name, path, info) = property(x, "attribute", entity: entity, mapped: Self.attributeKeys) else {
            return nil
        }
        let isTransient = flag(x, "transient", path)
        // A transient attribute may have no type ("Undefined"): it holds any value.
        let typeName = x["attributeType"] ?? (isTransient ? "Transformable" : nil)
        guard let typeName else {
            fail(x.location, path, "the attribute has no attributeType")
            return nil
        }
        guard let type = ModelXML.types[typeName] ?? (isTransient && typeName == "Undefined" ? .transformable : nil)
        else {
            let why =
                typeName == "Composite"
                ? "composite attributes are not supported" : "attributeType \"\(typeName)\" is not a type Sift knows"
            fail(location(x, "attributeType"), path, why)
            return nil
        }
        var a = AttributeDescription(name, type, optional: flag(x, "optional", path))
        a.isTransient = isTransient
        a.preservesValueInHistoryOnDeletion = flag(x, "preserveAfterDeletion", path)
        a.userInfo = info
        a.renamingIdentifier = x["elementID"]
        a.isIndexed = flag(x, "indexed", path)
        a.regularExpression = x["regularExpressionString"]
        a.valueTransformerName = x["valueTransformerName"]
        if type == .transformable, !isTransient, a.valueTransformerName == nil {
            // Core Data archives such a value with NSCoding: its keyed-archiving transformer.
            a.valueTransformerName = SecureUnarchiveFromDataTransformer.keyedName
        }
        if flag(x, "derived", path) {
            a.derivationExpression = x["derivationExpression"]
            if a.derivationExpression == nil {
                fail(location(x, "derived"), path, "a derived attribute needs a derivationExpression")
            }
        } else if x["derivationExpression"] != nil {
            warn(location(x, "derivationExpression"), path, "derivationExpression without derived=\"YES\" is left out")
        }
        bounds(x, &a, path)
        a.defaultValue = defaultValue(x, type, path)
        for p in ModelResolver.problems(of: a) {
            let key =
                p.key == "default"
                ? (x["defaultValueString"] == nil ? "defaultDateTimeInterval" : "defaultValueString")
                : Self.xmlKey[p.key] ?? ""
            fail(location(x, key), path, p.message)
        }
        return a
    }

    /// `minValueString`/`maxValueString`: a number range, or a length range for strings and data.
    mutating func bounds(_ x: XMLTreeElement, _ a: inout AttributeDescription, _ path: String) {
        for key in ["minValueString", "maxValueString"] {
            guard let text = x[key] else { continue }
            let isMin = key == "minValueString"
            let v = text.trimmingCharacters(in: .whitespaces)
            if a.type.isNumeric {
                guard let d = Double(v), d.isFinite else {
                    fail(location(x, key), path, "\(key)=\"\(text)\" is not a number")
                    continue
                }
                if isMin { a.minValue = d } else { a.maxValue = d }
            } else if [.string, .binary, .uri, .uuid].contains(a.type) {
                guard let n = Int(v) else {
                    fail(location(x, key), path, "\(key)=\"\(text)\" is not a length")
                    continue
                }
                if isMin { a.minLength = n } else { a.maxLength = n }
            } else {
                warn(location(x, key), path, "\(key)=\"\(text)\": bounds on a \(a.type.rawValue) are not kept")
            }
        }
    }

    /// `defaultValueString` read as the attribute's type, or `defaultDateTimeInterval` (seconds
    /// since 2001-01-01 UTC, the form the JSON model gives a date default in).
    mutating func defaultValue(_ x: XMLTreeElement, _ type: AttributeType, _ path: String) -> StoredValue? {
        if let text = x["defaultDateTimeInterval"] {
            guard type == .date, let d = Double(text.trimmingCharacters(in: .whitespaces)), d.isFinite else {
                fail(
                    location(x, "defaultDateTimeInterval"), path,
                    "defaultDateTimeInterval=\"\(text)\" is not a date default")
                return nil
            }
            return Self.number(d)
        }
        guard let text = x["defaultValueString"] else { return nil }
        let v = text.trimmingCharacters(in: .whitespaces)
        var value: StoredValue?
        switch type {
        case .boolean:
            value = ["YES": true, "NO": false, "true": true, "false": false, "1": true, "0": false][v].map { .bool($0) }
        case _ where type.isNumeric:
            value = Int64(v).map { .integer($0) } ?? Double(v).flatMap { $0.isFinite ? Self.number($0) : nil }
        case .string, .uri, .uuid:
            value = .string(text)
        default:
            value = nil
        }
        guard let value else {
            fail(
                location(x, "defaultValueString"), path,
                "defaultValueString=\"\(text)\" is not \(type.article) \(type.rawValue) value")
            return nil
        }
        return value
    }

    /// A number as the JSON model reads it back: whole numbers as integers.
    static func number(_ d: Double) -> StoredValue {
        d.rounded() == d && abs(d) < 9.0e15 ? .integer(Int64(d)) : .double(d)
    }
}

// MARK: - Relationships

extension Mapper {
    mutating func relationship(_ x: XMLTreeElement, entity: String) -> RelationshipDescription? {
        let mapped: Set<String> = [
            "name", "destinationEntity", "toMany", "ordered", "optional", "minCount", "maxCount", "deletionRule",
            "inverseName", "transient", "elementID",
        ]
        guard let (name, path, info) = property(x, "relationship", entity: entity, mapped: mapped) else { return nil }
        guard let destination = x["destinationEntity"] else {
            fail(x.location, path, "the relationship has no destinationEntity")
            return nil
        }
        let toMany = flag(x, "toMany", path)
        var r = RelationshipDescription(
            name, to: destination, toMany: toMany, ordered: flag(x, "ordered", path), inverse: x["inverseName"],
            optional: flag(x, "optional", path))
        r.userInfo = info
        r.renamingIdentifier = x["elementID"]
        if let rule = x["deletionRule"] {
            if let d = ModelXML.deleteRules[rule] {
                r.deleteRule = d
            } else {
                fail(
                    location(x, "deletionRule"), path,
                    "deletionRule=\"\(rule)\" is not Nullify, Cascade, Deny or No Action")
            }
        }
        // A to-one is written with maxCount="1" (and a required one minCount="1"): its optional says it all.
        let minCount = integer(x, "minCount", path) ?? 0
        let maxCount = integer(x, "maxCount", path) ?? 0
        if toMany {
            r.minCount = minCount
            r.maxCount = maxCount
        }
        if r.isOrdered && !toMany {
            warn(location(x, "ordered"), path, "ordered=\"YES\" on a to-one relationship means nothing; ignored")
            r.isOrdered = false
        }
        for p in ModelResolver.problems(of: r) { fail(location(x, p.key), path, p.message) }
        return r
    }

    /// An inverse that names no relationship of the destination (one left out, or a model Xcode
    /// would flag) is dropped with a warning, as Core Data runs without it.
    mutating func checkInverses() {
        let byName = Dictionary(read.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for i in read.entities.indices {
            for j in read.entities[i].relationships.indices {
                let r = read.entities[i].relationships[j]
                guard let inverse = r.inverse else { continue }
                var owner = byName[r.destination]
                var seen = Set<String>()
                var found = false
                while let o = owner, seen.insert(o.name).inserted {
                    if o.relationships.contains(where: { $0.name == inverse }) { found = true }
                    owner = o.parent.flatMap { byName[$0] }
                }
                guard !found, byName[r.destination] != nil else { continue }
                let path = "\(read.entities[i].name).\(r.name)"
                warn(
                    read.locations[path]!, path,
                    "the inverse '\(inverse)' is not a relationship of '\(r.destination)'; kept without an inverse")
                read.entities[i].relationships[j].inverse = nil
            }
        }
    }
}

// MARK: - Fetch request templates

extension Mapper {
    /// `<fetchRequest name entity predicateString fetchLimit …/>` at model level.
    mutating func template(_ x: XMLTreeElement) {
        guard let name = name(x, "a fetch request", "") else { return }
        let path = "fetch request '\(name)'"
        checkAttributes(
            x,
            mapped: [
                "name", "entity", "predicateString", "fetchLimit", "fetchOffset", "fetchBatchSize",
                "includesSubentities", "includesPendingChanges", "returnDistinctResults",
            ], path: path)
        for child in x.children { unmapped(child, path: path) }
        guard let entity = x["entity"] else {
            fail(x.location, path, "the fetch request names no entity")
            return
        }
        guard read.entities.contains(where: { $0.name == entity }) else {
            fail(location(x, "entity"), path, "the model has no entity '\(entity)'")
            return
        }
        var request = FetchRequest(entity)
        if let text = x["predicateString"] {
            do {
                let syntax = try PredicateSyntax.parse(text)
                request.predicate = SiftPredicate(syntax, source: text)
            } catch {
                fail(
                    location(x, "predicateString"), path,
                    "the predicate does not parse: \(error.location): \(error.message)")
                return
            }
        }
        if let n = integer(x, "fetchLimit", path), n > 0 { request.fetchLimit = n }
        if let n = integer(x, "fetchOffset", path) { request.fetchOffset = max(0, n) }
        if let n = integer(x, "fetchBatchSize", path) { request.fetchBatchSize = max(0, n) }
        if x["includesSubentities"] != nil { request.includesSubentities = flag(x, "includesSubentities", path) }
        if x["includesPendingChanges"] != nil {
            request.includesPendingChanges = flag(x, "includesPendingChanges", path)
        }
        request.returnsDistinctResults = flag(x, "returnDistinctResults", path)
        read.templates.append(FetchRequestTemplate(name: name, request: request, location: x.location))
    }
}
