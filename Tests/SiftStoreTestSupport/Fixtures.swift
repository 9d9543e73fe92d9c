// Fixtures shared by the store's two test targets (SiftStoreTests, SiftStoreConcurrencyTests): a
// small company model (people, addresses, pets, projects, tags; an abstract parent entity), an
// items-and-owners model, a temporary file for each SQLite store, and a recorder of notifications.

import Foundation
import SiftStore

#if canImport(Glibc)
    import Glibc
#endif

package enum Fixtures {
    /// Person —address→ Address (to-one, inverse residents), Person —pets→ Pet (to-many, cascade),
    /// Person ⇄ Project (many-to-many), Animal (abstract) ← Pet, Person.nicknames (collection).
    package static func companyModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Person",
                attributes: [
                    AttributeDescription("name", .string, optional: false, minLength: 1),
                    AttributeDescription("email", .string, regularExpression: "[^@ ]+@[^@ ]+"),
                    AttributeDescription("age", .integer16, minValue: 0, maxValue: 150),
                    AttributeDescription("salary", .double),
                    AttributeDescription("balance", .decimal),
                    AttributeDescription("active", .boolean, defaultValue: .bool(true)),
                    AttributeDescription("born", .date),
                    AttributeDescription("token", .uuid),
                    AttributeDescription("home", .uri),
                    AttributeDescription("photo", .binary),
                    AttributeDescription("settings", .transformable),
                    AttributeDescription("nicknames", .string, collection: true),
                ],
                relationships: [
                    RelationshipDescription("address", to: "Address", inverse: "residents"),
                    RelationshipDescription(
                        "pets", to: "Pet", toMany: true, ordered: true, inverse: "owner", deleteRule: .cascade),
                    RelationshipDescription("projects", to: "Project", toMany: true, inverse: "members"),
                ],
                uniquenessConstraints: [["email"]]),
            EntityDescription(
                "Address",
                attributes: [AttributeDescription("city", .string), AttributeDescription("zip", .string)],
                relationships: [
                    RelationshipDescription(
                        "residents", to: "Person", toMany: true, inverse: "address", deleteRule: .deny)
                ]),
            EntityDescription(
                "Animal", abstract: true,
                attributes: [AttributeDescription("name", .string), AttributeDescription("legs", .integer32)]),
            EntityDescription(
                "Pet", parent: "Animal",
                attributes: [AttributeDescription("species", .string)],
                relationships: [RelationshipDescription("owner", to: "Person", inverse: "pets")]),
            EntityDescription(
                "Project",
                attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("members", to: "Person", toMany: true, inverse: "projects")]),
        ])
    }

    /// One directory for this test process's stores; directories that earlier runs left behind
    /// (their process is gone) are removed the first time it is asked for.
    static let root: URL = {
        let fm = FileManager.default
        let tmp = fm.temporaryDirectory
        let pid = ProcessInfo.processInfo.processIdentifier
        for name in (try? fm.contentsOfDirectory(atPath: tmp.path)) ?? [] where name.hasPrefix("sift-store-tests-") {
            guard let other = Int32(name.dropFirst("sift-store-tests-".count)), other != pid, kill(other, 0) != 0 else {
                continue
            }
            try? fm.removeItem(at: tmp.appendingPathComponent(name))
        }
        let dir = tmp.appendingPathComponent("sift-store-tests-\(pid)")
        try? fm.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// Item (name, price) ←→ Owner (name); `itemsRule` is the owner's delete rule for its items,
    /// and `more` are further entities (the merge, parent-context, undo and history suites use it).
    package static func itemsModel(itemsRule: DeleteRule = .nullify, more: [EntityDescription] = []) throws
        -> ManagedObjectModel
    {
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Item",
                    attributes: [AttributeDescription("name", .string), AttributeDescription("price", .integer64)],
                    relationships: [RelationshipDescription("owner", to: "Owner", inverse: "items")]),
                EntityDescription(
                    "Owner", attributes: [AttributeDescription("name", .string)],
                    relationships: [
                        RelationshipDescription(
                            "items", to: "Item", toMany: true, inverse: "owner", deleteRule: itemsRule)
                    ]),
            ] + more)
    }

    /// An owner and `n` items named "i0"… that it owns, inserted in `c` (not saved).
    package static func ownedItems(_ c: ManagedObjectContext, _ n: Int) throws -> (ManagedObject, [ManagedObject]) {
        let owner = try c.insert("Owner")
        let items = try (0..<n).map { i in
            let o = try c.insert("Item")
            try o.setValue("i\(i)", forKey: "name")
            try o.setValue(owner, forKey: "owner")
            return o
        }
        return (owner, items)
    }

    /// A fresh path in a fresh directory under `root`.
    package static func temporaryPath(_ name: String = "store.sqlite") -> String {
        let dir = root.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }
}

/// What a context's observer heard (observers are `@Sendable`: they may be called on any thread).
package final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [ContextNotification] = []
    package init() {}
    package func append(_ n: ContextNotification) { lock.withLock { notes.append(n) } }
    package var all: [ContextNotification] { lock.withLock { notes } }
    /// The change set of the last did-save heard.
    package var didSave: ChangeSet? {
        all.compactMap { if case .didSave(let c) = $0 { c } else { nil } }.last
    }
    /// The objects-did-change change sets heard.
    package var changes: [ChangeSet] { all.compactMap { if case .objectsDidChange(let c) = $0 { c } else { nil } } }
}
