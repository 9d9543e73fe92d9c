// The options every predicate-running command shares (`--arg`, `--var`, `--sort`), declared once so
// `sift filter`, `sift sql` and the store's commands spell, document and validate them the same way.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON

/// `--arg JSON` and `--var NAME=JSON`: the values a predicate's format takes, for every command
/// that runs one (the store's batch requests take these alone).
struct FormatInputs: ParsableArguments {
    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: "A JSON value for the next %@, %K, %d… specifier.")
    var args: [String] = []

    @Option(
        name: .customLong("var"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Bind $NAME to a JSON value.", valueName: "NAME=JSON"))
    var vars: [String] = []

    func validate() throws { _ = try variables() }

    /// The `--var` bindings as JSON documents (each back-end converts them to what it binds).
    func variables() throws -> [String: JSONValue] { try parseVariableJSON(vars) }

    /// The `--arg` values for the format's specifiers.
    func arguments() throws -> [Any?] { try parseArguments(args) }
}

/// `--arg JSON`, `--var NAME=JSON` and `--sort KEY[opts][:desc]`, parsed once each.
struct PredicateInputs: ParsableArguments {
    @OptionGroup var format: FormatInputs

    @Option(
        name: .customLong("sort"),
        help: ArgumentHelp("Sort by a key path (repeatable; first is primary).", valueName: "KEY[opts][:desc]"))
    var sortKeys: [String] = []

    // `format` validates its own options first, as it is decoded.
    func validate() throws { _ = try sortDescriptors() }

    /// The `--arg` texts, as given.
    var args: [String] { format.args }

    /// The `--var` bindings as JSON documents (each back-end converts them to what it binds).
    func variables() throws -> [String: JSONValue] { try format.variables() }

    /// The `--sort` keys.
    func sortDescriptors() throws -> [SiftSortDescriptor] { try parseSortDescriptors(sortKeys) }

    /// The `--arg` values for the format's specifiers.
    func arguments() throws -> [Any?] { try format.arguments() }
}

/// Parses `--var NAME=JSON` options into their JSON documents, checking the names.
func parseVariableJSON(_ texts: [String]) throws -> [String: JSONValue] {
    var out: [String: JSONValue] = [:]
    for text in texts {
        guard let eq = text.firstIndex(of: "=") else {
            throw ValidationError("--var \(text): expected NAME=JSON")
        }
        var name = String(text[..<eq])
        if name.hasPrefix("$") { name.removeFirst() }
        guard let first = name.unicodeScalars.first,
            first == "_" || CharacterSet.letters.contains(first),
            name.unicodeScalars.allSatisfy({ $0 == "_" || CharacterSet.alphanumerics.contains($0) })
        else {
            throw ValidationError("--var \(text): '\(name)' is not a variable name")
        }
        do { out[name] = try JSONReader.parse(String(text[text.index(after: eq)...])) } catch {
            throw ValidationError("--var \(name): \(error)")
        }
    }
    return out
}
