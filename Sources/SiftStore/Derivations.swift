// Derived attributes (Core Data's `derivationExpression`): which attributes of which entities are
// computed, from what, and the computing itself. The model holds the compiled expressions and, for
// every entity whose objects a derivation reads through a relationship, the inverses that lead back
// from a changed object to the objects whose values read it. A save (and a batch request's scratch
// context) hands the objects it changes to `derive`, which follows those inverses, evaluates each
// reached object's expressions in memory (the evaluator of predicates, so a value is exactly what a
// predicate on the object computes) and sets the values that changed, before validation.
// Core Data keeps these values with SQL triggers; here they are computed from the objects the
// saving context sees (documented in ModelFiles.md).

import Foundation
import SiftEvaluation
import SiftSyntax

/// The derived attributes of a model and what their values depend on.
struct Derivations: Sendable {
    /// A derived attribute: its index among its entity's resolved attributes, and its expression.
    struct Derived: Sendable {
        let index: Int
        let expression: SiftExpression
        let text: String
    }

    /// Per entity (inherited derived attributes included), its derived attributes.
    private(set) var derived: [String: [Derived]] = [:]
    /// Per entity, the relationships leading from its objects to objects whose derived values may
    /// read them (the inverses of the relationships the expressions walk), by name.
    private(set) var dependents: [String: Set<String>] = [:]
    var isEmpty: Bool { derived.isEmpty }

    init() {}

    /// The derivations of `model`: every expression's keys checked as a fetch request's are (an
    /// unknown key is an error naming the attribute), and every relationship walked needs an
    /// inverse, which is how a change is traced back to the values that read it.
    init(_ model: ManagedObjectModel) throws(ModelError) {
        for (name, entity) in model.resolved.sorted(by: { $0.key < $1.key }) {
            for (i, a) in entity.attributes.enumerated() {
                guard let text = a.description.derivationExpression else { continue }
                let what = "attribute '\(name).\(a.name)': derivationExpression '\(text)'"
                let syntax: ExpressionSyntax
                do { syntax = try ExpressionSyntax.parse(text) } catch {
                    throw ModelError("\(what): \(error.message) at \(error.location)")
                }
                var check = KeyCheck(model: model, source: text)
                do { try check.expression(syntax, name) } catch { throw ModelError("\(what): \(error.message)") }
                derived[name, default: []].append(
                    Derived(index: i, expression: SiftExpression(syntax, source: text), text: text))
                try addDependents(of: check.steps, model, what)
            }
        }
    }

    /// Records, for each relationship walked, that a change to an object at its end reaches the
    /// objects at its start through its inverse (declared on the destination or an ancestor).
    private mutating func addDependents(
        of steps: [(entity: String, relationship: ResolvedRelationship)], _ model: ManagedObjectModel, _ what: String
    ) throws(ModelError) {
        for (from, rel) in steps {
            guard let inverse = rel.inverse else {
                throw ModelError(
                    "\(what) reads '\(from).\(rel.name)', which has no inverse: a change at its end could not be traced back to the values that read it"
                )
            }
            for member in model.resolved[rel.destination]?.family ?? [] {
                dependents[member, default: []].insert(inverse)
            }
        }
    }
}

extension ManagedObjectContext {
    /// Computes the derived attributes of the `changed` objects and of every object whose
    /// derivation reads one of them (followed through the inverses), skipping `deleted` ones; each
    /// value that differs from the object's is handed to `set`. A value that does not coerce to
    /// its attribute's type is a validation failure; an expression that raises is its error.
    func deriveValues(
        from changed: [ManagedObject], deleted: Set<ManagedObject>,
        set: (ManagedObject, Int, Value) throws(StoreError) -> Void
    ) throws(StoreError) {
        let derivations = store.model.derivations
        guard !derivations.isEmpty else { return }
        var failures: [StoreError.Failure] = []
        for o in try Self.reached(from: changed, deleted: deleted, derivations) {
            try o.fire()
            for d in derivations.derived[o.info.name] ?? [] {
                let raw: Value
                do throws(EvaluationError) { raw = try d.expression.evaluate(with: .object(o)) } catch {
                    throw StoreError(error, object: o.objectID, in: d.text)
                }
                let a = o.info.entity.attributes[d.index]
                let v: Value
                do throws(CoercionError) { v = try Value(coercing: raw, for: a) } catch {
                    failures.append(Self.failure(o, a.name, raw, (error.message, .type)))
                    continue
                }
                if !v.isIdentical(to: o.attributes[d.index]) { try set(o, d.index, v) }
            }
        }
        if !failures.isEmpty { throw StoreError(.validation, failures: failures) }
    }

    /// The objects whose derived values may change with `changed`: those of them that have derived
    /// attributes, and the objects reached from any of them through the recorded inverses.
    private static func reached(
        from changed: [ManagedObject], deleted: Set<ManagedObject>, _ derivations: Derivations
    ) throws(StoreError) -> [ManagedObject] {
        var out: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        var queue = changed.reversed() as [ManagedObject]
        while let o = queue.popLast() {
            guard seen.insert(ObjectIdentifier(o)).inserted, deleted.isEmpty || !deleted.contains(o) else { continue }
            if derivations.derived[o.info.name] != nil { out.append(o) }
            for name in (derivations.dependents[o.info.name] ?? []).sorted() {
                guard let i = o.info.entity.relationshipIndex[name] else { continue }
                if o.info.entity.relationships[i].isToMany {
                    queue += try o.many(i).reversed()
                } else if let t = try o.one(i) {
                    queue.append(t)
                }
            }
        }
        return out
    }
}
