// Migrating a store in Core Data's layout (issue 32): such a store keeps no model Sift can read
// (Apple's version hashes are undocumented bytes), so its version is found by its schema among a
// migration plan's versions (each laid out as Core Data lays it out), and the plan's later steps
// run as for Sift's own stores, in one transaction, on the Core Data names and entity numbers. An
// `.xcdatamodeld` bundle's versions make such a plan. The metadata keeps the store's UUID and every
// key but Apple's version hashes, which would name the old version (CoreDataStores.md).

import Foundation
import SiftSQLite

extension MigrationPlan {
    /// A plan of inferred steps through the versions of the Xcode model bundle at `url` (an
    /// `.xcdatamodeld`): its versions in the order of their names (numbers compared as numbers:
    /// `Model`, `Model 2`, `Model 10`), ending at the current version (`.xccurrentversion`, else
    /// the last by name); versions named after the current one are left out. A renaming
    /// identifier (`elementID`) names an element of the version before, or is the one it has.
    ///
    /// ```swift
    /// let plan = try MigrationPlan(versionsOf: URL(fileURLWithPath: "App.xcdatamodeld"))
    /// let store = try PersistentStore(
    ///     coreDataStoreAt: URL(fileURLWithPath: "App.sqlite"), model: plan.versions.last!, migration: .plan(plan))
    /// ```
    public init(versionsOf url: URL) throws(StoreError) {
        guard url.lastPathComponent.hasSuffix(XcodeModelBundle.bundleSuffix) else {
            throw StoreError(.invalidOperation, "'\(url.path)' is not an .xcdatamodeld bundle of versions")
        }
        var names = XcodeModelBundle.versionNames(in: url).sorted {
            $0.compare($1, options: [.numeric]) == .orderedAscending
        }
        let current: String?
        do { current = try XcodeModelBundle.currentVersion(of: url) } catch { throw StoreError(error) }
        if let current, let i = names.firstIndex(of: current) { names = Array(names[...i]) }
        var models: [ManagedObjectModel] = []
        for name in names {
            do { models.append(try ManagedObjectModel(contentsOf: url, version: name)) } catch {
                throw StoreError(error)
            }
        }
        guard let first = models.first else {
            throw StoreError(.invalidOperation, "'\(url.path)' holds no version (no *.xcdatamodel folder)")
        }
        try self.init(from: first, models.dropFirst().map { .inferred($0) })
    }

    /// The plan with every version laid out as `layout` lays it out.
    func laidOut(as layout: StoreLayout) throws(StoreError) -> MigrationPlan {
        var models: [ManagedObjectModel] = []
        for v in versions {
            do { models.append(try v.laidOut(as: layout)) } catch { throw StoreError(error) }
        }
        let laid = zip(stages, models.dropFirst()).map { stage, model in
            Stage(model: model, willMigrate: stage.willMigrate, didMigrate: stage.didMigrate)
        }
        return try MigrationPlan(from: models[0], laid)
    }
}

extension CoreDataFile {
    /// Migrates the Core Data store on `db` (store `storeID`) from the version of `plan` it is at
    /// through each later step, in one transaction (rolled back when `dryRun`); no steps at the
    /// last version. Its version is the one Sift's metadata key names when the store has that
    /// version's schema; else the version whose schema it has. Consecutive versions with one
    /// schema differ only in rules (required, defaults, bounds): the store is taken to be at the
    /// first, whose steps fill defaults and check rules a store past them keeps. A store at none of
    /// the versions, or with the schema of versions apart, is a `.modelMismatch` error.
    static func migrate(_ db: SQLiteConnection, plan: MigrationPlan, storeID: String, dryRun: Bool)
        throws(StoreError) -> MigrationReport
    {
        let laid = try plan.laidOut(as: .coreData)
        var differences: [[String]] = []
        for version in laid.versions {
            do { differences.append(try schemaDifferences(db, version, TableLayout.make(version))) } catch {
                throw StoreError(.sqlite, "cannot read the store's schema: \(error.message)")
            }
        }
        let marked = try readMetadata(db).plist[CoreDataNames.siftVersionKey] as? String
        let matching = differences.indices.filter { differences[$0].isEmpty }
        let at: Int
        if let i = laid.versions.firstIndex(where: { $0.versionHash == marked }), differences[i].isEmpty {
            at = i
        } else if matching.last == laid.versions.count - 1 {
            at = matching.last!
        } else if let first = matching.first, matching.count == matching.last! - first + 1 {
            at = first
        } else {
            throw unknownVersion(laid, differences, matching)
        }
        if at == laid.versions.count - 1 { return MigrationReport(changes: [], steps: [], failures: []) }
        return try StoreMigration.run(db, plan: laid, from: at, storeID: storeID, dryRun: dryRun)
    }

    /// The error for a store at none of `plan`'s versions (a failure per version), or with the
    /// schema of versions `matching` that are not consecutive.
    private static func unknownVersion(_ plan: MigrationPlan, _ differences: [[String]], _ matching: [Int])
        -> StoreError
    {
        if !matching.isEmpty {
            let names = matching.map { MigrationPlan.name(plan.versions[$0], $0) }.joined(separator: ", ")
            return StoreError(
                .modelMismatch,
                "the store has the schema of versions \(names) of the migration plan, which are not consecutive, and no version of Sift's: which it is at cannot be told (Apple's version hashes cannot be computed); migrate it with a plan that starts at its version"
            )
        }
        let failures = differences.enumerated().map { i, d in
            "version \(MigrationPlan.name(plan.versions[i], i)) does not match the store: " + d.joined(separator: "; ")
        }
        return StoreError(
            .modelMismatch, "the store is at none of the migration plan's versions", failures: failures)
    }

    /// Reads what planning a migration of the Core Data store on `db` needs: each old table's
    /// columns in order (their places are kept, added columns come last), and the metadata
    /// property list to write, returned.
    static func prepareMigration(_ planner: inout MigrationPlanner, _ db: SQLiteConnection) throws -> [UInt8] {
        for t in planner.setAside {
            let columns = try db.query("SELECT name FROM pragma_table_info(?)", [.text(t.table)])
            planner.keptColumns[t.table.uppercased()] = columns.compactMap {
                if case .text(let name)? = $0.first { name } else { nil }
            }
        }
        return try plistBytes(migratedMetadata(try readMetadata(db).plist, to: planner.match.new))
    }

    /// The metadata a migrated store keeps: every key as stored (the UUID, the application's
    /// keys, `NSStoreModelVersionIdentifiers`…) but Apple's version hashes, which named the old
    /// version and cannot be computed for the new one: `NSStoreModelVersionHashes` becomes empty,
    /// as in a store Sift lays out, and the digest and checksum of the hashes are removed. Sift's
    /// own key names `model`'s version hash.
    static func migratedMetadata(_ plist: [String: any Sendable], to model: ManagedObjectModel) -> [String:
        any Sendable]
    {
        var out = plist
        out[CoreDataNames.siftVersionKey] = model.versionHash
        out["NSStoreModelVersionHashes"] = [String: Data]()
        out["NSStoreModelVersionHashesDigest"] = nil
        out["NSStoreModelVersionChecksumKey"] = nil
        return out
    }
}

extension PersistentStore {
    /// Migrates the Core Data store at `url` through `plan` from the version its schema is, as
    /// `PersistentStore(coreDataStoreAt:model:migration:)` does, or with `dryRun` runs every step
    /// and rolls it back, reporting each step and each row that would fail (what
    /// `sift store migrate` prints). A store at the plan's last version has no steps.
    ///
    /// ```swift
    /// let plan = try MigrationPlan(versionsOf: URL(fileURLWithPath: "App.xcdatamodeld"))
    /// let report = try PersistentStore.migrate(coreDataStoreAt: URL(fileURLWithPath: "App.sqlite"), plan: plan, dryRun: true)
    /// ```
    package static func migrate(coreDataStoreAt url: URL, plan: MigrationPlan, dryRun: Bool) throws(StoreError)
        -> MigrationReport
    {
        let db = try CoreDataFile.openExisting(url)
        do { try db.execute("PRAGMA synchronous=FULL") } catch {
            throw StoreError(.sqlite, "cannot open '\(url.path)': \(error.message)")
        }
        let uuid = try CoreDataFile.readMetadata(db).uuid
        return try CoreDataFile.migrate(db, plan: plan, storeID: uuid, dryRun: dryRun)
    }
}
