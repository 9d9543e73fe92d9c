// Which Swift class a context makes an entity's objects as. Swift on Linux cannot find a class by
// its name, so the user hands the model its `ManagedObject` subclasses; each serves the entity
// whose class name (Core Data's "class name", the entity's name unless the model says otherwise)
// is the class's own name. Registration is checked once, when the model is made: a class that
// serves no entity, two classes for one entity, and a class whose superclass does not follow
// the entity hierarchy are model errors, so a context never makes an object of the wrong class.

import Foundation

/// The classes registered with a model, checked.
struct ObjectClasses: @unchecked Sendable {
    /// Per entity: the class its objects are made as: its own registered class, or the nearest
    /// ancestor entity's (absent: `ManagedObject` itself).
    let byEntity: [String: ManagedObject.Type]
    /// Entities one of whose sub-entities is made as another class: a fault of such an entity
    /// must learn its row's concrete entity before it is made.
    let needsConcreteEntity: Set<String>

    init(_ classes: [ManagedObject.Type], entities: [EntityDescription]) throws(ModelError) {
        guard !classes.isEmpty else {
            byEntity = [:]
            needsConcreteEntity = []
            return
        }
        let own = try Self.match(classes, entities)
        let parents = Dictionary(entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { a, _ in a })
        let entityOfClass = Dictionary(
            own.map { (ObjectIdentifier($0.value), $0.key) }, uniquingKeysWith: { a, _ in a })
        /// The nearest ancestor of `entity` (not itself) with a registered class.
        func registeredAncestor(_ entity: String) -> String? {
            var p = parents[entity] ?? nil
            while let e = p {
                if own[e] != nil { return e }
                p = parents[e] ?? nil
            }
            return nil
        }
        for (entity, cls) in own.sorted(by: { $0.key < $1.key }) {
            let expected = registeredAncestor(entity)
            let actual = Self.registeredSuperclass(of: cls, entityOfClass)
            guard expected != actual else { continue }
            let name = String(reflecting: cls)
            if let expected {
                throw ModelError(
                    "class '\(name)' of entity '\(entity)' must be a subclass of '\(String(reflecting: own[expected]!))', the class of its ancestor entity '\(expected)'"
                )
            }
            throw ModelError(
                "class '\(name)' of entity '\(entity)' inherits from '\(String(reflecting: own[actual!]!))', the class of entity '\(actual!)', which is not an ancestor of '\(entity)'"
            )
        }
        var byEntity: [String: ManagedObject.Type] = [:]
        for e in entities {
            if let c = own[e.name] ?? registeredAncestor(e.name).flatMap({ own[$0] }) { byEntity[e.name] = c }
        }
        var needs = Set<String>()
        for e in entities {
            // Every ancestor of `e` whose objects are made as another class than `e`'s.
            var p = e.parent
            while let a = p {
                if byEntity[a].map(ObjectIdentifier.init) != byEntity[e.name].map(ObjectIdentifier.init) {
                    needs.insert(a)
                }
                p = parents[a] ?? nil
            }
        }
        self.byEntity = byEntity
        self.needsConcreteEntity = needs
        Self.remember(own)
    }

    /// Each class with the entity it serves; errors for a class that serves none or several, and
    /// for two classes serving one entity.
    private static func match(
        _ classes: [ManagedObject.Type], _ entities: [EntityDescription]
    ) throws(ModelError) -> [String: ManagedObject.Type] {
        var own: [String: ManagedObject.Type] = [:]
        var seen = Set<ObjectIdentifier>()
        for cls in classes where seen.insert(ObjectIdentifier(cls)).inserted {
            let name = String(describing: cls)
            let served = entities.filter { ($0.className ?? $0.name) == name }.map(\.name)
            guard let entity = served.first else {
                throw ModelError(
                    "class '\(String(reflecting: cls))' serves no entity: no entity has the class name '\(name)'")
            }
            guard served.count == 1 else {
                throw ModelError(
                    "class '\(String(reflecting: cls))' would serve entities \(served.map { "'\($0)'" }.joined(separator: " and ")): give them different class names"
                )
            }
            if let other = own[entity] {
                throw ModelError(
                    "entity '\(entity)' has two classes, '\(String(reflecting: other))' and '\(String(reflecting: cls))'"
                )
            }
            own[entity] = cls
        }
        return own
    }

    /// The entity of the nearest registered class `cls` inherits from (not `cls` itself).
    private static func registeredSuperclass(
        of cls: ManagedObject.Type, _ entityOfClass: [ObjectIdentifier: String]
    ) -> String? {
        var c: AnyClass? = _getSuperclass(cls)
        while let k = c, k != ManagedObject.self {
            if let e = entityOfClass[ObjectIdentifier(k)] { return e }
            c = _getSuperclass(k)
        }
        return nil
    }

    // MARK: Entity names of classes, process-wide

    /// The entity each registered class served in the last model that registered it: what
    /// `FetchRequest(Employee.self)` names before any context is at hand.
    nonisolated(unsafe) private static var entityNames: [ObjectIdentifier: String] = [:]
    private static let lock = NSLock()

    private static func remember(_ own: [String: ManagedObject.Type]) {
        lock.withLock { for (entity, cls) in own { entityNames[ObjectIdentifier(cls)] = entity } }
    }

    /// The entity `cls` serves: the one a model registered it for, else the class's own name
    /// (an entity's class name is its name unless the model gives another).
    static func entityName(of cls: ManagedObject.Type) -> String {
        lock.withLock { entityNames[ObjectIdentifier(cls)] } ?? String(describing: cls)
    }
}
