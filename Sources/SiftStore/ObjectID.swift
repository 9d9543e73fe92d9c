// Object identity: an entity, the store's UUID and either the row's primary key (permanent) or a
// per-process counter (temporary, until the first save). IDs are plain `Sendable` values, so they
// cross threads and tasks where managed objects may not, and they round-trip through a URI.
//
// Keys are unique per key space: Sift's own stores have one (a store-wide counter), Core Data's
// stores one per root entity (each hierarchy's `Z_MAX`), so two objects of different hierarchies
// may share a key there. The space is part of the interned pair, and of equality.
//
// An ID holds no strings: the entity name and store UUID are interned once per (store, entity)
// in a process-wide table (`IDNames`) and the ID keeps their small numbers. Every fetched object
// carries an ID, and copying two strings into each (a reference count on the UUID's storage per
// copy) was a measurable part of a fetch; the names are looked up only to print or build a URI.

import Foundation

/// The identity of one managed object; temporary until its first save.
///
/// ```swift
/// let id = person.objectID
/// id.uriRepresentation            // sift://6F9619FF-…/Person/p42
/// ObjectID(uri: id.uriRepresentation) == id   // true
/// ```
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    enum Key: Hashable, Sendable {
        case permanent(Int64)
        case temporary(Int64)
    }
    let key: Key
    /// The interned (store, entity) pair.
    let names: IDNames.Pair

    init(_ names: IDNames.Pair, key: Key) {
        self.names = names
        self.key = key
    }

    init(entity: String, store: String, key: Key) {
        self.init(IDNames.shared.pair(store: store, entity: entity), key: key)
    }

    /// The name of the object's entity.
    public var entityName: String { IDNames.shared.entity(of: names) }
    /// The UUID of the store the object belongs to.
    public var storeIdentifier: String { IDNames.shared.store(of: names) }

    // Primary keys are unique within a key space (the whole store for Sift's stores, a hierarchy
    // for Core Data's), so the key, the space and the store identify an object; the entity itself
    // is carried for display and URIs only (a sub-entity's object is one of its root's).
    /// Two IDs are equal when they name the same object of the same store.
    public static func == (a: ObjectID, b: ObjectID) -> Bool {
        a.key == b.key && a.names.store == b.names.store && a.names.space == b.names.space
    }
    // The key alone: an object graph rarely mixes stores or repeats keys across hierarchies.
    /// Hashes the object's key within its store.
    public func hash(into h: inout Hasher) { h.combine(key) }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool { if case .temporary = key { true } else { false } }

    /// The row's primary key, for permanent IDs.
    public var primaryKey: Int64? { if case .permanent(let k) = key { k } else { nil } }

    /// `sift://STORE-UUID/Entity/pN` (permanent) or `…/tN` (temporary).
    public var uriRepresentation: URL {
        let last: String
        switch key {
        case .permanent(let k): last = "p\(k)"
        case .temporary(let k): last = "t\(k)"
        }
        // Entity names are identifiers and the store id a UUID: the URL is always valid.
        return URL(string: "sift://\(storeIdentifier)/\(entityName)/\(last)")!
    }

    /// The ID a URI from `uriRepresentation` stands for, or nil when it is not one.
    public init?(uri: URL) {
        guard uri.scheme == "sift", let host = uri.host else { return nil }
        let parts = uri.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let tag = parts[1].first, let n = Int64(parts[1].dropFirst()) else { return nil }
        switch tag {
        case "p": key = .permanent(n)
        case "t": key = .temporary(n)
        default: return nil
        }
        names = IDNames.shared.pair(store: host, entity: parts[0])
    }

    /// The entity and the key, e.g. `Employee 3`, or `Employee (temporary 1)` before the first save.
    public var description: String {
        switch key {
        case .permanent(let k): "\(entityName) \(k)"
        case .temporary(let k): "\(entityName) (temporary \(k))"
        }
    }
}

/// The process-wide table of store UUIDs and entity names that IDs refer to by number. It only
/// grows: an entry per store opened (or named by a parsed URI) and per entity of it, which is a
/// few strings per store for the life of the process.
final class IDNames: @unchecked Sendable {
    static let shared = IDNames()

    /// A store number, an entity number and the entity's key space (0 where the store's keys are
    /// store-wide, else its root's entity number); equal pairs name the same store and entity.
    struct Pair: Hashable, Sendable {
        let store: UInt32
        let entity: UInt32
        var space: UInt32 = 0
    }

    private let lock = NSLock()
    private var stores: [String] = []
    private var storeNumbers: [String: UInt32] = [:]
    private var entities: [String] = []
    private var entityNumbers: [String: UInt32] = [:]
    /// The key space of each (store, entity) whose store has more than one (by `pair(store:entity:space:)`).
    private var spaces: [Pair: UInt32] = [:]

    /// The pair for `entity` of `store`, in the key space its store registered for it (0 if none).
    func pair(store: String, entity: String) -> Pair {
        lock.lock()
        defer { lock.unlock() }
        let p = Pair(
            store: Self.number(store, &stores, &storeNumbers), entity: Self.number(entity, &entities, &entityNumbers))
        return spaces[p].map { Pair(store: p.store, entity: p.entity, space: $0) } ?? p
    }

    /// The pair for `entity` of `store` in key space `space`, remembered so that IDs made later
    /// from a URI (which names the entity only) land in the same space.
    func pair(store: String, entity: String, space: UInt32) -> Pair {
        let p = pair(store: store, entity: entity)
        guard space != p.space else { return p }
        lock.lock()
        defer { lock.unlock() }
        let plain = Pair(store: p.store, entity: p.entity)
        spaces[plain] = space
        return Pair(store: p.store, entity: p.entity, space: space)
    }

    private static func number(_ s: String, _ list: inout [String], _ numbers: inout [String: UInt32]) -> UInt32 {
        if let n = numbers[s] { return n }
        let n = UInt32(list.count)
        list.append(s)
        numbers[s] = n
        return n
    }

    func store(of p: Pair) -> String {
        lock.lock()
        defer { lock.unlock() }
        return stores[Int(p.store)]
    }

    func entity(of p: Pair) -> String {
        lock.lock()
        defer { lock.unlock() }
        return entities[Int(p.entity)]
    }
}
