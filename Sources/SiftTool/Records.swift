// Reading record sets for `sift filter` and `sift batch --data`: one JSON array of records, or a
// sequence of JSON values (NDJSON or concatenated JSON), told apart by the first non-blank byte.
// Also the `--var NAME=JSON` bindings both commands share.

import ArgumentParser
import Foundation
import SiftEvaluation

/// Why records could not be loaded; `description` is the line to print on standard error.
struct RecordsError: Error, CustomStringConvertible {
    var description: String
}

enum Records {
    /// The bytes of `path`, or of standard input when `path` is nil or `-`.
    static func read(_ path: String?) throws(RecordsError) -> [UInt8] {
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
    static func parse(_ bytes: [UInt8], name: String) throws(RecordsError) -> [JSONValue] {
        var reader = JSONReader(bytes: bytes)
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
    static func load(_ path: String?) throws(RecordsError) -> [JSONValue] {
        try parse(try read(path), name: displayName(path))
    }

    static func displayName(_ path: String?) -> String {
        path == nil || path == "-" ? "<stdin>" : path!
    }
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
              name.unicodeScalars.allSatisfy({ $0 == "_" || CharacterSet.alphanumerics.contains($0) }) else {
            throw ValidationError("--var \(text): '\(name)' is not a variable name")
        }
        do { out[name] = try JSONReader.parse(String(text[text.index(after: eq)...])) }
        catch { throw ValidationError("--var \(name): \(error)") }
    }
    return out
}
