// Reading record sets for `sift filter` and `sift batch --data`: one JSON array of records, or a
// sequence of JSON values (NDJSON or concatenated JSON), told apart by the first non-blank byte.

import Foundation
import SiftEvaluation
import SiftSyntax

/// Why an input could not be read or parsed; the description names the file and, for a syntax
/// error, the line and column (`people.json:3:7: error: …`).
///
/// ```swift
/// do { _ = try MappedInput.open("missing.json") } catch {
///     print(error.id)   // no-such-file
///     print(error)      // missing.json: error: no such file
/// }
/// ```
public struct RecordsError: SiftError, Hashable {
    /// The kinds of failure; the raw value is the error's id.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The path names no file.
        case noSuchFile = "no-such-file"
        /// The path names a directory.
        case isDirectory = "is-a-directory"
        /// The file or standard input could not be read (permissions, an I/O error).
        case unreadable = "unreadable-input"
        /// The input is not JSON (``location`` says where).
        case invalidJSON = "invalid-json"
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// The input's name: its path, or `<stdin>`.
    public var input: String
    /// What went wrong, without the input's name or the position.
    public var message: String
    /// The 1-based line and column of a syntax error.
    public var location: SourceLocation?

    /// An error of `kind` about `input` (a path or `<stdin>`).
    public init(_ kind: Kind, input: String, message: String, location: SourceLocation? = nil) {
        self.kind = kind
        self.input = input
        self.message = message
        self.location = location
    }

    /// The error for a JSON syntax error in `input`.
    init(_ error: JSONError, input: String) {
        self.init(.invalidJSON, input: input, message: error.message, location: error.location)
    }

    /// The kind's raw value, e.g. `no-such-file`.
    public var id: String { kind.rawValue }

    /// `input:line:column: error: message`, or `input: error: message` without a location.
    public var description: String {
        "\(input)" + (location.map { ":\($0)" } ?? "") + ": error: \(message)"
    }
}

/// Record sets read whole (the SQL back-ends load every record before running a query).
package enum Records {
    /// The bytes of `path`, or of standard input when `path` is nil or `-`.
    package static func read(_ path: String?) throws(RecordsError) -> [UInt8] {
        if path == nil || path == "-" {
            return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        }
        let path = path!
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw RecordsError(.noSuchFile, input: path, message: "no such file")
        }
        if isDirectory.boolValue { throw RecordsError(.isDirectory, input: path, message: "is a directory") }
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw RecordsError(
                .unreadable, input: path, message: "cannot read the file (\(error.localizedDescription))")
        }
    }

    /// The records in `bytes`: the elements of a top-level array, or every value of a sequence.
    /// `name` prefixes syntax errors (`FILE:line:col: error: …`).
    package static func parse(_ bytes: [UInt8], name: String) throws(RecordsError) -> [JSONValue] {
        let reader = JSONReader(bytes: bytes)
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        do {
            if first == UInt8(ascii: "[") {
                guard case .array(let items) = try reader.parseDocument() else { return [] }
                return items
            }
            return try reader.parseSequence()
        } catch {
            throw RecordsError(error, input: name)
        }
    }

    /// Reads and parses `path` (standard input when nil or `-`).
    package static func load(_ path: String?) throws(RecordsError) -> [JSONValue] {
        try parse(try read(path), name: displayName(path))
    }

    package static func displayName(_ path: String?) -> String {
        path == nil || path == "-" ? "<stdin>" : path!
    }
}
