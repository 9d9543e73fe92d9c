// Fetched properties (Core Data's `NSFetchedPropertyDescription`): checked once against the model
// (names, destination, the predicate's syntax and keys), inherited by sub-entities, and read by
// `ManagedObject.value(forKey:)` as a fetch in the object's context with `$FETCH_SOURCE` bound to
// the object. The store keeps nothing for them, so they never change the model's version hash.

import Foundation
import SiftEvaluation
import SiftSyntax

/// A fetched property checked against its model.
struct FetchedProperty: Sendable {
    let description: FetchedPropertyDescription
    let predicate: SiftPredicate

    /// Every entity's fetched properties by name, its ancestors' included. A name already used by
    /// a property of the hierarchy, an unknown entity, a predicate that does not parse or names a
    /// key the fetched entity does not have, is an error naming the fetched property.
    static func resolve(_ model: ManagedObjectModel) throws(ModelError) -> [String: [String: FetchedProperty]] {
        var declared: [String: [FetchedProperty]] = [:]
        for e in model.entities {
            for f in e.fetchedProperties {
                declared[e.name, default: []].append(try check(f, of: e.name, model))
            }
        }
        guard !declared.isEmpty else { return [:] }
        // Each declaring entity's fetched properties go to it and every entity below it (its family).
        var out: [String: [String: FetchedProperty]] = [:]
        for (owner, properties) in declared.sorted(by: { $0.key < $1.key }) {
            for name in model.resolved[owner]?.family ?? [] {
                guard let entity = model.resolved[name] else { continue }
                for f in properties {
                    let key = f.description.name
                    let taken =
                        entity.attributeIndex[key] != nil || entity.relationshipIndex[key] != nil
                        || entity.transientIndex[key] != nil || out[name]?[key] != nil
                    if taken { throw ModelError("entity '\(name)' has two properties named '\(key)'") }
                    out[name, default: [:]][key] = f
                }
            }
        }
        return out
    }

    private static func check(_ f: FetchedPropertyDescription, of entity: String, _ model: ManagedObjectModel)
        throws(ModelError) -> FetchedProperty
    {
        let what = "fetched property '\(entity).\(f.name)'"
        guard !f.name.isEmpty else { throw ModelError("entity '\(entity)': a fetched property has no name") }
        guard model.resolved[f.entity] != nil else {
            throw ModelError("\(what): the model has no entity '\(f.entity)'")
        }
        let predicate: SiftPredicate
        do { predicate = try SiftPredicate(f.predicate) } catch {
            throw ModelError("\(what): invalid predicate at \(error.location): \(error.message)")
        }
        var keys = KeyCheck(model: model, source: f.predicate)
        do { try keys.predicate(predicate.syntax, f.entity) } catch { throw ModelError("\(what): \(error.message)") }
        return FetchedProperty(description: f, predicate: predicate)
    }
}

extension ManagedObject {
    /// The objects fetched property `f` finds for this object, fetched in its context (pending
    /// changes included).
    func fetchedValue(_ f: FetchedProperty) throws(StoreError) -> Value {
        guard let context else { throw detachedError }
        var request = FetchRequest(f.description.entity, predicate: f.predicate)
        request.variables = ["FETCH_SOURCE": predicateArgument]
        return .array(try context.fetch(request).map { .object($0) })
    }
}
