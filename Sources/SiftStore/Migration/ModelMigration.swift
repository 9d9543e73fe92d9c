// Running an inferred migration: refused whole, before anything is touched, when a change cannot
// be inferred; otherwise every step in one `BEGIN IMMEDIATE … COMMIT` (any failure, or any row
// that breaks a new rule, rolls all of it back, so the store stays as it was, openable with its
// old model). A dry run runs the same steps and rolls back, to say what would fail.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// What opening a store that was created with another model does.
///
/// ```swift
/// // version 2 adds an optional attribute: the store follows
/// let store = try PersistentStore(model: version2, path: "people.sqlite", migration: .inferred)
/// // a store at version 1 or 2 follows the plan's steps to version 3, in one transaction
/// let current = try PersistentStore(model: version3, path: "people.sqlite", migration: .plan(plan))
/// ```
public enum ModelMigration: Sendable {
    /// Refuse: a `.modelMismatch` error naming what differs (the default, so nothing changes a
    /// file by surprise).
    case never
    /// Migrate the store in place, in one transaction, when every change is one Core Data infers
    /// (see the Migrations article); otherwise a `.modelMismatch` error listing each change that
    /// cannot be inferred, before anything is touched.
    case inferred
    /// Migrate the store in place, in one transaction, from whichever of the plan's versions it
    /// is at (told by its model's version hash) through each later step in order; the model the
    /// store is opened with must be the plan's last. A store at none of the versions is a
    /// `.modelMismatch` error (see ``MigrationPlan``).
    case plan(MigrationPlan)
}

/// The outcome of a migration: its steps, and the rows that break the new model's rules (a dry
/// run reports them; a migration throws them).
package struct MigrationReport: Sendable {
    /// Each change between the two models, in words.
    package var changes: [String]
    /// Each step, in the order it runs.
    package var steps: [MigrationStep]
    /// Each row that breaks a rule of the new model.
    package var failures: [StoreError.Failure]
}

enum StoreMigration {
    /// Migrates the store on `db` (store `storeID`) from model `old` to `new` in one transaction,
    /// rolled back when `dryRun` or when anything fails; throws the rows that break new rules
    /// (kind `.validation`) unless `dryRun`.
    static func run(
        _ db: SQLiteConnection, from old: ManagedObjectModel, to new: ManagedObjectModel, storeID: String,
        dryRun: Bool
    ) throws(StoreError) -> MigrationReport {
        let match = MigrationMatch(old: old, new: new)
        try refuseIncompatible(match)
        return try inTransaction(db, dryRun: dryRun) { failures in
            let steps = try apply(match, db, storeID: storeID, &failures)
            return MigrationReport(changes: match.changes, steps: steps, failures: [])
        }
    }

    /// A `.modelMismatch` error listing each change of `match` that cannot be inferred, if any.
    static func refuseIncompatible(_ match: MigrationMatch) throws(StoreError) {
        guard !match.incompatible.isEmpty else { return }
        var e = StoreError(.modelMismatch, failures: match.incompatible.map { StoreError.Failure($0) })
        let to = match.new.version.map { "version '\($0)' (\(match.new.versionHash))" } ?? match.new.versionHash
        e.message =
            "the store's model cannot be migrated to \(to) by inference: " + match.incompatible.joined(separator: "; ")
        throw e
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction, committed unless `dryRun` or a row broke
    /// a rule (`body` appends each such row to its failures); then throws those rows (kind
    /// `.validation`) unless `dryRun`. Anything `body` throws rolls everything back.
    static func inTransaction(
        _ db: SQLiteConnection, dryRun: Bool, _ body: (inout [StoreError.Failure]) throws -> MigrationReport
    ) throws(StoreError) -> MigrationReport {
        do {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            throw StoreError(.sqlite, "cannot start the migration: \(error.message)")
        }
        do {
            var failures: [StoreError.Failure] = []
            var report = try body(&failures)
            if dryRun || !failures.isEmpty { try db.execute("ROLLBACK") } else { try db.execute("COMMIT") }
            if !dryRun, !failures.isEmpty {
                var e = StoreError(.validation, failures: failures)
                e.message = "the migration fails: " + e.message
                throw e
            }
            report.failures = failures
            return report
        } catch let e as StoreError {
            try? db.execute("ROLLBACK")
            throw e
        } catch {
            try? db.execute("ROLLBACK")
            throw StoreError(.sqlite, "the migration failed and was rolled back: \(error)")
        }
    }

    /// Plans and runs the steps of `match` inside the caller's transaction; each row that breaks
    /// a new rule is appended to `failures`. The steps, in order.
    static func apply(
        _ match: MigrationMatch, _ db: SQLiteConnection, storeID: String, _ failures: inout [StoreError.Failure]
    ) throws -> [MigrationStep] {
        let tables = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap(\.first?.text))
        var planner = MigrationPlanner(match, existingTables: tables)
        let asideNames = planner.setAside.map { SQLValue.text($0.table) }
        let marks = Array(repeating: "?", count: asideNames.count).joined(separator: ", ")
        let objects = try db.query(
            "SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name IN (\(marks)) ORDER BY type DESC, name",
            asideNames
        ).map { (type: $0[0].text ?? "", name: $0[1].text ?? "") }
        let metadata = match.new.layout == .coreData ? try CoreDataFile.prepareMigration(&planner, db) : nil
        let steps = planner.plan(dropping: objects, coreDataMetadata: metadata)
        for step in steps { try perform(step, db, storeID: storeID, &failures) }
        return steps
    }

    /// Runs one step: its statement, or the check its rows are read for.
    static func perform(
        _ step: MigrationStep, _ db: SQLiteConnection, storeID: String, _ failures: inout [StoreError.Failure]
    ) throws {
        guard let check = step.check else {
            if step.bindings.isEmpty { try db.execute(step.sql) } else { _ = try db.query(step.sql, step.bindings) }
            return
        }
        let rows = try db.query(step.sql, step.bindings)
        switch check {
        case .rowsFail(let entity, let key, let message, let constraint):
            for row in rows {
                guard case .integer(let pk) = row[0] else { continue }
                let id = ObjectID(entity: entity, store: storeID, key: .permanent(pk))
                let f = StoreError.Failure(
                    "\(id) '\(key)': \(message)", objectID: id, entity: entity, keys: [key], constraint: constraint)
                // A one-to-one is checked from both sides: one failure per object and key.
                if !failures.contains(f) { failures.append(f) }
            }
        case .validate(let entity, let rule):
            // The new model's resolution compiled the pattern already.
            let regex = try rule.regularExpression.map { try AttributeValidation.regex($0) }
            for row in rows {
                guard case .integer(let pk) = row[0] else { continue }
                let v = ColumnCodec.decode(row[1], rule.type, exact: row[2])
                let problem: AttributeValidation.Problem? =
                    v.isNull
                    ? (rule.isOptional ? nil : ("is required", .required))
                    : AttributeValidation.problem(scalar: v, rule, regex: regex)
                guard let problem else { continue }
                let id = ObjectID(entity: entity, store: storeID, key: .permanent(pk))
                failures.append(
                    StoreError.Failure(
                        "\(id) '\(rule.name)': \(problem.message)", objectID: id, entity: entity, keys: [rule.name],
                        value: v, constraint: problem.constraint))
            }
        case .renumberHistory(let number, let bits):
            let update =
                "UPDATE \(PersistentStore.q(HistoryTables.change)) SET ZENTITY = ?, ZCOLUMNS = ? WHERE Z_PK = ?"
            for row in rows { _ = try db.query(update, [.integer(-number), remapped(row[1], bits), row[0]]) }
        case .toString(let from, let table, let column):
            let q = PersistentStore.q
            let update = "UPDATE \(q(table)) SET \(q(column)) = ? WHERE \(q(Storage.primaryKey)) = ?"
            for row in rows {
                let text = string(ColumnCodec.decode(row[1], from, exact: row[2]), from: from)
                _ = try db.query(update, [text, row[0]])
            }
        }
    }

    /// A history change's mask with bit `i` moved to `bits[i]`.
    static func remapped(_ mask: SQLValue, _ bits: [Int?]) -> SQLValue {
        guard case .blob(let old) = mask else { return mask }
        var out = [UInt8](repeating: 0, count: ((bits.compactMap { $0 }.max() ?? -1) + 8) / 8)
        for (i, to) in bits.enumerated() {
            guard let to, i / 8 < old.count, old[i / 8] & (1 << UInt8(i % 8)) != 0 else { continue }
            out[to / 8] |= 1 << UInt8(to % 8)
        }
        return .blob(out)
    }

    /// A scalar as the string a widening to string writes: integers and Booleans as Swift prints
    /// them, floats as Float prints them, doubles as Double does, decimals exactly.
    static func string(_ v: Value, from type: AttributeType) -> SQLValue {
        switch v {
        case .integer(let i): .text("\(i)")
        case .bool(let b): .text("\(b)")
        case .double(let d): .text(type == .float ? "\(Float(d))" : "\(d)")
        case .decimal(let d): .text(d.description)
        case .string(let s): .text(s)
        default: .null
        }
    }
}

extension SQLValue {
    /// The text of a TEXT value, else nil.
    fileprivate var text: String? { if case .text(let t) = self { t } else { nil } }
}
