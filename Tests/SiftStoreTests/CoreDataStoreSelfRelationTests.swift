// A many-to-many relationship to its own entity under Core Data's layout (issue 31): Person.following
// ⇄ Person.followers keeps its pairs in one join table named by the side that sorts first
// (`Z_1FOLLOWERS`), each column named for the row it holds (`Z_1FOLLOWERS` the follower,
// `Z_1FOLLOWING` the one followed), as coredata-formats.md §2 describes the Club ⇄ Person
// fixture's; predicates through the store select what memory selects over the same objects.

import Foundation
import SiftSQL
import SiftSQLite
import Testing

@testable import SiftStore

@Suite struct CoreDataStoreSelfRelationTests {
    @Test func aManyToManyToItsOwnEntityRoundTrips() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Person", attributes: [AttributeDescription("name", .string)],
                relationships: [
                    RelationshipDescription("following", to: "Person", toMany: true, inverse: "followers"),
                    RelationshipDescription("followers", to: "Person", toMany: true, inverse: "following"),
                ])
        ])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-self-\(UUID()).sqlite")
        do {
            let c = ManagedObjectContext(
                store: try PersistentStore(coreDataStoreAt: url, model: model, create: true))
            var people: [ManagedObject] = []
            for name in ["Ann", "Bob", "Cy", "Di"] {
                let p = try c.insert("Person")
                try p.setValue(name, forKey: "name")
                people.append(p)
            }
            try people[0].add(people[1], to: "following")
            try people[0].add(people[2], to: "following")
            try people[1].add(people[2], to: "following")
            try c.save()
        }
        let db = try SQLiteConnection(path: url.path)
        #expect(
            try db.query("SELECT Z_1FOLLOWERS, Z_1FOLLOWING FROM Z_1FOLLOWERS ORDER BY 1, 2") == [
                [.integer(1), .integer(2)], [.integer(1), .integer(3)], [.integer(2), .integer(3)],
            ])
        let c = ManagedObjectContext(store: try PersistentStore(coreDataStoreAt: url, model: model))
        let everyone = try c.fetch(FetchRequest("Person"))
        for format in [
            "following.@count == 2", "ANY followers.name == 'Ann'", "followers.@count == 0",
            "SUBQUERY(following, $p, $p.name == 'Cy').@count > 0", "ANY following.name == 'Cy'",
        ] {
            let predicate = try SiftPredicate(format: format, arguments: [])
            let inMemory = try everyone.filter { try predicate.evaluate(with: $0) }.map(\.objectID)
            let inSQL = try c.fetch(FetchRequest("Person", predicate: predicate)).map(\.objectID)
            #expect(Set(inSQL) == Set(inMemory), "\(format)")
            #expect(!inMemory.isEmpty, "\(format) selects nothing")
        }
        let cy = try #require(try c.fetch(FetchRequest("Person", predicate: "name == 'Cy'")).first)
        let followers = try #require(try cy.get("followers", as: [ManagedObject].self))
        #expect(try Set(followers.map { try $0.get("name", as: String.self) }) == ["Ann", "Bob"])
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }
}
