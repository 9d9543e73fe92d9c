// Migration plans (Core Data's staged migration): an ordered list of model versions, each step to
// the next inferred or custom (Swift code with a context on the store before and/or after the
// schema change). A store's current version is the version whose hash its stored model has; an
// open runs every later step in order, all in the one transaction an inferred migration uses, so
// a failure anywhere (a row breaking a rule, the code throwing, a kill) leaves the store at its
// old version, untouched.

import Foundation
import SiftSQLite

/// The versions of a model in order, and how a store steps from each to the next: by inference
/// alone, or with custom code around the inferred schema change.
///
/// Opening a store with `migration: .plan(plan)` finds the version the store is at (the version
/// whose ``ManagedObjectModel/versionHash`` its stored model has) and runs every later step in
/// order, in one transaction: a store at version 1 reaches version 3 in one open, or stays at
/// version 1 when anything fails. Renaming identifiers name each element in the version before.
///
/// ```swift
/// let plan = try MigrationPlan(from: version1, [
///     .inferred(version2),
///     .custom(version3, willMigrate: { context in
///         // fill the nils before `email` becomes required
///         for person in try context.fetch(FetchRequest("Person", predicate: "email == nil")) {
///             try person.setValue("unknown", forKey: "email")
///         }
///     }),
/// ])
/// let store = try PersistentStore(model: version3, path: "people.sqlite", migration: .plan(plan))
/// ```
public struct MigrationPlan: Sendable {
    /// Code a custom stage runs with a context on the store, inside the migration's transaction;
    /// what it changes is saved when it returns.
    public typealias StageCode = @Sendable (ManagedObjectContext) throws -> Void

    /// One step: the version it reaches, and the code it runs around the schema change.
    public struct Stage: Sendable {
        /// The version the step reaches.
        public let model: ManagedObjectModel
        let willMigrate: StageCode?
        let didMigrate: StageCode?

        /// A step to `model` by inference alone.
        ///
        /// ```swift
        /// let step = MigrationPlan.Stage.inferred(version2)
        /// ```
        public static func inferred(_ model: ManagedObjectModel) -> Stage {
            Stage(model: model, willMigrate: nil, didMigrate: nil)
        }

        /// A step to `model` that runs `willMigrate` on the store at the previous version before
        /// the schema change (fill nils, so an attribute can become required without a default)
        /// and `didMigrate` on the store at `model` after it (set attributes the step added, such
        /// as `first` and `last` split from `name`). Each gets a context of its own; its changes
        /// are saved when it returns, in the migration's transaction. An attribute made required
        /// without a default needs `willMigrate`, one added as required without a default needs
        /// `didMigrate`; every row is checked after the code that sets them.
        ///
        /// ```swift
        /// let step = MigrationPlan.Stage.custom(version3, didMigrate: { context in
        ///     for p in try context.fetch(FetchRequest("Person")) {
        ///         let parts = (try p.get("name", as: String.self) ?? "").split(separator: " ")
        ///         try p.setValue(parts.first.map(String.init), forKey: "first")
        ///         try p.setValue(parts.dropFirst().joined(separator: " "), forKey: "last")
        ///     }
        /// })
        /// ```
        public static func custom(
            _ model: ManagedObjectModel, willMigrate: StageCode? = nil, didMigrate: StageCode? = nil
        ) -> Stage {
            Stage(model: model, willMigrate: willMigrate, didMigrate: didMigrate)
        }
    }

    /// Every version, the first and then each stage's, in order.
    public let versions: [ManagedObjectModel]
    /// The steps from each version to the next.
    public let stages: [Stage]

    /// A plan from `first` through each stage's version in order. Two versions with the same
    /// version hash (a store at either could not be told apart), or a step with a change that
    /// cannot be inferred (and that its code does not make possible), are a `.modelMismatch`
    /// error naming them.
    ///
    /// ```swift
    /// let plan = try MigrationPlan(from: version1, [.inferred(version2), .inferred(version3)])
    /// plan.versions.count   // 3
    /// ```
    public init(from first: ManagedObjectModel, _ stages: [Stage]) throws(StoreError) {
        versions = [first] + stages.map(\.model)
        self.stages = stages
        var seen: [String: Int] = [:]
        for (i, v) in versions.enumerated() {
            if let j = seen[v.versionHash] {
                throw StoreError(
                    .modelMismatch,
                    "versions \(Self.name(versions[j], j)) and \(Self.name(v, i)) of the migration plan have the same version hash \(v.versionHash): a store at either could not be told apart"
                )
            }
            seen[v.versionHash] = i
        }
        for (i, stage) in stages.enumerated() {
            try StoreMigration.refuseIncompatible(
                MigrationMatch(old: versions[i], new: stage.model, stage: stage.allowances))
        }
    }

    /// A version's name in messages: its `version` name, else its place (1 for the first).
    static func name(_ model: ManagedObjectModel, _ index: Int) -> String {
        model.version.map { "'\($0)'" } ?? "\(index + 1)"
    }

    /// A `.modelMismatch` error unless `model` is the plan's last version.
    func check(opening model: ManagedObjectModel) throws(StoreError) {
        let last = versions[versions.count - 1]
        guard last.versionHash != model.versionHash else { return }
        throw StoreError(
            .modelMismatch,
            "the store is opened with model \(model.versionHash), but the migration plan ends at \(Self.name(last, versions.count - 1)) (\(last.versionHash))"
        )
    }

    /// The index of the version whose hash is `hash`, or a `.modelMismatch` error naming every
    /// version.
    func version(hash: String) throws(StoreError) -> Int {
        if let i = versions.firstIndex(where: { $0.versionHash == hash }) { return i }
        let known = versions.enumerated().map { "\(Self.name($1, $0)) (\($1.versionHash))" }
        throw StoreError(
            .modelMismatch,
            "the store's model \(hash) is none of the migration plan's versions: \(known.joined(separator: ", "))")
    }
}

extension MigrationPlan.Stage {
    /// Whether it runs code before and after the schema change.
    var allowances: (before: Bool, after: Bool) { (willMigrate != nil, didMigrate != nil) }
}

extension StoreMigration {
    /// Migrates the store on `db` (store `storeID`, its stored model's hash `storedHash`) through
    /// every step of `plan` after its version, in one transaction (rolled back when `dryRun`).
    static func run(
        _ db: SQLiteConnection, plan: MigrationPlan, storedHash: String, storeID: String, dryRun: Bool
    ) throws(StoreError) -> MigrationReport {
        try run(db, plan: plan, from: plan.version(hash: storedHash), storeID: storeID, dryRun: dryRun)
    }

    /// Migrates the store on `db` (store `storeID`, at the plan's version `start`) through every
    /// later step of `plan`, in one transaction (rolled back when `dryRun`).
    static func run(
        _ db: SQLiteConnection, plan: MigrationPlan, from start: Int, storeID: String, dryRun: Bool
    ) throws(StoreError) -> MigrationReport {
        let steps = Array(plan.stages.enumerated().dropFirst(start))
        var matches: [MigrationMatch] = []
        for (i, stage) in steps {
            matches.append(MigrationMatch(old: plan.versions[i], new: stage.model, stage: stage.allowances))
            try refuseIncompatible(matches[matches.count - 1])
        }
        return try inTransaction(db, dryRun: dryRun) { failures in
            var report = MigrationReport(changes: [], steps: [], failures: [])
            for ((i, stage), match) in zip(steps, matches) {
                let what = "the step to \(MigrationPlan.name(stage.model, i + 1))"
                if let code = stage.willMigrate {
                    try runStageCode(code, db, model: plan.versions[i], storeID: storeID, what + " (before the change)")
                }
                report.changes += match.changes
                report.steps += try apply(match, db, storeID: storeID, &failures)
                guard failures.isEmpty else { break }
                guard let code = stage.didMigrate else { continue }
                try runStageCode(code, db, model: stage.model, storeID: storeID, what + " (after the change)")
                for check in MigrationPlanner.requiredChecks(match) {
                    report.steps.append(check)
                    try perform(check, db, storeID: storeID, &failures)
                }
                guard failures.isEmpty else { break }
            }
            return report
        }
    }

    /// Runs a custom stage's `code` with a context on a store object on `db` (inside the
    /// migration's transaction, which its save joins) at version `model`, and saves its changes.
    private static func runStageCode(
        _ code: MigrationPlan.StageCode, _ db: SQLiteConnection, model: ManagedObjectModel, storeID: String,
        _ what: String
    ) throws(StoreError) {
        let store = try PersistentStore(model: model, location: nil, opened: db, historyTracking: false)
        store.inBulkWrite = true
        let context = ManagedObjectContext(store: store)
        do {
            try code(context)
            if context.hasChanges { try context.save() }
        } catch let e as StoreError {
            var e = e
            e.message = "the custom code of \(what) failed: " + e.message
            throw e
        } catch {
            throw StoreError(.invalidOperation, "the custom code of \(what) failed: \(error)")
        }
    }
}

extension PersistentStore {
    /// Migrates the store at `path` through `models` in order, from the one its stored model is
    /// (or, at none of them, from its stored model to the first), each step inferred, in one
    /// transaction; with `dryRun` every step runs and is rolled back, reporting each step and
    /// each row that would fail (what `sift store migrate` prints). A store already at the last
    /// model has no steps.
    ///
    /// ```swift
    /// let report = try PersistentStore.migrate(path: "people.sqlite", through: [version2, version3], dryRun: true)
    /// for step in report.steps { print(step) }
    /// ```
    package static func migrate(path: String, through models: [ManagedObjectModel], dryRun: Bool) throws(StoreError)
        -> MigrationReport
    {
        let store = try PersistentStore(path: path)
        let hash = store.model.versionHash
        guard let last = models.last, last.versionHash != hash else {
            return MigrationReport(changes: [], steps: [], failures: [])
        }
        let versions = models.contains { $0.versionHash == hash } ? models : [store.model] + models
        let plan = try MigrationPlan(from: versions[0], versions.dropFirst().map { .inferred($0) })
        return try store.locked { () throws(StoreError) in
            try StoreMigration.run(
                store.connection, plan: plan, storedHash: hash, storeID: store.identifier, dryRun: dryRun)
        }
    }
}
