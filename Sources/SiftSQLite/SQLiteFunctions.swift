// SQLite runtime support for Sift's SQL back-end: the functions and collations that lowered SQL
// calls (`sift_text`, `sift_compare`, `sift_c`, `sift_d`, `sift_cd`), registered on a connection so
// that SQL results agree with in-memory evaluation for every string, option and pattern. Every text
// decision is delegated to SiftText (the evaluator's own text layer), so the back-ends cannot drift;
// this file only maps SQLite values to operands, mirrors the evaluator's non-text rules, and caches
// the prepared needle / compiled pattern of a call site in SQLite's auxdata.

import CSQLite
import SiftEvaluation
import SiftSQL
import SiftText

extension SQLiteConnection {
    /// The version of the SQLite library linked in, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

/// Sift's SQL functions and collations, registered on a connection (`SQLiteConnection` does it on
/// open; ``register(on:)`` does it on a connection opened by any other means).
public enum SQLiteFunctions {
    /// Registers `sift_text`, `sift_compare`, `sift_call`, `sift_collect` and the collations
    /// `sift_c`, `sift_d`, `sift_cd` on a connection opened by any means (raw C API, GRDB, …). `SQLiteConnection` calls it on open.
    ///
    /// ```swift
    /// var db: OpaquePointer?
    /// sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    /// try SQLiteFunctions.register(on: db!)
    /// ```
    public static func register(on db: OpaquePointer) throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        func check(_ rc: Int32, _ name: String) throws(SQLiteError) {
            if rc != SQLITE_OK {
                throw SQLiteError(
                    code: rc, message: "cannot register '\(name)': \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        try check(
            sqlite3_create_function_v2(db, textFunctionName, 4, flags, nil, siftTextFunction, nil, nil, nil),
            textFunctionName)
        try check(
            sqlite3_create_function_v2(db, compareFunctionName, 3, flags, nil, siftCompareFunction, nil, nil, nil),
            compareFunctionName)
        try registerMemoryFunctions(on: db, check: check)
        for (name, options) in collations {
            // The options travel in the context pointer (offset so that no options is not NULL).
            let context = UnsafeMutableRawPointer(bitPattern: Int(options.rawValue) + 0x100)
            try check(sqlite3_create_collation_v2(db, name, SQLITE_UTF8, context, siftCollation, nil), name)
        }
    }

    // The names and op codes come from SiftSQL's `SQLFunctions`, the one place the lowering reads too.
    static let textFunctionName = SQLFunctions.text
    static let compareFunctionName = SQLFunctions.compare
    static let collations: [(String, TextOptions)] = [
        (SQLFunctions.collationC, .caseInsensitive),
        (SQLFunctions.collationD, .diacriticInsensitive),
        (SQLFunctions.collationCD, [.caseInsensitive, .diacriticInsensitive]),
    ]
}

typealias TextOp = SQLFunctions.TextOp

// MARK: - Reading SQLite values

/// A function argument as the evaluator would see it.
enum Operand {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])

    init(_ value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .double(sqlite3_value_double(value))
        case SQLITE_TEXT: self = .text(textOf(value))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            if count > 0, let bytes = sqlite3_value_blob(value) {
                let b = Array(UnsafeRawBufferPointer(start: bytes, count: count))
                // A NaN computed by `sift_call` (SQLite cannot store NaN as a REAL).
                self = b == SQLFunctions.nanMarker ? .double(.nan) : .blob(b)
            } else {
                self = .blob([])
            }
        default: self = .null
        }
    }
}

/// The UTF-8 text of a value, read in place (one copy into the String).
@inline(__always)
func textOf(_ value: OpaquePointer?) -> String {
    guard let bytes = sqlite3_value_text(value) else { return "" }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

// MARK: - Non-text rules (mirroring SiftEvaluation's Value.isEqual / order(comparedTo:))

/// The order of two non-text operands, or nil when the evaluator has none (different kinds).
func orderOperands(_ a: Operand, _ b: Operand) -> Int? {
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
    case (.double(let x), .double(let y)): return x < y ? -1 : (x == y ? 0 : (x > y ? 1 : orderNaN(x, y)))
    case (.integer(let x), .double(let y)): return -compareExactly(y, x)
    case (.double(let x), .integer(let y)): return compareExactly(x, y)
    case (.blob(let x), .blob(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
    case (.text(let x), .text(let y)): return textCompare(x, y, [])
    default: return nil
    }
}

private func orderNaN(_ x: Double, _ y: Double) -> Int {
    switch (x.isNaN, y.isNaN) {
    case (true, true): 0
    case (true, false): -1
    default: 1
    }
}

// MARK: - Per-call-site cache

/// What a constant needle / pattern compiles to for one (op, flags) pair; kept in SQLite's auxdata
/// so a query compiles its constant once, not once per row.
final class CompiledNeedle {
    enum Form {
        case prepared(PreparedText)
        case like(LikePattern)
        case regex(RegexPattern)
        case failure(String)
    }

    let op: Int64
    let flags: Int64
    let form: Form

    init(op: Int64, flags: Int64, needle: String) {
        self.op = op
        self.flags = flags
        let options = TextOptions(rawValue: UInt8(truncatingIfNeeded: flags))
        switch op {
        case TextOp.like.rawValue:
            do { form = .like(try LikePattern(needle, options)) } catch {
                form = .failure("\(error.kind.rawValue): \(error.message)")
            }
        case TextOp.matches.rawValue:
            do { form = .regex(try RegexPattern.compile(needle, options)) } catch {
                form = .failure("\(error.kind.rawValue): \(error.message)")
            }
        default:
            form = .prepared(PreparedText(needle, options))
        }
    }
}

/// The compiled needle at argument `index`, from auxdata when this call site already built it.
func compiledNeedle(
    _ ctx: OpaquePointer?, _ argv: UnsafeMutablePointer<OpaquePointer?>, index: Int32,
    op: Int64, flags: Int64
) -> CompiledNeedle {
    if let raw = sqlite3_get_auxdata(ctx, index) {
        let cached = Unmanaged<CompiledNeedle>.fromOpaque(raw).takeUnretainedValue()
        if cached.op == op && cached.flags == flags { return cached }
    }
    let compiled = CompiledNeedle(op: op, flags: flags, needle: textOf(argv[Int(index)]))
    // SQLite keeps the +1 reference while the argument stays constant and releases it through the
    // destructor (possibly at once, when it cannot keep it; `compiled` is still held here).
    sqlite3_set_auxdata(ctx, index, Unmanaged.passRetained(compiled).toOpaque()) { raw in
        if let raw { Unmanaged<CompiledNeedle>.fromOpaque(raw).release() }
    }
    return compiled
}

// MARK: - The functions

/// `sift_text(op, s, needle, flags)`.
private let siftTextFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    ctx, _, argv in
    guard let argv else { return }
    let sValue = argv[1]
    let nValue = argv[2]
    let sType = sqlite3_value_type(sValue)
    let nType = sqlite3_value_type(nValue)
    if sType == SQLITE_NULL || nType == SQLITE_NULL {
        sqlite3_result_null(ctx)
        return
    }
    let op = sqlite3_value_int64(argv[0])
    let flags = sqlite3_value_int64(argv[3])
    guard let textOp = TextOp(rawValue: op) else {
        sqlite3_result_error(ctx, "sift_text: unknown op \(op)", -1)
        return
    }
    guard sType == SQLITE_TEXT && nType == SQLITE_TEXT else {
        // Equality between non-text values (or text and something else) follows isEqual; every
        // other operator raises in memory (not a string), which is NULL here.
        if textOp == .equal {
            let equal = orderOperands(Operand(sValue), Operand(nValue)) == 0
            sqlite3_result_int(ctx, equal ? 1 : 0)
        } else {
            sqlite3_result_null(ctx)
        }
        return
    }
    let compiled = compiledNeedle(ctx, argv, index: 2, op: op, flags: flags)
    let s = textOf(sValue)
    let result: Bool
    switch compiled.form {
    case .failure(let message):
        sqlite3_result_error(ctx, message, -1)
        return
    case .like(let pattern):
        result = pattern.matches(s)
    case .regex(let regex):
        do throws(TextError) { result = try regex.matches(s) } catch {
            sqlite3_result_error(ctx, "\(error.kind.rawValue): \(error.message)", -1)
            return
        }
    case .prepared(let needle):
        switch textOp {
        case .equal: result = needle.equals(s)
        case .beginsWith: result = needle.isPrefix(of: s)
        case .endsWith: result = needle.isSuffix(of: s)
        default: result = needle.isContained(in: s)
        }
    }
    sqlite3_result_int(ctx, result ? 1 : 0)
}

/// `sift_compare(a, b, flags)`: -1 / 0 / 1, NULL when either is NULL or they have no order.
private let siftCompareFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void =
    { ctx, _, argv in
        guard let argv else { return }
        let aValue = argv[0]
        let bValue = argv[1]
        let aType = sqlite3_value_type(aValue)
        let bType = sqlite3_value_type(bValue)
        if aType == SQLITE_NULL || bType == SQLITE_NULL {
            sqlite3_result_null(ctx)
            return
        }
        if aType == SQLITE_TEXT && bType == SQLITE_TEXT {
            // The constant is usually `b`; PreparedText(b).compare(a) is the order of a against b.
            let compiled = compiledNeedle(
                ctx, argv, index: 1, op: TextOp.equal.rawValue, flags: sqlite3_value_int64(argv[2]))
            guard case .prepared(let needle) = compiled.form else {
                sqlite3_result_null(ctx)
                return
            }
            sqlite3_result_int(ctx, Int32(needle.compare(textOf(aValue))))
            return
        }
        if let order = orderOperands(Operand(aValue), Operand(bValue)) {
            sqlite3_result_int(ctx, Int32(order))
        } else {
            sqlite3_result_null(ctx)
        }
    }

/// The collations: `textCompare` under the options carried in the context pointer.
private let siftCollation:
    @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = {
        context, n1, p1, n2, p2 in
        let options = TextOptions(rawValue: UInt8(truncatingIfNeeded: Int(bitPattern: context) - 0x100))
        func string(_ p: UnsafeRawPointer?, _ n: Int32) -> String {
            guard let p, n > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(n)), as: UTF8.self)
        }
        return Int32(textCompare(string(p1, n1), string(p2, n2), options))
    }

extension SQLiteConnection {
    /// Registers `name` as a function of any number of arguments that answers NULL and does
    /// nothing else: for SQL that another program's triggers call only to be told of a change
    /// (Core Data's derived-attribute triggers), which fails "no such function" without it.
    ///
    /// ```swift
    /// try db.registerInertFunction(named: "NSCoreDataDATriggerUpdatedAffectedObjectValue")
    /// ```
    package func registerInertFunction(named name: String) throws(SQLiteError) {
        let rc = sqlite3_create_function_v2(handle, name, -1, SQLITE_UTF8, nil, siftInertFunction, nil, nil, nil)
        if rc != SQLITE_OK {
            throw SQLiteError(
                code: rc, message: "cannot register '\(name)': \(String(cString: sqlite3_errmsg(handle)))")
        }
    }
}

/// The inert function: NULL for any arguments.
private let siftInertFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, _ in sqlite3_result_null(context)
}
