// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftStore's DocC catalog, each copied verbatim from its article and run,
// with the results its comments state asserted; one test checks that every sample block of the
// catalog still appears in this file, so an article cannot drift from the code it shows. (The
// command-line article's samples are shell commands, which the CLI tests cover.)

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation
import SiftStore

@Suite struct DocumentationSampleTests {
    @Test func persistenceSamplesAreTested() throws { try expectArticleSamplesTested("Persistence.md", of: "SiftStore") }

    @Test func persistence() throws {
        let path = Fixtures.temporaryPath("company.sqlite")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Employee",
                attributes: [AttributeDescription("name", .string, optional: false),
                             AttributeDescription("salary", .double, minValue: 0),
                             AttributeDescription("email", .string, regularExpression: "[^@ ]+@[^@ ]+")],
                relationships: [RelationshipDescription("team", to: "Team", inverse: "members")],
                uniquenessConstraints: [["email"]]),
            EntityDescription("Team",
                attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("members", to: "Employee", toMany: true,
                                                        inverse: "team", deleteRule: .cascade)]),
        ])
        let store = try PersistentStore(model: model, path: path)
        let context = ManagedObjectContext(store: store)

        let rnd = try context.insert("Team")
        try rnd.setValue("R&D", forKey: "name")
        let ann = try context.insert("Employee")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(5200.0, forKey: "salary")
        try ann.setValue(rnd, forKey: "team")           // rnd's "members" now holds ann
        try context.save()                               // validated, then one transaction

        var request = try FetchRequest("Employee", predicate: "team.name ==[c] %@ AND salary > %@", "r&d", 5000)
        request.sortDescriptors = [try SiftSortDescriptor("name", options: .caseInsensitive)]
        let people = try context.fetch(request)          // [ann]
        let salary = try people[0].get("salary", as: Double.self)   // 5200.0

        var raise = try BatchUpdateRequest("Employee", predicate: "team.name == 'R&D'")
        raise.propertiesToUpdate = ["salary": .expression("salary * 1.1")]
        let result = try context.execute(raise)          // result.count == 1, no objects loaded
        try context.mergeChanges(from: result)           // ann's salary is now 5720.0

        #expect(try rnd.get("members", as: [ManagedObject].self) == [ann])
        #expect(people == [ann])
        #expect(salary == 5200.0)
        #expect(result.count == 1)
        #expect(try ann.get("salary", as: Double.self) == 5200.0 * 1.1)
        // The saved state is in the file: a second store on the same path fetches the same row.
        let reopened = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        #expect(try reopened.count(for: FetchRequest("Employee", predicate: "salary > 5700")) == 1)
    }
}
