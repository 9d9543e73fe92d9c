// swift-format-ignore-file
// (Its documentation samples are checked line for line against the article, so it keeps their layout.)
// The Swift sample of the CoreDataStores article, copied verbatim and run on a model bundle and a
// Core Data store written here (the store laid out by `create: true`, its rows by the test), with
// its result checked in the file with raw SQL; one test checks that every sample block of the
// article still appears in this file.

import Foundation
import SiftSQL
import SiftSQLite
import SiftTestSupport
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct CoreDataStoresDocTests {
    @Test func coreDataStoresSamplesAreTested() throws { try expectArticleSamplesTested("CoreDataStores.md", of: "SiftStore") }

    @Test func theArticleSampleRuns() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let directory = folder.root
        try folder.bundle("Garage", ["Garage": xcodeContents("""
                <entity name="Car" representedClassName="Car" syncable="YES">
                    <attribute name="year" optional="YES" attributeType="Integer 32" defaultValueString="0"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                </entity>
                <entity name="Person" representedClassName="Person" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
            """)])
        do {
            let bundle = try ManagedObjectModel(contentsOf: directory.appendingPathComponent("Garage.xcdatamodeld"))
            let made = try PersistentStore(coreDataStoreAt: directory.appendingPathComponent("Garage.sqlite"), model: bundle, create: true)
            let c = ManagedObjectContext(store: made)
            let ann = try c.insert("Person")
            try ann.setValue("Ann", forKey: "name")
            let car = try c.insert("Car")
            try car.setValue(2005, forKey: "year")
            try car.setValue(ann, forKey: "owner")
            try c.save()
        }

        let model = try ManagedObjectModel(contentsOf: directory.appendingPathComponent("Garage.xcdatamodeld"))
        let store = try PersistentStore(coreDataStoreAt: directory.appendingPathComponent("Garage.sqlite"), model: model)
        let context = ManagedObjectContext(store: store)
        let recent = try context.fetch(FetchRequest("Car", predicate: "year > 2000 AND owner.name == 'Ann'"))
        try recent.first?.setValue(2001, forKey: "year")
        try context.save()

        #expect(recent.count == 1)
        let db = try SQLiteConnection(path: directory.appendingPathComponent("Garage.sqlite").path)
        #expect(try db.query("SELECT Z_PK, Z_ENT, Z_OPT, ZYEAR, ZOWNER FROM ZCAR") == [[.integer(1), .integer(1), .integer(2), .integer(2001), .integer(1)]])
        #expect(try db.query("SELECT Z_PK, Z_ENT, ZNAME FROM ZPERSON") == [[.integer(1), .integer(2), .text("Ann")]])
    }

    @Test func theMatchingVersionSampleRuns() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let person = #"<entity name="Person" representedClassName="Person" syncable="YES"><attribute name="name" optional="YES" attributeType="String"/></entity>"#
        let email = #"<attribute name="email" optional="YES" attributeType="String"/>"#
        let bundle = try folder.bundle("People", [
            "People": xcodeContents(person),
            "People 2": xcodeContents(person.replacingOccurrences(of: "</entity>", with: email + "</entity>")),
        ], current: "People 2")
        let storeURL = folder.root.appendingPathComponent("People.sqlite")
        _ = try PersistentStore(coreDataStoreAt: storeURL, model: try ManagedObjectModel(contentsOf: bundle, version: "People"), create: true)

        let matching = try ManagedObjectModel(contentsOf: bundle, matchingCoreDataStoreAt: storeURL)
        let opened = try PersistentStore(coreDataStoreAt: storeURL, model: matching)

        // The first version (no email) is the store's, though the bundle's current one is the second.
        #expect(matching.entity(named: "Person")?.attributes.map(\.name) == ["name"])
        #expect(try ManagedObjectContext(store: opened).count(for: FetchRequest("Person")) == 0)
        // A bundle of the second version only names its difference.
        let newer = try folder.bundle("Newer", ["Newer": xcodeContents(person.replacingOccurrences(of: "</entity>", with: email + "</entity>"))])
        do {
            _ = try ManagedObjectModel(contentsOf: newer, matchingCoreDataStoreAt: storeURL)
            Issue.record("a version with another schema matched")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.failures.map(\.message) == ["version 'Newer' does not match the store: table ZPERSON has no column ZEMAIL"])
        }
    }

    @Test func theVersionHashesSampleRuns() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let momdURL = folder.root.appendingPathComponent("Garage.momd")
        try FileManager.default.createDirectory(at: momdURL, withIntermediateDirectories: true)
        let hash = Data(repeating: 7, count: 32)
        let info: [String: Any] = ["NSManagedObjectModel_CurrentVersionName": "Garage", "NSManagedObjectModel_VersionHashes": ["Garage": ["Car": hash]]]
        try PropertyListSerialization.data(fromPropertyList: info, format: .binary, options: 0).write(to: momdURL.appendingPathComponent("VersionInfo.plist"))
        let model = try ManagedObjectModel(entities: [EntityDescription("Car", attributes: [AttributeDescription("year", .integer32)])])
        let storeURL = folder.root.appendingPathComponent("Garage.sqlite")

        let store = try PersistentStore(coreDataStoreAt: storeURL, model: model, create: true)
        try store.setVersionHashes(from: try CoreDataVersionInfo(contentsOf: momdURL))

        #expect(try store.coreDataMetadata()["NSStoreModelVersionHashes"] as? [String: Data] == ["Car": hash])
    }
}
