// swift-format-ignore-file
// (Its documentation samples are checked line for line against the article, so it keeps their layout.)
// The Swift samples of the Migrations article, copied verbatim and run on a store file made here,
// with the results their comments state asserted after each; one test checks that every sample
// block of the article still appears in this file.

import Foundation
import SiftEvaluation
import SiftTestSupport
import Testing

@testable import SiftStore
import SiftStoreTestSupport

@Suite struct MigrationDocTests {
    @Test func migrationsSamplesAreTested() throws { try expectArticleSamplesTested("Migrations.md", of: "SiftStore") }

    @Test func theArticleSamplesRun() throws {
        let path = Fixtures.temporaryPath()

        let version1 = try ManagedObjectModel(json: Data("""
            {"entities": [{"name": "Person", "attributes": [
                {"name": "name", "type": "string"},
                {"name": "age", "type": "integer16"}]}]}
            """.utf8))
        let store = try PersistentStore(model: version1, path: path)
        let context = ManagedObjectContext(store: store)
        let ann = try context.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(31, forKey: "age")
        try context.save()

        let version2 = try ManagedObjectModel(json: Data("""
            {"entities": [{"name": "Person", "attributes": [
                {"name": "fullName", "type": "string", "renamingIdentifier": "name"},
                {"name": "age", "type": "integer64", "min": 0},
                {"name": "email", "type": "string", "optional": false, "default": "unknown"}]}]}
            """.utf8))
        let migrated = try PersistentStore(model: version2, path: path, migration: .inferred)
        let person = try ManagedObjectContext(store: migrated).fetch(FetchRequest("Person"))[0]
        print(try person.get("fullName", as: String.self)!)   // Ann
        print(try person.get("email", as: String.self)!)      // unknown
        #expect(try person.get("fullName", as: String.self) == "Ann")
        #expect(try person.get("email", as: String.self) == "unknown")
        #expect(try person.get("age", as: Int.self) == 31)
        #expect(person.objectID.primaryKey == ann.objectID.primaryKey)

        let version3 = try ManagedObjectModel(json: Data("""
            {"entities": [{"name": "Person", "attributes": [
                {"name": "fullName", "type": "string"},
                {"name": "age", "type": "date"},
                {"name": "email", "type": "string"}]}]}
            """.utf8))
        do {
            _ = try PersistentStore(model: version3, path: path, migration: .inferred)
        } catch {
            print(error.kind)          // modelMismatch
            print(error.failures[0])   // attribute 'Person.age' changed type from integer64 to date
        }
        do { _ = try PersistentStore(model: version3, path: path, migration: .inferred) } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.failures.map(\.description) == ["attribute 'Person.age' changed type from integer64 to date"])
        }
        withExtendedLifetime(store) {}
    }
}
