// Forms the lowering hands to memory from SQL because no SQL expression computes them as memory
// does: arithmetic with dates (date ± seconds, date − date), comparisons of dates stored in two
// encodings or of a dynamically typed column with a date, and the UTI operators. Each predicate runs
// through SQLite over real rows (a table without documents), strict and lenient, and must select
// exactly the rows the evaluator accepts, or fail with the evaluator's error on a row where it
// raises (the row guard over a dynamically typed column). Over declared columns, nil into
// arithmetic: memory raises where SQL computes NULL, so the guard hands those rows to memory.

import Foundation
import SiftEvaluation
import SiftSQL
import SiftSQLite
import SiftSyntax
import Testing

@Suite struct MemoryAskedTests {
    /// Dates in each encoding the schema offers, a dynamically typed column, and type names.
    static let schema = try! Schema(entities: [
        Schema.Entity(
            name: "Item", table: "item",
            attributes: [
                Schema.Attribute(name: "born", type: .date),
                Schema.Attribute(name: "born70", type: .date, encoding: .secondsSince1970),
                Schema.Attribute(name: "bornISO", type: .date, encoding: .iso8601),
                Schema.Attribute(name: "misc", type: .any),
                Schema.Attribute(name: "uti", type: .string),
            ])
    ])

    /// One row per object: (born, born70, bornISO as seconds since 2001, misc, uti); nil is NULL.
    static let rows: [(Double?, Double?, Double?, LiteralValue, String?)] = [
        (0, 0, 0, .integer(5), "public.jpeg"),
        (86_400, -86_400, 86_400, .string("x"), "public.png"),
        (1e9, 1e9 + 0.5, 1e9, .null, "public.plain-text"),
        (nil, 3_600, nil, .double(0.25), nil),
        (-0.25, nil, 12.5, .date(Date(timeIntervalSinceReferenceDate: 0)), "com.example.foo"),
        (86_400.5, 86_400.5, 86_400.5, .bool(true), "public.text"),
    ]

    static func load() throws -> SQLiteConnection {
        let db = try SQLiteConnection()
        try db.execute(
            "CREATE TABLE item (id INTEGER PRIMARY KEY, born REAL, born70 REAL, bornISO TEXT, misc, uti TEXT)")
        for (i, r) in rows.enumerated() {
            func date(_ s: Double?, _ encode: (Date) -> SQLValue) -> SQLValue {
                s.map { encode(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
            }
            _ = try db.query(
                "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .integer(Int64(i)),
                    date(r.0) { .double($0.timeIntervalSinceReferenceDate) },
                    date(r.1) { .double($0.timeIntervalSince1970) },
                    date(r.2) { .text(Self.iso($0)) },
                    misc(r.3).column,
                    r.4.map { .text($0) } ?? .null,
                ])
        }
        return db
    }

    /// The dynamically typed column's value as stored and as memory sees it. A date there is its
    /// seconds since 2001, as the JSON loader never stores one (it keeps dates in a date column),
    /// so memory sees a number too; a boolean is 0/1 on both sides.
    static func misc(_ v: LiteralValue) -> (column: SQLValue, memory: Value) {
        switch v {
        case .integer(let i): (.integer(i), .integer(i))
        case .double(let d): (.double(d), .double(d))
        case .string(let t): (.text(t), .string(t))
        case .bool(let b): (.integer(b ? 1 : 0), .integer(b ? 1 : 0))
        case .date(let d): (.double(d.timeIntervalSinceReferenceDate), .double(d.timeIntervalSinceReferenceDate))
        default: (.null, .null)
        }
    }

    static func iso(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: d)
    }

    /// The objects memory sees: the same values as the columns hold.
    static var objects: [Value] {
        rows.map { r in
            func date(_ s: Double?) -> Value { s.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null }
            return .dictionary([
                "born": date(r.0), "born70": date(r.1), "bornISO": date(r.2), "misc": misc(r.3).memory,
                "uti": r.4.map(Value.string) ?? .null,
            ])
        }
    }

    static let predicates: [(String, [Date])] = [
        ("born + 86400 > %@", [Date(timeIntervalSinceReferenceDate: 86_400)]),
        ("born - 86400 == %@", [Date(timeIntervalSinceReferenceDate: 0)]),
        ("86400 + born70 >= born", []),
        ("born - born70 > 0", []),
        ("born70 - born == 0.5", []),
        ("NOT born - born70 < 0", []),
        ("born == born70", []),
        ("born != born70", []),
        ("born < bornISO", []),
        ("NOT bornISO >= born70", []),
        ("bornISO + 1 > born", []),
        ("born + 0.25 >= born70 AND born - 0.25 <= bornISO", []),
        ("misc == %@", [Date(timeIntervalSinceReferenceDate: 0)]),
        ("misc != %@", [Date(timeIntervalSinceReferenceDate: 0)]),
        ("NOT misc == %@", [Date(timeIntervalSinceReferenceDate: 0)]),
        // The dynamically typed column against values memory does not order it with: memory's
        // error on "x" (or on the numbers), strict; lenient memory's answers.
        ("misc > 1", []),
        ("misc < 'b'", []),
        ("NOT misc >= 0.25", []),
        ("misc BEGINSWITH 'x'", []),
        ("uti == 'public.png' AND misc > 1", []),
        ("uti == 'public.jpeg' AND misc > 1", []),
        ("misc > 1 OR uti == nil", []),
        ("misc * 2 > 1", []),
        ("misc BETWEEN {0, 10}", []),
        ("uti UTI-CONFORMS-TO 'public.image'", []),
        ("uti UTI-CONFORMS-TO 'public.data'", []),
        ("NOT uti UTI-CONFORMS-TO 'public.image'", []),
        ("uti UTI-EQUALS 'public.jpeg'", []),
        ("uti UTI-CONFORMS-TO nil", []),
        ("'public.image' UTI-CONFORMS-TO 'public.jpeg'", []),
    ]

    @Test(arguments: predicates.indices)
    func selectsWhatMemoryAccepts(_ i: Int) throws {
        let (format, args) = Self.predicates[i]
        try Self.expectMemorysOutcome(
            try PredicateSyntax.parse(format, arguments: args.map { $0 as Any? }), format,
            schema: Self.schema, entity: "Item", db: try Self.load(), objects: Self.objects)
    }

    /// The query of `syntax`, strict and lenient, selects exactly memory's rows, or fails with
    /// memory's error on a row where memory raises.
    static func expectMemorysOutcome(
        _ syntax: PredicateSyntax, _ format: String, schema: Schema, entity: String, db: SQLiteConnection,
        objects: [Value]
    ) throws {
        for lenient in [false, true] {
            let query = try SQLLowering(schema: schema, entity: entity).select(
                syntax, source: format, lenient: lenient)
            let predicate = SiftPredicate(syntax, source: format, options: EvaluationOptions(lenient: lenient))
            let (verdicts, raised) = Self.memory(predicate, on: objects)
            let label = "\(format) lenient: \(lenient)"
            switch Self.run(query, on: db) {
            case .failure(let e):
                // The statement fails only where memory raises, with memory's error on that row.
                let r = try #require(e.raised, "\(label): \(e)\n\(query.sql)")
                let memory = try #require(raised[Int(r.row)], "\(label): row \(r.row) raised in SQL only")
                #expect(r.error.id == memory.id && r.error.message == memory.message, "\(label): \(r.error)")
            case .success(let selected):
                #expect(raised.isEmpty, "\(label): memory raises on \(raised), SQL answered\n\(query.sql)")
                for (index, verdict) in verdicts {
                    #expect(
                        selected.contains(Int64(index)) == verdict,
                        "\(label): row \(index), memory says \(verdict)\n\(query.sql)")
                }
                #expect(verdicts.count >= 2, "\(format): memory raised on almost every row, the case tests nothing")
            }
        }
    }

    /// Memory's answer on each object, and its error on each it raises on.
    static func memory(_ predicate: SiftPredicate, on objects: [Value] = objects) -> (
        verdicts: [Int: Bool], raised: [Int: EvaluationError]
    ) {
        var verdicts: [Int: Bool] = [:]
        var raised: [Int: EvaluationError] = [:]
        for (index, object) in objects.enumerated() {
            do throws(EvaluationError) { verdicts[index] = try predicate.evaluate(with: object) } catch {
                raised[index] = error
            }
        }
        return (verdicts, raised)
    }

    /// The ids the query selects, or the database's error.
    static func run(_ query: SQLQuery, on db: SQLiteConnection) -> Result<Set<Int64>, SQLiteError> {
        do throws(SQLiteError) {
            let rows = try db.query(query.sql, query.bindings)
            return .success(Set(rows.compactMap { if case .integer(let id) = $0[0] { id } else { nil } }))
        } catch { return .failure(error) }
    }

    // MARK: nil into arithmetic over declared columns

    /// Declared columns only: memory raises on a nil operand of arithmetic, `abs:` and `~`, where
    /// SQL computes NULL; the guard hands the rows where the computed SQL is NULL to memory
    /// (`sift_row` of the row's attributes).
    static let typedSchema = try! Schema(entities: [
        Schema.Entity(
            name: "Thing", table: "thing",
            attributes: [
                Schema.Attribute(name: "name", type: .string),
                Schema.Attribute(name: "price", type: .integer),
                Schema.Attribute(name: "ratio", type: .double),
            ])
    ])

    /// (name, price, ratio); nil is NULL.
    static let things: [(String, Int64?, Double?)] = [
        ("a", 3, 0.5), ("b", nil, 2), ("c", 10, nil), ("d", 0, -1.5), ("e", -4, 4),
    ]

    static let nilPredicates: [String] = [
        "price + 1 > 5", "abs(price) > 2", "price * 2 > 5 AND name == 'c'", "name == 'c' AND price * 2 > 5",
        "NOT price + 1 > 5", "price + 1 == nil", "price + 1 != nil", "price - 1 != 2", "price / 0 == 0",
        "7 / price < 1", "-price < 0", "~price == -4", "price * ratio > 1", "ratio * 2 BETWEEN {0, 5}",
        "price + 1 IN {4, 11}", "TERNARY(name == 'a', 0, price + 1) > 3", "TERNARY(name == 'a', price + 1, 0) > 3",
        "name == 'a' OR price + 1 > 5", "price == nil OR price + 1 > 5", "price != nil AND price * 2 > 5",
        "ratio != nil AND abs(ratio) * price >= 1", "price << 1 == 6", "(price + 1) * 2 < 100",
    ]

    static func loadThings() throws -> SQLiteConnection {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE thing (id INTEGER PRIMARY KEY, name TEXT, price INTEGER, ratio REAL)")
        for (i, t) in things.enumerated() {
            _ = try db.query(
                "INSERT INTO thing VALUES (?, ?, ?, ?)",
                [.integer(Int64(i)), .text(t.0), t.1.map(SQLValue.integer) ?? .null, t.2.map(SQLValue.double) ?? .null])
        }
        return db
    }

    @Test(arguments: nilPredicates)
    func nilIntoArithmeticIsMemorysOutcome(_ format: String) throws {
        let objects: [Value] = Self.things.map { t in
            .dictionary([
                "name": .string(t.0), "price": t.1.map(Value.integer) ?? .null, "ratio": t.2.map(Value.double) ?? .null,
            ])
        }
        try Self.expectMemorysOutcome(
            try PredicateSyntax.parse(format), format, schema: Self.typedSchema, entity: "Thing",
            db: try Self.loadThings(), objects: objects)
    }

    /// The guard costs one `IS NULL` test per column the arithmetic reads on typed columns (not
    /// the arithmetic again), and none where nothing is computed.
    @Test func typedGuardIsOneNullTest() throws {
        let lowering = try SQLLowering(schema: Self.typedSchema, entity: "Thing")
        let guarded = try lowering.select(try PredicateSyntax.parse("price * 2 > 5"))
        #expect(guarded.sql.contains(#"(CASE WHEN ((t0."price") IS NULL) THEN sift_guard("#), "\(guarded.sql)")
        #expect(guarded.sql.components(separatedBy: " IS NULL").count == 2, "\(guarded.sql)")
        let two = try lowering.select(try PredicateSyntax.parse("-(price * ratio) < 1"))
        #expect(two.sql.contains(#"WHEN (((t0."price") IS NULL OR (t0."ratio") IS NULL)) THEN"#), "\(two.sql)")
        for plain in ["price > 5", "price == nil", "name BEGINSWITH 'a' AND ratio < 2"] {
            let q = try lowering.select(try PredicateSyntax.parse(plain))
            #expect(!q.sql.contains("sift_guard"), "\(plain): \(q.sql)")
        }
    }

    /// What memory raises on for every row that has a date stays a type error outside mixed shapes.
    @Test func arithmeticMemoryRejectsStaysATypeError() throws {
        let lowering = try SQLLowering(schema: Self.schema, entity: "Item")
        for format in ["born * 2 > born", "born + born > 0", "uti - born > 0", "5 - born < 0"] {
            let error = #expect(throws: SQLLoweringError.self, "\(format)") {
                try lowering.select(try PredicateSyntax.parse(format), source: format)
            }
            #expect(error?.kind == .typeMismatch, "\(format): \(String(describing: error))")
        }
    }
}
