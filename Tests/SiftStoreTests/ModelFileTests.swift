// Strict model files: a key the format does not have (at any level), bounds in the wrong order or on
// a type they do not apply to, a default that breaks its attribute's rules, and invalid JSON are
// errors with the `line:column` and key path of the member at fault, every problem of a file at
// once. The published JSON Schema (Schemas/model.schema.json) and the decoder agree: the same keys
// at every level, and every model file the tests use that the decoder accepts is valid.

import Foundation
import SiftJSON
import SiftStoreTestSupport
import SiftTestSupport
import Testing

@testable import SiftStore

@Suite struct ModelFileTests {
    /// The error `text` is refused with.
    func refusal(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> ModelError? {
        do {
            _ = try ManagedObjectModel(json: Data(text.utf8))
            Issue.record("the model file was accepted", sourceLocation: sourceLocation)
        } catch { return error }
        return nil
    }

    /// The 1-based line and column where `needle` first appears in `text` (columns in characters,
    /// as the reader counts scalars; the texts here are ASCII).
    func position(of needle: String, in text: String) -> (line: Int, column: Int)? {
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let r = line.range(of: needle) {
                return (n + 1, line.distance(from: line.startIndex, to: r.lowerBound) + 1)
            }
        }
        return nil
    }

    /// A model file of one entity `Item` with `attributes` (and `relationships`), one per line.
    func file(attributes: [String], relationships: [String] = []) -> String {
        """
        {"entities": [
          {"name": "Item",
           "attributes": [
            \(attributes.joined(separator: ",\n    "))
           ],
           "relationships": [
            \(relationships.joined(separator: ",\n    "))
           ]}
        ]}
        """
    }

    @Test func theIssuesMisspelledAttributeFailsNamingEachUnknownKeyWhereItIs() throws {
        let attribute =
            #"{"name":"x","type":"string","optinal":false,"regularExpression":"[0-9]+","minValue":3,"maxLength":2}"#
        let text = file(attributes: [attribute])
        let error = try #require(refusal(text))
        #expect(error.kind == .unreadable)
        let at = "entities[0].attributes[0]."
        #expect(error.failures.map(\.path) == [at + "optinal", at + "regularExpression", at + "minValue"])
        #expect(error.failures[0].message == "unknown key 'optinal'; did you mean 'optional'?")
        #expect(error.failures[1].message == "unknown key 'regularExpression'; did you mean 'regex'?")
        #expect(error.failures[2].message == "unknown key 'minValue'; did you mean 'min'?")
        for (failure, key) in zip(error.failures, ["optinal", "regularExpression", "minValue"]) {
            let expected = try #require(position(of: "\"\(key)\"", in: text))
            #expect(
                failure.location?.line == expected.line && failure.location?.column == expected.column, "\(failure)")
        }
        #expect(error.location == error.failures[0].location)
        #expect("\(error.failures[0])".hasPrefix("\(error.failures[0].location!): error: \(at)optinal: unknown key"))
        // Spelled as the format spells them, the same rules are read, and `min` does not apply to strings.
        let fixed = file(attributes: [
            #"{"name":"x","type":"string","optional":false,"regex":"[0-9]+","min":3,"maxLength":2}"#
        ])
        let wrongType = try #require(refusal(fixed))
        #expect(wrongType.failures.map(\.path) == [at + "min"])
        #expect(wrongType.failures[0].message == "min/max apply to numeric attributes, not string")
    }

    /// `fetchRequests`: every option a template has survives the round trip through the file, and
    /// the templates stay out of the version hash.
    @Test func fetchRequestTemplatesRoundTripWithTheirOptions() throws {
        let text = """
            {"entities": [{"name": "Book", "attributes": [{"name": "title", "type": "string"}]}],
             "fetchRequests": [
              {"name": "byTitle", "entity": "Book", "predicate": "title == $TITLE", "fetchLimit": 3, "fetchOffset": 1,
               "fetchBatchSize": 20, "includesSubentities": false, "includesPendingChanges": false,
               "returnsDistinctResults": true},
              {"name": "all", "entity": "Book"}]}
            """
        let model = try ManagedObjectModel(json: Data(text.utf8))
        #expect(model.fetchRequestTemplates.map(\.name) == ["byTitle", "all"])
        #expect(model.fetchRequestTemplates[0].location.line == 3)
        let r = try model.fetchRequestTemplate("byTitle", substitutionVariables: ["TITLE": "Dune"])
        #expect(r.predicate?.description == #"title == "Dune""#)
        #expect(r.fetchLimit == 3 && r.fetchOffset == 1 && r.fetchBatchSize == 20)
        #expect(!r.includesSubentities && !r.includesPendingChanges && r.returnsDistinctResults)
        let all = try model.fetchRequestTemplate("all")
        #expect(all.predicate == nil && all.fetchLimit == nil && all.fetchOffset == 0 && all.includesSubentities)
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again.jsonString == model.jsonString)
        #expect(again.fetchRequestTemplates.map(\.predicateFormat) == ["title == $TITLE", nil])
        #expect(model.versionHash == (try ManagedObjectModel(entities: model.entities)).versionHash)
        #expect(!(try ManagedObjectModel(entities: model.entities)).jsonString.contains("fetchRequests"))
    }

    /// A template naming an unknown entity, a predicate that does not parse, a limit of 0, a name
    /// used twice and an unknown key are errors at their keys.
    @Test func fetchRequestTemplateProblemsAreErrorsAtTheirKeys() throws {
        let text = """
            {"entities": [{"name": "Book"}],
             "fetchRequests": [
              {"name": "a", "entity": "Bok"},
              {"name": "b", "entity": "Book", "predicate": "title ==", "fetchLimit": 0},
              {"name": "a", "entity": "Book", "limit": 1}]}
            """
        let error = try #require(refusal(text))
        #expect(
            error.failures.map(\.path) == [
                "fetchRequests[0].entity", "fetchRequests[1].predicate", "fetchRequests[1].fetchLimit",
                "fetchRequests[2].name", "fetchRequests[2].limit",
            ])
        #expect(error.failures[0].message == "the model has no entity 'Bok'")
        #expect(error.failures[1].message.hasPrefix("the predicate does not parse: "))
        #expect(error.failures[2].message == "fetchLimit must be at least 1, not 0")
        #expect(error.failures[3].message == "a second template named 'a'")
        #expect(error.failures[4].message.hasPrefix("unknown key 'limit'"))
        #expect(error.failures.map { $0.location?.line } == [3, 4, 4, 5, 5])
    }

    @Test func boundsInTheWrongOrderAreErrorsAtTheirKeys() throws {
        let text = file(
            attributes: [
                #"{"name": "a", "type": "double", "min": 10, "max": 1}"#,
                #"{"name": "b", "type": "string", "minLength": 5, "maxLength": 2}"#,
                #"{"name": "c", "type": "binary", "maxLength": -1}"#,
            ],
            relationships: [#"{"name": "r", "destination": "Item", "toMany": true, "minCount": 3, "maxCount": 1}"#])
        let error = try #require(refusal(text))
        #expect(
            error.failures.map(\.path) == [
                "entities[0].attributes[0].min", "entities[0].attributes[1].minLength",
                "entities[0].attributes[2].maxLength", "entities[0].relationships[0].minCount",
            ])
        #expect(error.failures[0].message == "the minimum 10.0 is above the maximum 1.0")
        #expect(error.failures[1].message == "the minimum length 5 is above the maximum length 2")
        #expect(error.failures[2].message.contains("negative"))
        #expect(error.failures[3].message == "invalid count bounds 3…1")
        let lines = try [#""min": 10"#, #""minLength": 5"#, #""maxLength": -1"#, #""minCount": 3"#].map {
            try #require(position(of: $0, in: text)).line
        }
        #expect(error.failures.map { $0.location?.line } == lines)
    }

    @Test func boundsAndPatternsOnTypesTheyDoNotApplyTo() throws {
        let error = try #require(
            refusal(
                file(attributes: [
                    #"{"name": "a", "type": "date", "max": 1}"#,
                    #"{"name": "b", "type": "integer64", "regex": "[0-9]+"}"#,
                    #"{"name": "c", "type": "boolean", "minLength": 1}"#,
                    #"{"name": "d", "type": "string", "shapes": {"scalar": true}}"#,
                ])))
        #expect(
            error.failures.map(\.path) == [
                "entities[0].attributes[0].max", "entities[0].attributes[1].regex",
                "entities[0].attributes[2].minLength", "entities[0].attributes[3].shapes",
            ])
        #expect(error.failures[1].message == "a regular expression applies to strings, not integer64")
    }

    @Test func defaultsThatBreakTheirOwnRules() throws {
        let error = try #require(
            refusal(
                file(attributes: [
                    #"{"name": "a", "type": "integer16", "default": "many"}"#,
                    #"{"name": "b", "type": "integer16", "min": 0, "default": -1}"#,
                    #"{"name": "c", "type": "string", "maxLength": 2, "default": "abc"}"#,
                    #"{"name": "d", "type": "string", "regex": "[0-9]+", "default": "x1"}"#,
                    #"{"name": "e", "type": "integer16", "default": 40000}"#,
                ])))
        #expect(error.failures.map(\.path) == (0..<5).map { "entities[0].attributes[\($0)].default" })
        #expect(error.failures[0].message == "the default value \"many\" is not an integer16")
        #expect(error.failures[1].message == "the default value breaks its rule: -1 is below the minimum 0.0")
        #expect(error.failures[2].message.contains("length 3 is above the maximum length 2"))
        #expect(error.failures[3].message.contains("does not match the regular expression"))
        #expect(error.failures[4].message == "the default value 40000 is not an integer16")
        // A default that keeps its rules is taken, and is the new object's value.
        let model = try ManagedObjectModel(
            json: Data(file(attributes: [#"{"name": "b", "type": "integer16", "min": 0, "default": 3}"#]).utf8))
        let c = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        #expect(try c.insert("Item").get("b", as: Int.self) == 3)
    }

    @Test func unknownKeysAreFoundAtEveryLevel() throws {
        let text = """
            {"entities": [
              {"name": "A", "atributes": [],
               "relationships": [{"name": "r", "destination": "A", "delteRule": "deny"}]},
              {"name": "B", "attributes": [{"name": "m", "type": "mixed", "shapes": {"scalar": true, "arrays": "date"}}]},
              {"name": "D", "document": {"allowsValues": false,
                "shape": {"object": {"keys": [{"name": "k", "shape": {"scalr": true}}]}}}}
            ],
            "versio": 2}
            """
        let error = try #require(refusal(text))
        #expect(
            error.failures.map(\.path) == [
                "entities[0].atributes", "entities[0].relationships[0].delteRule",
                "entities[1].attributes[0].shapes.arrays",
                "entities[2].document.shape.object.keys[0].shape.scalr", "versio",
            ])
        #expect(
            error.failures.map(\.message) == [
                "unknown key 'atributes'; did you mean 'attributes'?",
                "unknown key 'delteRule'; did you mean 'deleteRule'?",
                "unknown key 'arrays'; did you mean 'array'?", "unknown key 'scalr'; did you mean 'scalar'?",
                "unknown key 'versio'; did you mean 'version'?",
            ])
        #expect(error.failures.map { $0.location?.line } == [2, 3, 4, 6, 8])
        #expect(error.description.hasPrefix("model error: 5 problems: 2:"))
    }

    @Test func aValueOfTheWrongTypeOrAMissingKeyIsLocated() throws {
        let text =
            "{\"entities\": [\n  {\"name\": \"A\", \"attributes\": [{\"name\": \"x\", \"type\": \"int\"}]},\n  {\"attributes\": []}\n]}"
        let error = try #require(refusal(text))
        #expect(error.failures.count == 1)
        let f = error.failures[0]
        #expect(f.path == "entities[0].attributes[0].type" && f.message.hasPrefix("invalid model JSON"))
        let expected = try #require(position(of: #""type""#, in: text))
        #expect(f.location?.line == expected.line && f.location?.column == expected.column)
        let missing = try #require(refusal("{\"entities\": [\n  {\"abstract\": true}\n]}"))
        #expect(missing.failures.map(\.path) == ["entities[0]"])
        #expect(missing.failures[0].message == "missing key 'name'")
        #expect(missing.location?.line == 2 && missing.location?.column == 3)
    }

    @Test func invalidJSONIsReportedWhereTheReaderStopped() throws {
        let text = "{\"entities\": [\n  {\"name\": \"A\",, \"attributes\": []}\n]}"
        let error = try #require(refusal(text))
        #expect(error.kind == .unreadable && error.failures.count == 1)
        #expect(error.message.hasPrefix("invalid JSON: "))
        do {
            _ = try JSONReader.parse(text)
            Issue.record("the reader took invalid JSON")
        } catch {
            #expect(error.location == (try #require(refusal(text))).location)
            #expect(error.location.line == 2)
        }
        #expect("\(error)".hasPrefix("model error: 2:"))
    }

    @Test func validFilesStillReadAndRoundTrip() throws {
        let model = try Fixtures.companyModel()
        let again = try ManagedObjectModel(json: Data(model.jsonString.utf8))
        #expect(again == model && again.versionHash == model.versionHash)
        // The model checks still apply to models built in Swift, first problem only.
        do {
            _ = try ManagedObjectModel(entities: [
                EntityDescription("A", attributes: [AttributeDescription("n", .double, minValue: 5, maxValue: 1)])
            ])
            Issue.record("min above max was accepted")
        } catch {
            #expect(error.kind == .invalid && error.failures.count == 1 && error.location == nil)
            #expect(error.message == "attribute 'A.n': the minimum 5.0 is above the maximum 1.0")
        }
    }

    // MARK: The published schema

    static let schemaURL = packageRoot.appendingPathComponent("Schemas/model.schema.json")

    func schema() throws -> JSONSchemaSubset {
        JSONSchemaSubset(try JSONReader.parse(try String(contentsOf: Self.schemaURL, encoding: .utf8)))
    }

    /// The object schema `schema` describes, through `$ref`, `items` (for arrays) and the one
    /// object choice of a `oneOf`.
    func objectSchema(_ schema: JSONValue, _ s: JSONSchemaSubset) -> JSONValue? {
        if case .string(let ref)? = s.member(schema, "$ref") { return s.resolve(ref).flatMap { objectSchema($0, s) } }
        if let items = s.member(schema, "items") { return objectSchema(items, s) }
        if case .array(let choices)? = s.member(schema, "oneOf") {
            let objects = choices.compactMap { objectSchema($0, s) }
            return objects.count == 1 ? objects[0] : nil
        }
        return s.member(schema, "properties") != nil ? schema : nil
    }

    func propertyNames(_ schema: JSONValue, _ s: JSONSchemaSubset) -> Set<String> {
        guard case .object(let members)? = s.member(schema, "properties") else { return [] }
        return Set(members.map(\.0))
    }

    @Test func theSchemaAndTheDecoderHaveTheSameKeysAtEveryLevel() throws {
        let s = try schema()
        var visited = Set<String>()
        var pending: [(node: ModelFile.Node, schema: JSONValue, path: String)] = [(.file, s.root, "(root)")]
        while let (node, nodeSchema, path) = pending.popLast() {
            guard visited.insert("\(node)").inserted else { continue }
            let properties = propertyNames(nodeSchema, s)
            #expect(
                properties == Set(node.keys), "\(path): schema \(properties.sorted()), decoder \(node.keys.sorted())")
            for key in properties {
                let inner = try #require(s.member(s.member(nodeSchema, "properties"), key))
                let child = objectSchema(inner, s)
                // Objects of the format in the schema are exactly the decoder's child nodes.
                #expect((child != nil) == (node.child(key) != nil), "\(path).\(key)")
                if let child, let next = node.child(key) { pending.append((next, child, "\(path).\(key)")) }
            }
        }
        #expect(visited.count == ModelFile.Node.allCases.count, "nodes the schema never reached: \(visited)")
    }

    /// Every `#"…"#` and multi-line (`"""…"""`, raw or not) literal of the store's and the tool's
    /// tests that is JSON with top-level `entities` (model files, some with mistakes on purpose,
    /// and `sift sql` schema files, which the decoder refuses).
    func modelFileLiterals() throws -> [String] {
        var out: [String] = []
        for folder in ["Tests/SiftStoreTests", "Tests/SiftToolTests"] {
            let dir = packageRoot.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".swift") {
                let source = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
                for pattern in [##""""\n(.*?)\n\s*""""##, ##"#"(\{"entities".*?)"#"##] {
                    let regex = try NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
                    let range = NSRange(source.startIndex..., in: source)
                    for m in regex.matches(in: source, range: range) {
                        let text = String(source[Range(m.range(at: 1), in: source)!])
                        guard case .object(let members)? = try? JSONReader.parse(text),
                            members.contains(where: { $0.0 == "entities" })
                        else { continue }
                        out.append(text)
                    }
                }
            }
        }
        return out
    }

    @Test func everyModelFileTheDecoderAcceptsIsValidUnderTheSchema() throws {
        let s = try schema()
        let literals = try modelFileLiterals()
        var accepted = 0
        for text in literals where (try? ManagedObjectModel(json: Data(text.utf8))) != nil {
            accepted += 1
            #expect(s.errors(in: try JSONReader.parse(text)) == [], "\(text)")
        }
        let refused = literals.compactMap { text -> String? in
            do { _ = try ManagedObjectModel(json: Data(text.utf8)) } catch { return "\(error)" }
            return nil
        }
        // As many as the tests held when this was written: fewer means the literals were missed.
        #expect(accepted >= 7, "only \(accepted) of \(literals.count) literals are model files: \(refused)")
        // The models the tests build in Swift, as files, and the article's example.
        for model in [try Fixtures.companyModel()] {
            #expect(s.errors(in: try JSONReader.parse(model.jsonString)) == [])
        }
        let article = try String(
            contentsOf: packageRoot.appendingPathComponent("Sources/SiftStore/SiftStore.docc/ModelFiles.md"),
            encoding: .utf8)
        let example = try #require(
            article.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first)
        _ = try ManagedObjectModel(json: Data(example.utf8))
        #expect(s.errors(in: try JSONReader.parse(example)) == [])
        // And the schema refuses what the decoder refuses for an unknown key.
        let misspelled = try JSONReader.parse(
            #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optinal": false}]}]}"#)
        #expect(s.errors(in: misspelled) == ["entities[0].attributes[0].optinal: key not allowed by the schema"])
    }

    @Test func theArticleSamplesAreTested() throws { try expectArticleSamplesTested("ModelFiles.md", of: "SiftStore") }

    /// The article's Swift sample, verbatim.
    @Test func articleSample() throws {
        let text =
            #"{"entities": [{"name": "Item", "attributes": [{"name": "x", "type": "string", "optinal": false}]}]}"#
        do {
            _ = try ManagedObjectModel(json: Data(text.utf8))
        } catch {
            print(error.failures[0])  // 1:79: error: entities[0].attributes[0].optinal: unknown key 'optinal'; …
        }
        let error = try #require(refusal(text))
        #expect(
            "\(error.failures[0])"
                == "1:79: error: entities[0].attributes[0].optinal: unknown key 'optinal'; did you mean 'optional'?")
    }
}
