// Models and stores shared by the store's tests: a small company model (people, addresses, pets,
// projects, tags; an abstract parent entity) and a temporary file for each SQLite store.

import Foundation

@testable import SiftStore

#if canImport(Glibc)
    import Glibc
#endif

enum Fixtures {
    /// Person —address→ Address (to-one, inverse residents), Person —pets→ Pet (to-many, cascade),
    /// Person ⇄ Project (many-to-many), Animal (abstract) ← Pet, Person.nicknames (collection).
    static func companyModel() throws -> ManagedObjectModel {
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

    /// A fresh path in a fresh directory under `root`.
    static func temporaryPath(_ name: String = "store.sqlite") -> String {
        let dir = root.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }
}
