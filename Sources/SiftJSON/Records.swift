// Reading record sets for `sift filter` and `sift batch --data`: one JSON array of records, or a
// sequence of JSON values (NDJSON or concatenated JSON), told apart by the first non-blank byte.

import Foundation
import SiftEvaluation

/// Why an input could not be read or parsed; `description` names the file and, for a syntax error,
/// the line and column (`people.json:3:7: error: …`).
public struct RecordsError: Error, CustomStringConvertible, Sendable {
    /// The line to print on standard error.
    public var description: String
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
            throw RecordsError(description: "\(path): error: no such file")
        }
        if isDirectory.boolValue { throw RecordsError(description: "\(path): error: is a directory") }
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw RecordsError(description: "\(path): error: cannot read the file (\(error.localizedDescription))")
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
            throw RecordsError(description: "\(name):\(error.description)")
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
