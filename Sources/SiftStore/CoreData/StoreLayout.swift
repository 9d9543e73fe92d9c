// The two ways a store lays a model out in SQLite, declared here and nowhere else: Sift's own
// (tables and columns named as the model names them, entity numbers in model order, one key
// counter for the store) and Core Data's (`ZCAR`, `ZNAME`, entity numbers of roots in
// alphabetical order each followed by its sub-entities, `Z<n>_<REL>` entity companions of to-ones
// into hierarchies, `Z_<n><REL>` join tables, a key counter per root in `Z_PRIMARYKEY`), as
// ../shared/reference/coredata-formats.md §2 describes it. The resolver asks the layout for each
// name and number; nothing else in the store tells the two apart but the metadata and key tables.

import Foundation
import SiftSQL

/// Sift's own layout, or the one Core Data's SQLite stores have.
enum StoreLayout: Hashable, Sendable {
    case sift
    case coreData

    /// How primary keys are issued: one counter for the store, or one per root entity.
    var keyScope: PersistentStore.KeyScope { self == .sift ? .store : .hierarchy }

    /// Table names the store keeps for itself (never an entity's).
    var reservedTables: [String] {
        switch self {
        case .sift: [Storage.metadataTable, Storage.keyTable]
        case .coreData: [CoreDataNames.keyTable, CoreDataNames.metadataTable, CoreDataNames.modelCacheTable]
        }
    }

    /// Each entity's `Z_ENT` number: model order (Sift), or the root entities in alphabetical order,
    /// each followed by its sub-entities, alphabetical and depth first (Core Data), from 1.
    func entityNumbers(_ entities: [EntityDescription]) -> [String: Int64] {
        switch self {
        case .sift:
            return Dictionary(uniqueKeysWithValues: entities.enumerated().map { ($1.name, Int64($0 + 1)) })
        case .coreData:
            var children: [String?: [String]] = [:]
            for e in entities { children[e.parent, default: []].append(e.name) }
            var out: [String: Int64] = [:]
            func visit(_ parent: String?) {
                for name in (children[parent] ?? []).sorted() {
                    out[name] = Int64(out.count + 1)
                    visit(name)
                }
            }
            visit(nil)
            return out
        }
    }

    /// The table of the hierarchy under `root`.
    func table(root: String) -> String {
        switch self {
        case .sift: root
        case .coreData: "Z" + root.uppercased()
        }
    }

    /// What a property's column is named before it is made unique in its table.
    func columnBase(_ property: String) -> String {
        switch self {
        case .sift: property
        case .coreData: "Z" + property.uppercased()
        }
    }

    /// `base`, or when a column of the table has it (SQLite compares without ASCII case) the
    /// first free numbered form: `name#2`, `name#3`… (Sift), `ZTEXT1`, `ZTEXT2`… (Core Data).
    func unique(_ base: String, in used: inout Set<String>) -> String {
        switch self {
        case .sift: StorageNames.unique(base, in: &used)
        case .coreData: StorageNames.unique(base, in: &used) { "\($0)" }
        }
    }

    /// The order column, in the destination's table, of an ordered to-many whose inverse is the
    /// to-one `toOne`.
    func orderColumnBase(toOne: String) -> String {
        switch self {
        case .sift: "Z_FOK_\(toOne)"
        case .coreData: "Z_FOK_" + toOne.uppercased()
        }
    }

    /// The column beside to-one `relationship`'s key holding the destination's entity number,
    /// when the destination (number `destination`) has sub-entities; Sift reads the number from
    /// the destination's row instead.
    func entityColumnBase(relationship: String, destination: Int64, destinationHasChildren: Bool) -> String? {
        guard self == .coreData, destinationHasChildren else { return nil }
        return "Z\(destination)_" + relationship.uppercased()
    }

    /// The version (`Z_OPT`) a new row is written with; each save of the row raises it. Core Data
    /// starts at 1.
    var firstVersion: Int64 { self == .coreData ? 1 : 0 }

    /// Whether UUIDs are kept as their 16 bytes (Core Data) rather than as text (Sift).
    var keepsUUIDsAsBytes: Bool { self == .coreData }

    /// The statements reading and raising a key counter (`?1` the counter, `?2` the new maximum):
    /// rows of `sift_primary_key` by name, or the roots' `Z_MAX` in `Z_PRIMARYKEY` by number.
    var keyCounterSQL: (read: String, write: String) {
        switch self {
        case .sift:
            (
                "SELECT max FROM sift_primary_key WHERE entity = ?1",
                "INSERT OR REPLACE INTO sift_primary_key (entity, max) VALUES (?1, ?2)"
            )
        case .coreData:
            ("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?1", "UPDATE Z_PRIMARYKEY SET Z_MAX = ?2 WHERE Z_ENT = ?1")
        }
    }

    /// The counter of hierarchy `root` (when keys are issued per hierarchy).
    func keyCounter(root: ResolvedEntity) -> SQLValue {
        switch self {
        case .sift: .text(root.name)
        case .coreData: .integer(root.number)
        }
    }

    /// Whether a decimal keeps its exact text beside the REAL the lowering compares (Core Data's
    /// stores keep the REAL only).
    var keepsExactDecimals: Bool { self == .sift }

    /// The declared type of an attribute's column.
    func columnType(_ t: AttributeType) -> String {
        switch self {
        case .sift: return TableLayout.sqlType(t)
        case .coreData:
            switch t {
            case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
            case .double, .float: return "FLOAT"
            case .decimal: return "DECIMAL"
            case .date: return "TIMESTAMP"
            case .string, .uri: return "VARCHAR"
            case .binary, .transformable, .uuid, .mixed: return "BLOB"
            case .dynamic: return ""
            }
        }
    }

    /// What the layout cannot hold of `e` (a Sift-only feature under Core Data's layout), if anything.
    func unsupported(_ e: EntityDescription) -> String? {
        guard self == .coreData else { return nil }
        if e.document != nil { return "document entity '\(e.name)'" }
        for a in e.attributes {
            if a.isCollection { return "collection attribute '\(e.name).\(a.name)'" }
            if a.type == .mixed || a.type == .dynamic { return "\(a.type.rawValue) attribute '\(e.name).\(a.name)'" }
        }
        for r in e.relationships {
            if r.allowsNil { return "'allowsNil' on relationship '\(e.name).\(r.name)'" }
            if r.isToMany, r.inverse == r.name, r.destination == e.name {
                return
                    "many-to-many relationship '\(e.name).\(r.name)', its own inverse (its join table's columns are not documented)"
            }
            if r.isToMany, r.inverse == nil {
                return
                    "to-many relationship '\(e.name).\(r.name)' without an inverse (its join table's layout is not documented)"
            }
        }
        return nil
    }
}

/// The names of the tables and columns Core Data's stores keep for themselves.
enum CoreDataNames {
    static let keyTable = "Z_PRIMARYKEY"
    static let metadataTable = "Z_METADATA"
    static let modelCacheTable = "Z_MODELCACHE"
    /// The SQL function Core Data's derived-attribute triggers call to tell Core Data of a value
    /// they updated; registered inert on every store connection (Sift computes derived values at
    /// save itself), so that writes firing those triggers do not fail "no such function".
    static let derivedAttributeTriggerFunction = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
    /// Sift's metadata key naming the ``ManagedObjectModel/versionHash`` of the model Sift last
    /// laid the store out for (created or migrated), which tells apart versions with one schema.
    static let siftVersionKey = "SiftModelVersionHash"
    /// Persistent history's tables (entity numbers 16001–16003): kept as they are; Sift records
    /// its own history elsewhere and appends nothing to them.
    static let historyTables = [HistoryTables.transaction, HistoryTables.change, HistoryTables.string]

    /// A many-to-many's join table, named by the side whose entity number is lower (the first
    /// relationship name on a tie), with a column per side: `Z_<n><REL>` holds the key of a row of
    /// entity number `n`, `REL` being the relationship that points at it. `mine` and `theirs` are
    /// (declaring entity number, relationship name); the result's `source` holds this side's key.
    static func joinTable(mine: (Int64, String), theirs: (Int64, String)) -> (
        table: String, source: String, destination: String
    ) {
        let source = "Z_\(mine.0)" + theirs.1.uppercased()
        let destination = "Z_\(theirs.0)" + mine.1.uppercased()
        let namer = (mine.0, mine.1) <= (theirs.0, theirs.1) ? mine : theirs
        return ("Z_\(namer.0)" + namer.1.uppercased(), source, destination)
    }

    /// The order column of an ordered many-to-many side in its join table: `Z_FOK_` and the name,
    /// without its `Z_`, of the column holding the keys of the rows it orders (`Z_FOK_34ASSETS`
    /// beside `Z_34ASSETS`). Not documented; seen the same in the stores of three applications.
    static func orderColumn(destination: String) -> String {
        "Z_FOK_" + destination.dropFirst(2)
    }
}
