// Which element of a store's model each element of a newer model continues (its name, or its
// `renamingIdentifier`, names it in the older model; or, as Xcode keeps an `elementID` from
// version to version, the older element has the same renaming identifier), and whether the
// change between the two can be inferred: the list of changes in words, and every change that
// cannot be, each on its own, so an open with `migration: .inferred` refuses all of them at once
// before it touches the file.

import Foundation
import SiftEvaluation

/// The correspondence between an older and a newer model, and what changed between them.
struct MigrationMatch {
    let old: ManagedObjectModel
    let new: ManagedObjectModel
    /// New entity name → the old entity it continues.
    private(set) var entities: [String: String] = [:]
    /// Each inferable change, in words (`attribute 'Person.phone' was added`).
    private(set) var changes: [String] = []
    /// Each change that cannot be inferred, in words.
    private(set) var incompatible: [String] = []
    /// What a custom stage's code does around the schema change, which makes two more changes
    /// possible: code before it may fill the nils of an attribute made required without a default
    /// (every row is checked after the change), code after it may set an attribute added as
    /// required without a default (every row is checked after that code).
    let stage: (before: Bool, after: Bool)
    /// The attributes (entity, name) added as required without a default: checked after the
    /// custom stage's code that runs after the schema change.
    private(set) var setAfter: [(entity: String, attribute: String)] = []

    init(old: ManagedObjectModel, new: ManagedObjectModel, stage: (before: Bool, after: Bool) = (false, false)) {
        self.old = old
        self.new = new
        self.stage = stage
        for e in new.entities {
            let previous = e.renamingIdentifier ?? e.name
            if old.resolved[previous] != nil {
                entities[e.name] = previous
            } else if let id = e.renamingIdentifier, let o = old.entities.first(where: { $0.renamingIdentifier == id })
            {
                entities[e.name] = o.name
            }
        }
        compare()
    }

    /// The old attribute new attribute `a` of new entity `entity` continues, if any.
    func attribute(_ a: ResolvedAttribute, of entity: String) -> ResolvedAttribute? {
        guard let o = entities[entity], let r = old.resolved[o] else { return nil }
        if let found = r.attribute(a.description.renamingIdentifier ?? a.name) { return found }
        guard let id = a.description.renamingIdentifier else { return nil }
        return r.attributes.first { $0.description.renamingIdentifier == id }
    }

    /// The old relationship new relationship `rel` of new entity `entity` continues, if any.
    func relationship(_ rel: ResolvedRelationship, of entity: String) -> ResolvedRelationship? {
        guard let o = entities[entity], let r = old.resolved[o] else { return nil }
        if let found = r.relationship(rel.description.renamingIdentifier ?? rel.name) { return found }
        guard let id = rel.description.renamingIdentifier else { return nil }
        return r.relationships.first { $0.description.renamingIdentifier == id }
    }

    /// How an old attribute's stored value becomes the new one's: kept, or written as a string.
    enum Conversion { case keep, toString }

    /// The conversion from `o` to `a`, or why there is none.
    static func conversion(_ o: AttributeDescription, _ a: AttributeDescription) -> Result<Conversion, Refusal> {
        if o.isCollection != a.isCollection { return .failure(Refusal("changed whether it is a collection")) }
        if o.type == .mixed || a.type == .mixed, o.type != a.type || o.shapes != a.shapes {
            return .failure(Refusal("changed its mixed shapes"))
        }
        if o.type == .transformable, a.type == .transformable, o.valueTransformerName != a.valueTransformerName {
            return .failure(Refusal("changed its value transformer"))
        }
        if o.type == a.type { return .success(.keep) }
        let widenings: [AttributeType: Set<AttributeType>] = [
            .integer16: [.integer32, .integer64], .integer32: [.integer64], .float: [.double],
        ]
        if widenings[o.type]?.contains(a.type) == true { return .success(.keep) }
        let scalars: Set<AttributeType> = [
            .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal, .uuid, .uri,
        ]
        if a.type == .string, !a.isCollection, scalars.contains(o.type) { return .success(.toString) }
        return .failure(Refusal("changed type from \(o.type.rawValue) to \(a.type.rawValue)"))
    }

    /// Why a change cannot be inferred.
    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Whether the rules a stored value must keep differ (so every row is checked against the new ones).
    static func rulesChanged(_ o: AttributeDescription, _ a: AttributeDescription) -> Bool {
        o.isOptional != a.isOptional || o.minValue != a.minValue || o.maxValue != a.maxValue
            || o.minLength != a.minLength || o.maxLength != a.maxLength || o.regularExpression != a.regularExpression
    }

    private mutating func compare() {
        let continued = Set(entities.values)
        for e in old.entities where !continued.contains(e.name) { changes.append("entity '\(e.name)' was removed") }
        for e in new.entities {
            guard let o = entities[e.name] else {
                changes.append("entity '\(e.name)' was added")
                continue
            }
            if o != e.name { changes.append("entity '\(o)' was renamed '\(e.name)'") }
            compareEntity(e, old.entity(named: o)!)
        }
        if new.layout == .coreData { refuseMergedHierarchies() }
    }

    /// Core Data's layout issues keys per hierarchy, so two old hierarchies' rows could share keys
    /// in one new table: merging them is refused, as Core Data refuses it (coredata-formats.md §4).
    private mutating func refuseMergedHierarchies() {
        for e in new.entities where e.parent == nil {
            let family = new.resolved[e.name]!.family
            let roots = Set(family.compactMap { entities[$0].flatMap { old.resolved[$0]?.root } })
            guard roots.count > 1 else { continue }
            incompatible.append(
                "entity '\(e.name)' merges the hierarchies of \(roots.sorted().map { "'\($0)'" }.joined(separator: " and ")), which Core Data's layout cannot (each issues its own keys)"
            )
        }
    }

    private mutating func compareEntity(_ e: EntityDescription, _ oe: EntityDescription) {
        if (e.document == nil) != (oe.document == nil) || e.document != oe.document {
            incompatible.append("entity '\(e.name)': its documents' description changed")
            return
        }
        if e.parent != oe.parent { changes.append("entity '\(e.name)' moved in its hierarchy") }
        let r = new.resolved[e.name]!
        let oldR = old.resolved[oe.name]!
        for a in r.attributes where a.declaringEntity(in: new, of: e.name) == e.name {
            compareAttribute(a, attribute(a, of: e.name), entity: e.name, oldEntity: oe.name)
        }
        for rel in r.relationships where rel.declaringEntity == e.name {
            compareRelationship(rel, relationship(rel, of: e.name), entity: e.name)
        }
        let kept = Set(r.attributes.compactMap { attribute($0, of: e.name)?.name })
        for a in oe.attributes where !a.isTransient && !kept.contains(a.name) {
            changes.append("attribute '\(oe.name).\(a.name)' was removed")
        }
        let keptLinks = Set(r.relationships.compactMap { relationship($0, of: e.name)?.name })
        for rel in oe.relationships where !keptLinks.contains(rel.name) {
            changes.append("relationship '\(oe.name).\(rel.name)' was removed")
        }
        if e.uniquenessConstraints != oe.uniquenessConstraints || oldR.constraints.count != r.constraints.count {
            changes.append("entity '\(e.name)' changed its uniqueness constraints (checked against every row)")
        }
    }

    private mutating func compareAttribute(
        _ a: ResolvedAttribute, _ o: ResolvedAttribute?, entity: String, oldEntity: String
    ) {
        let what = "attribute '\(entity).\(a.name)'"
        // Stored rows have no value computed from a new or changed expression (Derivations.swift).
        if let derivation = a.description.derivationExpression, o?.description.derivationExpression != derivation {
            incompatible.append(
                "\(what) is derived from \(derivation) (\(o == nil ? "new" : "changed")): an inferred migration does not compute derived values yet"
            )
            return
        }
        guard let o else {
            if !a.description.isOptional, a.defaultValue == nil, stage.after {
                setAfter.append((entity, a.name))
                changes.append("\(what) was added as required (set by the custom stage, then checked on every row)")
            } else if !a.description.isOptional, a.defaultValue == nil {
                incompatible.append("\(what) was added as required without a default value")
            } else {
                changes.append("\(what) was added")
            }
            return
        }
        if o.name != a.name { changes.append("attribute '\(oldEntity).\(o.name)' was renamed '\(a.name)'") }
        switch Self.conversion(o.description, a.description) {
        case .failure(let refusal):
            incompatible.append("\(what) \(refusal.reason)")
            return
        case .success(.toString): changes.append("\(what) is now a string (was \(o.type.rawValue))")
        case .success(.keep):
            if o.type != a.type { changes.append("\(what) widened from \(o.type.rawValue) to \(a.type.rawValue)") }
        }
        if o.description.isOptional, !a.description.isOptional {
            if a.defaultValue != nil {
                changes.append("\(what) became required (nil values get its default)")
            } else if stage.before {
                changes.append("\(what) became required (the custom stage fills nils first; every row is checked)")
            } else {
                incompatible.append("\(what) became required without a default value")
                return
            }
        } else if !o.description.isOptional, a.description.isOptional {
            changes.append("\(what) became optional")
        }
        if Self.rulesChanged(o.description, a.description) {
            changes.append("\(what) changed its validation rules (checked against every row)")
        }
    }

    private mutating func compareRelationship(_ rel: ResolvedRelationship, _ o: ResolvedRelationship?, entity: String) {
        let what = "relationship '\(entity).\(rel.name)'"
        guard let o else {
            if !rel.isToMany, !rel.description.isOptional {
                incompatible.append("\(what) was added as a required to-one relationship")
            } else {
                changes.append("\(what) was added")
            }
            return
        }
        if o.name != rel.name {
            changes.append("relationship '\(o.declaringEntity).\(o.name)' was renamed '\(rel.name)'")
        }
        guard entities[rel.destination] == o.destination else {
            incompatible.append(
                "\(what) now points at '\(rel.destination)', which does not continue '\(o.destination)'")
            return
        }
        if o.isToMany != rel.isToMany {
            changes.append("\(what) became \(rel.isToMany ? "to-many" : "to-one") (checked against every row)")
        }
        if o.description.isOrdered != rel.description.isOrdered {
            changes.append("\(what) became \(rel.description.isOrdered ? "ordered" : "unordered")")
        }
        let d = rel.description
        let od = o.description
        if d.isOptional != od.isOptional || d.minCount != od.minCount || d.maxCount != od.maxCount {
            changes.append("\(what) changed its count rules (checked against every row)")
        }
    }
}

extension ResolvedAttribute {
    /// The entity of `model` that declares this attribute of `entity` (the entity or an ancestor).
    func declaringEntity(in model: ManagedObjectModel, of entity: String) -> String {
        var current = model.entity(named: entity)
        while let e = current {
            if e.attributes.contains(where: { $0.name == name }) { return e.name }
            current = e.parent.flatMap { model.entity(named: $0) }
        }
        return entity
    }
}
