// What a Core Data store holds that Sift keeps without reading it (issue 31): the bytes of a
// transformable attribute whose value transformer is not registered (the store opens, reading the
// value is an error naming the transformer, saving the object's other changes writes the bytes
// back unchanged), and persistent history's tables (ATRANSACTION, ACHANGE, ATRANSACTIONSTRING and
// their Z_PRIMARYKEY rows), which saves leave as they were. Fixture rows are written with raw SQL.

import Foundation
import SiftSQL
import SiftSQLite
import Testing

@testable import SiftStore

@Suite struct CoreDataStoreKeptTests {
    /// A transformer name no test registers.
    static let transformer = "SiftTestsNeverRegisteredTransformer"

    static func newStore(_ entities: [EntityDescription]) throws -> (URL, PersistentStore) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-kept-\(UUID()).sqlite")
        let model = try ManagedObjectModel(entities: entities)
        return (url, try PersistentStore(coreDataStoreAt: url, model: model, create: true))
    }

    @Test func bytesOfAnUnknownTransformerAreKeptThroughASave() throws {
        let entity = EntityDescription(
            "Swatch",
            attributes: [
                AttributeDescription("name", .string),
                AttributeDescription("color", .transformable, valueTransformerName: Self.transformer),
            ])
        let (url, store) = try Self.newStore([entity])
        let bytes: [UInt8] = [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0x00, 0xFF, 0x10]
        let db = try SQLiteConnection(path: url.path)
        _ = try db.query(
            "INSERT INTO ZSWATCH (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOLOR) VALUES (1, 1, 1, 'teal', ?)", [.blob(bytes)])
        _ = try db.query("UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 1")
        let c = ManagedObjectContext(store: store)
        let swatch = try #require(try c.fetch(FetchRequest("Swatch")).first)
        #expect(try swatch.get("name", as: String.self) == "teal")
        do {
            _ = try swatch.get("color", as: Data.self)
            Issue.record("a value of an unregistered transformer was read")
        } catch {
            #expect(error.kind == .model)
            #expect(error.message.contains("value transformer '\(Self.transformer)', which is not registered"))
        }
        // A predicate on it meets the same error; one on the other attributes works.
        #expect(throws: StoreError.self) { try c.fetch(FetchRequest("Swatch", predicate: "color != nil")) }
        try swatch.setValue("turquoise", forKey: "name")
        try c.save()
        #expect(
            try db.query("SELECT ZNAME, ZCOLOR, Z_OPT FROM ZSWATCH") == [
                [.text("turquoise"), .blob(bytes), .integer(2)]
            ])
        // A new object leaves it nil; setting it needs the transformer.
        let other = try c.insert("Swatch")
        #expect(throws: StoreError.self) { try other.setValue(Data([1]), forKey: "color") }
    }

    /// Core Data's persistent-history tables and their key rows, as a store with history has them.
    static let historySQL = """
        CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
        CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR INTEGER,
            ZCONTEXTNAME INTEGER, ZTIMESTAMP FLOAT );
        CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER,
            ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
        INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 1), (16002, 'TRANSACTION', 0, 1),
            (16003, 'TRANSACTIONSTRING', 0, 1);
        INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'app');
        INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 1, NULL, 700000000.5);
        INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 1, 1, 1, NULL);
        """

    /// Every row of the history tables and of their Z_PRIMARYKEY rows, in order.
    static func historyRows(_ db: SQLiteConnection) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        for table in CoreDataNames.historyTables { rows += try db.query("SELECT * FROM \(table) ORDER BY Z_PK") }
        return rows + (try db.query("SELECT * FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT"))
    }

    @Test func persistentHistoryTablesAreLeftAsTheyAre() throws {
        let (url, store) = try Self.newStore([
            EntityDescription("Note", attributes: [AttributeDescription("text", .string)])
        ])
        let db = try SQLiteConnection(path: url.path)
        try db.execute(Self.historySQL)
        try db.execute("INSERT INTO ZNOTE VALUES (1, 1, 1, 'first'); UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT = 1")
        let before = try Self.historyRows(db)
        #expect(before.count == 6)
        // Opened again (the history's entities are not the model's), saved, batch-changed.
        let reopened = try PersistentStore(coreDataStoreAt: url, model: store.model)
        let c = ManagedObjectContext(store: reopened)
        let note = try c.insert("Note")
        try note.setValue("second", forKey: "text")
        try #require(try c.fetch(FetchRequest("Note", predicate: "text == 'first'")).first).setValue(
            "changed", forKey: "text")
        try c.save()
        _ = try c.execute(
            BatchDeleteRequest("Note", predicate: try SiftPredicate(format: "text == 'changed'", arguments: [])))
        #expect(try db.query("SELECT Z_PK, ZTEXT FROM ZNOTE") == [[.integer(2), .text("second")]])
        #expect(try Self.historyRows(db) == before)
        #expect(!reopened.tracksHistory)
        // Sift's history API says why it has none, rather than failing on a table Sift did not make.
        for read in [{ _ = try reopened.history(after: nil) }, { _ = try reopened.currentHistoryToken() }] {
            let error = #expect(throws: StoreError.self) { try read() }
            #expect(
                error?.kind == .invalidOperation && error?.message.contains("a Core Data store has no history") == true)
        }
        #expect(try db.query("PRAGMA integrity_check") == [[.text("ok")]])
    }

    /// Values Core Data moved into external files cannot be read: the store is refused, not read wrong.
    @Test func aStoreWithExternalBinaryDataFilesIsRefusedNamingTheFolder() throws {
        let (url, store) = try Self.newStore([
            EntityDescription("Photo", attributes: [AttributeDescription("image", .binary)])
        ])
        let folder = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // An empty folder (or one with hidden files only) holds no value: the store opens.
        try Data().write(to: folder.appendingPathComponent(".DS_Store"))
        _ = try PersistentStore(coreDataStoreAt: url, model: store.model)
        try Data(repeating: 1, count: 2_000_000).write(to: folder.appendingPathComponent(UUID().uuidString))
        let error = #expect(throws: StoreError.self) { try PersistentStore(coreDataStoreAt: url, model: store.model) }
        #expect(error?.kind == .invalidOperation)
        #expect(error?.message.contains("keeps 1 value of external binary data in '\(folder.path)'") == true)
    }
}
