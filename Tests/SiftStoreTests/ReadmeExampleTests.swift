// The README's persistence example, as written there (only the file path differs), with its
// comments turned into assertions, so the example keeps compiling and stays true.

import Foundation
import Testing
import SiftEvaluation
import SiftStore

@Suite struct ReadmeExampleTests {
    @Test func persistenceExample() throws {
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
        try ann.setValue(rnd, forKey: "team")
        #expect(try rnd.get("members", as: [ManagedObject].self) == [ann])
        try context.save()

        var request = try FetchRequest("Employee", predicate: "team.name ==[c] %@ AND salary > %@", "r&d", 5000)
        request.sortDescriptors = [try SiftSortDescriptor("name", options: .caseInsensitive)]
        let people = try context.fetch(request)
        #expect(people == [ann])
        #expect(try people[0].get("salary", as: Double.self) == 5200.0)

        var raise = try BatchUpdateRequest("Employee", predicate: "team.name == 'R&D'")
        raise.propertiesToUpdate = ["salary": .expression("salary * 1.1")]
        let result = try context.execute(raise)
        #expect(result.count == 1)
        try context.mergeChanges(from: result)
        #expect(try ann.get("salary", as: Double.self) == 5200.0 * 1.1)
    }
}
