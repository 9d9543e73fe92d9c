// Keeps the DocC articles' and the README's Swift samples honest. A Markdown file's ```swift
// blocks cannot be compiled where they stand, so each sample is copied verbatim into a test that
// runs it and asserts the results its comments state; this helper reads the file and fails when a
// block no longer appears in that test's source, so editing one without the other is caught by
// `make test`.

import Foundation

/// The root of the package checkout, found from this file's own path.
public let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The Swift code blocks of a Markdown file, each as its lines.
public func swiftCodeBlocks(inMarkdown text: String) -> [[String]] {
    var blocks: [[String]] = []
    var current: [String]?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if current == nil {
            if trimmed == "```swift" { current = [] }
        } else if trimmed == "```" {
            blocks.append(current!)
            current = nil
        } else {
            current!.append(line)
        }
    }
    return blocks
}

/// The blocks of `article` (a path relative to the package root) that do not appear in
/// `testSource` (the contents of the test file that runs them), each as its first line.
///
/// A block appears when its lines, leading and trailing spaces trimmed and blank lines dropped,
/// are a contiguous run of the test file's lines trimmed the same way; its `import` lines need
/// only appear somewhere in the file, since a test cannot import inside a function. With
/// `firstImport`, only the blocks whose first `import` names that module are checked: the README
/// shows one block per product, each run by that product's tests.
public func samplesMissing(
    fromArticle article: String, testSource: String, firstImport: String? = nil
) throws -> (blocks: Int, missing: [String]) {
    let text = try String(contentsOf: packageRoot.appendingPathComponent(article), encoding: .utf8)
    let normalise = { (lines: [String]) in
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
    let source = normalise(testSource.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    let blocks = swiftCodeBlocks(inMarkdown: text).filter { block in
        guard let firstImport else { return true }
        let first = block.lazy.map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("import ") }
        return first == "import \(firstImport)"
    }
    var missing: [String] = []
    for block in blocks {
        let lines = normalise(block)
        let imports = lines.filter { $0.hasPrefix("import ") }
        let body = lines.filter { !$0.hasPrefix("import ") }
        let importsFound = imports.allSatisfy(source.contains)
        let bodyFound =
            body.isEmpty
            || source.indices.contains { start in
                start + body.count <= source.count && Array(source[start..<start + body.count]) == body
            }
        if !importsFound || !bodyFound { missing.append(lines.first ?? "(empty block)") }
    }
    return (blocks.count, missing)
}

/// The README's blocks for `module` (those whose first `import` names it) that do not appear in
/// `testFile`, the calling test's own source by default.
///
/// ```swift
/// let found = try readmeSamples(of: "SiftText")   // (blocks: 1, missing: []) when in step
/// ```
public func readmeSamples(of module: String, testFile: String = #filePath) throws -> (blocks: Int, missing: [String]) {
    let source = try String(contentsOfFile: testFile, encoding: .utf8)
    return try samplesMissing(fromArticle: "README.md", testSource: source, firstImport: module)
}
