// Every public error type of every module has one shape (`SiftError`): a kind, a stable kebab-case
// id, a message without position or prefix, and a description that contains the message. Each type
// is checked on a failure the API really produces, and the source tree is read so that a new public
// error type that does not take the shape fails here.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftPostgres
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax
import SiftTestSupport
import SiftText
import Testing

@Suite struct ErrorShapeTests {
    /// The shape: `id` as expected and kebab-case, the message plain, the description holding it.
    func check<E: SiftError>(
        _ error: E, id: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        #expect(error.id == id, "\(E.self): \(error)", sourceLocation: sourceLocation)
        let kebab = error.id.allSatisfy { $0 == "-" || ($0.isASCII && ($0.isLowercase || $0.isNumber)) }
        #expect(kebab && !error.id.hasPrefix("-") && !error.id.hasSuffix("-"), sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        #expect(!error.message.hasPrefix("error:"), "\(E.self): \(error.message)", sourceLocation: sourceLocation)
        let positioned = error.message.range(of: #"^\d+:\d+:"#, options: .regularExpression) != nil
        #expect(!positioned, "\(E.self) message holds a position: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.description.contains(error.message), "\(E.self): \(error)", sourceLocation: sourceLocation)
    }

    /// The error `body` throws, typed.
    func failure<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
        do { try body() } catch let error as E { return error } catch { Issue.record("unexpected \(error)") }
        Issue.record("no \(E.self) thrown")
        return nil
    }

    @Test func syntaxAndEvaluation() throws {
        let syntax = try #require(failure(SyntaxError.self) { _ = try PredicateSyntax.parse("age >") })
        check(syntax, id: "expected-expression")
        #expect(syntax.location == SiftSyntax.SourceLocation(line: 1, column: 6))

        let evaluation = try #require(
            failure(EvaluationError.self) { _ = try SiftPredicate("name < 5").evaluate(with: ["name": "Ann"]) })
        check(evaluation, id: "incomparable-values")
        #expect(evaluation.location == SiftSyntax.SourceLocation(line: 1, column: 1))

        var options = EvaluationOptions()
        options.functions.register("double") { _, _ in throw FunctionError("needs an integer") }
        let raised = try #require(
            failure(EvaluationError.self) {
                _ = try SiftPredicate(format: "FUNCTION(age, 'double') == 2", arguments: [], options: options)
                    .evaluate(with: ["age": 1])
            })
        check(raised, id: FunctionError("x").id)
        #expect(raised.message == "double: needs an integer")
        check(FunctionError("needs an integer"), id: "invalid-argument")
    }

    struct Point: KeyValueCoding {
        func value(forKey key: String) throws -> Value {
            guard key == "x" else { throw KeyValueCodingError.unknownKey(key, in: "Point") }
            return .double(1)
        }
    }

    @Test func keyValueCodingAndText() throws {
        let unknown = try #require(failure(KeyValueCodingError.self) { _ = try Point().value(forKey: "y") })
        check(unknown, id: "unknown-key")
        #expect(unknown.message == "Point has no key 'y'")
        // The evaluator reports it with the same id and message, at the key.
        let evaluation = try #require(
            failure(EvaluationError.self) { _ = try SiftPredicate("y > 0").evaluate(with: Point()) })
        #expect(evaluation.id == unknown.id && evaluation.message == unknown.message)

        let like = try #require(failure(TextError.self) { _ = try LikePattern("ab\\", []) })
        check(like, id: "invalid-like-pattern")
        let regex = try #require(failure(TextError.self) { _ = try RegexPattern.compile("(", []) })
        check(regex, id: "invalid-regex")
    }

    @Test func schemaAndLowering() throws {
        let unreadable = try #require(
            failure(SchemaError.self) { _ = try Schema(jsonData: Data(#"{"entities": 3}"#.utf8)) })
        check(unreadable, id: "unreadable-schema")
        let duplicate = #"{"entities": [{"name": "A", "table": "a"}, {"name": "A", "table": "b"}]}"#
        let invalid = try #require(failure(SchemaError.self) { _ = try Schema(jsonData: Data(duplicate.utf8)) })
        check(invalid, id: "invalid-schema")

        let model = try ManagedObjectModel(entities: [
            EntityDescription("Person", attributes: [AttributeDescription("age", .integer64)])
        ]
        )
        let lowering = try SQLLowering(schema: model.schema, entity: "Person")
        let lowered = try #require(
            failure(SQLLoweringError.self) {
                _ = try lowering.select(try PredicateSyntax.parse("nme == 1"), source: "nme == 1")
            })
        check(lowered, id: "unknown-key")
        #expect(lowered.location == SiftSyntax.SourceLocation(line: 1, column: 1))
    }

    @Test func sqliteAndPostgres() throws {
        let db = try SQLiteConnection()
        let syntax = try #require(failure(SQLiteError.self) { try db.execute("SELEC 1") })
        check(syntax, id: "sqlite-error")
        try db.execute("CREATE TABLE t (x INTEGER UNIQUE); INSERT INTO t VALUES (1)")
        let constraint = try #require(failure(SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") })
        check(constraint, id: "constraint")
        #expect(constraint.kind == .constraint && constraint.code != SQLITE_CONSTRAINT_CODE)

        // Port 1 on the loopback: nothing listens, so the connection is refused at once.
        let refused = try #require(
            failure(PostgresError.self) { _ = try PostgresConnection(url: "postgresql://sift@127.0.0.1:1/sift") })
        check(refused, id: "connection")
        #expect(refused.description == refused.message)
    }

    /// SQLITE_CONSTRAINT, the primary code: a UNIQUE failure reports the extended one (2067).
    let SQLITE_CONSTRAINT_CODE: Int32 = 19

    @Test func modelAndStore() throws {
        let reserved = try #require(
            failure(ModelError.self) { _ = try ManagedObjectModel(entities: [EntityDescription("Z_Person")]) })
        check(reserved, id: "invalid-model")
        let unreadable = try #require(failure(ModelError.self) { _ = try ManagedObjectModel(json: Data("[]".utf8)) })
        check(unreadable, id: "unreadable-model")

        let model = try ManagedObjectModel(entities: [
            EntityDescription("Person", attributes: [AttributeDescription("age", .integer64, minValue: 0)])
        ])
        let context = ManagedObjectContext(store: try PersistentStore.inMemory(model: model))
        let unknown = try #require(failure(StoreError.self) { _ = try context.insert("Nobody") })
        check(unknown, id: "unknown-entity")
        let person = try context.insert("Person")
        try person.setValue(-1, forKey: "age")
        let validation = try #require(failure(StoreError.self) { try context.save() })
        check(validation, id: "validation")

        let syntax = try #require(failure(StoreError.self) { _ = try FetchRequest("Person", predicate: "age >") })
        check(syntax, id: "syntax")
        #expect(syntax.location == SiftSyntax.SourceLocation(line: 1, column: 6))
        #expect(syntax.description == "store error: 1:6: error: \(syntax.message)")
    }

    @Test func jsonRecords() throws {
        let json = try #require(failure(JSONError.self) { _ = try JSONReader.parse("[1,,2]") })
        check(json, id: "invalid-json")
        #expect(json.location == SiftSyntax.SourceLocation(line: 1, column: 4))

        let missing = try #require(
            failure(RecordsError.self) { _ = try MappedInput.open("/nonexistent/sift-\(UUID()).json") })
        check(missing, id: "no-such-file")

        let broken = MappedInput(copying: Array("{\"age\": 1}\n{\"age\": }\n".utf8))
        let syntax = try #require(
            failure(RecordFilterError.self) { _ = try RecordFilter(try SiftPredicate("age > 0")).select(from: broken) })
        check(syntax, id: "invalid-json")
        let raising = MappedInput(copying: Array("{\"age\": 1}\n{\"age\": \"x\"}\n".utf8))
        let evaluation = try #require(
            failure(RecordFilterError.self) { _ = try RecordFilter(try SiftPredicate("age > 0")).select(from: raising) }
        )
        check(evaluation, id: "incomparable-values")
        #expect(evaluation.description.hasPrefix("record 1: "))

        check(JSONStoreError(.recordsRefused, message: "cannot load the records: x"), id: "records-refused")
    }

    /// Every `public struct|enum|class …Error` declared under Sources/ conforms to `SiftError` on its
    /// declaration line, so a new error type cannot slip out of the shape.
    @Test func everyPublicErrorTypeHasTheShape() throws {
        let sources = packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var declared: [String] = []
        var outside: [String] = []
        let declaration = #/^public (?:struct|enum|final class|class) (\w+Error)\b(.*)$/#
        for case let url as URL in files where url.pathExtension == "swift" {
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                guard let match = line.wholeMatch(of: declaration) else { continue }
                declared.append(String(match.1))
                if !match.2.contains("SiftError") { outside.append("\(url.lastPathComponent): \(match.1)") }
            }
        }
        #expect(declared.count >= 15, "\(declared)")
        #expect(outside.isEmpty, "public error types without the shape: \(outside)")
    }
}
