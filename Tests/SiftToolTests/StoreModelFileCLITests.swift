// `sift store create` with a model file that has mistakes: exit status 1, nothing created, and one
// `MODEL.json:line:column: error: key.path: …` line on standard error per problem of the file.

import Foundation
import Testing

@Suite struct StoreModelFileCLITests {
    @Test func createRefusesAMisspelledModelFileWithEveryProblemLocated() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-model-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("model.json").path
        let text = """
            {"entities": [
              {"name": "x", "attributes": [
                {"name":"x","type":"string","optinal":false,"regularExpression":"[0-9]+","minValue":3,"maxLength":2},
                {"name": "n", "type": "double", "min": 10, "max": 1}
              ]}
            ]}
            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: model))
        let db = dir.appendingPathComponent("db.sqlite").path
        let run = try runSift(["store", "create", db, "--model", model])
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: db))
        let lines = run.stderr.split(separator: "\n").map(String.init)
        /// Where `key` is on line 3 (or `line`) of the file.
        func column(_ key: String, line: Int = 3) -> Int {
            let text = text.split(separator: "\n")[line - 1]
            return text.distance(from: text.startIndex, to: text.range(of: key)!.lowerBound) + 1
        }
        #expect(
            lines == [
                "\(model):3:\(column("\"optinal\"")): error: entities[0].attributes[0].optinal: unknown key 'optinal'; did you mean 'optional'?",
                "\(model):3:\(column("\"regularExpression\"")): error: entities[0].attributes[0].regularExpression: unknown key 'regularExpression'; did you mean 'regex'?",
                "\(model):3:\(column("\"minValue\"")): error: entities[0].attributes[0].minValue: unknown key 'minValue'; did you mean 'min'?",
                "\(model):4:\(column("\"min\"", line: 4)): error: entities[0].attributes[1].min: the minimum 10.0 is above the maximum 1.0",
            ], "\(run.stderr)")
        // Invalid JSON: the reader's line and column.
        try Data("{\"entities\": [\n  {\"name\": \"A\",, }\n]}".utf8).write(to: URL(fileURLWithPath: model))
        let broken = try runSift(["store", "create", db, "--model", model])
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("\(model):2:16: error: invalid JSON: "), "\(broken.stderr)")
    }
}
