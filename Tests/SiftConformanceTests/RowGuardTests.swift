// Issue 27's table: three records, `{"age": 40}`, `{"age": "abc"}`, `{"age": 50}`, where memory
// raises on ordering the string against a number (and the numbers against a string). Every
// back-end must give memory's outcome: memory's error naming a record memory raises on (strict),
// or lenient memory's rows. SQLite gets there through the row guard (SiftSQL's RowGuard.swift),
// the store the same way on its fetches and counts, and PostgreSQL, which cannot ask memory, by
// the rows the lowering says memory must decide (`SQLQuery.rowsMemoryDecides`), evaluated by the
// back-end in memory.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSQLite
import SiftStore
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftTool

@Suite struct RowGuardTests {
    static let records: [JSONValue] = [#"{"age": 40}"#, #"{"age": "abc"}"#, #"{"age": 50}"#].map {
        try! JSONReader.parse($0)
    }

    /// The issue's predicates: the record memory raises on first, and lenient memory's rows.
    static let table: [(predicate: String, raisesAt: Int, lenientRows: [Int])] = [
        ("age > 30", 1, [0, 2]),
        ("age < \"b\"", 0, [1]),
    ]

    /// Memory's outcome: the rows it selects, or the lowest record it raises on and the error.
    static func memory(_ format: String, lenient: Bool) throws -> Result<[Int], RecordFilterError> {
        let predicate = try SiftPredicate(format: format, arguments: [], options: EvaluationOptions(lenient: lenient))
        var rows: [Int] = []
        for (i, r) in records.enumerated() {
            do throws(EvaluationError) {
                if try predicate.evaluate(with: r.value) { rows.append(i) }
            } catch { return .failure(RecordFilterError(.evaluation(record: i, error))) }
        }
        return .success(rows)
    }

    @Test(arguments: table.indices)
    func memoryIsTheIssuesTable(_ i: Int) throws {
        let (format, raisesAt, lenientRows) = Self.table[i]
        guard case .failure(let error) = try Self.memory(format, lenient: false) else {
            Issue.record("\(format): memory did not raise")
            return
        }
        #expect(error.id == "incomparable-values")
        guard case .evaluation(let record, _) = error.kind else {
            Issue.record("\(format): \(error)")
            return
        }
        #expect(record == raisesAt)
        #expect(try Self.memory(format, lenient: true).get() == lenientRows)
    }

    /// `backend` answers `format` as memory does: memory's error strict (the text `sift filter`
    /// prints in memory, `record 1: 1:1: error: cannot order "abc" and 30` and the caret), and
    /// lenient memory's rows.
    static func expectMemorysOutcome(_ backend: SQLBackend, _ format: String) throws {
        let syntax = try PredicateSyntax.parse(format)
        guard case .failure(let expected) = try memory(format, lenient: false) else {
            Issue.record("\(format): memory did not raise")
            return
        }
        let error = #expect(throws: SQLBackendError.self) {
            try backend.matches(syntax, source: format, variables: [:])
        }
        #expect(error?.stage == "evaluation")
        #expect(error?.id == expected.id)
        #expect(error?.description == expected.description)
        #expect(
            try backend.matches(syntax, source: format, variables: [:], lenient: true)
                == memory(format, lenient: true).get())
    }

    @Test(arguments: table.indices)
    func sqliteGivesMemorysOutcome(_ i: Int) throws {
        try Self.expectMemorysOutcome(try SQLBackend(records: Self.records), Self.table[i].predicate)
    }

    @Test(arguments: table.indices)
    func postgresGivesMemorysOutcome(_ i: Int) throws {
        let format = Self.table[i].predicate
        let server = try PostgresServer(url: try postgresTestURL())
        let backend = try SQLBackend(records: Self.records, server: server)
        try Self.expectMemorysOutcome(backend, format)
        // Sorted, the rows memory decides take their place in memory's order.
        let sorted = try backend.matches(
            try PredicateSyntax.parse(format), source: format, variables: [:],
            sortedBy: [try SiftSortDescriptor("age", ascending: false)], lenient: true)
        #expect(sorted == (try Self.memory(format, lenient: true).get()).reversed())
    }

    @Test(arguments: table.indices)
    func storeGivesMemorysOutcome(_ i: Int) throws {
        let format = Self.table[i].predicate
        let json = try JSONStore(records: Self.records, entity: "Record")
        let context = ManagedObjectContext(store: json.store)
        guard case .failure(let expected) = try Self.memory(format, lenient: false) else {
            Issue.record("\(format): memory did not raise")
            return
        }
        let strict = FetchRequest("Record", predicate: try SiftPredicate(format: format, arguments: []))
        for run in [{ _ = try context.fetch(strict) }, { _ = try context.count(for: strict) }] {
            let error = #expect(throws: StoreError.self) { try run() }
            #expect(error?.kind == .evaluation)
            #expect(error?.evaluationError?.id == expected.id)
            // The row named is one memory raises on.
            let record = error?.raisedRow.flatMap(json.recordIndex(ofKey:))
            if let record {
                #expect(throws: EvaluationError.self) {
                    _ = try SiftPredicate(format: format, arguments: []).evaluate(with: Self.records[record].value)
                }
            }
            #expect(record != nil, "\(String(describing: error))")
        }
        let lenient = FetchRequest(
            "Record",
            predicate: try SiftPredicate(format: format, arguments: [], options: EvaluationOptions(lenient: true)))
        let rows = try context.fetchObjectIDs(lenient).compactMap { $0.primaryKey.flatMap(json.recordIndex(ofKey:)) }
        #expect(rows.sorted() == (try Self.memory(format, lenient: true).get()))
        #expect(try context.count(for: lenient) == rows.count)
    }

    /// Typed columns need no guard: a schema's declared types emit none.
    @Test func typedColumnsEmitNoGuard() throws {
        let schema = try Schema(entities: [
            Schema.Entity(
                name: "Item", table: "item", attributes: [Schema.Attribute(name: "age", type: .integer)],
                documentColumn: "doc")
        ])
        let q = try SQLLowering(schema: schema, entity: "Item").select(try PredicateSyntax.parse("age > 30"))
        #expect(!q.sql.contains(SQLFunctions.guarded), "\(q.sql)")
    }
}
