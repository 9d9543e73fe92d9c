// The SQL of an inferred migration, planned from two models and the store's own schema: the old
// store's tables set aside (their indexes and triggers dropped), the new model's tables created by
// the same script a new store runs, each entity's rows copied into its new table (renamed,
// widened, defaulted, renumbered, moved in or out of a hierarchy), each relationship's links
// carried over through a scratch table whatever their storage was and becomes (foreign key,
// inverse foreign key, join table; order kept or numbered), count columns recounted, every row
// checked against the new rules, the old tables dropped and the stored model replaced. Values
// reach SQL only as bound parameters; identifiers come only from the models.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite

/// One step of a migration: what it does, its SQL and bindings, and what it checks.
package struct MigrationStep: Sendable, CustomStringConvertible {
    /// What the step does, in words.
    package let summary: String
    /// Its SQL (one statement, or a script when it has no bindings).
    package let sql: String
    let bindings: [SQLValue]
    let check: Check?

    /// What a step's rows mean, when it reads rows.
    enum Check: Sendable {
        /// Each row (its first column a key of `entity`) breaks `rule` of `key`.
        case rowsFail(entity: String, key: String, message: String, constraint: StoreError.Constraint)
        /// Each row (key, value, exact text) is checked against attribute `rule`'s rules.
        case validate(entity: String, rule: AttributeDescription)
        /// Each row (key, value, exact text) of an attribute that was `from` is written back as a
        /// string into `column` of `table`.
        case toString(from: AttributeType, table: String, column: String)
        /// Each history change (key, changed-keys mask) of an entity is given `number`, negated
        /// until every entity is renumbered, and its mask's bit `i` moves to `bits[i]` (nil: the
        /// property is gone).
        case renumberHistory(number: Int64, bits: [Int?])
    }

    init(_ summary: String, _ sql: String, _ bindings: [SQLValue] = [], check: Check? = nil) {
        self.summary = summary
        self.sql = sql
        self.bindings = bindings
        self.check = check
    }

    /// The summary, then the SQL indented.
    package var description: String { "\(summary)\n    \(sql)" }
}

/// Plans the steps of one migration.
struct MigrationPlanner {
    let match: MigrationMatch
    /// The old store's tables, each with the name it is set aside under.
    let setAside: [(table: String, aside: String)]
    /// Whether the store records persistent history (its tables stay; their changes are renumbered).
    let hasHistory: Bool
    private(set) var steps: [MigrationStep] = []
    /// In Core Data's layout, the columns each old table had (upper-cased table → its columns in
    /// order): they keep their places in the new table, and added columns come last.
    var keptColumns: [String: [String]] = [:]

    static let linksTable = "sift_migration_links"

    init(_ match: MigrationMatch, existingTables: Set<String>) {
        self.match = match
        // Core Data's own persistent history (`ACHANGE`…) is left as it is (CoreDataStores.md).
        hasHistory = match.new.layout == .sift && existingTables.contains(HistoryTables.change)
        let owned = PersistentStore.tableNames(match.old, TableLayout.make(match.old))
        setAside = existingTables.filter { owned.contains($0.lowercased()) }.sorted().enumerated().map {
            ($1, "sift_migration_old_\($0)")
        }
    }

    private func q(_ s: String) -> String { PersistentStore.q(s) }
    private func aside(_ table: String) -> String {
        q(setAside.first { $0.table.lowercased() == table.lowercased() }?.aside ?? table)
    }
    private mutating func add(
        _ summary: String, _ sql: String, _ bindings: [SQLValue] = [], check: MigrationStep.Check? = nil
    ) {
        steps.append(MigrationStep(summary, sql, bindings, check: check))
    }

    /// Every step, given the indexes and triggers (`type`, `name`) on the old tables and, for a
    /// store in Core Data's layout, the metadata property list to write (`coreDataMetadata`).
    mutating func plan(dropping objects: [(type: String, name: String)], coreDataMetadata: [UInt8]? = nil)
        -> [MigrationStep]
    {
        for o in objects { add("drop the old \(o.type) \(o.name)", "DROP \(o.type.uppercased()) \(q(o.name))") }
        for t in setAside {
            add("set aside the old table \(t.table)", "ALTER TABLE \(q(t.table)) RENAME TO \(q(t.aside))")
        }
        let new = match.new
        let coreData = new.layout == .coreData
        let script =
            coreData
            ? CoreDataFile.createScript(new, TableLayout.make(new), kept: keptColumns)
            : PersistentStore.createScript(new, TableLayout.make(new))
        add("create the new model's tables", script)
        for table in coreData ? [CoreDataNames.metadataTable] : [Storage.metadataTable, Storage.keyTable] {
            add("keep the store's \(table)", "INSERT INTO \(q(table)) SELECT * FROM \(aside(table))")
        }
        add(
            "scratch table for links", "CREATE TEMP TABLE \(q(Self.linksTable)) (src INTEGER, dst INTEGER, ord INTEGER)"
        )
        for e in new.entities { copyRows(e.name) }
        for e in new.entities { copyValues(e.name) }
        for e in new.entities { copyLinks(e.name) }
        for e in new.entities { recount(e.name) }
        for e in new.entities { checkRules(e.name) }
        if hasHistory { renumberHistory() }
        add("drop the scratch table", "DROP TABLE \(q(Self.linksTable))")
        if coreData {
            coreDataKeys(metadata: coreDataMetadata ?? [])
        } else {
            let meta = "UPDATE \(q(Storage.metadataTable)) SET value = ? WHERE key = ?"
            add("store the new model", meta, [.text(new.jsonString), .text("model")])
            add("store the new model's version hash", meta, [.text(new.versionHash), .text("version_hash")])
        }
        for t in setAside { add("drop the old table \(t.table)", "DROP TABLE \(q(t.aside))") }
        return steps
    }

    /// The entity numbers of `name` and its sub-entities in `model`: placeholders and bindings.
    private static func family(_ name: String, in model: ManagedObjectModel) -> (sql: String, bindings: [SQLValue]) {
        let numbers = model.resolved[name]!.family.map { SQLValue.integer(model.resolved[$0]!.number) }
        return (Array(repeating: "?", count: numbers.count).joined(separator: ", "), numbers)
    }

    /// The checks that every attribute added as required without a default was set (by a custom
    /// stage's code after the schema change): one failure per row still nil.
    static func requiredChecks(_ match: MigrationMatch) -> [MigrationStep] {
        match.setAfter.map { entity, name in
            let r = match.new.resolved[entity]!
            let fam = family(entity, in: match.new)
            let q = PersistentStore.q
            return MigrationStep(
                "check that every \(entity).\(name) is set",
                "SELECT \(q(Storage.primaryKey)) FROM \(q(r.table)) WHERE \(q(Storage.entityColumn)) IN (\(fam.sql)) AND \(q(r.attribute(name)!.column)) IS NULL",
                fam.bindings,
                check: .rowsFail(entity: entity, key: name, message: "is required", constraint: .required))
        }
    }

    // MARK: Rows

    /// Copies the rows of new entity `name`'s old counterpart (its own rows, not its
    /// sub-entities') into its new table.
    private mutating func copyRows(_ name: String) {
        guard let oldName = match.entities[name] else { return }
        let r = match.new.resolved[name]!
        let o = match.old.resolved[oldName]!
        var columns = [Storage.primaryKey, Storage.entityColumn, Storage.versionColumn]
        var exprs = ["o.\(q(Storage.primaryKey))", "?", "o.\(q(Storage.versionColumn))"]
        var bindings: [SQLValue] = [.integer(r.number)]
        // Conversions run on the copied rows: after the copy.
        let mark = steps.count
        func put(_ column: String, _ expr: String, _ values: [SQLValue] = []) {
            guard !columns.contains(column) else { return }
            columns.append(column)
            exprs.append(expr)
            bindings += values
        }
        for a in r.attributes {
            guard let oa = match.attribute(a, of: name) else {
                if let d = a.defaultValue, !a.description.isCollection, a.mixed == nil {
                    put(a.column, "?", [ColumnCodec.encode(d, a.type)])
                    if let x = a.exactColumn { put(x, "?", [ColumnCodec.exactText(d)]) }
                }
                continue
            }
            copyAttribute(a, oa, name, from: o, put)
        }
        for rel in r.relationships {
            guard let c = rel.countColumn else { continue }
            if let oc = match.relationship(rel, of: name)?.countColumn {
                put(c, "o.\(q(oc))")
            } else {
                put(c, "?", [.integer(0)])
            }
        }
        for c in r.document?.rootColumns ?? [] where o.document?.rootColumns.contains(c) == true { put(c, "o.\(q(c))") }
        if r.document != nil { put(Storage.documentColumn, "o.\(q(Storage.documentColumn))") }
        add(
            "copy the rows of \(oldName) into \(name)",
            "INSERT INTO \(q(r.table)) (\(columns.map(q).joined(separator: ", "))) SELECT \(exprs.joined(separator: ", ")) FROM \(aside(o.table)) AS o WHERE o.\(q(Storage.entityColumn)) = ?",
            bindings + [.integer(o.number)])
        let conversions = Array(steps[mark..<steps.count - 1])
        steps.removeSubrange(mark..<steps.count - 1)
        steps += conversions
        copyDocumentTables(r, o)
    }

    /// The columns of attribute `a` from old attribute `oa`, and its values table; a string
    /// conversion after the copy when the type became string.
    private mutating func copyAttribute(
        _ a: ResolvedAttribute, _ oa: ResolvedAttribute, _ entity: String, from o: ResolvedEntity,
        _ put: (String, String, [SQLValue]) -> Void
    ) {
        let filled = !a.description.isOptional && oa.description.isOptional ? a.defaultValue : nil
        if let d = filled, !a.description.isCollection {
            put(a.column, "COALESCE(o.\(q(oa.column)), ?)", [ColumnCodec.encode(d, a.type)])
        } else {
            put(a.column, "o.\(q(oa.column))", [])
        }
        if let x = a.exactColumn, let ox = oa.exactColumn {
            if let d = filled {
                put(x, "COALESCE(o.\(q(ox)), ?)", [ColumnCodec.exactText(d)])
            } else {
                put(x, "o.\(q(ox))", [])
            }
        }
        if let m = a.mixed, let om = oa.mixed {
            let pairs = [
                (m.shapeColumn, om.shapeColumn), (m.scalarColumn, om.scalarColumn), (m.dateColumn, om.dateColumn),
                (m.countColumn, om.countColumn),
            ]
            for case (let c?, let oc?) in pairs { put(c, "o.\(q(oc))", []) }
        }
        if case .success(.toString) = MigrationMatch.conversion(oa.description, a.description) {
            add(
                "write \(entity).\(a.name) as strings",
                "SELECT \(q(Storage.primaryKey)), \(q(oa.column)), \(oa.exactColumn.map(q) ?? "NULL") FROM \(aside(o.table)) WHERE \(q(Storage.entityColumn)) = ? AND \(q(oa.column)) IS NOT NULL",
                [.integer(o.number)],
                check: .toString(from: oa.type, table: match.new.resolved[entity]!.table, column: a.column))
        }
    }

    /// Copies the values tables of the collection (and mixed array) attributes entity `name`
    /// declares, for the rows copied into its new table and its sub-entities'.
    private mutating func copyValues(_ name: String) {
        let r = match.new.resolved[name]!
        for a in r.attributes where a.declaringEntity(in: match.new, of: name) == name {
            guard let t = a.valueTable ?? a.mixed?.valueTable, let oa = match.attribute(a, of: name),
                let ot = oa.valueTable ?? oa.mixed?.valueTable
            else { continue }
            let cols = [Storage.owner, Storage.order, Storage.value].map(q).joined(separator: ", ")
            let fam = Self.family(name, in: match.new)
            add(
                "copy the values of \(name).\(a.name)",
                "INSERT INTO \(q(t)) (\(cols)) SELECT \(cols) FROM \(aside(ot)) WHERE \(q(Storage.owner)) IN (SELECT \(q(Storage.primaryKey)) FROM \(q(r.table)) WHERE \(q(Storage.entityColumn)) IN (\(fam.sql)))",
                fam.bindings)
        }
    }

    /// A document entity's own tables, each copied whole (its description did not change, so
    /// neither did their columns).
    private mutating func copyDocumentTables(_ r: ResolvedEntity, _ o: ResolvedEntity) {
        guard let tables = r.document?.tables, let old = o.document?.tables else { return }
        for (t, ot) in zip(tables, old) {
            add("copy the document table \(t.table)", "INSERT INTO \(q(t.table)) SELECT * FROM \(aside(ot.table))")
        }
    }

    // MARK: Core Data's key and metadata tables

    /// A store in Core Data's layout: a `Z_PRIMARYKEY` row per entity of the new model under its
    /// new number, each root's `Z_MAX` the largest of the old roots' counters its hierarchy
    /// continues and its table's largest key (so no key is issued twice), persistent history's
    /// rows (16001…) kept; the metadata's new property list; the stale model cache (set aside
    /// with the old tables) is not laid out again.
    private mutating func coreDataKeys(metadata: [UInt8]) {
        let keys = q(CoreDataNames.keyTable)
        for row in CoreDataFile.keyRows(match.new) {
            add("number entity \(row.entity)", CoreDataFile.insertKeyRow, row.bindings)
        }
        add(
            "keep persistent history's key counters",
            "INSERT INTO \(keys) SELECT * FROM \(aside(CoreDataNames.keyTable)) WHERE Z_ENT >= 16000")
        for e in match.new.entities where e.parent == nil {
            let r = match.new.resolved[e.name]!
            let oldRoots = Set(r.family.compactMap { match.entities[$0].flatMap { match.old.resolved[$0]?.root } })
            let numbers = oldRoots.sorted().map { SQLValue.integer(match.old.resolved[$0]!.number) }
            let marks = Array(repeating: "?", count: numbers.count).joined(separator: ", ")
            let old = "(SELECT MAX(Z_MAX) FROM \(aside(CoreDataNames.keyTable)) WHERE Z_ENT IN (\(marks)))"
            let pk = q(Storage.primaryKey)
            add(
                "keep the key counter of \(e.name)",
                "UPDATE \(keys) SET Z_MAX = MAX(COALESCE(\(old), 0), COALESCE((SELECT MAX(\(pk)) FROM \(q(r.table))), 0)) WHERE Z_ENT = ?",
                numbers + [.integer(r.number)])
        }
        add(
            "write the metadata (UUID and keys kept, Apple's stale version hashes dropped)",
            "UPDATE \(q(CoreDataNames.metadataTable)) SET Z_PLIST = ?", [.blob(metadata)])
    }

    // MARK: Links

    /// The SELECT of old relationship `o`'s links as (src, dst, ord) seen from its own side.
    private func oldLinks(_ o: ResolvedRelationship, of oldEntity: String) -> String {
        let pk = q(Storage.primaryKey)
        switch o.storage {
        case .foreignKey(let c):
            let table = match.old.resolved[oldEntity]!.table
            return "SELECT \(pk) AS src, \(q(c)) AS dst, NULL AS ord FROM \(aside(table)) WHERE \(q(c)) IS NOT NULL"
        case .inverseForeignKey(let table, let c, let order):
            return
                "SELECT \(q(c)) AS src, \(pk) AS dst, \(order.map(q) ?? "NULL") AS ord FROM \(aside(table)) WHERE \(q(c)) IS NOT NULL"
        case .joinTable(let table, let source, let dest, let order):
            return
                "SELECT \(q(source)) AS src, \(q(dest)) AS dst, \(order.map(q) ?? "NULL") AS ord FROM \(aside(table))"
        }
    }

    /// Carries the links of each relationship entity `name` declares over to its new storage.
    private mutating func copyLinks(_ name: String) {
        let r = match.new.resolved[name]!
        let links = q(Self.linksTable)
        let pk = q(Storage.primaryKey)
        let ent = q(Storage.entityColumn)
        for rel in r.relationships where rel.declaringEntity == name {
            guard let o = match.relationship(rel, of: name), let oldEntity = match.entities[name] else { continue }
            // A many-to-many's pairs are written by its first side; the other reads its links
            // again only to write its own order.
            if case .joinTable(let t, _, _, let order) = rel.storage, madeJoins.contains(t), order == nil { continue }
            let dest = match.new.resolved[rel.destination]!
            let src = Self.family(name, in: match.new)
            let dst = Self.family(rel.destination, in: match.new)
            add("clear the scratch table", "DELETE FROM \(links)")
            add(
                "read the links of \(oldEntity).\(o.name)",
                "INSERT INTO \(links) (src, dst, ord) SELECT l.src, l.dst, ROW_NUMBER() OVER (PARTITION BY l.src ORDER BY l.ord, l.dst) - 1 FROM (\(oldLinks(o, of: o.declaringEntity))) AS l WHERE l.src IN (SELECT \(pk) FROM \(q(r.table)) WHERE \(ent) IN (\(src.sql))) AND l.dst IN (SELECT \(pk) FROM \(q(dest.table)) WHERE \(ent) IN (\(dst.sql)))",
                src.bindings + dst.bindings)
            let what = "\(name).\(rel.name)"
            if !rel.isToMany {
                add(
                    "check that \(what) holds one object", "SELECT src FROM \(links) GROUP BY src HAVING COUNT(*) > 1",
                    check: .rowsFail(
                        entity: name, key: rel.name, message: "holds several objects, and is now to-one",
                        constraint: .maxCount))
            }
            if let inv = rel.inverse, let ir = dest.relationship(inv), !ir.isToMany {
                add(
                    "check that \(rel.destination).\(inv) holds one object",
                    "SELECT dst FROM \(links) GROUP BY dst HAVING COUNT(*) > 1",
                    check: .rowsFail(
                        entity: rel.destination, key: inv, message: "holds several objects, and is now to-one",
                        constraint: .maxCount))
            }
            writeLinks(rel, in: r)
        }
    }

    /// Join tables already filled (a many-to-many's two sides share one).
    private var madeJoins = Set<String>()

    /// Writes the scratch table's links into `rel`'s new storage.
    private mutating func writeLinks(_ rel: ResolvedRelationship, in r: ResolvedEntity) {
        let links = q(Self.linksTable)
        let pk = q(Storage.primaryKey)
        let what = "\(r.name).\(rel.name)"
        switch rel.storage {
        case .foreignKey(let c):
            add(
                "write the links of \(what)",
                "UPDATE \(q(r.table)) SET \(q(c)) = (SELECT dst FROM \(links) WHERE src = \(q(r.table)).\(pk)) WHERE \(pk) IN (SELECT src FROM \(links))"
            )
            // Core Data's companion column: the destination's (new) entity number.
            if let ec = rel.entityColumn {
                let dest = q(match.new.resolved[rel.destination]!.table)
                add(
                    "write the destinations' entity numbers of \(what)",
                    "UPDATE \(q(r.table)) SET \(q(ec)) = (SELECT d.\(q(Storage.entityColumn)) FROM \(dest) AS d WHERE d.\(pk) = \(q(r.table)).\(q(c))) WHERE \(q(c)) IS NOT NULL"
                )
            }
        case .inverseForeignKey(let table, let c, let order):
            let ord = order.map { ", \(q($0)) = (SELECT ord FROM \(links) WHERE dst = \(q(table)).\(pk))" } ?? ""
            add(
                "write the links of \(what)",
                "UPDATE \(q(table)) SET \(q(c)) = (SELECT src FROM \(links) WHERE dst = \(q(table)).\(pk))\(ord) WHERE \(pk) IN (SELECT dst FROM \(links))"
            )
        case .joinTable(let table, let source, let dest, let order?) where madeJoins.contains(table):
            let t = q(table)
            add(
                "write the order of \(what)",
                "UPDATE \(t) SET \(q(order)) = (SELECT ord FROM \(links) WHERE src = \(t).\(q(source)) AND dst = \(t).\(q(dest)))"
            )
        case .joinTable(let table, let source, let dest, let order):
            madeJoins.insert(table)
            let cols = [source, dest].map(q) + (order.map { [q($0)] } ?? [])
            add(
                "write the links of \(what)",
                "INSERT INTO \(q(table)) (\(cols.joined(separator: ", "))) SELECT src, dst\(order == nil ? "" : ", ord") FROM \(links)"
            )
        }
    }

    /// Sets each count column of entity `name`'s to-manys to the number of links (the count
    /// triggers counted the copied links on top of the copied counts).
    private mutating func recount(_ name: String) {
        let r = match.new.resolved[name]!
        let pk = q(Storage.primaryKey)
        for rel in r.relationships where rel.declaringEntity == name {
            guard let c = rel.countColumn, let (t, fk) = rel.linkRows else { continue }
            let fam = Self.family(name, in: match.new)
            add(
                "count the links of \(name).\(rel.name)",
                "UPDATE \(q(r.table)) SET \(q(c)) = (SELECT COUNT(*) FROM \(q(t)) WHERE \(q(fk)) = \(q(r.table)).\(pk)) WHERE \(q(c)) IS NOT NULL AND \(q(Storage.entityColumn)) IN (\(fam.sql))",
                fam.bindings)
        }
    }

    // MARK: Rules

    /// Checks every row of entity `name` (and its sub-entities) against the rules that changed:
    /// attribute rules, required to-ones, count bounds, uniqueness constraints.
    private mutating func checkRules(_ name: String) {
        guard let oldName = match.entities[name] else { return }
        let r = match.new.resolved[name]!
        let o = match.old.resolved[oldName]!
        let fam = Self.family(name, in: match.new)
        let rows = "FROM \(q(r.table)) WHERE \(q(Storage.entityColumn)) IN (\(fam.sql))"
        let pk = q(Storage.primaryKey)
        for a in r.attributes where a.declaringEntity(in: match.new, of: name) == name {
            guard let oa = match.attribute(a, of: name), !a.description.isCollection, a.mixed == nil,
                MigrationMatch.rulesChanged(oa.description, a.description)
            else { continue }
            add(
                "check every \(name).\(a.name) against its new rules",
                "SELECT \(pk), \(q(a.column)), \(a.exactColumn.map(q) ?? "NULL") \(rows)", fam.bindings,
                check: .validate(entity: name, rule: a.description))
        }
        for rel in r.relationships where rel.declaringEntity == name {
            guard let orel = match.relationship(rel, of: name) else { continue }
            let d = rel.description
            let od = orel.description
            if case .foreignKey(let c) = rel.storage, !d.isOptional, od.isOptional || orel.isToMany {
                add(
                    "check that every \(name).\(rel.name) is set", "SELECT \(pk) \(rows) AND \(q(c)) IS NULL",
                    fam.bindings,
                    check: .rowsFail(entity: name, key: rel.name, message: "is required", constraint: .required))
            }
            guard rel.isToMany, d.minCount > 0 || d.maxCount > 0,
                d.minCount != od.minCount || d.maxCount != od.maxCount || !orel.isToMany
            else { continue }
            guard let (t, fk) = rel.linkRows else { continue }
            let n = "(SELECT COUNT(*) FROM \(q(t)) WHERE \(q(fk)) = \(q(r.table)).\(pk))"
            let bounds: [(Int, String, String, StoreError.Constraint)] = [
                (d.minCount, "<", "fewer than the minimum", .minCount),
                (d.maxCount, ">", "more than the maximum", .maxCount),
            ]
            for (bound, op, words, constraint) in bounds where bound > 0 {
                add(
                    "check that \(name).\(rel.name) holds no \(words) \(bound)",
                    "SELECT \(pk) \(rows) AND \(n) \(op) ?", fam.bindings + [.integer(Int64(bound))],
                    check: .rowsFail(
                        entity: name, key: rel.name, message: "holds \(words) \(bound) objects",
                        constraint: constraint))
            }
        }
        guard r.description.uniquenessConstraints != o.description.uniquenessConstraints else { return }
        for constraint in r.constraints {
            let cols = constraint.map { q(r.attributes[$0].column) }.joined(separator: ", ")
            let keys = constraint.map { r.attributes[$0].name }
            add(
                "check that no two \(name) objects share \(keys.joined(separator: ", "))",
                "SELECT MAX(\(pk)) \(rows) GROUP BY \(cols) HAVING COUNT(*) > 1", fam.bindings,
                check: .rowsFail(
                    entity: name, key: keys[0], message: "has the same values as another object for \(keys)",
                    constraint: .uniqueness))
        }
    }

    // MARK: History

    /// Gives each persistent-history change its entity's new number and its changed-keys mask
    /// the new positions of the keys; drops the changes of removed entities.
    private mutating func renumberHistory() {
        let t = q(HistoryTables.change)
        for (newName, oldName) in match.entities.sorted(by: { $0.key < $1.key }) {
            let r = match.new.resolved[newName]!
            let o = match.old.resolved[oldName]!
            let newKeys = r.attributes.map(\.name) + r.relationships.map(\.name)
            var renamed: [String: String] = [:]
            for a in r.attributes { if let oa = match.attribute(a, of: newName) { renamed[oa.name] = a.name } }
            for rel in r.relationships {
                if let orel = match.relationship(rel, of: newName) { renamed[orel.name] = rel.name }
            }
            let bits = (o.attributes.map(\.name) + o.relationships.map(\.name)).map { old in
                renamed[old].flatMap { newKeys.firstIndex(of: $0) }
            }
            add(
                "renumber the history of \(oldName) as \(newName)",
                "SELECT \(q(Storage.primaryKey)), ZCOLUMNS FROM \(t) WHERE ZENTITY = ?", [.integer(o.number)],
                check: .renumberHistory(number: r.number, bits: bits))
        }
        add("drop the history of removed entities", "DELETE FROM \(t) WHERE ZENTITY > 0")
        add("settle the history's entity numbers", "UPDATE \(t) SET ZENTITY = -ZENTITY")
    }
}

extension ResolvedRelationship {
    /// A to-many's links: the table holding one row per link and its column holding the source's
    /// key (nil for a to-one).
    var linkRows: (table: String, sourceColumn: String)? {
        switch storage {
        case .inverseForeignKey(let table, let column, _): (table, column)
        case .joinTable(let table, let source, _, _): (table, source)
        case .foreignKey: nil
        }
    }
}
