// `sift store info DB [--model PATH]`: what a store file holds, for Sift's stores and Core Data's
// alike (PersistentStore.summary(ofFileAt:)): its type and UUID, the identity of the model it was
// written with, each entity's objects, the metadata keys and values, and Core Data's history
// tables. A Core Data store needs no model to be described; given one (`--model`, as `query`,
// `update` and `delete` take it), the version matching the store is named, or each version's
// differences are the error. Also here: that `--model` option, shared by the commands that open
// a store.

import ArgumentParser
import Foundation
import SiftStore

/// `--model PATH`: the model of a Core Data store.
struct CoreDataModelOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A Core Data store's model: an .xcdatamodeld bundle (the version matching the store is used), an .xcdatamodel or a model JSON file.",
            valueName: "PATH"))
    var model: String?
}

struct StoreInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a store file: Sift's or Core Data's.",
        discussion: """
            Prints the store's type (Sift or Core Data) and UUID, the identity of the model it was \
            written with (Sift's model version hash; Core Data's entity numbers and the entities \
            its version hashes are kept for), each entity's objects (of that entity, not counting \
            its sub-entities), and the metadata keys with their values (strings quoted; binary \
            values as their size; a Sift store's model JSON as its size: 'sift store model' prints \
            models). A Core Data store is read without a model; with --model the version that \
            matches the store is named, and a model none of whose versions matches is an error \
            listing each version's differences (exit 1).
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @OptionGroup var coreData: CoreDataModelOption

    func run() throws {
        try reportingStoreErrors {
            let summary: StoreSummary
            do throws(StoreError) { summary = try PersistentStore.summary(ofFileAt: db) } catch {
                throw StoreCommandError(error)
            }
            var lines = ["type: \(summary.type)", "uuid: \(summary.uuid)"]
            lines += summary.modelIdentity.map { "model: \($0)" }
            if let path = coreData.model {
                let version = try StoreAccess.openCoreData(db, model: path).version
                lines.append("matching model: \(path)" + (version.map { " (version '\($0)')" } ?? ""))
            }
            lines.append("entities:")
            lines += summary.entities.map { "  \($0.name): \($0.count)" }
            lines.append("metadata:")
            lines += summary.metadata.map { "  \($0.key): \($0.value)" }
            if !summary.history.isEmpty {
                lines.append("persistent history (kept; Sift appends none):")
                lines += summary.history.map { "  \($0.table): \($0.rows) rows" }
            }
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }
}
