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

    @Test func thePlanSampleRuns() throws {
        let path = Fixtures.temporaryPath()
        let start = try ManagedObjectModel(json: Data(#"{"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "email", "type": "string"}]}]}"#.utf8))
        do {
            let c = ManagedObjectContext(store: try PersistentStore(model: start, path: path))
            let bo = try c.insert("Person")
            try bo.setValue("Bo Day", forKey: "name")
            try c.save()
        }

        let v1 = try ManagedObjectModel(json: Data("""
            {"version": "1", "entities": [{"name": "Person", "attributes": [
                {"name": "name", "type": "string"},
                {"name": "email", "type": "string"}]}]}
            """.utf8))
        let v2 = try ManagedObjectModel(json: Data("""
            {"version": "2", "entities": [{"name": "Person", "attributes": [
                {"name": "fullName", "type": "string", "renamingIdentifier": "name"},
                {"name": "email", "type": "string", "optional": false}]}]}
            """.utf8))
        let v3 = try ManagedObjectModel(json: Data("""
            {"version": "3", "entities": [{"name": "Person", "attributes": [
                {"name": "displayName", "type": "string", "renamingIdentifier": "fullName"},
                {"name": "email", "type": "string", "optional": false},
                {"name": "first", "type": "string"},
                {"name": "last", "type": "string"}]}]}
            """.utf8))
        let plan = try MigrationPlan(from: v1, [
            .custom(v2, willMigrate: { context in
                for person in try context.fetch(FetchRequest("Person", predicate: "email == nil")) {
                    try person.setValue("unknown", forKey: "email")
                }
            }),
            .custom(v3, didMigrate: { context in
                for person in try context.fetch(FetchRequest("Person")) {
                    let parts = (try person.get("displayName", as: String.self) ?? "").split(separator: " ")
                    try person.setValue(parts.first.map(String.init), forKey: "first")
                    try person.setValue(parts.dropFirst().joined(separator: " "), forKey: "last")
                }
            }),
        ])
        let store = try PersistentStore(model: v3, path: path, migration: .plan(plan))
        let bo = try ManagedObjectContext(store: store).fetch(FetchRequest("Person"))[0]
        print(try bo.get("last", as: String.self)!)    // Day
        print(try bo.get("email", as: String.self)!)   // unknown
        #expect(try bo.get("last", as: String.self) == "Day")
        #expect(try bo.get("first", as: String.self) == "Bo")
        #expect(try bo.get("displayName", as: String.self) == "Bo Day")
        #expect(try bo.get("email", as: String.self) == "unknown")
        #expect(try PersistentStore(path: path).model.version == "3")
    }

    @Test func theCoreDataSampleRuns() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let directory = folder.root
        let carXML = #"<entity name="Car" syncable="YES"><attribute name="make" optional="YES" attributeType="String"/></entity>"#
        let bundleURL = try folder.bundle("Garage", [
            "Garage": xcodeContents(carXML),
            "Garage 2": xcodeContents(carXML.replacingOccurrences(of: #"name="make""#, with: #"name="brand" elementID="make""#)),
        ], current: "Garage 2")
        do {
            let made = try PersistentStore(coreDataStoreAt: directory.appendingPathComponent("Garage.sqlite"), model: try ManagedObjectModel(contentsOf: bundleURL, version: "Garage"), create: true)
            let c = ManagedObjectContext(store: made)
            try c.insert("Car").setValue("VW", forKey: "make")
            try c.save()
        }

        let plan = try MigrationPlan(versionsOf: directory.appendingPathComponent("Garage.xcdatamodeld"))
        let garage = try PersistentStore(
            coreDataStoreAt: directory.appendingPathComponent("Garage.sqlite"), model: plan.versions.last!,
            migration: .plan(plan))
        let car = try ManagedObjectContext(store: garage).fetch(FetchRequest("Car"))[0]
        print(try car.get("brand", as: String.self)!)   // VW, its make in version 1

        #expect(try car.get("brand", as: String.self) == "VW")
        #expect(plan.versions.map(\.version) == ["Garage", "Garage 2"])
    }
}
