// The randomized differential test: random predicates over random datasets, evaluated in memory
// (the oracle) and by the SQL back-end; the outcome must be memory's: the records memory says true
// exactly, or, where memory raises on some record, an error naming a record on which memory raises
// with memory's error id (a case where memory raises and SQL answers rows is a failure). Seeded and reproducible: SIFT_DIFF_SEED sets the
// seed (printed on every run) and SIFT_DIFF_CASES the number of predicates (default 20,000). On a
// disagreement the case is shrunk (records, keys, subpredicates, constants) and printed: the
// canonical predicate, the dataset as JSON, both results and the SQL.

import Foundation
import SiftEvaluation
import SiftJSON
import SiftStore
import SiftSyntax
import SiftTestSupport
import Testing

@testable import SiftTool

/// One generated case that failed, and why.
struct DiffFailure {
    /// A stable category: shrinking keeps it (a disagreement must stay a disagreement).
    var category: String
    var detail: String
}

enum Differential {
    /// Parses a generated predicate; a failure here is a generator bug.
    static func parse(_ p: GenPred) -> Result<(PredicateSyntax, String), SyntaxError> {
        let (text, args) = p.text
        do throws(SyntaxError) {
            return .success((try PredicateSyntax.parse(text, literals: args.map(\.literal)), text))
        } catch { return .failure(error) }
    }

    /// Checks one predicate against one loaded dataset; nil when both back-ends agree.
    static func check(_ p: GenPred, values: [Value], loaded: any LoadedDataset) -> DiffFailure? {
        let syntax: PredicateSyntax
        let text: String
        switch parse(p) {
        case .success(let s): (syntax, text) = s
        case .failure(let e): return DiffFailure(category: "generator: does not parse", detail: e.annotated)
        }
        let variables = p.variables
        let oracle = Oracle.evaluate(syntax, source: text, on: values, variables: variables.mapValues(\.value))
        switch loaded.answer(syntax, source: text, variables: variables) {
        case .declined:
            return nil
        case .rejected(let kind, let message):
            // The category keeps the message (without its position) so shrinking cannot wander
            // from one rejection to another.
            let reason =
                message.split(separator: "\n").first.map {
                    $0.split(separator: "error: ", maxSplits: 1).last.map(String.init) ?? ""
                } ?? ""
            return DiffFailure(
                category: "rejected: \(kind): \(reason)",
                detail: "the SQL back-end rejected a generated predicate (generator or lowering bug):\n\(message)")
        case .runtimeError(let message, let sql):
            if oracle.contains(where: { if case .error = $0 { true } else { false } }) { return nil }
            return DiffFailure(
                category: "runtime error",
                detail: "SQL failed though memory raised on no record: \(message)\nSQL: \(sql)")
        case .raised(let record, let id, let sql):
            let mem = oracle.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: ", ")
            guard record < oracle.count, case .error(let memoryID) = oracle[record] else {
                return DiffFailure(
                    category: "raised where memory does not",
                    detail: "SQL raised \(id) on record \(record)\nmemory: \(mem)\nSQL: \(sql)")
            }
            guard memoryID == id else {
                return DiffFailure(
                    category: "another error",
                    detail: "record \(record): memory raised \(memoryID), SQL \(id)\nmemory: \(mem)\nSQL: \(sql)")
            }
            return nil
        case .matches(let set, let sql):
            if let i = oracle.firstIndex(where: { if case .error = $0 { true } else { false } }) {
                let mem = oracle.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: ", ")
                return DiffFailure(
                    category: "memory raises, SQL answers",
                    detail: "memory raised on record \(i), SQL selected \(set.sorted())\nmemory: \(mem)\nSQL: \(sql)")
            }
            var wrong: [String] = []
            for (i, r) in oracle.enumerated() {
                switch r {
                case .error: continue
                case .match where !set.contains(i): wrong.append("record \(i): memory true, SQL false")
                case .noMatch where set.contains(i): wrong.append("record \(i): memory false, SQL true")
                default: continue
                }
            }
            if wrong.isEmpty { return nil }
            let mem = oracle.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: ", ")
            return DiffFailure(
                category: "disagreement",
                detail: wrong.joined(separator: "\n") + "\nmemory: \(mem)\nSQL matches: \(set.sorted())\nSQL: \(sql)")
        }
    }

    /// Shrinks a failing case while its failure category stays the same; returns the smallest
    /// predicate, dataset and failure found.
    static func shrink(
        _ p: GenPred, _ records: [JSONValue], _ failure: DiffFailure, backend: any DiffBackend,
        budget: Int = 1500
    ) -> (GenPred, [JSONValue], DiffFailure) {
        var pred = p
        var recs = records
        var current = failure
        var attempts = 0
        func fails(_ q: GenPred, _ r: [JSONValue]) -> DiffFailure? {
            attempts += 1
            guard !r.isEmpty, let loaded = try? backend.load(r) else { return nil }
            guard let f = check(q, values: r.map(\.value), loaded: loaded), f.category == current.category else {
                return nil
            }
            return f
        }
        var progress = true
        while progress && attempts < budget {
            progress = false
            // Records: halves first, then one at a time.
            var chunk = max(recs.count / 2, 1)
            while chunk >= 1 && attempts < budget {
                var i = 0
                while i < recs.count && attempts < budget {
                    var r = recs
                    r.removeSubrange(i..<min(i + chunk, r.count))
                    if let f = fails(pred, r) {
                        recs = r
                        current = f
                        progress = true
                    } else {
                        i += chunk
                    }
                }
                chunk /= 2
            }
            // The predicate.
            var shrunk = true
            while shrunk && attempts < budget {
                shrunk = false
                for q in pred.shrinks where attempts < budget {
                    if let f = fails(q, recs) {
                        pred = q
                        current = f
                        shrunk = true
                        progress = true
                        break
                    }
                }
            }
            // Keys of records, and of the objects nested one and two levels down.
            for i in recs.indices where attempts < budget {
                for candidate in dropKeyVariants(recs[i]) where attempts < budget {
                    var r = recs
                    r[i] = candidate
                    if let f = fails(pred, r) {
                        recs = r
                        current = f
                        progress = true
                        break
                    }
                }
            }
        }
        return (pred, recs, current)
    }

    /// `value` with one key removed (anywhere in nested objects and arrays), or one array element removed.
    static func dropKeyVariants(_ value: JSONValue) -> [JSONValue] {
        switch value {
        case .object(let members):
            var out: [JSONValue] = members.indices.map { i in
                var m = members
                m.remove(at: i)
                return .object(m)
            }
            for (i, (k, v)) in members.enumerated() {
                for inner in dropKeyVariants(v) {
                    var m = members
                    m[i] = (k, inner)
                    out.append(.object(m))
                }
            }
            return out
        case .array(let items):
            var out: [JSONValue] = items.indices.map { i in
                var a = items
                a.remove(at: i)
                return .array(a)
            }
            for (i, v) in items.enumerated() {
                for inner in dropKeyVariants(v) {
                    var a = items
                    a[i] = inner
                    out.append(.array(a))
                }
            }
            return out
        default:
            return []
        }
    }

    static func json(_ records: [JSONValue]) -> String {
        var out = "["
        for (i, r) in records.enumerated() {
            if i > 0 { out += ",\n " }
            r.write(into: &out)
        }
        return out + "]"
    }

    /// A printable report of a (shrunk) failure.
    static func report(seed: UInt64, caseNumber: Int, _ p: GenPred, _ records: [JSONValue], _ f: DiffFailure) -> String
    {
        let (text, args) = p.text
        let canonical = (try? PredicateSyntax.parse(text, literals: args.map(\.literal)))?.description ?? text
        var argText = ""
        JSONValue.array(args).write(into: &argText)
        if !p.variables.isEmpty {
            argText += "  vars: "
            JSONValue.object(p.variables.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).write(into: &argText)
        }
        return """
            differential failure (\(f.category)), seed \(seed), case \(caseNumber)
            predicate: \(canonical)
            as generated: \(text)  args: \(argText)
            dataset: \(json(records))
            \(f.detail)
            """
    }

    struct RunSummary {
        var cases = 0
        var failures: [String] = []
        /// Record verdicts in memory over all cases: true, false, raised.
        var matched = 0, unmatched = 0, raised = 0
    }

    /// Runs `cases` random predicates against `backend`, a fresh dataset every `perDataset` predicates.
    static func run(
        seed: UInt64, cases: Int, backend: any DiffBackend, perDataset: Int = 250,
        maxFailures: Int = 3, flat: Bool = false
    ) throws -> RunSummary {
        var gen = DiffGenerator(seed: seed)
        var summary = RunSummary()
        var records: [JSONValue] = []
        var values: [Value] = []
        var loaded: (any LoadedDataset)?
        for n in 0..<cases {
            if n % perDataset == 0 {
                records = gen.dataset(count: gen.int(8...24), valueRecords: !flat)
                // Flat: each record's values alone, as one table of a hand-written schema holds them.
                if flat { records = records.map(Self.flattened) }
                values = records.map(\.value)
                loaded = try backend.load(records)
            }
            let p = gen.predicate(depth: 3)
            summary.cases += 1
            if case .success(let (syntax, text)) = parse(p) {
                for r in Oracle.evaluate(syntax, source: text, on: values, variables: p.variables.mapValues(\.value)) {
                    switch r {
                    case .match: summary.matched += 1
                    case .noMatch: summary.unmatched += 1
                    case .error: summary.raised += 1
                    }
                }
            }
            if let f = check(p, values: values, loaded: loaded!) {
                let (sp, sr, sf) = shrink(p, records, f, backend: backend)
                summary.failures.append(report(seed: seed, caseNumber: n, sp, sr, sf))
                if summary.failures.count >= maxFailures { break }
            }
        }
        return summary
    }

    /// A record without its objects and arrays.
    static func flattened(_ record: JSONValue) -> JSONValue {
        guard case .object(let fields) = record else { return record }
        return .object(
            fields.filter {
                switch $0.1 {
                case .object, .array: false
                default: true
                }
            })
    }

    static var seed: UInt64 {
        if let s = ProcessInfo.processInfo.environment["SIFT_DIFF_SEED"], let v = UInt64(s) { return v }
        return 0x51F7_D1FF
    }

    static var caseCount: Int {
        if let s = ProcessInfo.processInfo.environment["SIFT_DIFF_CASES"], let v = Int(s) { return v }
        return 20_000
    }
}

@Suite struct DifferentialTests {
    /// The generator only produces predicates the parser accepts, and of every kind it should.
    @Test func generatorProducesParseablePredicates() throws {
        var gen = DiffGenerator(seed: 7)
        var texts = Set<String>()
        var failures: [String] = []
        for _ in 0..<3000 {
            let p = gen.predicate(depth: 3)
            switch Differential.parse(p) {
            case .success(let (syntax, text)):
                texts.insert(syntax.description)
                _ = text
            case .failure(let e): failures.append("\(p.text.0): \(e)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5).joined(separator: "\n"))")
        let all = texts.joined(separator: "\n")
        for needle in [
            "ANY ", "ALL ", "NOT ", "SUBQUERY(", "[SIZE]", "@count", "@sum", "@avg", "@min", "@max", " IN ",
            "BETWEEN", "LIKE", "MATCHES", "BEGINSWITH[cd]", "==[c]", "[n]", "[d]", "TRUEPREDICATE", "FALSEPREDICATE",
            "born BETWEEN", "born <",
            " + ", " * ", " - ", "address.geo.lat", "kids.address.city", "== nil", " AND ", " OR ",
        ] {
            #expect(all.contains(needle), "no generated predicate contains '\(needle)'")
        }
        #expect(texts.count > 2500, "only \(texts.count) distinct predicates")
        // Collections read as a whole (issue 12), on object records and on records that are values.
        gen.selfRecords = true
        for _ in 0..<1000 {
            if case .success(let (syntax, _)) = Differential.parse(gen.predicate(depth: 2)) {
                texts.insert(syntax.description)
            }
        }
        let lines = texts.sorted()
        func some(_ what: String, _ test: (String) -> Bool) {
            let found = lines.contains(where: test)
            #expect(found, "no generated predicate has \(what)")
        }
        some("a mapped key counted") { $0.contains("kids.age.@count") || $0.contains("kids.name.@count") }
        some("kids against {}") { $0.contains("kids == {}") || $0.contains("kids != {}") }
        some("kids against plain values") { $0.contains("kids == {\"") || $0.contains("kids != {\"") }
        some("a SUBQUERY against nil") {
            $0.range(of: #"SUBQUERY\(kids, \$k, .*\) [!=]= nil"#, options: .regularExpression) != nil
        }
        some("a SUBQUERY against {}") {
            $0.range(of: #"SUBQUERY\(kids, \$k, .*\) [!=]= \{\}"#, options: .regularExpression) != nil
        }
        some("a SUBQUERY's key against a list") {
            $0.range(of: #"SUBQUERY\(kids, \$k, .*\)\.name [!=]=(\[[cdn]+\])? \{"#, options: .regularExpression) != nil
        }
        some("a SUBQUERY of values against a list") {
            $0.range(of: #"SUBQUERY\(tags, \$t, .*\) [!=]=(\[[cdn]+\])? \{"#, options: .regularExpression) != nil
        }
        some("a SUBQUERY over SELF counted") { $0.contains("SUBQUERY(SELF, $x,") && $0.contains("@count") }
        some("a SUBQUERY against its own collection") {
            $0.range(of: #"SUBQUERY\((kids|tags), \$[kt], .*\) [!=]= (kids|tags)$"#, options: .regularExpression) != nil
        }
        some("a SUBQUERY over a key of several shapes") { $0.contains("SUBQUERY(mix, $x,") }
        some("a SUBQUERY over SELF against a list") {
            $0.range(of: #"SUBQUERY\(SELF, \$x, .*\) [!=]= \{"#, options: .regularExpression) != nil
        }
        for form in [
            "ANY mode:(", "ALL mode:(", " IN mode:(", "mode:(tags) CONTAINS", "mode:(kids.age)[SIZE]",
            "mode:(tags).@count", "count:(mode:(", "mode:(kids.name) ==",
        ] {
            some("'\(form)'") { $0.contains(form) }
        }
    }

    /// The memory back-end agrees with the oracle (the harness itself reports no false failures).
    @Test func harnessAgreesWithItself() throws {
        let summary = try Differential.run(seed: 11, cases: 500, backend: MemoryBackend())
        #expect(summary.cases == 500)
        #expect(summary.failures.isEmpty, "\(summary.failures.joined(separator: "\n\n"))")
    }

    /// A deliberately wrong back-end (never selects a record whose name is "Ann") is caught, and
    /// the case shrinks to one record and a one-leaf predicate.
    @Test func shrinkerFindsMinimalCase() throws {
        struct Broken: DiffBackend {
            var name: String { "broken" }
            struct Loaded: LoadedDataset {
                var inner: any LoadedDataset
                var records: [JSONValue]
                func answer(_ syntax: PredicateSyntax, source: String, variables: [String: JSONValue]) -> BackendAnswer
                {
                    let answer = inner.answer(syntax, source: source, variables: variables)
                    guard case .matches(var set, let sql) = answer else { return answer }
                    for (i, r) in records.enumerated() {
                        if case .object(let m) = r, m.contains(where: { $0.0 == "name" && $0.1 == .string("Ann") }) {
                            set.remove(i)
                        }
                    }
                    return .matches(set, sql: sql)
                }
            }
            func load(_ records: [JSONValue]) throws -> any LoadedDataset {
                Loaded(inner: try MemoryBackend().load(records), records: records)
            }
        }
        // The first seed whose datasets hold records named "Ann" that generated predicates select
        // (the generator draws from one stream, so a new kind of predicate or key moves the
        // datasets of every seed).
        var found: Differential.RunSummary?
        for seed: UInt64 in 1...40 where found == nil {
            let run = try Differential.run(seed: seed, cases: 2000, backend: Broken(), maxFailures: 1)
            if !run.failures.isEmpty { found = run }
        }
        let summary = try #require(found, "no seed in 1...40 has a record named Ann that a predicate selects")
        #expect(summary.failures.count == 1)
        let report = summary.failures.first ?? ""
        #expect(report.contains("disagreement"))
        // The minimal dataset is a single record holding the name and at most one other key,
        // and the predicate a single comparison.
        let dataset =
            report.split(separator: "\n").first { $0.hasPrefix("dataset: ") }.map { String($0.dropFirst(9)) } ?? ""
        guard case .array(let records)? = try? JSONReader.parse(dataset), records.count == 1,
            case .object(let members) = records[0]
        else {
            Issue.record("\(report)")
            return
        }
        #expect(members.contains { $0.0 == "name" && $0.1 == .string("Ann") } && members.count <= 2, "\(report)")
        let predicate = report.split(separator: "\n").first { $0.hasPrefix("predicate: ") } ?? ""
        #expect(!predicate.contains(" AND ") && !predicate.contains(" OR "), "\(report)")
    }

    /// The real thing: memory against the back-end under test.
    @Test func memoryAgreesWithSQL() throws {
        let seed = Differential.seed
        let cases = Differential.caseCount
        print(
            "differential: seed \(seed) (SIFT_DIFF_SEED), \(cases) cases (SIFT_DIFF_CASES), back-end \(DiffBackends.underTest.name)"
        )
        let start = ContinuousClock.now
        let summary = try Differential.run(seed: seed, cases: cases, backend: DiffBackends.underTest)
        print(
            "differential: ran \(summary.cases) cases, \(summary.failures.count) failures, \(ContinuousClock.now - start); "
                + "record verdicts in memory: \(summary.matched) true, \(summary.unmatched) false, \(summary.raised) raised"
        )
        if ProcessInfo.processInfo.environment["SIFT_DIFF_SHOW"] != nil {
            var gen = DiffGenerator(seed: seed)
            for _ in 0..<40 { print(gen.predicate(depth: 3).text.0) }
        }
        #expect(summary.failures.isEmpty, "\(summary.failures.joined(separator: "\n\n"))")
        #expect(summary.cases == cases || !summary.failures.isEmpty)
    }
}

extension DifferentialTests {
    /// ORDER BY against in-memory sorting: random datasets, one to three random sort keys (string
    /// options, directions, to-one paths, collection operators), the same order of record indices
    /// from SQL as from `sortedIndices(by:)`, over the records a random predicate selects.
    @Test func sortOrderAgrees() throws {
        var gen = DiffGenerator(seed: Differential.seed ^ 0x5077)
        let keys = [
            "name", "city", "age", "score", "born", "address.city", "address.zip", "address.geo.lat", "kids.@count",
            "tags.@count",
            #"#"first name""#, #"#"@timestamp""#, "café", #"address.#"post-code""#,
        ]
        var failures: [String] = []
        var compared = 0
        for _ in 0..<40 {
            // Records that are objects: the sort keys name their keys.
            let records = gen.dataset(count: gen.int(8...24), valueRecords: false)
            let values = records.map(\.value)
            let backend = try SQLBackend(records: records)
            for _ in 0..<25 {
                let descriptors = try (0..<gen.int(1...3)).map { _ in
                    try SiftSortDescriptor(
                        gen.pick(keys), ascending: gen.chance(0.5),
                        options: gen.pick([
                            [], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive],
                            .normalized,
                        ]))
                }
                let p = gen.predicate(depth: 2)
                guard case .success(let (syntax, text)) = Differential.parse(p) else { continue }
                let oracle = Oracle.evaluate(
                    syntax, source: text, on: values, variables: p.variables.mapValues(\.value))
                if oracle.contains(where: { if case .error = $0 { true } else { false } }) { continue }
                let matches = oracle.indices.filter { oracle[$0] == .match }
                guard let memory = try? matches.map({ values[$0] }).sortedIndices(by: descriptors).map({ matches[$0] })
                else { continue }
                let sql: [Int]
                do {
                    sql = try backend.matches(
                        syntax, source: text, variables: p.variables.mapValues(\.literal), sortedBy: descriptors)
                } catch {
                    // Rejected predicates are the main test's business; rejected sort keys are ours.
                    if error.stage == "lower" && !error.description.contains("sort key") { continue }
                    failures.append("\(text) sorted by \(descriptors): \(error)")
                    continue
                }
                compared += 1
                if sql != memory {
                    failures.append(
                        "\(text) sorted by \(descriptors):\nmemory \(memory)\nSQL    \(sql)\ndataset: \(Differential.json(records))"
                    )
                    if failures.count >= 3 { break }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
        #expect(compared > 500, "only \(compared) sorted comparisons")
    }
}

extension DifferentialTests {
    /// The same random cases against PostgreSQL (the test server): zero disagreements, and the
    /// share of cases PostgreSQL declines (documented forms it cannot make exact) reported.
    @Test func memoryAgreesWithPostgreSQL() throws {
        let seed = Differential.seed
        let cases = Differential.caseCount
        let backend = try PostgresDiffBackend()
        let start = ContinuousClock.now
        let summary = try Differential.run(seed: seed, cases: cases, backend: backend)
        print(
            "differential (postgres): seed \(seed), ran \(summary.cases) cases, \(summary.failures.count) failures, \(ContinuousClock.now - start); "
                + "\(backend.answered) answered in SQL, \(backend.declined) declined")
        for (reason, n) in backend.declinedReasons.sorted(by: { $0.value > $1.value }).prefix(12) {
            print("  declined \(n)× \(reason)")
        }
        #expect(summary.failures.isEmpty, "\(summary.failures.joined(separator: "\n\n"))")
        #expect(summary.cases == cases || !summary.failures.isEmpty)
        // Most generated predicates run on PostgreSQL; the rest are declined with their reason.
        #expect(backend.answered * 2 > summary.cases, "only \(backend.answered) of \(summary.cases) answered")
    }
}

extension DifferentialTests {
    /// Random cases over flat records in tables alone (no documents and no open entity, as a
    /// hand-written schema maps them): memory's outcome wherever the lowering answers, errors
    /// included (a dynamically typed column guarded through the row's own attributes); forms only
    /// documents decide, and keys the records lack, are declined.
    @Test func memoryAgreesWithSQLiteWithoutDocuments() throws {
        let seed = Differential.seed ^ 0xD0C
        let cases = min(Differential.caseCount, 6_000)
        let backend = NoDocumentsDiffBackend()
        let summary = try Differential.run(seed: seed, cases: cases, backend: backend, flat: true)
        print(
            "differential (no documents): seed \(seed), ran \(summary.cases) cases, \(summary.failures.count) failures; "
                + "\(backend.answered) answered in SQL (\(backend.nilGuarded) guarding nil into arithmetic on "
                + "typed columns), \(backend.declined) declined; record verdicts in memory: \(summary.raised) raised")
        #expect(summary.failures.isEmpty, "\(summary.failures.joined(separator: "\n\n"))")
        #expect(summary.cases == cases || !summary.failures.isEmpty)
        #expect(backend.answered * 4 > summary.cases, "only \(backend.answered) of \(summary.cases) answered")
        // The generator's `qty` (integers or nil, declared integer here) makes nil into arithmetic
        // on a typed column (about 1 answered case in 100).
        #expect(backend.nilGuarded > 0, "no case guards nil into arithmetic on a typed column")
    }
}

/// The back-end the differential test drives.
enum DiffBackends {
    static var underTest: any DiffBackend { SQLiteBackend() }
}
