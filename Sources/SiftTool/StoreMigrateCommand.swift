// `sift store migrate`: a store made with an older model follows a newer one, by the inferred
// migration `PersistentStore(model:path:migration: .inferred)` runs (SiftStore's Migration/), in
// one transaction. `--dry-run` runs the same steps and rolls them back, printing each step with its
// SQL and every row that would break a new rule. Several `--model`, in order, are a migration plan
// of inferred steps (`MigrationPlan`): the store steps from the one its model is through each later.
// A Core Data store migrates through the versions of an `.xcdatamodeld` bundle, from the version
// its schema is (`MigrationPlan(versionsOf:)`).

import ArgumentParser
import Foundation
import SiftStore

struct StoreMigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to a newer model (inferred migration, in one transaction).",
        discussion: """
            Opens DB with the model it keeps and migrates it in place to MODEL.json, in one \
            transaction: attributes, relationships and entities added, removed or renamed (through \
            'renamingIdentifier'), required to optional, optional to required with a default (nil \
            values get it), to-one to to-many and back, unordered to ordered and back, integers \
            widened (16 to 32 to 64 bits), float to double, scalars to strings, entities moved into \
            or within a hierarchy, and changed validation rules, checked against every row first. \
            Prints one line per change. A change that cannot be inferred (another type, a required \
            attribute without a default) is refused with one line per change, before anything is \
            touched; a row that breaks a new rule fails the migration with one line per row, and \
            the store is left as it was (exit status 1 either way).

            --dry-run runs every step and rolls it back: it prints each change, each step and its \
            SQL, and 'would fail: …' for each row that breaks a new rule (exit status 1 when one \
            does), and changes nothing.

            Several --model options, oldest first, are the versions of a migration plan: the \
            store steps from the version its model is (or, at none of them, from its own model to \
            the first) through each later one, each step inferred, all in the one transaction \
            (renaming identifiers name each element in the version before).

            A Core Data store (Z_METADATA, Z_PRIMARYKEY) migrates through the versions of \
            MODEL.xcdatamodeld, in the order of their names, to its current version: from the \
            version whose layout the store has, each step inferred ('elementID' renames), all in \
            one transaction; its UUID and metadata keys are kept, Apple's version hashes dropped.
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @Option(
        help: ArgumentHelp(
            "The newer model, a JSON file (several, in order, for a plan), or for a Core Data store its .xcdatamodeld.",
            valueName: "MODEL.json|MODEL.xcdatamodeld"))
    var model: [String]

    @Flag(help: "Print the steps and their SQL, and what would fail; change nothing.")
    var dryRun = false

    func run() throws {
        try reportingStoreErrors {
            let report =
                PersistentStore.isCoreDataStore(atPath: db)
                ? try Self.migrateCoreData(db, bundle: model, dryRun: dryRun)
                : try Self.migrate(db, through: model.map(readModelFile), dryRun: dryRun)
            FileHandle.standardOutput.write(Data(Self.lines(report, dryRun: dryRun).utf8))
            if !report.failures.isEmpty { throw ExitCode.failure }
        }
    }

    /// `PersistentStore.migrate(path:through:dryRun:)` with the command's error.
    static func migrate(_ db: String, through models: [ManagedObjectModel], dryRun: Bool) throws(StoreCommandError)
        -> MigrationReport
    {
        do throws(StoreError) { return try PersistentStore.migrate(path: db, through: models, dryRun: dryRun) } catch {
            throw StoreCommandError(error)
        }
    }

    /// `PersistentStore.migrate(coreDataStoreAt:plan:dryRun:)` through the versions of the one
    /// `.xcdatamodeld` bundle in `models`, with the command's error.
    static func migrateCoreData(_ db: String, bundle models: [String], dryRun: Bool) throws(StoreCommandError)
        -> MigrationReport
    {
        guard models.count == 1, let bundle = models.first, bundle.hasSuffix(".xcdatamodeld") else {
            throw StoreCommandError(
                "error: \(db) is a Core Data store: give its model's versions as one --model MODEL.xcdatamodeld")
        }
        do throws(StoreError) {
            let plan = try MigrationPlan(versionsOf: URL(fileURLWithPath: bundle))
            return try PersistentStore.migrate(coreDataStoreAt: URL(fileURLWithPath: db), plan: plan, dryRun: dryRun)
        } catch { throw StoreCommandError(error) }
    }

    /// What the command prints: each change, and on a dry run each step and each row that would fail.
    static func lines(_ report: MigrationReport, dryRun: Bool) -> String {
        var out = report.changes.map { "change: \($0)\n" }
        if dryRun {
            for (i, step) in report.steps.enumerated() { out.append("step \(i + 1): \(step)\n") }
            out += report.failures.map { "would fail: \($0.message)\n" }
        }
        if report.steps.isEmpty { out.append("the store already has this model\n") }
        return out.joined()
    }
}
