// swift-format-ignore-file
// (Its documentation samples are checked line for line against the article, so it keeps their layout.)
// The Swift samples of the CoreDataModels article, copied verbatim and run on a model bundle
// written here, with the results their comments state asserted after each; one test checks that
// every sample block of the article still appears in this file.

import Foundation
import SiftEvaluation
import SiftTestSupport
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct CoreDataModelsDocTests {
    @Test func coreDataModelsSamplesAreTested() throws { try expectArticleSamplesTested("CoreDataModels.md", of: "SiftStore") }

    @Test func theArticleSamplesRun() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let directory = folder.root
        try folder.bundle("Library", ["Library": xcodeContents("""
                <entity name="Book" representedClassName="Book" syncable="YES">
                    <attribute name="title" optional="YES" attributeType="String" spotlightIndexingEnabled="YES"/>
                </entity>
                <fetchRequest name="byTitle" entity="Book" predicateString="title == $TITLE"/>
            """)])
        let brokenURL = try folder.bare("Broken", "<model>\n  <entity name=\"A\">\n    <attribute name=\"x\" attributeType=\"Colour\"/>\n  </entity>\n</model>\n")

        let url = directory.appendingPathComponent("Library.xcdatamodeld")
        let model = try ManagedObjectModel(contentsOf: url)
        for warning in model.warnings { print(warning) }   // what the model holds that Sift does not keep
        let store = try PersistentStore.inMemory(model: model)
        let context = ManagedObjectContext(store: store)
        let book = try context.insert("Book")
        try book.setValue("Dune", forKey: "title")
        try context.save()
        let request = try model.fetchRequestTemplate("byTitle", substitutionVariables: ["TITLE": "Dune"])
        print(try context.fetch(request).count)   // 1
        #expect(try context.fetch(request).count == 1)
        #expect(model.warnings.map(\.message) == ["the attribute spotlightIndexingEnabled=\"YES\" is not read by Sift; ignored"])

        do {
            _ = try ManagedObjectModel(contentsOf: brokenURL)
        } catch {
            print(error.failures[0])   // …/contents:3:25: error: A.x: attributeType "Colour" is not a type Sift knows
        }
        #expect(throws: ModelError.self) { _ = try ManagedObjectModel(contentsOf: brokenURL) }
        do { _ = try ManagedObjectModel(contentsOf: brokenURL) } catch {
            #expect(error.failures[0].description == brokenURL.path + "/contents:3:25: error: A.x: attributeType \"Colour\" is not a type Sift knows")
        }

        for template in model.fetchRequestTemplates {
            print(template.name, template.entityName, template.predicateFormat ?? "", template.variableNames)
        }   // byTitle Book title == $TITLE ["TITLE"]
        let t = try #require(model.fetchRequestTemplates.first)
        #expect(model.fetchRequestTemplates.count == 1)
        #expect(t.name == "byTitle" && t.entityName == "Book" && t.predicateFormat == "title == $TITLE" && t.variableNames == ["TITLE"])
    }
}
