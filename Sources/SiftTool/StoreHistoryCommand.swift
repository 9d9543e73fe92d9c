// `sift store history`: the store's persistent history as NDJSON, one transaction a line (token,
// ISO 8601 timestamp, author, context name, changes), so scripts and other processes can follow
// what was written to a store file: pass the last token seen to `--after` to read only what
// followed. The store must track history (`sift store create --history`); `--off` turns it off.

import ArgumentParser
import Foundation
import SiftJSON
import SiftStore

struct StoreHistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the store's persistent history as NDJSON.",
        discussion: """
            Prints every transaction recorded in DB's history (saves, imports, batch updates and \
            deletes), oldest first, one JSON object a line: {"token": N, "timestamp": ISO 8601 UTC, \
            "author": …, "contextName": …, "changes": [{"object": URI, "entity": NAME, "key": \
            PRIMARY-KEY, "kind": "insert" | "update" | "delete", "keys": [changed keys, for an \
            update], "tombstone": {attribute: value, for a delete: the attributes the model marks \
            "preservesValueInHistoryOnDeletion"}}]}. The command line's own writes have the author "sift" and the context name \
            of the command ("store import", "store update", "store delete"). --after TOKEN prints \
            only the transactions after that one. A store made without --history has no history \
            (exit 1). --off turns history tracking off and deletes every recorded transaction \
            (prints nothing; 'sift store create DB --model MODEL.json --history' turns it on again).
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @Option(help: ArgumentHelp("Print only the transactions after this token.", valueName: "TOKEN"))
    var after: Int64?

    @Flag(help: "Turn history tracking off and delete the recorded transactions.")
    var off = false

    func validate() throws {
        if off && after != nil { throw ValidationError("--off takes no --after: it deletes every transaction") }
    }

    func run() throws {
        try reportingStoreErrors {
            let store = try StoreAccess.open(db)
            if off {
                do throws(StoreError) { try store.setHistoryTracking(false) } catch { throw StoreCommandError(error) }
                return
            }
            let transactions: [HistoryTransaction]
            do throws(StoreError) { transactions = try store.history(after: after.map(HistoryToken.init)) } catch {
                throw StoreCommandError(error)
            }
            var out = ""
            let renderer = StoreRenderer(model: store.model, keyOrder: [:], printsNils: true)
            for t in transactions { out += Self.line(t, renderer).text + "\n" }
            FileHandle.standardOutput.write(Data(out.utf8))
        }
    }

    /// One transaction as a JSON object (tombstone values in `sift filter`'s conventions).
    static func line(_ t: HistoryTransaction, _ renderer: StoreRenderer) -> JSONValue {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let changes = t.changes.map { c -> JSONValue in
            var fields: [(String, JSONValue)] = [
                ("object", .string(c.objectID.uriRepresentation.absoluteString)),
                ("entity", .string(c.objectID.entityName)),
                ("key", c.objectID.primaryKey.map { .integer($0) } ?? .null),
                ("kind", .string(c.kind.rawValue)),
            ]
            if c.kind == .update { fields.append(("keys", .array(c.updatedKeys.map { .string($0) }))) }
            if let kept = c.tombstone {
                fields.append(("tombstone", .object(kept.keys.sorted().map { ($0, renderer.json(kept[$0]!)) })))
            }
            return .object(fields)
        }
        return .object([
            ("token", .integer(t.token.value)),
            ("timestamp", .string(format.string(from: t.timestamp))),
            ("author", t.author.map { .string($0) } ?? .null),
            ("contextName", t.contextName.map { .string($0) } ?? .null),
            ("changes", .array(changes)),
        ])
    }
}
