// What Core Data's layout asks of each row beyond its values (issue 31): a new row's version
// (`Z_OPT`) is 1 and each write raises it; the entity number beside a to-one into a hierarchy
// (`Z<n>_<REL>`) follows its key, a batch delete's nullify included; a to-one's fault is of the
// entity that column names; and a batch update writes typed columns (UUID bytes, URI text, dates
// since 2001, decimals as REAL) exactly as a save does. Stores are laid out by `create: true` and
// read back with raw SQL.

import Foundation
import SiftSQL
import SiftSQLite
import SiftSyntax
import Testing

@testable import SiftStore

@Suite struct CoreDataStoreRowTests {
    /// Driver —vehicle→ Vehicle (to-one into the Vehicle ← Truck hierarchy, inverse drivers);
    /// entity numbers Driver 1, Vehicle 2, Truck 3, so the driver's row has `Z2_VEHICLE`.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Vehicle",
                attributes: [
                    AttributeDescription("plate", .string), AttributeDescription("vin", .uuid),
                    AttributeDescription("manual", .uri), AttributeDescription("bought", .date),
                    AttributeDescription("price", .decimal), AttributeDescription("electric", .boolean),
                ],
                relationships: [RelationshipDescription("drivers", to: "Driver", toMany: true, inverse: "vehicle")]),
            EntityDescription("Truck", parent: "Vehicle", attributes: [AttributeDescription("load", .double)]),
            EntityDescription(
                "Driver", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("vehicle", to: "Vehicle", inverse: "drivers")]),
        ])
    }

    static func newStore() throws -> (URL, ManagedObjectContext) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-rows-\(UUID()).sqlite")
        let store = try PersistentStore(coreDataStoreAt: url, model: try model(), create: true)
        return (url, ManagedObjectContext(store: store))
    }

    @Test func aNewRowIsVersionOneAndEachWriteRaisesIt() throws {
        let (url, c) = try Self.newStore()
        let db = try SQLiteConnection(path: url.path)
        let truck = try c.insert("Truck")
        try truck.setValue("T-1", forKey: "plate")
        try c.save()
        let version = "SELECT Z_OPT FROM ZVEHICLE WHERE ZPLATE LIKE 'T-%'"
        #expect(try db.query(version) == [[.integer(1)]])
        // The context's own version is the stored one: its next save meets no conflict.
        try truck.setValue("T-2", forKey: "plate")
        try c.save()
        #expect(try db.query(version) == [[.integer(2)]])
        var update = BatchUpdateRequest("Vehicle")
        update.propertiesToUpdate = ["plate": .constant(.string("T-3"))]
        _ = try c.execute(update)
        #expect(try db.query(version) == [[.integer(3)]])
        // A row read from the store after the batch is written from its version 3.
        let other = ManagedObjectContext(store: c.store)
        let read = try #require(try other.fetch(FetchRequest("Truck")).first)
        try read.setValue("T-4", forKey: "plate")
        try other.save()
        #expect(try db.query(version) == [[.integer(4)]])
    }

    @Test func aBatchDeleteThatNullifiesAToOneClearsItsEntityColumn() throws {
        let (url, c) = try Self.newStore()
        let truck = try c.insert("Truck")
        let ann = try c.insert("Driver")
        try ann.setValue("Ann", forKey: "name")
        try ann.setValue(truck, forKey: "vehicle")
        try c.save()
        let db = try SQLiteConnection(path: url.path)
        let link = "SELECT ZVEHICLE, Z2_VEHICLE FROM ZDRIVER"
        #expect(try db.query(link) == [[.integer(1), .integer(3)]])
        let result = try c.execute(BatchDeleteRequest("Truck"))
        #expect(result.nullified == [ann.objectID])
        #expect(try db.query(link) == [[.null, .null]])
        #expect(try db.query("SELECT Z_OPT FROM ZDRIVER") == [[.integer(2)]])
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    @Test func aToOnesFaultIsOfTheEntityItsRowNames() throws {
        let (_, c) = try Self.newStore()
        let truck = try c.insert("Truck")
        try truck.setValue(12.5, forKey: "load")
        let ann = try c.insert("Driver")
        try ann.setValue(truck, forKey: "vehicle")
        try c.save()
        let fresh = ManagedObjectContext(store: c.store)
        let driver = try #require(try fresh.fetch(FetchRequest("Driver")).first)
        let vehicle = try #require(try driver.get("vehicle", as: ManagedObject.self))
        // Not read yet, and already a Truck: its ID equals the one a fetch of trucks gives.
        #expect(vehicle.isFault)
        #expect(vehicle.objectID.entityName == "Truck")
        #expect(vehicle.objectID == truck.objectID)
        #expect(try vehicle.get("load", as: Double.self) == 12.5)
        // The fixture written by hand: Ann's favorite is a SportsCar (Z1_FAVORITE = 2).
        let (_, cars) = try CoreDataStoreTests.open(try CoreDataStoreTests.fixture())
        let person = try #require(try cars.fetch(FetchRequest("Person", predicate: "name == 'Ann'")).first)
        let favorite = try #require(try person.get("favorite", as: ManagedObject.self))
        #expect(favorite.isFault)
        #expect(favorite.objectID.entityName == "SportsCar")
    }

    @Test func aBatchUpdateWritesTypedColumnsAsASaveDoes() throws {
        let (url, c) = try Self.newStore()
        let values: [String: LiteralValue] = [
            "vin": .string("00112233-4455-6677-8899-AABBCCDDEEFF"), "manual": .string("https://example.com/m.pdf"),
            "bought": .date(Date(timeIntervalSinceReferenceDate: 1234.5)), "price": .decimal(Decimal(string: "19.99")!),
            "electric": .bool(true), "plate": .string("P"),
        ]
        let saved = try c.insert("Vehicle")
        let batched = try c.insert("Vehicle")
        let swiftValues: [String: Any] = [
            "vin": UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!,
            "manual": URL(string: "https://example.com/m.pdf")!, "bought": Date(timeIntervalSinceReferenceDate: 1234.5),
            "price": Decimal(string: "19.99")!, "electric": true, "plate": "P",
        ]
        for (key, v) in swiftValues { try saved.setValue(v, forKey: key) }
        try c.save()
        var update = BatchUpdateRequest(
            "Vehicle", predicate: try SiftPredicate(format: "plate == nil", arguments: []))
        update.propertiesToUpdate = values.mapValues { .constant($0) }
        #expect(try c.execute(update).objectIDs == [batched.objectID])
        let db = try SQLiteConnection(path: url.path)
        let columns = "ZVIN, ZMANUAL, ZBOUGHT, ZPRICE, ZELECTRIC, ZPLATE"
        let rows = try db.query("SELECT \(columns) FROM ZVEHICLE ORDER BY Z_PK")
        #expect(rows.count == 2)
        #expect(rows.first == rows.last)
        #expect(
            rows.first?.first
                == .blob([
                    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
                ]))
        let row = try #require(rows.first)
        #expect(
            [row[1], row[2], row[4], row[5]] == [
                .text("https://example.com/m.pdf"), .double(1234.5), .integer(1), .text("P"),
            ])
        // A decimal is a REAL (Core Data keeps no exact decimal), within a REAL's precision.
        guard case .double(let price) = row[3] else { throw CancellationError() }
        #expect(abs(price - 19.99) < 1e-9)
        // Both read back as the values given.
        let other = ManagedObjectContext(store: c.store)
        for o in try other.fetch(FetchRequest("Vehicle")) {
            #expect(try o.get("vin", as: UUID.self) == UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
            #expect(try o.get("manual", as: URL.self) == URL(string: "https://example.com/m.pdf"))
        }
    }
}
