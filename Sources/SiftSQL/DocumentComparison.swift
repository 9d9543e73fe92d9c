// Comparisons decided by memory on the row's whole document. A store that keeps each JSON record
// whole next to its tables (``Entity/documentColumn``) can answer, exactly, what the tables cannot
// say: a dictionary's `@count` and values, an element that is null rather than an empty object,
// arrays of arrays, a SUBQUERY's result quantified over or compared with the row. For such a
// comparison at the top level of the predicate (where `SELF` is the record), the lowering passes
// its canonical text to `sift_document`, which evaluates it with the evaluator on the decoded
// document. The rows are memory's by construction; what it costs is one decode and one evaluation
// per row the rest of the WHERE clause does not exclude first, so only forms the tables cannot
// express go this way: everything the lowering already translates keeps its SQL and its indexes.

import SiftSyntax

extension LoweringContext {
    /// The comparison `p` as memory decides it on the row's document, or nil when the entity keeps
    /// no document, `p` is inside a SUBQUERY or quantifier's own scope (where `SELF` and the
    /// variables are not the record's), or `error` is not one the document decides (type errors,
    /// constants that raise on every row, `random()`). In a dialect that cannot call memory it
    /// throws `error` saying so.
    func documentComparison(_ p: PredicateSyntax, negated: Bool, _ scope: Scope,
                            rejectedWith error: SQLLoweringError) throws(SQLLoweringError) -> Lowered? {
        guard error.documentCanDecide, let root = rootScope, scope === root, elementVariables.isEmpty,
              let documentColumn = root.entity.documentColumn else { return nil }
        guard let function = dialect.documentFunction else {
            var e = error
            e.message += " in this dialect (only memory, on the whole record, decides it)"
            throw e
        }
        // A `$VARIABLE` the caller bound becomes its constant; one bound nowhere (not even by an
        // assignment in the comparison) stays rejected: memory would raise on every row.
        let comparison = variables.isEmpty ? p : p.withSubstitutionVariables(variables)
        let free = comparison.variableNames
        guard free.isEmpty || free.isSubset(of: comparison.assignedVariableNames) else { return nil }
        // The text must parse back to this very comparison: a dictionary constant, say, prints in
        // a form the language cannot read, and is then left rejected.
        let text = comparison.description
        guard let again = try? PredicateSyntax.parse(text), again == comparison else { return nil }
        let call = Fragment("\(function)(") + Fragment.param(.text(text)) + Fragment(", \(column(root.alias, documentColumn)))")
        // 1 or 0, NULL where memory raises: neither polarity selects such a row.
        return .sql(call + Fragment(negated ? " = 0" : " = 1"))
    }
}
