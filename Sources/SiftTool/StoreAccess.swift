// Opening a store file for `sift store …`, and the one piece of state the tool keeps beside the
// store's own: the order in which `sift store import` first saw each entity's keys. A store file
// names its model (the store keeps the model JSON in its metadata), so the commands after `create`
// take no model option; the tool reads it back and opens the store with it. The key order lives in
// a table of the tool's own (`sift_cli_key_order`) because a model keeps attributes and
// relationships in two lists and cannot say how JSON interleaved them; with it, `sift store query`
// prints keys in the order the imported records had them.

import Foundation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore

/// A failure already worded for standard error (one or more lines); the exit status is 1.
struct StoreCommandError: Error {
    var lines: [String]
    init(_ lines: String...) { self.lines = lines }
    init(lines: [String]) { self.lines = lines }

    /// A store error as `error: <message>`, every broken rule on its own line.
    init(_ e: StoreError) {
        lines = e.failures.map { StoreCommandError.errorLine($0.message) }
    }

    /// The import's own lines.
    init(_ e: JSONImportError) { lines = e.lines }

    /// `error: <message>` (see `JSONImportError.errorLine`).
    static func errorLine(_ message: String) -> String { JSONImportError.errorLine(message) }
}

enum StoreAccess {
    /// The tool's own table: entity name → JSON array of its keys in first-seen order.
    static let keyOrderTable = "sift_cli_key_order"

    /// Opens the existing store at `path`: a Sift store with the model it was created with, or,
    /// given `model` (an `.xcdatamodeld` bundle, whose version matching the store is taken, a bare
    /// `.xcdatamodel`, or a model JSON file), a Core Data store with that model.
    static func open(_ path: String, model: String? = nil) throws(StoreCommandError) -> PersistentStore {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StoreCommandError(
                "error: \(path): no such store (make one with 'sift store create \(path) --model MODEL.json')")
        }
        if isDirectory.boolValue { throw StoreCommandError("error: \(path): is a directory") }
        if let model { return try openCoreData(path, model: model).store }
        do { return try PersistentStore(path: path) } catch {
            if PersistentStore.isCoreDataStore(atPath: path) {
                throw StoreCommandError(
                    "error: \(path) is a Core Data store: give its model with --model (an .xcdatamodeld bundle, an .xcdatamodel or a model JSON file)"
                )
            }
            throw StoreCommandError(error)
        }
    }

    /// Opens the Core Data store at `path` with the model at `model`, and names the version of
    /// an `.xcdatamodeld` bundle that matched; the model's warnings (what Sift did not keep of an
    /// Xcode model) go to standard error.
    static func openCoreData(_ path: String, model: String) throws(StoreCommandError) -> (
        store: PersistentStore, version: String?
    ) {
        let url = URL(fileURLWithPath: path)
        let read: ManagedObjectModel
        var version: String?
        if model.hasSuffix(".json") {
            read = try readModelFile(model)
        } else {
            do throws(StoreError) {
                (version, read) = try ManagedObjectModel.version(
                    of: URL(fileURLWithPath: model), matchingCoreDataStoreAt: url)
            } catch { throw StoreCommandError(error) }
        }
        for w in read.warnings { writeError(w.description) }
        do { return (try PersistentStore(coreDataStoreAt: url, model: read), version) } catch {
            throw StoreCommandError(error)
        }
    }

    /// Throws unless the store's model has an entity `name` (the error lists the entities).
    static func requireEntity(_ name: String, in store: PersistentStore) throws(StoreCommandError) {
        guard store.model.entity(named: name) == nil else { return }
        throw StoreCommandError(
            "error: the store's model has no entity '\(name)' (entities: \(store.model.entities.map(\.name).joined(separator: ", ")))"
        )
    }

    /// A context for a command that writes: its saves and batch requests are recorded in the
    /// store's history (when it keeps one) with the author "sift" and the command's name.
    static func writer(_ store: PersistentStore, _ command: String) -> ManagedObjectContext {
        let context = ManagedObjectContext(store: store)
        context.transactionAuthor = "sift"
        context.name = command
        return context
    }

    // MARK: Key order

    /// Each entity's keys in the order `sift store import` first saw them (empty when nothing
    /// was imported, or the table is missing).
    static func keyOrder(_ store: PersistentStore) -> [String: [String]] {
        guard let db = try? store.openSideConnection() else { return [:] }
        guard let rows = try? db.query("SELECT entity, keys FROM \(SQLiteDialect().quote(keyOrderTable))") else {
            return [:]
        }
        var out: [String: [String]] = [:]
        for row in rows {
            guard row.count == 2, case .text(let entity) = row[0], case .text(let keys) = row[1],
                case .array(let items)? = try? JSONReader.parse(keys)
            else { continue }
            out[entity] = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        return out
    }

    /// Adds keys seen by an import to the recorded order (keys already known keep their place).
    /// Runs after the import's save has committed: the order only shapes the output, so a
    /// failure here leaves the imported objects in place and is reported as a warning.
    static func recordKeyOrder(_ store: PersistentStore, _ seen: [(entity: String, keys: [String])])
        throws(SQLiteError)
    {
        guard !seen.isEmpty else { return }
        let db = try store.openSideConnection()
        let table = SQLiteDialect().quote(keyOrderTable)
        try db.execute("CREATE TABLE IF NOT EXISTS \(table) (entity TEXT PRIMARY KEY, keys TEXT NOT NULL)")
        try db.transaction { () throws(SQLiteError) in
            for (entity, keys) in seen {
                var order: [String] = []
                if case .text(let text)? = try db.query("SELECT keys FROM \(table) WHERE entity = ?", [.text(entity)])
                    .first?.first,
                    case .array(let items)? = try? JSONReader.parse(text)
                {
                    order = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
                }
                var known = Set(order)
                for k in keys where known.insert(k).inserted { order.append(k) }
                let json = JSONValue.array(order.map { .string($0) }).text
                _ = try db.query(
                    "INSERT OR REPLACE INTO \(table) (entity, keys) VALUES (?, ?)", [.text(entity), .text(json)])
            }
        }
    }
}
