// `sift store model`: an Xcode Core Data model (an `.xcdatamodeld` bundle or a bare `.xcdatamodel`
// folder) read by `ManagedObjectModel(contentsOf:version:)` and printed as Sift's JSON model, the
// file `sift store create --model` reads (fetch request templates included, as `fetchRequests`); or,
// with `--templates`, its fetch request templates one a line.
// What the model holds that Sift does not keep is a warning on standard error at its
// `contents:line:column`; a model that cannot be read is an error there (exit status 1).

import ArgumentParser
import Foundation
import SiftStore

struct StoreModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print Sift's JSON model of an Xcode Core Data model (.xcdatamodeld or .xcdatamodel).",
        discussion: """
            Reads PATH, an .xcdatamodeld bundle (its current version, as its .xccurrentversion names \
            it, or its only version; --version picks one by name) or a bare .xcdatamodel folder, and \
            prints the model as JSON, as 'sift store create --model' reads it:

              sift store model App/Model.xcdatamodeld > model.json
              sift store create app.sqlite --model model.json

            Entities (abstract, parent, class name), every attribute type with its options, \
            relationships (ordered, counts, delete rules, inverses), uniqueness constraints, indexes, \
            user info, renaming identifiers, configurations and fetch request templates (the JSON's \
            'fetchRequests') map onto Sift's model. What Sift \
            does not keep (fetched properties, transient relationships, derivation expressions, an \
            element of a newer Xcode) is a warning on standard error, 'PATH/contents:line:column: warning: …'. A model that \
            cannot be read (malformed XML, a type Sift has no column for, a bundle saved by Xcode 3, \
            a version that is not there) is an error at its place, exit status 1.

            --templates lists the model's fetch request templates instead, one JSON object a line: \
            name, entity, predicate (with its $VARIABLES), variables and fetchLimit.
            """
    )

    @Argument(help: ArgumentHelp("An .xcdatamodeld bundle or a bare .xcdatamodel folder.", valueName: "PATH"))
    var path: String

    @Option(help: ArgumentHelp("The version of the bundle to read (default: its current one).", valueName: "NAME"))
    var version: String?

    @Flag(help: "List the fetch request templates (name, entity, predicate) instead of printing the model.")
    var templates = false

    func run() throws {
        try reportingStoreErrors {
            let model: ManagedObjectModel
            do throws(ModelError) {
                model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path), version: version)
            } catch {
                throw StoreCommandError(
                    lines: error.failures.map { $0.file == nil ? StoreCommandError.errorLine($0.description) : "\($0)" }
                )
            }
            for w in model.warnings { writeError(w.description) }
            let text = templates ? Self.templateLines(model) : model.jsonString + "\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    /// One JSON object a line per template, keys sorted.
    static func templateLines(_ model: ManagedObjectModel) -> String {
        struct Line: Encodable {
            var name: String
            var entity: String
            var predicate: String?
            var variables: [String]
            var fetchLimit: Int?
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return model.fetchRequestTemplates.map { t in
            let line = Line(
                name: t.name, entity: t.entityName, predicate: t.predicateFormat, variables: t.variableNames,
                fetchLimit: t.request.fetchLimit)
            // Strings, arrays and integers always encode.
            return String(decoding: try! encoder.encode(line), as: UTF8.self) + "\n"
        }.joined()
    }
}
