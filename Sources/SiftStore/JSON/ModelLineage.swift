// An entity's lineage (itself and its ancestors, root first), for the JSON import and output, which
// walk a record's keys in the order the model declares them, inherited properties first.

extension ManagedObjectModel {
    /// `entity` and its ancestors, root first (the order the store resolves inherited
    /// properties in); empty for an unknown entity.
    package func lineage(of entity: String) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var current = self.entity(named: entity)
        while let e = current, !chain.contains(where: { $0.name == e.name }) {
            chain.insert(e, at: 0)
            current = e.parent.flatMap { self.entity(named: $0) }
        }
        return chain
    }

    /// Every attribute of `entity`, inherited ones first.
    package func allAttributes(of entity: String) -> [AttributeDescription] {
        lineage(of: entity).flatMap(\.attributes)
    }

    /// Every relationship of `entity`, inherited ones first.
    package func allRelationships(of entity: String) -> [RelationshipDescription] {
        lineage(of: entity).flatMap(\.relationships)
    }
}
