// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The README's SiftStore example, as written there (`path` is a temporary file), with its comments
// turned into assertions; one test checks that the README's block still appears in this file, so
// the two cannot drift apart. The longer persistence example lives in the Persistence article and
// runs in DocumentationSampleTests.

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation
import SiftStore
import SiftStoreTestSupport

@Suite struct ReadmeExampleTests {
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftStore") }

    @Test func storeExample() throws {
        let path = Fixtures.temporaryPath("company.sqlite")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Employee", attributes: [AttributeDescription("name", .string, optional: false),
                                                       AttributeDescription("salary", .double, minValue: 0)]),
        ])
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))   // path: the file
        let ann = try context.insert("Employee")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(5200.0, forKey: "salary")
        try context.save()                                   // validated, then one transaction
        let paid = try context.fetch(FetchRequest("Employee", predicate: "salary > %@", 5000))   // [ann]

        #expect(paid == [ann])
        // The save reached the file: a second store on the same path finds the same row.
        let reopened = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        #expect(try reopened.count(for: FetchRequest("Employee", predicate: "salary > 5000")) == 1)
        // Validation runs at save: a negative salary is refused, and nothing is written.
        let bo = try context.insert("Employee")
        try bo.setValue("Bo", forKey: "name")
        try bo.setValue(-1.0, forKey: "salary")
        #expect(throws: (any Error).self) { try context.save() }
        #expect(try reopened.count(for: FetchRequest("Employee")) == 1)
    }
}
