// Comparisons decided by memory on the row's whole document. A store that keeps each JSON record
// whole next to its tables (``Entity/documentColumn``) can answer, exactly, what the tables cannot
// say: a dictionary's `@count` and values, an element that is null rather than an empty object,
// arrays of arrays, a SUBQUERY's result quantified over or compared with the row. For such a
// comparison at the top level of the predicate (where `SELF` is the record), the lowering passes
// its canonical text to `sift_document`, which evaluates it with the evaluator on the decoded
// document. The rows are memory's by construction; what it costs is one decode and one evaluation
// per row the rest of the WHERE clause does not exclude first, so only forms the tables cannot
// express go this way: everything the lowering already translates keeps its SQL and its indexes.
// The same call keeps statements within SQLite's parser depth: a predicate whose SQL would nest
// too deeply for it (TERNARY, SUBQUERY or AND/OR hundreds of levels deep) is lowered again with
// its deep parts handed to memory.

import SiftEvaluation
import SiftSyntax

extension LoweringContext {
    /// The comparison `p` as memory decides it on the row's document, or nil when the entity keeps
    /// no document, `p` is inside a SUBQUERY or quantifier's own scope (where `SELF` and the
    /// variables are not the record's), or `error` is not one the document decides (type errors,
    /// constants that raise on every row, `random()`). In a dialect that cannot call memory it
    /// throws `error` saying so; a variable bound nowhere is reported as such.
    func documentComparison(
        _ p: PredicateSyntax, negated: Bool, _ scope: Scope,
        rejectedWith error: SQLLoweringError
    ) throws(SQLLoweringError) -> Lowered? {
        guard error.documentCanDecide, let root = rootScope, scope === root, elementVariables.isEmpty,
            root.entity.documentColumn != nil
        else { return nil }
        guard dialect.documentFunction != nil else {
            var e = error
            e.message += " in this dialect (only memory, on the whole record, decides it)"
            throw e
        }
        let substituted = substitutedForDocument(p)
        // Memory would raise on every row.
        if let name = Self.unbound(substituted).sorted().first {
            throw SQLLoweringError(.unboundVariable, "variable '$\(name)' is not bound", range: p.range)
        }
        return documentCall(substituted: substituted, negated: negated, scope)
    }

    /// `sift_document(<p's text>, <document>) = 1` (`= 0` negated): memory's answer to `p`, any
    /// predicate, on the row's document; nil where that is not available or not exact (see
    /// ``documentComparison(_:negated:_:rejectedWith:)``; a variable bound nowhere leaves `p` as it was).
    func documentCall(_ p: PredicateSyntax, negated: Bool, _ scope: Scope) -> Lowered? {
        let substituted = substitutedForDocument(p)
        guard Self.unbound(substituted).isEmpty else { return nil }
        return documentCall(substituted: substituted, negated: negated, scope)
    }

    /// `p` with the caller's `$VARIABLE`s replaced by their constants.
    private func substitutedForDocument(_ p: PredicateSyntax) -> PredicateSyntax {
        variables.isEmpty ? p : p.withSubstitutionVariables(variables)
    }

    /// The variables of `p` nothing binds, not even an assignment in it.
    private static func unbound(_ p: PredicateSyntax) -> Set<String> {
        let free = p.variableNames
        return free.isEmpty ? free : free.subtracting(p.assignedVariableNames)
    }

    private func documentCall(substituted: PredicateSyntax, negated: Bool, _ scope: Scope) -> Lowered? {
        guard let root = rootScope, scope === root, elementVariables.isEmpty,
            let documentColumn = root.entity.documentColumn, let function = dialect.documentFunction,
            let (text, lifted) = documentArguments(substituted)
        else { return nil }
        var call = Fragment("\(function)(") + text + Fragment(", \(column(root.alias, documentColumn))")
        if let lifted { call = call + Fragment(", ") + lifted }
        // 1 or 0, NULL where memory raises: neither polarity selects such a row, and the row guard
        // (RowGuard.swift) hands every row to memory.
        noteRiskOnEveryRow(substituted.range)
        return .sql(call + Fragment(negated ? ") = 0" : ") = 1"))
    }

    /// The predicate's text and its dictionaries (nil when there are none) as bound arguments of
    /// a call into memory; nil when the text would not parse back to the same predicate.
    private func documentArguments(_ substituted: PredicateSyntax) -> (text: Fragment, variables: Fragment?)? {
        // A dictionary (a `%@` argument, or a bound variable's value) has no spelling in the
        // language: it travels apart, as a dictionary of variables.
        let (predicate, lifted) = substituted.liftingConstants(prefix: "sift_", where: Self.holdsDictionary)
        // The text must parse back to this very predicate, or the call would ask memory something else.
        let text = predicate.description
        guard let again = try? PredicateSyntax.parse(text), again == predicate else { return nil }
        let variables =
            lifted.isEmpty ? nil : Fragment.param(.blob(ValueCodec.encode(.dictionary(lifted.mapValues(Value.init)))))
        return (Fragment.param(.text(text)), variables)
    }

    /// `sift_guard(<p's text>, <document>, <primary key>, <lenient> [, <variables>])` on the
    /// selected row (see RowGuard.swift); nil where the dialect cannot call memory, `p` has
    /// variables bound nowhere, or there is nothing to evaluate it on (``guardedObject(_:)``).
    func guardCall(_ p: PredicateSyntax, lenient: Bool, _ scope: Scope) -> Fragment? {
        let substituted = substitutedForDocument(p)
        guard Self.unbound(substituted).isEmpty, let root = rootScope, scope === root,
            dialect.documentFunction != nil, let object = guardedObject(root),
            let (text, lifted) = documentArguments(substituted)
        else { return nil }
        var call =
            Fragment("\(SQLFunctions.guarded)(") + text + Fragment(", ") + object
            + Fragment(", \(column(root.alias, root.entity.primaryKey)), \(lenient ? 1 : 0)")
        if let lifted { call = call + Fragment(", ") + lifted }
        return call + Fragment(")")
    }

    private static func holdsDictionary(_ v: LiteralValue) -> Bool {
        switch v {
        case .dictionary: true
        case .array(let items): items.contains(where: holdsDictionary)
        default: false
        }
    }

    /// Whether lowering keeps the SQL within the database's parser depth by handing deep parts to
    /// memory on the document (see ``SQLNesting``): possible for the records' own predicates when
    /// they keep their documents and the dialect can call memory.
    var canDecideOnDocuments: Bool {
        rootScope?.entity.documentColumn != nil && dialect.documentFunction != nil
    }
}

/// How deeply SQLite's parser must nest to read a piece of SQL, estimated from its text. SQLite
/// reads a statement with a fixed stack (YYSTACKDEPTH, 100 entries in the system's library here),
/// and measured on it a nested `(` takes up to about 3.2 entries, a `CASE … END` or a `(SELECT …)`
/// about 5.5: 18 nested CASEs already fail with "parser stack overflow". The estimate counts half
/// entries, rounded up: 7 for each open parenthesis, 12 for each open CASE, 6 more for a SELECT
/// inside a parenthesis, skipping quoted identifiers. It is only ever compared with ``limit``.
enum SQLNesting {
    /// Half-entries beyond which a statement is lowered again with its deep parts handed to
    /// memory: 60 entries, leaving room for the statement around the WHERE clause.
    static let limit = 120

    /// Whether the estimated depth of `sql` passes ``limit``.
    static func exceeds(_ sql: String) -> Bool {
        // Each open construct needs at least one byte of text (a parenthesis, 7 half-entries).
        guard sql.utf8.count * 7 > limit else { return false }
        var frames: [Int] = []  // the weight of each open construct; a CASE's is negative
        var depth = 0
        var deepest = 0
        var quote: UInt8? = nil
        // The current word's first eight bytes, packed, and its length: no allocation per word.
        var word: UInt64 = 0
        var length = 0
        func endWord() {
            switch (word, length) {
            case (case_, 4):
                frames.append(-12)
                depth += 12
            case (end, 3):
                if let last = frames.last, last < 0 {
                    frames.removeLast()
                    depth += last
                }
            case (select, 6):
                if let last = frames.last, last > 0 {
                    frames[frames.count - 1] += 6
                    depth += 6
                }
            default: break
            }
            deepest = max(deepest, depth)
            word = 0
            length = 0
        }
        for b in sql.utf8 {
            if let q = quote {
                if b == q { quote = nil }
                continue
            }
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"):
                if length < 8 { word = word << 8 | UInt64(b) }
                length += 1
                continue
            default: break
            }
            if length > 0 { endWord() }
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = b
            case UInt8(ascii: "("):
                frames.append(7)
                depth += 7
                deepest = max(deepest, depth)
            case UInt8(ascii: ")"):
                // Close the parenthesis and any CASE left open inside it (none in valid SQL).
                while let last = frames.popLast() {
                    depth -= abs(last)
                    if last > 0 { break }
                }
            default: break
            }
            if deepest > limit { return true }
        }
        if length > 0 { endWord() }
        return deepest > limit
    }

    private static let case_ = packed("CASE"), end = packed("END"), select = packed("SELECT")
    private static func packed(_ s: String) -> UInt64 { s.utf8.reduce(0) { $0 << 8 | UInt64($1) } }
}
