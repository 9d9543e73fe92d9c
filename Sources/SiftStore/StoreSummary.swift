// What a store file holds, for `sift store info`: its type (Sift's or Core Data's), its UUID, the
// identity of the model it was written with (Sift's model hash; Core Data's entity numbers and
// the names its version hashes are kept under), each entity's objects, and the metadata keys
// with their values. A Core Data store is read with plain SQL, no model needed: entities from
// `Z_PRIMARYKEY`, objects counted per `Z_ENT` in their root's table, metadata from `Z_METADATA`.

import Foundation
import SiftSQL
import SiftSQLite

/// A store file's summary (``PersistentStore/summary(ofFileAt:)``).
package struct StoreSummary: Sendable {
    /// "Sift" or "Core Data".
    package var type: String
    package var uuid: String
    /// Lines saying which model the store was written with.
    package var modelIdentity: [String]
    /// Each entity's objects (of the entity itself, not its sub-entities), in entity-number order.
    package var entities: [(name: String, count: Int)]
    /// Each metadata key, sorted, with its value in words (binary values summarised).
    package var metadata: [(key: String, value: String)]
    /// Rows of Core Data's persistent-history tables, by table (kept as they are; Sift adds none).
    package var history: [(table: String, rows: Int)] = []
}

extension PersistentStore {
    /// The summary of the store file at `path`, Sift's or Core Data's.
    ///
    /// ```swift
    /// let summary = try PersistentStore.summary(ofFileAt: "Garage.sqlite")
    /// for e in summary.entities { print(e.name, e.count) }
    /// ```
    package static func summary(ofFileAt path: String) throws(StoreError) -> StoreSummary {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.sqlite, "'\(path)' does not exist")
        }
        let tables: [String]
        do { tables = try tableNames(try SQLiteConnection(path: path)) } catch {
            throw StoreError(.sqlite, "cannot read '\(path)': \(error.message)")
        }
        if tables.contains(Storage.metadataTable) { return try siftSummary(path) }
        let db = try CoreDataFile.openExisting(URL(fileURLWithPath: path))
        do { return try CoreDataFile.summary(db, tables: tables) } catch let e as StoreError { throw e } catch {
            throw StoreError(.sqlite, "cannot read '\(path)': \(error)")
        }
    }

    private static func siftSummary(_ path: String) throws(StoreError) -> StoreSummary {
        let store = try PersistentStore(path: path)
        let context = ManagedObjectContext(store: store)
        var entities: [(String, Int)] = []
        for e in store.model.entities {
            var request = FetchRequest(e.name)
            request.includesSubentities = false
            entities.append((e.name, try context.count(for: request)))
        }
        let rows = try store.locked { () throws(StoreError) in
            do throws(SQLiteError) {
                return try store.rows("SELECT key, value FROM \(q(Storage.metadataTable)) ORDER BY key", [])
            } catch { throw error.storeError }
        }
        var metadata: [(String, String)] = []
        for row in rows {
            guard case .text(let key) = row[0] else { continue }
            let text: String? = if case .text(let t) = row[1] { t } else { nil }
            // The model's JSON is long: `sift store model`'s job, not this summary's.
            let value = key == "model" ? "<model JSON, \(text?.utf8.count ?? 0) bytes>" : describe(text)
            metadata.append((key, value))
        }
        return StoreSummary(
            type: "Sift", uuid: store.identifier, modelIdentity: ["version hash \(store.model.versionHash)"],
            entities: entities, metadata: metadata)
    }

    /// A metadata value in words: strings quoted, numbers and dates as they are, data as its size,
    /// arrays and dictionaries (keys sorted) element by element.
    static func describe(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let s as String: return "\"\(s)\""
        case let d as Data: return "<\(d.count) bytes>"
        case let d as Date: return ISO8601DateFormatter().string(from: d)
        case let a as [Any]: return "[" + a.map { describe($0) }.joined(separator: ", ") + "]"
        case let d as [String: Any]:
            return "{" + d.keys.sorted().map { "\($0): \(describe(d[$0]))" }.joined(separator: ", ") + "}"
        case let n as NSNumber: return n.stringValue
        case let v?: return String(describing: v)
        }
    }
}

extension CoreDataFile {
    /// The summary of a Core Data store, read with plain SQL.
    static func summary(_ db: SQLiteConnection, tables: [String]) throws -> StoreSummary {
        let (uuid, plist) = try readMetadata(db)
        var entities: [(number: Int64, name: String, parent: Int64)] = []
        for row in try db.query("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            guard case .integer(let n) = row[0], case .text(let name) = row[1], n < 16000 else { continue }
            let parent: Int64 = if case .integer(let p) = row[2] { p } else { 0 }
            entities.append((n, name, parent))
        }
        let byNumber = Dictionary(entities.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
        func root(_ n: Int64) -> String {
            var e = byNumber[n]!
            while let p = byNumber[e.parent], p.number != e.number { e = p }
            return e.name
        }
        var counts: [Int64: Int] = [:]
        for table in Set(entities.map { StoreLayout.coreData.table(root: root($0.number)) })
        where tables.contains(table) {
            for row in try db.query("SELECT Z_ENT, COUNT(*) FROM \(PersistentStore.q(table)) GROUP BY Z_ENT") {
                if case .integer(let n) = row[0], case .integer(let c) = row[1] { counts[n] = Int(c) }
            }
        }
        let numbers = entities.map { e in
            "\(e.name) \(e.number)" + (byNumber[e.parent].map { " (parent \($0.name))" } ?? "")
        }
        var identity = ["entity numbers: " + numbers.joined(separator: ", ")]
        if let hashes = plist["NSStoreModelVersionHashes"] as? [String: any Sendable] {
            identity.append(
                "version hashes (NSStoreModelVersionHashes) of: "
                    + (hashes.isEmpty ? "none" : hashes.keys.sorted().joined(separator: ", ")))
        }
        var history: [(String, Int)] = []
        for table in CoreDataNames.historyTables where tables.contains(table) {
            if case .integer(let n)? = try db.query("SELECT COUNT(*) FROM \(PersistentStore.q(table))").first?.first {
                history.append((table, Int(n)))
            }
        }
        return StoreSummary(
            type: "Core Data", uuid: uuid, modelIdentity: identity,
            entities: entities.map { ($0.name, counts[$0.number] ?? 0) },
            metadata: plist.keys.sorted().map { ($0, PersistentStore.describe(plist[$0])) }, history: history)
    }
}
