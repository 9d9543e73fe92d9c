// Runs every golden case in Corpus/ (see Corpus/README.md for the format). Each parse case
// checks the canonical form or the diagnostic (`line:column id`) beside its input; valid cases
// must also round-trip through the printer.

import Foundation
import Testing
@testable import SiftSyntax
import SiftTool

struct CorpusCase {
    var file: String
    var line: Int
    var input: String = ""
    var args: [Any?] = []
    var expectedOutput: String?
    var expectedError: String?
}

enum CorpusError: Error, CustomStringConvertible {
    case malformed(String, Int, String)
    var description: String {
        switch self { case .malformed(let f, let l, let m): "\(f):\(l): \(m)" }
    }
}

enum Corpus {
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Corpus")
    }

    static func jsonString(_ text: String, _ file: String, _ line: Int) throws -> String {
        guard case .string(let s) = try JSONReader.parse(text) else { throw CorpusError.malformed(file, line, "expected a JSON string") }
        return s
    }

    /// The `key: value` lines of a corpus file with their line numbers; blank lines and `#`
    /// comments are skipped, and one space after the colon is dropped.
    static func entries(_ text: String, _ file: String) throws -> [(key: String, value: String, line: Int)] {
        var out: [(key: String, value: String, line: Int)] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else { throw CorpusError.malformed(file, n + 1, "expected 'key: value'") }
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            out.append((String(line[..<colon]), value, n + 1))
        }
        return out
    }

    /// Reads every `*.sift` file below `subdirectory`.
    static func cases(in subdirectory: String) throws -> [CorpusCase] {
        let dir = directory.appendingPathComponent(subdirectory)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sift") }.sorted()
        var all: [CorpusCase] = []
        for name in files {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            var current: CorpusCase?
            func finish() throws {
                guard let c = current else { return }
                guard (c.expectedOutput == nil) != (c.expectedError == nil) else {
                    throw CorpusError.malformed(name, c.line, "a case needs exactly one of 'out:' and 'err:'")
                }
                all.append(c)
                current = nil
            }
            for (key, value, number) in try entries(text, name) {
                switch key {
                case "in", "in-json":
                    try finish()
                    current = CorpusCase(file: name, line: number)
                    current!.input = key == "in" ? value : try jsonString(value, name, number)
                case "args":
                    guard current != nil, case .array(let items) = try JSONReader.parse(value) else {
                        throw CorpusError.malformed(name, number, "'args:' needs a case and a JSON array")
                    }
                    current!.args = items.map { $0.literal as Any? }
                case "out", "out-json":
                    guard current != nil else { throw CorpusError.malformed(name, number, "'out:' before 'in:'") }
                    current!.expectedOutput = key == "out" ? value : try jsonString(value, name, number)
                case "err":
                    guard current != nil else { throw CorpusError.malformed(name, number, "'err:' before 'in:'") }
                    current!.expectedError = value
                default:
                    throw CorpusError.malformed(name, number, "unknown key '\(key)'")
                }
            }
            try finish()
        }
        return all
    }
}

@Suite struct CorpusTests {
    @Test func parseCorpus() throws {
        let cases = try Corpus.cases(in: "parse")
        var invalid = 0
        var failures: [String] = []
        for c in cases {
            if let failure = check(c, invalid: &invalid) { failures.append(failure) }
        }
        #expect(failures.isEmpty, "\(failures.count) corpus failures:\n\(failures.joined(separator: "\n"))")
        // The corpus is meant to cover the whole language; shrinking it below these sizes is a regression.
        #expect(cases.count >= 400, "only \(cases.count) parse cases")
        #expect(invalid >= 100, "only \(invalid) invalid parse cases")
    }

    /// Runs one case; returns a description of the failure, if any.
    func check(_ c: CorpusCase, invalid: inout Int) -> String? {
        let at = "\(c.file):\(c.line): \(c.input)"
        let parsed: PredicateSyntax
        do {
            parsed = try PredicateSyntax.parse(c.input, arguments: c.args)
        } catch {
            let got = "\(error.location) \(error.id)"
            guard let expected = c.expectedError else { return "\(at): unexpected error \(error)" }
            invalid += 1
            return got == expected ? nil : "\(at): expected error \(expected), got \(got) (\(error))"
        }
        let printed = parsed.description
        guard let expected = c.expectedOutput else { return "\(at): parsed as '\(printed)' but expected error \(c.expectedError ?? "")" }
        if printed != expected { return "\(at): expected '\(expected)', got '\(printed)'" }
        do {
            let again = try PredicateSyntax.parse(printed)
            if again != parsed { return "\(at): round trip changed the tree" }
        } catch {
            return "\(at): canonical form does not parse: \(error)"
        }
        return nil
    }
}
