// Core Data's SQLite stores (issue 31). The fixture store is written here as raw SQL from the
// documented format (../shared/reference/coredata-formats.md §2), never copied from a file: a
// Car/SportsCar hierarchy, Person with an ordered to-many of cars and a to-one into the Car
// hierarchy (its `Z1_FAVORITE` companion), a Club ⇄ Person many-to-many, a UUID blob, a date,
// a decimal, and metadata with a key of the application's. Keys repeat across hierarchies
// (Person 1, Car 1, Club 1), as each root issues its own. The tests open it, compare fetches
// with memory's evaluation of the same objects, save, and read every column back with raw SQL.

import Foundation
import SiftSQL
import SiftSQLite
import Testing

@testable import SiftStore

@Suite struct CoreDataStoreTests {
    /// Car (make, year, price) ← SportsCar (topSpeed); Person (name, born, token) —cars→ Car
    /// (ordered, inverse owner), —favorite→ Car (no inverse); Club.members ⇄ Person.clubs.
    static func model(carAttributes more: [AttributeDescription] = []) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Person",
                attributes: [
                    AttributeDescription("name", .string), AttributeDescription("born", .date),
                    AttributeDescription("token", .uuid),
                ],
                relationships: [
                    RelationshipDescription("cars", to: "Car", toMany: true, ordered: true, inverse: "owner"),
                    RelationshipDescription("favorite", to: "Car"),
                    RelationshipDescription("clubs", to: "Club", toMany: true, inverse: "members"),
                ]),
            EntityDescription(
                "Car",
                attributes: [
                    AttributeDescription("make", .string), AttributeDescription("year", .integer32),
                    AttributeDescription("price", .decimal),
                ] + more,
                relationships: [RelationshipDescription("owner", to: "Person", inverse: "cars")]),
            EntityDescription("SportsCar", parent: "Car", attributes: [AttributeDescription("topSpeed", .double)]),
            EntityDescription(
                "Club", attributes: [AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("members", to: "Person", toMany: true, inverse: "clubs")]),
        ])
    }

    static let token = "00112233-4455-6677-8899-AABBCCDDEEFF"

    /// The fixture's SQL: Core Data's layout of `model()` (entity numbers Car 1, SportsCar 2,
    /// Club 3, Person 4) and its rows.
    static let fixtureSQL = """
        CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
        CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
        CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZYEAR INTEGER, ZOWNER INTEGER,
            Z_FOK_OWNER INTEGER, ZPRICE DECIMAL, ZTOPSPEED FLOAT, ZMAKE VARCHAR );
        CREATE TABLE ZCLUB ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR );
        CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFAVORITE INTEGER,
            Z1_FAVORITE INTEGER, ZBORN TIMESTAMP, ZNAME VARCHAR, ZTOKEN BLOB );
        CREATE TABLE Z_3MEMBERS ( Z_3CLUBS INTEGER, Z_4MEMBERS INTEGER, PRIMARY KEY (Z_3CLUBS, Z_4MEMBERS) );
        CREATE INDEX Z_3MEMBERS_Z_4MEMBERS_INDEX ON Z_3MEMBERS (Z_4MEMBERS, Z_3CLUBS);
        CREATE INDEX ZCAR_ZOWNER_INDEX ON ZCAR (ZOWNER);
        CREATE INDEX ZCAR_Z_ENT_INDEX ON ZCAR (Z_ENT);
        CREATE INDEX ZPERSON_ZFAVORITE_INDEX ON ZPERSON (ZFAVORITE);
        INSERT INTO Z_PRIMARYKEY VALUES (1, 'Car', 0, 3), (2, 'SportsCar', 1, 0), (3, 'Club', 0, 1), (4, 'Person', 0, 2);
        INSERT INTO ZPERSON VALUES (1, 4, 1, 3, 2, 100.5, 'Ann', X'00112233445566778899AABBCCDDEEFF'),
            (2, 4, 3, NULL, NULL, -2000.0, 'Bob', NULL);
        INSERT INTO ZCAR VALUES (1, 1, 1, 1999, 1, 1, 1500.5, NULL, 'VW'), (2, 1, 2, 2005, 1, 2, 900, NULL, 'Fiat'),
            (3, 2, 1, 2010, 2, 1, 250000, 320.0, 'Ferrari');
        INSERT INTO ZCLUB VALUES (1, 3, 1, 'Chess');
        INSERT INTO Z_3MEMBERS VALUES (1, 1), (1, 2);
        """

    /// A new fixture store at a temporary path (in WAL mode, with its metadata row).
    static func fixture() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-\(UUID()).sqlite")
        let db = try SQLiteConnection(path: url.path)
        _ = try db.query("PRAGMA journal_mode=WAL")
        try db.execute(fixtureSQL)
        let plist: [String: Any] = [
            "NSStoreType": "SQLite", "NSStoreUUID": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "NSStoreModelVersionHashes": [
                "Car": Data(repeating: 1, count: 32), "Person": Data(repeating: 2, count: 32),
            ],
            "NSStoreModelVersionHashesVersion": 3, "MyAppKey": "kept",
        ]
        let bytes = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        _ = try db.query(
            "INSERT INTO Z_METADATA VALUES (1, '6F9619FF-8B86-D011-B42D-00C04FC964FF', ?)", [.blob([UInt8](bytes))])
        return url
    }

    static func open(_ url: URL) throws -> (PersistentStore, ManagedObjectContext) {
        let store = try PersistentStore(coreDataStoreAt: url, model: try model())
        return (store, ManagedObjectContext(store: store))
    }

    static func strings(_ objects: [ManagedObject], _ key: String) throws -> [String] {
        try objects.map { try $0.get(key, as: String.self) ?? "nil" }
    }

    @Test func countsEqualPlainSQLCounts() throws {
        let url = try Self.fixture()
        let (store, c) = try Self.open(url)
        #expect(store.identifier == "6F9619FF-8B86-D011-B42D-00C04FC964FF")
        #expect(try c.count(for: FetchRequest("Car")) == 3)
        #expect(try c.count(for: FetchRequest("SportsCar")) == 1)
        #expect(try c.count(for: FetchRequest("Person")) == 2)
        #expect(try c.count(for: FetchRequest("Club")) == 1)
        let db = try SQLiteConnection(path: url.path)
        #expect(try db.query("SELECT COUNT(*) FROM ZCAR") == [[.integer(3)]])
        #expect(try db.query("SELECT COUNT(*) FROM ZCAR WHERE Z_ENT = 2") == [[.integer(1)]])
    }

    @Test func valuesAndRelationshipsReadAsCoreDataWroteThem() throws {
        let (_, c) = try Self.open(try Self.fixture())
        let ann = try #require(try c.fetch(FetchRequest("Person", predicate: "name == 'Ann'")).first)
        #expect(ann.objectID.primaryKey == 1)
        #expect(try ann.get("token", as: UUID.self) == UUID(uuidString: Self.token))
        #expect(try ann.get("born", as: Date.self) == Date(timeIntervalSinceReferenceDate: 100.5))
        // The ordered to-many follows Z_FOK_OWNER; the to-one into the hierarchy is a SportsCar.
        #expect(
            try Self.strings(try #require(try ann.get("cars", as: [ManagedObject].self)), "make") == ["VW", "Fiat"])
        // The to-one's fault is of the entity its row names in Z1_FAVORITE before it is read.
        let link = try #require(try ann.get("favorite", as: ManagedObject.self))
        #expect(link.objectID.entityName == "SportsCar")
        let favorite = try c.existingObject(with: link.objectID)
        #expect(favorite.objectID.entityName == "SportsCar")
        #expect(try favorite.get("topSpeed", as: Double.self) == 320)
        let club = try #require(try c.fetch(FetchRequest("Club")).first)
        let members = try #require(try club.get("members", as: [ManagedObject].self))
        #expect(try Set(Self.strings(members, "name")) == ["Ann", "Bob"])
        let vw = try #require(try c.fetch(FetchRequest("Car", predicate: "make == 'VW'")).first)
        #expect(try vw.get("price", as: Decimal.self) == Decimal(string: "1500.5"))
        #expect(try vw.get("owner", as: ManagedObject.self) === ann)
    }

    @Test func predicatesSelectWhatMemorySelects() throws {
        let (_, c) = try Self.open(try Self.fixture())
        let cases: [(String, String)] = [
            ("Car", "year > 2000"), ("Car", "owner.name == 'Ann'"), ("Car", "price < 1000 OR make BEGINSWITH 'F'"),
            ("SportsCar", "topSpeed > 300"), ("Person", "ANY cars.year < 2000"), ("Person", "cars.@count == 1"),
            ("Person", "SUBQUERY(clubs, $c, $c.title == 'Chess').@count > 0"), ("Person", "favorite.make == 'Ferrari'"),
            ("Person", "born < %@"), ("Club", "ANY members.name == 'Bob'"),
        ]
        for (entity, format) in cases {
            let args: [Any?] = format.contains("%@") ? [Date(timeIntervalSinceReferenceDate: 0)] : []
            let predicate = try SiftPredicate(format: format, arguments: args)
            let everything = try c.fetch(FetchRequest(entity))
            let inMemory = try everything.filter { try predicate.evaluate(with: $0) }.map(\.objectID)
            let inSQL = try c.fetch(FetchRequest(entity, predicate: predicate)).map(\.objectID)
            #expect(Set(inSQL) == Set(inMemory), "\(entity): \(format)")
            #expect(!inMemory.isEmpty || format == "cars.@count == 1", "\(entity): \(format) selects nothing")
        }
    }

    static let tokenBytes: SQLValue = .blob([
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
    ])

    @Test func aSaveWritesWhatCoreDataReads() throws {
        let url = try Self.fixture()
        do {
            let (_, c) = try Self.open(url)
            let vw = try #require(try c.fetch(FetchRequest("Car", predicate: "make == 'VW'")).first)
            let fiat = try #require(try c.fetch(FetchRequest("Car", predicate: "make == 'Fiat'")).first)
            let club = try #require(try c.fetch(FetchRequest("Club")).first)
            let cy = try c.insert("Person")
            try cy.setValue("Cy", forKey: "name")
            try cy.setValue(Self.token, forKey: "token")
            try cy.setValue(Date(timeIntervalSinceReferenceDate: 42.25), forKey: "born")
            try cy.setValue(vw, forKey: "favorite")
            try club.add(cy, to: "members")
            try vw.setValue(2001, forKey: "year")
            try c.delete(fiat)
            try c.save()
            // Person's counter was at 2; Car 1 and Club 1 share the key without a clash.
            #expect(cy.objectID.primaryKey == 3)
        }
        let db = try SQLiteConnection(path: url.path)
        #expect(
            try db.query(
                "SELECT Z_PK, Z_ENT, ZNAME, ZBORN, ZTOKEN, ZFAVORITE, Z1_FAVORITE FROM ZPERSON WHERE ZNAME = 'Cy'")
                == [[.integer(3), .integer(4), .text("Cy"), .double(42.25), Self.tokenBytes, .integer(1), .integer(1)]])
        #expect(
            try db.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
                == [
                    [.integer(1), .integer(3)], [.integer(2), .integer(0)], [.integer(3), .integer(1)],
                    [.integer(4), .integer(3)],
                ])
        // The updated row's version is raised; the deleted row is gone, and with it Ann's link.
        #expect(
            try db.query("SELECT Z_OPT, ZYEAR, ZOWNER FROM ZCAR WHERE Z_PK = 1") == [
                [.integer(2), .integer(2001), .integer(1)]
            ])
        #expect(try db.query("SELECT COUNT(*) FROM ZCAR WHERE Z_PK = 2") == [[.integer(0)]])
        #expect(
            try db.query("SELECT Z_3CLUBS, Z_4MEMBERS FROM Z_3MEMBERS ORDER BY Z_4MEMBERS")
                == [[.integer(1), .integer(1)], [.integer(1), .integer(2)], [.integer(1), .integer(3)]])
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
        // Opened again: the values read back, and the metadata kept the application's key.
        let (store, c) = try Self.open(url)
        let cy = try #require(try c.fetch(FetchRequest("Person", predicate: "name == 'Cy'")).first)
        #expect(try cy.get("token", as: UUID.self) == UUID(uuidString: Self.token))
        #expect(try cy.get("favorite", as: ManagedObject.self)?.get("make", as: String.self) == "VW")
        let ann = try #require(try c.fetch(FetchRequest("Person", predicate: "name == 'Ann'")).first)
        #expect(try Self.strings(try #require(try ann.get("cars", as: [ManagedObject].self)), "make") == ["VW"])
        #expect(try store.coreDataMetadata()["MyAppKey"] as? String == "kept")
    }

    @Test func writingMetadataKeepsEveryOtherKey() throws {
        let (store, _) = try Self.open(try Self.fixture())
        try store.setCoreDataMetadata(["Imported": 7, "MyAppKey": nil])
        let metadata = try store.coreDataMetadata()
        #expect((metadata["Imported"] as? NSNumber)?.intValue == 7)
        #expect(metadata["MyAppKey"] == nil)
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        let hashes = metadata["NSStoreModelVersionHashes"] as? [String: any Sendable]
        #expect(hashes?["Car"] as? Data == Data(repeating: 1, count: 32))
        #expect(hashes?["Person"] as? Data == Data(repeating: 2, count: 32))
    }

    /// `name type` of every column of `table`, by name.
    static func columns(_ db: SQLiteConnection, _ table: String) throws -> [String] {
        try db.query("SELECT name, type FROM pragma_table_info(?) ORDER BY name", [.text(table)]).map { row in
            guard case .text(let n) = row[0], case .text(let t) = row[1] else { return "?" }
            return "\(n) \(t)"
        }
    }

    @Test func createLaysOutTheDocumentedSchema() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-new-\(UUID()).sqlite")
        let store = try PersistentStore(coreDataStoreAt: url, model: try Self.model(), create: true)
        let db = try SQLiteConnection(path: url.path)
        let keys = ["Z_ENT INTEGER", "Z_OPT INTEGER", "Z_PK INTEGER"]
        #expect(
            try Self.columns(db, "ZCAR")
                == ["ZMAKE VARCHAR", "ZOWNER INTEGER", "ZPRICE DECIMAL", "ZTOPSPEED FLOAT", "ZYEAR INTEGER"]
                + keys.prefix(1)
                + ["Z_FOK_OWNER INTEGER"] + keys.dropFirst())
        #expect(
            try Self.columns(db, "ZPERSON")
                == ["Z1_FAVORITE INTEGER", "ZBORN TIMESTAMP", "ZFAVORITE INTEGER", "ZNAME VARCHAR", "ZTOKEN BLOB"]
                + keys)
        #expect(try Self.columns(db, "ZCLUB") == ["ZTITLE VARCHAR"] + keys)
        #expect(try Self.columns(db, "Z_3MEMBERS") == ["Z_3CLUBS INTEGER", "Z_4MEMBERS INTEGER"])
        #expect(
            try Self.columns(db, "Z_PRIMARYKEY") == [
                "Z_ENT INTEGER", "Z_MAX INTEGER", "Z_NAME VARCHAR", "Z_SUPER INTEGER",
            ])
        #expect(try Self.columns(db, "Z_METADATA") == ["Z_PLIST BLOB", "Z_UUID VARCHAR(255)", "Z_VERSION INTEGER"])
        #expect(
            try db.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                [.integer(1), .text("Car"), .integer(0), .integer(0)],
                [.integer(2), .text("SportsCar"), .integer(1), .integer(0)],
                [.integer(3), .text("Club"), .integer(0), .integer(0)],
                [.integer(4), .text("Person"), .integer(0), .integer(0)],
            ])
        #expect(
            try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") == [
                [.text("ZCAR_ZOWNER_INDEX")], [.text("ZCAR_Z_ENT_INDEX")], [.text("ZPERSON_ZFAVORITE_INDEX")],
                [.text("Z_3MEMBERS_Z_4MEMBERS_INDEX")],
            ])
        #expect(try db.query("SELECT Z_UUID FROM Z_METADATA") == [[.text(store.identifier)]])
        let metadata = try store.coreDataMetadata()
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        #expect(metadata["NSStoreUUID"] as? String == store.identifier)
        // The fixture written by hand from the documented format has the same tables and columns.
        let fixture = try SQLiteConnection(path: try Self.fixture().path)
        for table in ["ZCAR", "ZPERSON", "ZCLUB", "Z_3MEMBERS", "Z_PRIMARYKEY", "Z_METADATA"] {
            #expect(try Self.columns(fixture, table) == Self.columns(db, table), "\(table)")
        }
        // A second create refuses the existing file; opening it finds the model's schema.
        #expect(throws: StoreError.self) {
            try PersistentStore(coreDataStoreAt: url, model: try Self.model(), create: true)
        }
        let (_, c) = try Self.open(url)
        let car = try c.insert("SportsCar")
        try car.setValue("Lotus", forKey: "make")
        try c.save()
        #expect(car.objectID.primaryKey == 1)
        #expect(try db.query("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == [[.integer(1), .integer(1)]])
    }

    @Test func aStoreOfAnotherModelIsAMismatchNamingTheDifference() throws {
        let url = try Self.fixture()
        let other = try Self.model(carAttributes: [AttributeDescription("color", .string)])
        do {
            _ = try PersistentStore(coreDataStoreAt: url, model: other)
            Issue.record("a store without ZCOLOR opened")
        } catch {
            #expect(error.kind == .modelMismatch)
            #expect(error.message.contains("table ZCAR has no column ZCOLOR"))
        }
    }

    @Test func batchRequestsWriteTheCoreDataLayout() throws {
        let url = try Self.fixture()
        let (_, c) = try Self.open(url)
        var update = BatchUpdateRequest("Car", predicate: try SiftPredicate(format: "year < 2008", arguments: []))
        update.propertiesToUpdate = ["year": .constant(.integer(2020))]
        _ = try c.execute(update)
        _ = try c.execute(BatchDeleteRequest("Club"))
        let db = try SQLiteConnection(path: url.path)
        #expect(
            try db.query("SELECT Z_PK, ZYEAR FROM ZCAR ORDER BY Z_PK") == [
                [.integer(1), .integer(2020)], [.integer(2), .integer(2020)], [.integer(3), .integer(2010)],
            ])
        // The club's rows in the join table go with it; the people stay.
        #expect(try db.query("SELECT COUNT(*) FROM ZCLUB") == [[.integer(0)]])
        #expect(try db.query("SELECT COUNT(*) FROM Z_3MEMBERS") == [[.integer(0)]])
        #expect(try c.count(for: FetchRequest("Person")) == 2)
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test func rowsThatSitInTheWALFileAreRead() throws {
        let url = try Self.fixture()
        // A writer that keeps its connection open leaves its commit in the -wal file only.
        let writer = try SQLiteConnection(path: url.path)
        _ = try writer.query("PRAGMA wal_autocheckpoint = 0")
        try writer.execute(
            "INSERT INTO ZCLUB VALUES (2, 3, 1, 'Go'); UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_ENT = 3")
        let wal = try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int ?? 0
        #expect(wal > 0)
        let (_, c) = try Self.open(url)
        #expect(try Self.strings(try c.fetch(FetchRequest("Club", predicate: "title == 'Go'")), "title") == ["Go"])
        withExtendedLifetime(writer) {}
    }
}
