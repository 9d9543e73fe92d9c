// `sift store info` on Core Data's stores and Sift's, and `sift store query/update/delete` on a
// Core Data store given `--model` (a bundle whose matching version is found, a bare .xcdatamodel,
// a model JSON file), run as a subprocess. The bundle's XML is written here and the store laid
// out by `PersistentStore(coreDataStoreAt:model:create: true)`, its rows saved through a
// context; every effect of a command is read back with plain SQL.

import Foundation
import SiftSQLite
import SiftStore
import SiftStoreTestSupport
import Testing

@Suite struct StoreCoreDataCLITests {
    static let version1 = xcodeContents(
        """
            <entity name="Car" representedClassName="Car" syncable="YES">
                <attribute name="make" optional="YES" attributeType="String"/>
                <attribute name="year" optional="YES" attributeType="Integer 32" defaultValueString="0"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
            </entity>
            <entity name="SportsCar" representedClassName="SportsCar" parentEntity="Car" syncable="YES">
                <attribute name="topSpeed" optional="YES" attributeType="Double" defaultValueString="0.0"/>
            </entity>
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
            </entity>
        """)
    /// Version 2 adds Car.color: its store has a ZCOLOR column that version 1's has not.
    static let version2 = version1.replacingOccurrences(
        of: "<attribute name=\"make\"",
        with: "<attribute name=\"color\" optional=\"YES\" attributeType=\"String\"/>\n<attribute name=\"make\"")

    /// A bundle of both versions (version 2 current) and a store of version 1 with two people and
    /// three cars (Ferrari a SportsCar), and two metadata keys of the application's.
    static func fixture() throws -> (folder: XcodeModelFolder, bundle: URL, store: URL, uuid: String) {
        let folder = try XcodeModelFolder()
        let bundle = try folder.bundle("Garage", ["Garage": version1, "Garage 2": version2], current: "Garage 2")
        let url = folder.root.appendingPathComponent("Garage.sqlite")
        let model = try ManagedObjectModel(contentsOf: bundle, version: "Garage")
        let store = try PersistentStore(coreDataStoreAt: url, model: model, create: true)
        let c = ManagedObjectContext(store: store)
        let ann = try c.insert("Person")
        try ann.setValue("Ann", forKey: "name")
        let bob = try c.insert("Person")
        try bob.setValue("Bob", forKey: "name")
        for (entity, make, year, owner) in [
            ("Car", "VW", 1999, ann), ("Car", "Fiat", 2005, ann), ("SportsCar", "Ferrari", 2010, bob),
        ] {
            let car = try c.insert(entity)
            try car.setValue(make, forKey: "make")
            try car.setValue(year, forKey: "year")
            try car.setValue(owner, forKey: "owner")
        }
        try c.save()
        try store.setCoreDataMetadata(["MyAppKey": "kept", "Thumbnail": Data([1, 2, 3])])
        return (folder, bundle, url, store.identifier)
    }

    @Test func infoDescribesACoreDataStoreWithOrWithoutItsModel() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let entities = """
            entities:
              Car: 2
              SportsCar: 1
              Person: 2
            metadata:
              MyAppKey: "kept"
              NSStoreModelVersionHashes: {}
              NSStoreModelVersionHashesVersion: 3
              NSStoreModelVersionIdentifiers: [""]
              NSStoreType: "SQLite"
              NSStoreUUID: "\(f.uuid)"
              SiftModelVersionHash: "\(try ManagedObjectModel(contentsOf: f.bundle, version: "Garage").versionHash)"
              Thumbnail: <3 bytes>
              _NSAutoVacuumLevel: "2"

            """
        let head = """
            type: Core Data
            uuid: \(f.uuid)
            model: entity numbers: Car 1, SportsCar 2 (parent Car), Person 3
            model: version hashes (NSStoreModelVersionHashes) of: none

            """
        let info = try runSift(["store", "info", f.store.path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout == head + entities)
        // The counts are plain SQL's.
        let db = try SQLiteConnection(path: f.store.path)
        #expect(
            try db.query("SELECT Z_ENT, COUNT(*) FROM ZCAR GROUP BY Z_ENT") == [
                [.integer(1), .integer(2)], [.integer(2), .integer(1)],
            ])
        // With the bundle: the version the store was written with is found, not the current one.
        let matched = try runSift(["store", "info", f.store.path, "--model", f.bundle.path])
        #expect(matched.status == 0, "\(matched.stderr)")
        #expect(matched.stdout == head + "matching model: \(f.bundle.path) (version 'Garage')\n" + entities)
    }

    @Test func infoDescribesASiftStore() throws {
        let folder = try XcodeModelFolder()
        defer { folder.remove() }
        let path = folder.root.appendingPathComponent("items.sqlite").path
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Item", attributes: [AttributeDescription("name", .string)]),
            EntityDescription("Tool", parent: "Item"),
        ])
        let store = try PersistentStore(model: model, path: path)
        let c = ManagedObjectContext(store: store)
        for entity in ["Item", "Tool", "Tool"] { _ = try c.insert(entity) }
        try c.save()
        let info = try runSift(["store", "info", path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(
            info.stdout == """
                type: Sift
                uuid: \(store.identifier)
                model: version hash \(model.versionHash)
                entities:
                  Item: 1
                  Tool: 2
                metadata:
                  format: "1"
                  model: <model JSON, \(model.jsonString.utf8.count) bytes>
                  store_uuid: "\(store.identifier)"
                  version_hash: "\(model.versionHash)"

                """)
    }

    @Test func queryUpdateAndDeleteWorkOnACoreDataStoreGivenItsModel() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let db = f.store.path
        func makes(_ output: String) throws -> [String] {
            try output.split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["make"] as? String ?? "?"
            }
        }
        let query = try runSift([
            "store", "query", db, "Car", "year > 2000", "--sort", "make", "--model", f.bundle.path,
        ])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(try makes(query.stdout) == ["Ferrari", "Fiat"])
        let owned = try runSift([
            "store", "query", db, "Car", "owner.name == 'Ann'", "--count", "--model", f.bundle.path,
        ])
        #expect(owned.stdout == "2\n", "\(owned.stderr)")
        // A bare .xcdatamodel (the version's folder) and a model JSON file do as well.
        let bare = f.bundle.appendingPathComponent("Garage.xcdatamodel").path
        let update = try runSift(["store", "update", db, "Car", "make == 'VW'", "--set", "year=2001", "--model", bare])
        #expect(update.status == 0 && update.stdout == "1\n", "\(update.stderr)")
        let sql = try SQLiteConnection(path: db)
        #expect(try sql.query("SELECT ZYEAR, Z_OPT FROM ZCAR WHERE ZMAKE = 'VW'") == [[.integer(2001), .integer(2)]])
        let json = f.folder.root.appendingPathComponent("garage.json")
        try Data(try ManagedObjectModel(contentsOf: f.bundle, version: "Garage").jsonString.utf8).write(to: json)
        let delete = try runSift(["store", "delete", db, "Person", "name == 'Bob'", "--model", json.path])
        #expect(delete.status == 0 && delete.stdout == "1\n", "\(delete.stderr)")
        // Bob's Ferrari stays, its owner cleared (nullify).
        #expect(try sql.query("SELECT ZNAME FROM ZPERSON") == [[.text("Ann")]])
        #expect(try sql.query("SELECT ZMAKE, ZOWNER FROM ZCAR WHERE Z_ENT = 2") == [[.text("Ferrari"), .null]])
        #expect(try sql.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    /// `watch` reads the model as `query` does, then says why it cannot follow a Core Data store.
    @Test func watchOnACoreDataStoreSaysItHasNoHistoryToFollow() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let run = try runSift(["store", "watch", f.store.path, "Car", "--sort", "make", "--model", f.bundle.path])
        #expect(run.status == 1 && run.stdout.isEmpty)
        #expect(run.stderr.contains("a Core Data store has no history Sift records"), "\(run.stderr)")
        #expect(!run.stderr.contains("--history"))
        // Without --model, the hint to give one, as for query.
        let noModel = try runSift(["store", "watch", f.store.path, "Car", "--sort", "make"])
        #expect(noModel.status == 1 && noModel.stderr.contains("--model"), "\(noModel.stderr)")
    }

    @Test func aStoreNoVersionOfWhichMatchesIsAnErrorNamingEachVersionsDifferences() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let other = try f.folder.bundle(
            "Other", ["A": Self.version2, "B": Self.version2.replacingOccurrences(of: "SportsCar", with: "RaceCar")])
        let run = try runSift(["store", "query", f.store.path, "Car", "--model", other.path])
        #expect(run.status == 1)
        #expect(
            run.stderr == """
                error: version 'A' does not match the store: table ZCAR has no column ZCOLOR
                error: version 'B' does not match the store: the store has no entity 'RaceCar'; the store has entity 'SportsCar', which the model has not; table ZCAR has no column ZCOLOR

                """)
        let noModel = try runSift(["store", "query", f.store.path, "Car"])
        #expect(noModel.status == 1)
        #expect(noModel.stderr.contains("is a Core Data store: give its model with --model"), "\(noModel.stderr)")
    }

    @Test func migrateMovesACoreDataStoreToItsBundlesCurrentVersion() throws {
        let f = try Self.fixture()
        defer { f.folder.remove() }
        let db = f.store.path
        let sql = try SQLiteConnection(path: db)
        let zcolor = "SELECT COUNT(*) FROM pragma_table_info('ZCAR') WHERE name = 'ZCOLOR'"
        let dry = try runSift(["store", "migrate", db, "--model", f.bundle.path, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("change: attribute 'Car.color' was added\n"), "\(dry.stdout)")
        #expect(dry.stdout.contains("\"ZCOLOR\" VARCHAR"))
        #expect(try sql.query(zcolor) == [[.integer(0)]])
        let run = try runSift(["store", "migrate", db, "--model", f.bundle.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "change: attribute 'Car.color' was added\n")
        #expect(try sql.query(zcolor) == [[.integer(1)]])
        #expect(
            try sql.query("SELECT Z_ENT, ZMAKE, ZCOLOR FROM ZCAR ORDER BY Z_PK") == [
                [.integer(1), .text("VW"), .null], [.integer(1), .text("Fiat"), .null],
                [.integer(2), .text("Ferrari"), .null],
            ])
        #expect(try sql.query("SELECT Z_UUID FROM Z_METADATA") == [[.text(f.uuid)]])
        let again = try runSift(["store", "migrate", db, "--model", f.bundle.path])
        #expect(again.stdout == "the store already has this model\n")
        let query = try runSift(["store", "query", db, "Car", "--model", f.bundle.path])
        #expect(query.status == 0 && query.stdout.contains("Ferrari"), "\(query.stderr)")
        let json = try runSift(["store", "migrate", db, "--model", f.bundle.path, "--model", f.bundle.path])
        #expect(json.status == 1)
        #expect(json.stderr.contains("give its model's versions as one --model MODEL.xcdatamodeld"), "\(json.stderr)")
    }
}
