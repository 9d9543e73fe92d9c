// Object identity: an entity, the store's UUID and either the row's primary key (permanent) or a
// per-process counter (temporary, until the first save). IDs are plain `Sendable` values, so they
// cross threads and tasks where managed objects may not, and they round-trip through a URI.

import Foundation

/// The identity of one managed object; temporary until its first save.
///
/// ```swift
/// let id = person.objectID
/// id.uriRepresentation            // sift://6F9619FF-…/Person/p42
/// ObjectID(uri: id.uriRepresentation) == id   // true
/// ```
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The entity of the object.
    public let entityName: String
    /// The UUID of the store the object belongs to.
    public let storeIdentifier: String
    enum Key: Hashable, Sendable {
        case permanent(Int64)
        case temporary(Int64)
    }
    let key: Key

    init(entity: String, store: String, key: Key) {
        self.entityName = entity
        self.storeIdentifier = store
        self.key = key
    }

    // Primary keys are unique across the whole store (one counter for every table), so the key
    // and the store identify an object; the entity name is carried for display and URIs only.
    /// Two IDs are equal when they name the same object of the same store.
    public static func == (a: ObjectID, b: ObjectID) -> Bool { a.key == b.key && a.storeIdentifier == b.storeIdentifier }
    // The key alone: an object graph rarely mixes stores, and hashing the store's 36-character
    // identifier for every registry lookup cost a sixth of a fetch.
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
        entityName = parts[0]
        storeIdentifier = host
    }

    /// The entity and the key, e.g. `Employee 3`, or `Employee (temporary 1)` before the first save.
    public var description: String {
        switch key {
        case .permanent(let k): "\(entityName) \(k)"
        case .temporary(let k): "\(entityName) (temporary \(k))"
        }
    }
}
