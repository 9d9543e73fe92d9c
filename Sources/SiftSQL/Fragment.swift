// SQL text being assembled together with the values bound to its parameters, in order. Parameters
// are written as a marker and numbered only when the statement is complete, so fragments can be
// built in any order (a leaf's positive and negated forms) and still bind in text order, and a
// dialect with numbered placeholders (`$1`) works the same way.

/// A piece of SQL text and the values for its parameters.
struct Fragment: Sendable {
    static let marker: Character = "\u{1}"
    var sql: String
    var bindings: [SQLValue]
    /// Whether the SQL runs a subquery over the row (EXISTS over a to-many), which a top-level AND
    /// writes after its other parts (`SQLDialect.bundledSubqueryTerm`).
    var runsSubquery = false

    init(_ sql: String, _ bindings: [SQLValue] = []) {
        self.sql = sql
        self.bindings = bindings
    }

    /// One bound parameter.
    static func param(_ v: SQLValue) -> Fragment { Fragment(String(marker), [v]) }

    // The left operand is consumed: in a chain `a + b + c` each step appends to the buffer the
    // previous one made instead of copying it again.
    static func + (a: consuming Fragment, b: Fragment) -> Fragment {
        a.sql += b.sql
        if !b.bindings.isEmpty { a.bindings += b.bindings }
        a.runsSubquery = a.runsSubquery || b.runsSubquery
        return a
    }

    static func join(_ parts: [Fragment], _ sep: String) -> Fragment {
        guard var out = parts.first else { return Fragment("") }
        // One buffer for the whole list: joining n parts pairwise would copy it n times.
        out.sql.reserveCapacity(parts.reduce(0) { $0 + $1.sql.utf8.count + sep.utf8.count })
        for p in parts.dropFirst() {
            out.sql += sep
            out.sql += p.sql
            if !p.bindings.isEmpty { out.bindings += p.bindings }
            out.runsSubquery = out.runsSubquery || p.runsSubquery
        }
        return out
    }

    /// `(self)`.
    var parenthesized: Fragment {
        var text = "("
        text.reserveCapacity(sql.utf8.count + 2)
        text += sql
        text += ")"
        var f = Fragment(text, bindings)
        f.runsSubquery = runsSubquery
        return f
    }

    /// The finished statement with the dialect's placeholders.
    func query(_ dialect: any SQLDialect) -> SQLQuery {
        // Byte-wise: the marker is one ASCII byte, and walking Characters would pay for grapheme
        // breaking on every byte of the statement.
        var out: [UInt8] = []
        out.reserveCapacity(sql.utf8.count + bindings.count * 2)
        var n = 0
        for byte in sql.utf8 {
            if byte == 0x01 {
                n += 1
                out.append(contentsOf: dialect.placeholder(n).utf8)
            } else {
                out.append(byte)
            }
        }
        return SQLQuery(sql: String(decoding: out, as: UTF8.self), bindings: bindings)
    }
}

/// A lowered predicate: folded to a constant, or SQL that is TRUE exactly when memory says true.
enum Lowered: Sendable {
    case constant(Bool)
    case sql(Fragment)
}
