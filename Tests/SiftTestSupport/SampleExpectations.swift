// The two checks every documentation-sample suite makes, written once: the blocks of an article
// of the module's DocC catalog, and the README's block for the module, must all appear in the
// calling test file (see `samplesMissing`). The expectations are recorded at the caller's line.

import Foundation
import Testing

/// Expects `article` of `module`'s DocC catalog to have sample blocks, every one of them in
/// `testFile` (the calling test's own source by default).
///
/// ```swift
/// @Test func samplesAreTested() throws { try expectArticleSamplesTested("GettingStarted.md", of: "SiftSQL") }
/// ```
public func expectArticleSamplesTested(
    _ article: String, of module: String, testFile: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let source = try String(contentsOfFile: testFile, encoding: .utf8)
    let found = try samplesMissing(fromArticle: "Sources/\(module)/\(module).docc/\(article)", testSource: source)
    #expect(found.blocks > 0, sourceLocation: sourceLocation)
    #expect(found.missing == [], sourceLocation: sourceLocation)
}

/// Expects the README to have exactly one block for `module`, and that block in `testFile`.
///
/// ```swift
/// @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftSQL") }
/// ```
public func expectReadmeSampleTested(
    of module: String, testFile: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let found = try readmeSamples(of: module, testFile: testFile)
    #expect(found.blocks == 1 && found.missing == [], sourceLocation: sourceLocation)
}
