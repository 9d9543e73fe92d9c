// The golden corpus files (Corpus/, format in Corpus/README.md) read into cases, for the parse
// corpus (SiftSyntaxTests) and the evaluation corpus on every back-end (SiftConformanceTests).

import Foundation
import SiftJSON

package struct CorpusCase {
    package init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    package var file: String
    package var line: Int
    package var input: String = ""
    package var args: [Any?] = []
    package var expectedOutput: String?
    package var expectedError: String?
}

package enum CorpusError: Error, CustomStringConvertible {
    case malformed(String, Int, String)
    package var description: String {
        switch self {
        case .malformed(let f, let l, let m): "\(f):\(l): \(m)"
        }
    }
}

package enum Corpus {
    package static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Corpus")
    }

    package static func jsonString(_ text: String, _ file: String, _ line: Int) throws -> String {
        guard case .string(let s) = try JSONReader.parse(text) else {
            throw CorpusError.malformed(file, line, "expected a JSON string")
        }
        return s
    }

    /// The `key: value` lines of a corpus file with their line numbers; blank lines and `#`
    /// comments are skipped, and one space after the colon is dropped.
    package static func entries(_ text: String, _ file: String) throws -> [(key: String, value: String, line: Int)] {
        var out: [(key: String, value: String, line: Int)] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                throw CorpusError.malformed(file, n + 1, "expected 'key: value'")
            }
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            out.append((String(line[..<colon]), value, n + 1))
        }
        return out
    }

    /// Reads every `*.sift` file below `subdirectory`.
    package static func cases(in subdirectory: String) throws -> [CorpusCase] {
        let dir = directory.appendingPathComponent(subdirectory)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".sift") }
            .sorted()
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
