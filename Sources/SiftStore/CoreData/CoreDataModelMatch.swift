// Choosing the version of an app's Xcode model that a Core Data store was written with (issue 31):
// a store copied off a device is of whichever version the app had then, and Apple's version
// hashes cannot be recomputed, so each version of the bundle is laid out as Core Data lays it out
// and compared with the store's schema (`CoreDataFile.schemaDifferences`), the current version
// first. None matching is one error listing every version's differences.

import Foundation
import SiftSQLite

extension ManagedObjectModel {
    /// Reads the version of the Xcode model at `url` (an `.xcdatamodeld` bundle, or a bare
    /// `.xcdatamodel`, its one version) whose layout the Core Data store at `store` has: the
    /// current version first, then the others by name. When none matches, a `.modelMismatch`
    /// error has a failure per version naming its differences from the store.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(contentsOf: bundleURL, matchingCoreDataStoreAt: storeURL)
    /// let store = try PersistentStore(coreDataStoreAt: storeURL, model: model)
    /// ```
    public init(contentsOf url: URL, matchingCoreDataStoreAt store: URL) throws(StoreError) {
        self = try Self.version(of: url, matchingCoreDataStoreAt: store).model
    }

    /// The version of the Xcode model at `url` that the Core Data store at `store` matches, and
    /// its name (nil for a bare `.xcdatamodel`), as ``init(contentsOf:matchingCoreDataStoreAt:)``
    /// finds it.
    package static func version(of url: URL, matchingCoreDataStoreAt store: URL) throws(StoreError) -> (
        name: String?, model: ManagedObjectModel
    ) {
        let db = try CoreDataFile.openExisting(store)
        var mismatches: [String] = []
        for version in try CoreDataFile.versionsToTry(url) {
            let model: ManagedObjectModel
            let differences: [String]
            do {
                model = try ManagedObjectModel(contentsOf: url, version: version)
                let laidOut = try model.laidOut(as: .coreData)
                differences = try CoreDataFile.schemaDifferences(db, laidOut, TableLayout.make(laidOut))
            } catch let e as ModelError {
                throw StoreError(e)
            } catch {
                throw StoreError(.sqlite, "cannot read the schema of '\(store.path)': \(error)")
            }
            if differences.isEmpty { return (version, model) }
            let name = version.map { "version '\($0)'" } ?? url.lastPathComponent
            mismatches.append("\(name) does not match the store: " + differences.joined(separator: "; "))
        }
        throw StoreError(.modelMismatch, "no version of the model matches the store", failures: mismatches)
    }
}

extension PersistentStore {
    /// Whether this open store is laid out as Core Data lays out its stores.
    package var isCoreDataStore: Bool { model.layout == .coreData }

    /// Whether the existing file at `path` is a Core Data store (false for a missing file, one
    /// SQLite cannot read, or a Sift store), as `sift store` tells a user who gave no model.
    package static func isCoreDataStore(atPath path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path), let db = try? SQLiteConnection(path: path),
            let tables = try? tableNames(db)
        else { return false }
        return CoreDataFile.hasCoreDataTables(tables)
    }
}

extension CoreDataFile {
    /// A connection to the existing Core Data store at `url` (an error for a missing file, or
    /// one without Core Data's `Z_PRIMARYKEY` and `Z_METADATA`).
    static func openExisting(_ url: URL) throws(StoreError) -> SQLiteConnection {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw StoreError(.sqlite, "'\(url.path)' does not exist")
        }
        do {
            let db = try SQLiteConnection(path: url.path)
            guard hasCoreDataTables(try PersistentStore.tableNames(db)) else {
                throw StoreError(
                    .sqlite, "'\(url.path)' is not a Core Data store (it has no Z_METADATA or Z_PRIMARYKEY table)")
            }
            return db
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.sqlite, "cannot read '\(url.path)': \(error)")
        }
    }

    /// Whether a file with `tables` is laid out as Core Data lays out a store (its metadata and
    /// key tables).
    static func hasCoreDataTables(_ tables: [String]) -> Bool {
        tables.contains(CoreDataNames.metadataTable) && tables.contains(CoreDataNames.keyTable)
    }

    /// The versions of the model at `url` to compare with a store, the current one first (nil:
    /// the one version of a bare `.xcdatamodel`).
    static func versionsToTry(_ url: URL) throws(StoreError) -> [String?] {
        guard url.lastPathComponent.hasSuffix(XcodeModelBundle.bundleSuffix) else { return [nil] }
        let all = XcodeModelBundle.versionNames(in: url)
        let current: String?
        do { current = try XcodeModelBundle.currentVersion(of: url) } catch { throw StoreError(error) }
        guard let current, all.contains(current) else { return all.isEmpty ? [nil] : all }
        return [current] + all.filter { $0 != current }
    }
}
