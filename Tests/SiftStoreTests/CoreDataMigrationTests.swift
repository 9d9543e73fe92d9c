// Migrations of stores laid out as Core Data lays them out (issue 32): an `.xcdatamodeld` bundle of
// three versions, written here from the documented XML, and a store laid out for version 1 by
// `PersistentStore(coreDataStoreAt:model:create: true)` with objects of every relationship kind
// (ordered to-many, to-one into a hierarchy with its `Z<n>_` companion, one-to-one, many-to-many).
// Version 2 adds Badge (first in alphabetical order: every entity is renumbered), renames Club to
// Society, Car.make to brand and Person.clubs to societies through `elementID`, removes
// Person.nickname and makes Person.passport to-many; version 3 adds the sub-entity Truck (Car's
// hierarchy renumbered again) and Person.email. After each migration every object's values and
// links equal the prediction made from the store before it, and the schema equals what a new store
// of the version lays out; the metadata keeps the UUID and the application's keys.

import Foundation
import SiftSQL
import SiftSQLite
import SiftStoreTestSupport
import Testing

@testable import SiftStore

@Suite struct CoreDataMigrationTests {
    static let version1 = xcodeContents(
        """
            <entity name="Car" syncable="YES">
                <attribute name="make" optional="YES" attributeType="String"/>
                <attribute name="year" optional="YES" attributeType="Integer 32"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
            </entity>
            <entity name="SportsCar" parentEntity="Car" syncable="YES">
                <attribute name="topSpeed" optional="YES" attributeType="Double"/>
            </entity>
            <entity name="Club" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="members" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="clubs" inverseEntity="Person"/>
            </entity>
            <entity name="Passport" syncable="YES">
                <attribute name="number" optional="YES" attributeType="String"/>
                <relationship name="holder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="passport" inverseEntity="Person"/>
            </entity>
            <entity name="Person" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String" indexed="YES"/>
                <attribute name="nickname" optional="YES" attributeType="String"/>
                <attribute name="born" optional="YES" attributeType="Date"/>
                <relationship name="cars" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                <relationship name="favorite" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Car"/>
                <relationship name="clubs" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Club" inverseName="members" inverseEntity="Club"/>
                <relationship name="passport" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Passport" inverseName="holder" inverseEntity="Passport"/>
            </entity>
        """)

    /// Version 1 with Badge added, Club renamed Society, Car.make brand and Person.clubs societies
    /// (each through `elementID`), Person.nickname removed and Person.passport made to-many.
    static let version2 = edited(
        withBadge(version1),
        [
            (#"<attribute name="make" "#, #"<attribute name="brand" elementID="make" "#),
            (#"<entity name="Club" "#, #"<entity name="Society" elementID="Club" "#),
            (#"inverseName="clubs" inverseEntity="Person""#, #"inverseName="societies" inverseEntity="Person""#),
            (#"<attribute name="nickname" optional="YES" attributeType="String"/>"#, ""),
            (
                #"<relationship name="clubs" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Club" inverseName="members" inverseEntity="Club"/>"#,
                #"<relationship name="societies" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Society" inverseName="members" inverseEntity="Society" elementID="clubs"/>"#
            ),
            (
                #"<relationship name="passport" optional="YES" maxCount="1""#,
                #"<relationship name="passport" optional="YES" toMany="YES""#
            ),
        ])

    /// `text` with each (old, new) replaced; each old must occur exactly once.
    static func edited(_ text: String, _ edits: [(String, String)]) -> String {
        edits.reduce(text) { text, edit in
            precondition(text.components(separatedBy: edit.0).count == 2, "\(edit.0) does not occur once")
            return text.replacingOccurrences(of: edit.0, with: edit.1)
        }
    }

    /// Version 2 and the sub-entity Truck of Car, and Person.email.
    static let version3 = version2.replacingOccurrences(
        of: "<entity name=\"Society\"",
        with: """
            <entity name="Truck" parentEntity="Car" syncable="YES">
                <attribute name="load" optional="YES" attributeType="Integer 32"/>
            </entity>
            <entity name="Society"
            """
    ).replacingOccurrences(
        of: "<attribute name=\"born\"",
        with: "<attribute name=\"email\" optional=\"YES\" attributeType=\"String\"/>\n<attribute name=\"born\"")

    struct Fixture {
        let folder: XcodeModelFolder
        let bundle: URL
        let store: URL
        let uuid: String
    }

    /// A bundle of versions 1…`versions` (the last current) and a version-1 store with objects of
    /// every relationship kind, a model cache table and metadata keys of the application's.
    static func fixture(versions: Int = 3) throws -> Fixture {
        let folder = try XcodeModelFolder()
        let all = ["Garage": version1, "Garage 2": version2, "Garage 3": version3]
        let names = ["Garage", "Garage 2", "Garage 3"].prefix(versions)
        let bundle = try folder.bundle(
            "Garage", all.filter { names.contains($0.key) }, current: names.last!)
        let url = folder.root.appendingPathComponent("Garage.sqlite")
        let store = try PersistentStore(
            coreDataStoreAt: url, model: try ManagedObjectModel(contentsOf: bundle, version: "Garage"), create: true)
        let c = ManagedObjectContext(store: store)
        var people: [ManagedObject] = []
        for (name, nick) in [("Ann", "A"), ("Bob", nil), ("Cy", "C")] {
            let p = try c.insert("Person")
            try p.setValue(name, forKey: "name")
            try p.setValue(nick, forKey: "nickname")
            try p.setValue(Date(timeIntervalSinceReferenceDate: Double(name.count) * 1000.5), forKey: "born")
            people.append(p)
        }
        var cars: [ManagedObject] = []
        for (entity, make, year, owner) in [
            ("Car", "VW", 1999, 0), ("Car", "Fiat", 2005, 0), ("SportsCar", "Ferrari", 2010, 1),
            ("Car", "Saab", 1990, 0),
        ] {
            let car = try c.insert(entity)
            try car.setValue(make, forKey: "make")
            try car.setValue(year, forKey: "year")
            if entity == "SportsCar" { try car.setValue(320.5, forKey: "topSpeed") }
            try people[owner].add(car, to: "cars")
            cars.append(car)
        }
        try people[0].setValue(cars[2], forKey: "favorite")
        try people[2].setValue(cars[0], forKey: "favorite")
        for (title, members) in [("Chess", [0, 1]), ("Go", [1, 2]), ("Empty", [])] {
            let club = try c.insert("Club")
            try club.setValue(title, forKey: "title")
            for m in members { try club.add(people[m], to: "members") }
        }
        for (number, holder) in [("P1", 0), ("P2", 2)] {
            let passport = try c.insert("Passport")
            try passport.setValue(number, forKey: "number")
            try passport.setValue(people[holder], forKey: "holder")
        }
        try c.save()
        try store.setCoreDataMetadata([
            "MyAppKey": "kept", "NSPersistenceFrameworkVersion": 1338,
            "NSStoreModelVersionHashes": ["Car": Data(repeating: 7, count: 32)],
            "NSStoreModelVersionHashesDigest": "stale",
        ])
        let db = try SQLiteConnection(path: url.path)
        try db.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB); INSERT INTO Z_MODELCACHE VALUES (X'00');")
        return Fixture(folder: folder, bundle: bundle, store: url, uuid: store.identifier)
    }

    /// Every object of the store: `Entity#key` → property → its value in words (links as
    /// `Entity#key`, a to-many's sorted unless ordered).
    static func snapshot(_ store: PersistentStore) throws -> [String: [String: String]] {
        let c = ManagedObjectContext(store: store)
        func id(_ o: ManagedObject) -> String { "\(o.objectID.entityName)#\(o.objectID.primaryKey!)" }
        func words(_ v: Value) -> String {
            switch v {
            case .object(let o as ManagedObject): id(o)
            case .set(let items): "[" + items.map(words).sorted().joined(separator: ",") + "]"
            case .array(let items): "(" + items.map(words).joined(separator: ",") + ")"
            default: "\(v)"
            }
        }
        var out: [String: [String: String]] = [:]
        for e in store.model.entities {
            for o in try c.fetch(FetchRequest(e.name)) where o.objectID.entityName == e.name {
                let r = store.model.resolved[e.name]!
                var values: [String: String] = [:]
                for key in r.attributes.map(\.name) + r.relationships.map(\.name) {
                    values[key] = words(try o.value(forKey: key))
                }
                out[id(o)] = values
            }
        }
        return out
    }

    /// The prediction of version 2 from a version-1 snapshot: Club is Society, make is brand, clubs
    /// is societies, nickname is gone, passport is a set.
    static func predictVersion2(_ before: [String: [String: String]]) -> [String: [String: String]] {
        var out: [String: [String: String]] = [:]
        for (key, values) in before {
            var v = values.mapValues { $0.replacingOccurrences(of: "Club#", with: "Society#") }
            if let make = v.removeValue(forKey: "make") { v["brand"] = make }
            if let clubs = v.removeValue(forKey: "clubs") { v["societies"] = clubs }
            v["nickname"] = nil
            if key.hasPrefix("Person#") { v["passport"] = v["passport"] == "nil" ? "[]" : "[\(v["passport"]!)]" }
            out[key.replacingOccurrences(of: "Club#", with: "Society#")] = v
        }
        return out
    }

    /// Version 3 adds Person.email (nil).
    static func predictVersion3(_ before: [String: [String: String]]) -> [String: [String: String]] {
        predictVersion2(before).mapValues { v in
            var v = v
            if v["born"] != nil { v["email"] = "nil" }
            return v
        }
    }

    /// Each object whose words differ between `got` and `want`, for a failure's message.
    static func differences(_ got: [String: [String: String]], _ want: [String: [String: String]]) -> String {
        Set(got.keys).union(want.keys).sorted().filter { got[$0] != want[$0] }.map {
            "\($0): got \(got[$0]?.sorted { $0.key < $1.key } ?? []) want \(want[$0]?.sorted { $0.key < $1.key } ?? [])"
        }.joined(separator: "\n")
    }

    /// The schema of the store at `url`: every table with its columns and their declared types
    /// (in name order: a migration puts the columns it adds last), every index's SQL, and
    /// `Z_PRIMARYKEY`'s entities.
    static func schema(_ url: URL) throws -> [[SQLValue]] {
        let db = try SQLiteConnection(path: url.path)
        return try db.query(
            "SELECT m.name, c.name, c.type, c.pk FROM sqlite_master AS m, pragma_table_info(m.name) AS c WHERE m.type = 'table' ORDER BY m.name, c.name"
        )
            + db.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type != 'table' ORDER BY type, name")
            + db.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
    }

    /// The columns of `table` in their order.
    static func columns(_ url: URL, _ table: String) throws -> [String] {
        try SQLiteConnection(path: url.path).query("SELECT name FROM pragma_table_info(?)", [.text(table)]).map {
            if case .text(let name) = $0[0] { name } else { "?" }
        }
    }

    /// The schema a new store of `version` of the bundle has.
    static func newSchema(_ f: Fixture, _ version: String) throws -> [[SQLValue]] {
        let url = f.folder.root.appendingPathComponent("new-\(UUID()).sqlite")
        _ = try PersistentStore(
            coreDataStoreAt: url, model: try ManagedObjectModel(contentsOf: f.bundle, version: version), create: true)
        return try schema(url)
    }

    static func open(_ f: Fixture, version: String) throws -> PersistentStore {
        try PersistentStore(
            coreDataStoreAt: f.store, model: try ManagedObjectModel(contentsOf: f.bundle, version: version))
    }

    @Test func fromVersion1ToEachLaterVersionEveryObjectIsAsPredicted() throws {
        for (last, predict) in [(2, Self.predictVersion2), (3, Self.predictVersion3)] {
            let f = try Self.fixture(versions: last)
            defer { f.folder.remove() }
            let before = try Self.snapshot(try Self.open(f, version: "Garage"))
            #expect(before.count == 12)
            let carColumns = try Self.columns(f.store, "ZCAR")
            let plan = try MigrationPlan(versionsOf: f.bundle)
            #expect(plan.versions.map(\.version) == ["Garage", "Garage 2", "Garage 3"].prefix(last).map { $0 })
            let store = try PersistentStore(
                coreDataStoreAt: f.store, model: plan.versions.last!, migration: .plan(plan))
            #expect(store.identifier == f.uuid)
            let after = try Self.snapshot(store)
            #expect(after == predict(before), "\(Self.differences(after, predict(before)))")
            #expect(try Self.schema(f.store) == Self.newSchema(f, "Garage \(last)"))
            // The columns kept stay in their places; the added ones (ZBRAND, and ZLOAD in 3) come last.
            let now = try Self.columns(f.store, "ZCAR")
            let kept = carColumns.filter(now.contains)
            #expect(Array(now.prefix(kept.count)) == kept && kept.count == carColumns.count - 1)
            #expect(Set(now.dropFirst(kept.count)) == (last == 2 ? ["ZBRAND"] : ["ZBRAND", "ZLOAD"]))
            #expect(try SQLiteConnection(path: f.store.path).query("PRAGMA integrity_check") == [[.text("ok")]])
        }
    }

    @Test func fromVersion2ToVersion3AndOpeningAgainChangesNothing() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let before = try Self.snapshot(try Self.open(f, version: "Garage"))
        let plan = try MigrationPlan(versionsOf: f.bundle)
        let v2 = try PersistentStore.migrate(
            coreDataStoreAt: f.store, plan: try MigrationPlan(from: plan.versions[0], [.inferred(plan.versions[1])]),
            dryRun: false)
        #expect(v2.changes.contains("entity 'Club' was renamed 'Society'"))
        #expect(try Self.snapshot(try Self.open(f, version: "Garage 2")) == Self.predictVersion2(before))
        let v3 = try PersistentStore.migrate(coreDataStoreAt: f.store, plan: plan, dryRun: false)
        #expect(v3.changes.contains("entity 'Truck' was added"))
        #expect(!v3.changes.contains("entity 'Club' was renamed 'Society'"))
        #expect(try Self.snapshot(try Self.open(f, version: "Garage 3")) == Self.predictVersion3(before))
        #expect(try Self.schema(f.store) == Self.newSchema(f, "Garage 3"))
        #expect(try PersistentStore.migrate(coreDataStoreAt: f.store, plan: plan, dryRun: false).steps.isEmpty)
    }

    @Test func keysCountersCompanionsAndMetadataFollowTheNewNumbers() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let plan = try MigrationPlan(versionsOf: f.bundle)
        let store = try PersistentStore(coreDataStoreAt: f.store, model: plan.versions.last!, migration: .plan(plan))
        let db = try SQLiteConnection(path: f.store.path)
        // Badge 1, Car 2, SportsCar 3, Truck 4, Passport 5, Person 6, Society 7.
        #expect(
            try db.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                [.integer(1), .text("Badge"), .integer(0), .integer(0)],
                [.integer(2), .text("Car"), .integer(0), .integer(4)],
                [.integer(3), .text("SportsCar"), .integer(2), .integer(0)],
                [.integer(4), .text("Truck"), .integer(2), .integer(0)],
                [.integer(5), .text("Passport"), .integer(0), .integer(2)],
                [.integer(6), .text("Person"), .integer(0), .integer(3)],
                [.integer(7), .text("Society"), .integer(0), .integer(3)],
            ])
        // Ann's favorite is the Ferrari (a SportsCar, now 3), Cy's the VW (a Car, now 2).
        #expect(
            try db.query("SELECT ZNAME, ZFAVORITE, Z2_FAVORITE FROM ZPERSON ORDER BY Z_PK") == [
                [.text("Ann"), .integer(3), .integer(3)], [.text("Bob"), .null, .null],
                [.text("Cy"), .integer(1), .integer(2)],
            ])
        #expect(try db.query("SELECT DISTINCT Z_ENT FROM ZCAR ORDER BY Z_ENT") == [[.integer(2)], [.integer(3)]])
        #expect(try db.query("SELECT COUNT(*) FROM Z_6SOCIETIES") == [[.integer(4)]])
        #expect(try db.query("SELECT name FROM sqlite_master WHERE name = 'Z_MODELCACHE'").isEmpty)
        // A new car takes the key after the last one its hierarchy issued.
        let c = ManagedObjectContext(store: store)
        let truck = try c.insert("Truck")
        try truck.setValue("MAN", forKey: "brand")
        try c.save()
        #expect(truck.objectID.primaryKey == 5)
        let meta = try store.coreDataMetadata()
        #expect(meta["MyAppKey"] as? String == "kept")
        #expect((meta["NSPersistenceFrameworkVersion"] as? NSNumber)?.intValue == 1338)
        #expect(meta["NSStoreUUID"] as? String == f.uuid)
        #expect((meta["NSStoreModelVersionHashes"] as? [String: any Sendable])?.isEmpty == true)
        #expect(meta["NSStoreModelVersionHashesDigest"] == nil)
        #expect(try db.query("SELECT Z_UUID FROM Z_METADATA") == [[.text(f.uuid)]])
    }

    @Test func aDryRunReportsTheStepsAndChangesNothing() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let before = try Self.schema(f.store)
        let report = try PersistentStore.migrate(
            coreDataStoreAt: f.store, plan: try MigrationPlan(versionsOf: f.bundle), dryRun: true)
        #expect(report.steps.contains { $0.summary == "write the destinations' entity numbers of Person.favorite" })
        #expect(try Self.schema(f.store) == before)
        #expect(try Self.open(f, version: "Garage").identifier == f.uuid)
    }

    @Test func aStoreAtNoVersionOrWithoutAPlanIsRefusedUntouched() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let latest = try ManagedObjectModel(contentsOf: f.bundle)
        #expect {
            try PersistentStore(coreDataStoreAt: f.store, model: latest, migration: .inferred)
        } throws: { error in
            guard let e = error as? StoreError else { return false }
            return e.kind == .modelMismatch && e.message.contains("MigrationPlan(versionsOf:")
        }
        let other = try f.folder.bundle(
            "Other", ["Other": Self.version2, "Other 2": Self.version3], current: "Other 2")
        let plan = try MigrationPlan(versionsOf: other)
        #expect {
            try PersistentStore(coreDataStoreAt: f.store, model: plan.versions.last!, migration: .plan(plan))
        } throws: { error in
            guard let e = error as? StoreError, e.kind == .modelMismatch else { return false }
            return e.failures.count == 2 && e.failures[0].message.hasPrefix("version 'Other' does not match")
        }
        #expect(try Self.schema(f.store).count > 0)
        #expect(try Self.open(f, version: "Garage").identifier == f.uuid)
    }

    @Test func mergingTwoHierarchiesIsRefused() throws {
        let f = try Self.fixture(versions: 1)
        defer { f.folder.remove() }
        // Club and Passport both become sub-entities of a new root Thing.
        let merged = Self.version1.replacingOccurrences(
            of: "<entity name=\"Club\"", with: "<entity name=\"Club\" parentEntity=\"Thing\""
        )
        .replacingOccurrences(
            of: "<entity name=\"Passport\"",
            with: "<entity name=\"Thing\" syncable=\"YES\"/>\n<entity name=\"Passport\" parentEntity=\"Thing\"")
        let bundle = try f.folder.bundle("Merged", ["Merged": Self.version1, "Merged 2": merged], current: "Merged 2")
        let plan = try MigrationPlan(versionsOf: bundle)
        #expect {
            try PersistentStore(coreDataStoreAt: f.store, model: plan.versions.last!, migration: .plan(plan))
        } throws: { "\($0)".contains("merges the hierarchies of 'Club' and 'Passport'") }
        #expect(try Self.open(f, version: "Garage").identifier == f.uuid)
    }

    @Test func anEntityMovedUnderANewParentKeepsItsKeysAndLinks() throws {
        let f = try Self.fixture(versions: 1)
        defer { f.folder.remove() }
        let before = try Self.snapshot(try Self.open(f, version: "Garage"))
        // Passport moves into a new hierarchy under Document: Car 1, SportsCar 2, Club 3, Document 4, Passport 5, Person 6.
        let moved = Self.version1.replacingOccurrences(
            of: "<entity name=\"Passport\" syncable=\"YES\">",
            with: """
                <entity name="Document" syncable="YES"><attribute name="issued" optional="YES" attributeType="Date"/></entity>
                <entity name="Passport" parentEntity="Document" syncable="YES">
                """)
        let bundle = try f.folder.bundle("Moved", ["Moved": Self.version1, "Moved 2": moved], current: "Moved 2")
        let plan = try MigrationPlan(versionsOf: bundle)
        let store = try PersistentStore(coreDataStoreAt: f.store, model: plan.versions[1], migration: .plan(plan))
        var want = before
        for key in want.keys where key.hasPrefix("Passport#") { want[key]!["issued"] = "nil" }
        let after = try Self.snapshot(store)
        #expect(after == want, "\(Self.differences(after, want))")
        let db = try SQLiteConnection(path: f.store.path)
        #expect(
            try db.query("SELECT Z_PK, Z_ENT, ZNUMBER, ZHOLDER FROM ZDOCUMENT ORDER BY Z_PK") == [
                [.integer(1), .integer(5), .text("P1"), .integer(1)],
                [.integer(2), .integer(5), .text("P2"), .integer(3)],
            ])
        #expect(
            try db.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Document', 'Passport') ORDER BY Z_ENT") == [
                [.integer(2)], [.integer(0)],
            ])
        let newSchema = try Self.newSchema(
            Fixture(folder: f.folder, bundle: bundle, store: f.store, uuid: f.uuid), "Moved 2")
        #expect(try Self.schema(f.store) == newSchema)
    }

    @Test func aStepThatFailsLeavesTheStoreAsItWas() throws {
        let f = try Self.fixture(versions: 1)
        defer { f.folder.remove() }
        let before = try Self.snapshot(try Self.open(f, version: "Garage"))
        let schema = try Self.schema(f.store)
        // Club.members becomes to-one: Chess and Go have two members each.
        let toOne = Self.version1.replacingOccurrences(
            of: "<relationship name=\"members\" optional=\"YES\" toMany=\"YES\"",
            with: "<relationship name=\"members\" optional=\"YES\" maxCount=\"1\"")
        let bundle = try f.folder.bundle("One", ["One": Self.version1, "One 2": toOne], current: "One 2")
        let plan = try MigrationPlan(versionsOf: bundle)
        #expect {
            try PersistentStore(coreDataStoreAt: f.store, model: plan.versions[1], migration: .plan(plan))
        } throws: { error in
            guard let e = error as? StoreError, e.kind == .validation else { return false }
            return e.failures.count == 2
                && e.failures.allSatisfy { $0.message.contains("'members': holds several objects") }
        }
        #expect(try Self.schema(f.store) == schema)
        #expect(try Self.snapshot(try Self.open(f, version: "Garage")) == before)
        #expect(try SQLiteConnection(path: f.store.path).query("SELECT COUNT(*) FROM Z_MODELCACHE") == [[.integer(1)]])
    }

    @Test func customStagesRunOnACoreDataStore() throws {
        let f = try Self.fixture(versions: 2)
        defer { f.folder.remove() }
        let versions = try MigrationPlan(versionsOf: f.bundle).versions
        let plan = try MigrationPlan(
            from: versions[0],
            [
                .custom(
                    versions[1],
                    willMigrate: { context in
                        let saab = try context.fetch(FetchRequest("Car", predicate: "make == 'Saab'"))[0]
                        try saab.setValue("Saab 900", forKey: "make")
                    },
                    didMigrate: { context in try context.insert("Badge").setValue("gold", forKey: "label") })
            ])
        let store = try PersistentStore(coreDataStoreAt: f.store, model: versions[1], migration: .plan(plan))
        let c = ManagedObjectContext(store: store)
        #expect(try c.count(for: FetchRequest("Car", predicate: "brand == 'Saab 900'")) == 1)
        let badges = try c.fetch(FetchRequest("Badge"))
        #expect(try badges.map { try $0.get("label", as: String.self) } == ["gold"])
        #expect(badges.first?.objectID.primaryKey == 1)
        let db = try SQLiteConnection(path: f.store.path)
        #expect(
            try db.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Badge'") == [
                [.integer(1), .integer(1)]
            ])
        #expect(try db.query("SELECT Z_ENT, Z_OPT FROM ZBADGE") == [[.integer(1), .integer(1)]])
    }

    @Test func aBundlesVersionsAreInTheOrderOfTheirNamesUpToTheCurrentOne() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        func version(_ n: Int) -> String {
            xcodeContents(
                (1...n).map {
                    #"<entity name="E\#($0)"><attribute name="x" optional="YES" attributeType="String"/></entity>"#
                }
                .joined())
        }
        let bundle = try folder.bundle(
            "M", ["M": version(1), "M 2": version(2), "M 10": version(3), "M 9": version(4)], current: "M 9")
        #expect(try MigrationPlan(versionsOf: bundle).versions.map(\.version) == ["M", "M 2", "M 9"])
        let noCurrent = try folder.bundle("N", ["N": version(1), "N 10": version(2), "N 3": version(3)])
        #expect(try MigrationPlan(versionsOf: noCurrent).versions.map(\.version) == ["N", "N 3", "N 10"])
        let bare = try folder.bare("B", version(1))
        #expect {
            try MigrationPlan(versionsOf: bare)
        } throws: { ($0 as? StoreError)?.message.contains("is not an .xcdatamodeld bundle") == true }
    }

    /// Versions 1, 1 with Person.nickname required (default "none"), and 1 with Badge.
    static let sameSchemaVersions = [
        "C": version1,
        "C 2": edited(
            version1,
            [
                (
                    #"<attribute name="nickname" optional="YES" attributeType="String"/>"#,
                    #"<attribute name="nickname" attributeType="String" defaultValueString="none"/>"#
                )
            ]),
        "C 3": withBadge(version1),
    ]

    /// `text` with the entity Badge added.
    static func withBadge(_ text: String) -> String {
        edited(
            text,
            [
                (
                    #"<entity name="Car" syncable="YES">"#,
                    #"<entity name="Badge" syncable="YES"><attribute name="label" optional="YES" attributeType="String"/></entity>"#
                        + "\n" + #"<entity name="Car" syncable="YES">"#
                )
            ])
    }

    @Test func withoutSiftsKeyAStoreIsAtTheFirstOfConsecutiveVersionsWithItsSchema() throws {
        let f = try Self.fixture(versions: 1)
        defer { f.folder.remove() }
        try Self.open(f, version: "Garage").setCoreDataMetadata([CoreDataNames.siftVersionKey: nil])
        let bundle = try f.folder.bundle("C", Self.sameSchemaVersions, current: "C 3")
        let plan = try MigrationPlan(versionsOf: bundle)
        let store = try PersistentStore(coreDataStoreAt: f.store, model: plan.versions[2], migration: .plan(plan))
        // The step to C 2 ran: Bob's nil nickname has its default.
        let c = ManagedObjectContext(store: store)
        let bob = try #require(try c.fetch(FetchRequest("Person", predicate: "name == 'Bob'")).first)
        #expect(try bob.get("nickname", as: String.self) == "none")
        #expect(try store.coreDataMetadata()[CoreDataNames.siftVersionKey] as? String == plan.versions[2].versionHash)
    }

    @Test func versionsApartWithOneSchemaAreToldBySiftsKeyOrRefused() throws {
        // C; C 2 adds Badge; C 3 removes it and Person.name's index (C's schema again); C 4 adds
        // Badge again (C 2's schema) and makes Person.nickname required, default "none".
        let versions = [
            "C": Self.version1, "C 2": Self.withBadge(Self.version1),
            "C 3": Self.version1.replacingOccurrences(of: #" indexed="YES""#, with: ""),
            "C 4": Self.withBadge(Self.sameSchemaVersions["C 2"]!),
        ]
        for keep in [true, false] {
            let f = try Self.fixture(versions: 1)
            defer { f.folder.remove() }
            if !keep { try Self.open(f, version: "Garage").setCoreDataMetadata([CoreDataNames.siftVersionKey: nil]) }
            let bundle = try f.folder.bundle("C", versions, current: "C 4")
            let plan = try MigrationPlan(versionsOf: bundle)
            let open = {
                try PersistentStore(coreDataStoreAt: f.store, model: plan.versions[3], migration: .plan(plan))
            }
            if keep {
                let c = ManagedObjectContext(store: try open())
                #expect(try c.count(for: FetchRequest("Person", predicate: "nickname == 'none'")) == 1)
            } else {
                #expect {
                    _ = try open()
                } throws: { ($0 as? StoreError)?.message.contains("which are not consecutive") == true }
                #expect(try Self.open(f, version: "Garage").identifier == f.uuid)
            }
        }
    }
}
