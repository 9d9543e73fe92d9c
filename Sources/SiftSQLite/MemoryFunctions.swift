// The evaluator's built-in functions and CAST, callable from SQL: `sift_call` row by row, with
// `sift_collect` gathering the elements of a collection into one argument. SQLite's own functions differ from memory's in
// the details that decide rows (integer versus double results, nil and empty collections, NaN,
// Unicode case mapping), so the lowering calls the evaluator's implementation instead of imitating
// it. Arguments arrive in the store's encodings and are read back into evaluator values as each
// argument's tag says; results go back in the encodings the lowering compares them in. Where memory
// raises, the result is NULL: the lowering only relies on rows where memory does not raise.
// `sift_document` goes further: a whole comparison, evaluated on the row's document.
// `sift_guard` is the row guard's call (SiftSQL's RowGuard.swift): the whole predicate on the row's
// document (or, for a table without documents, on the object `sift_row` makes of its columns), strict or lenient. Strict, where memory raises it fails the statement with the message
// `<error id>: row <primary key>: <message>` and keeps memory's `EvaluationError` for the
// connection (keyed by its handle, taken back when the connection builds its `SQLiteError`), so
// the caller gets `SQLiteError.raised`: the row and memory's error with its place in the predicate.

import CSQLite
import Foundation
import SiftEvaluation
import SiftSQL
import SiftSyntax
import SiftText

typealias ValueTag = SQLFunctions.ValueTag

extension SQLiteFunctions {
    static func registerMemoryFunctions(on db: OpaquePointer, check: (Int32, String) throws(SQLiteError) -> Void)
        throws(SQLiteError)
    {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        try check(
            sqlite3_create_function_v2(db, SQLFunctions.call, -1, flags, nil, siftCallFunction, nil, nil, nil),
            SQLFunctions.call)
        try check(
            sqlite3_create_function_v2(
                db, SQLFunctions.collect, 2, flags, nil, nil, siftCollectStep, siftCollectFinal, nil),
            SQLFunctions.collect)
        try check(
            sqlite3_create_function_v2(db, SQLFunctions.document, -1, flags, nil, siftDocumentFunction, nil, nil, nil),
            SQLFunctions.document)
        try check(
            sqlite3_create_function_v2(db, SQLFunctions.guarded, -1, flags, nil, siftGuardFunction, nil, nil, nil),
            SQLFunctions.guarded)
        try check(
            sqlite3_create_function_v2(db, SQLFunctions.row, -1, flags, nil, siftRowFunction, nil, nil, nil),
            SQLFunctions.row)
    }
}

/// The evaluator's value of a SQLite value stored with encoding `tag`.
func memoryValue(_ value: OpaquePointer?, _ tag: ValueTag) -> Value {
    let type = sqlite3_value_type(value)
    if type == SQLITE_NULL { return .null }
    switch tag {
    case .natural:
        switch Operand(value) {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .text(let s): return .string(s)
        case .blob(let b): return .data(Data(b))
        }
    case .boolean:
        return type == SQLITE_INTEGER ? .bool(sqlite3_value_int64(value) != 0) : memoryValue(value, .natural)
    case .secondsSince2001:
        return .date(Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value)))
    case .secondsSince1970:
        return .date(Date(timeIntervalSince1970: sqlite3_value_double(value)))
    case .iso8601:
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: textOf(value)).map(Value.date) ?? .null
    case .collection:
        guard type == SQLITE_BLOB else { return memoryValue(value, .natural) }
        // Bytes that are not a list (never written by Sift) read as nil, as a NULL does.
        guard case .array(let items)? = try? ValueCodec.decode(blobBytes(value)) else { return .null }
        return .array(items)
    case .decimal:
        if type == SQLITE_TEXT {
            return Decimal(string: textOf(value), locale: Locale(identifier: "en_US_POSIX")).map(Value.decimal) ?? .null
        }
        return .decimal(Decimal(sqlite3_value_double(value)))
    }
}

/// Sets the function result to `v` in the encoding the lowering compares it in.
func setResult(_ ctx: OpaquePointer?, _ v: Value) {
    switch v {
    case .null: sqlite3_result_null(ctx)
    case .bool(let b): sqlite3_result_int64(ctx, b ? 1 : 0)
    case .integer(let i): sqlite3_result_int64(ctx, i)
    // SQLite would store NaN as NULL, which memory keeps apart from NaN.
    case .double(let d) where d.isNaN:
        SQLFunctions.nanMarker.withUnsafeBytes { raw in
            sqlite3_result_blob64(
                ctx, raw.baseAddress, sqlite3_uint64(raw.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    case .double(let d): sqlite3_result_double(ctx, d)
    case .decimal(let d): sqlite3_result_double(ctx, NSDecimalNumber(decimal: d).doubleValue)
    case .string(let s): resultText(ctx, TextFolding.nfc(s))
    case .date(let d): sqlite3_result_double(ctx, d.timeIntervalSinceReferenceDate)
    case .data(let d):
        d.withUnsafeBytes { raw in
            sqlite3_result_blob64(
                ctx, raw.baseAddress, sqlite3_uint64(raw.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    // A list of values (a union, say) goes on to another call as the BLOB `sift_collect` makes.
    case .array(let items) where items.allSatisfy(\.isScalarValue): resultBlob(ctx, ValueCodec.encode(v))
    // Other collections have no SQL form: the lowering never asks for one.
    case .array, .set, .dictionary, .object: sqlite3_result_null(ctx)
    }
}

private func resultText(_ ctx: OpaquePointer?, _ s: String) {
    var s = s
    s.withUTF8 { bytes in
        sqlite3_result_text64(
            ctx, bytes.baseAddress, sqlite3_uint64(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self),
            UInt8(SQLITE_UTF8))
    }
}

/// Calls `selector` (a built-in function, or `CAST:Type`) on evaluator values.
func callMemory(_ selector: String, _ args: [Value]) -> Value {
    do throws(EvaluationErrorKind) {
        if selector.hasPrefix("CAST:") { return try Builtins.cast(args[0], to: String(selector.dropFirst(5))) }
        if selector.hasPrefix("@") { return try Builtins.collectionOperator(selector, args[0]) }
        if let (op, options) = SQLFunctions.comparison(selector), args.count == 2 {
            return .bool(try Builtins.compare(args[0], op, options, args[1]))
        }
        if let (q, op, options) = SQLFunctions.quantifiedComparison(selector), args.count == 2 {
            // Memory's quantified comparison: nil quantifies over nothing, anything but a
            // collection raises, and the elements are tested in order until one decides.
            let all = q == .all
            switch args[0] {
            case .null: return .bool(all)
            case .array(let elements), .set(let elements):
                for e in elements where try Builtins.compare(e, op, options, args[1]) != all { return .bool(!all) }
                return .bool(all)
            default: return .null
            }
        }
        return try Builtins.call(selector, args)
    } catch {
        // Memory raises on this row: NULL, which the lowering never relies on.
        return .null
    }
}

/// `sift_call(selector, tags, arg…)`.
private let siftCallFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    ctx, argc, argv in
    guard let argv, argc >= 2 else {
        sqlite3_result_error(ctx, "sift_call: needs a selector and tags", -1)
        return
    }
    let selector = textOf(argv[0])
    let tags = Array(textOf(argv[1]))
    guard tags.count == Int(argc) - 2 else {
        sqlite3_result_error(ctx, "sift_call: \(tags.count) tags for \(argc - 2) arguments", -1)
        return
    }
    var args: [Value] = []
    args.reserveCapacity(tags.count)
    for (i, t) in tags.enumerated() {
        guard let tag = ValueTag(rawValue: t) else {
            sqlite3_result_error(ctx, "sift_call: unknown tag '\(t)'", -1)
            return
        }
        args.append(memoryValue(argv[i + 2], tag))
    }
    setResult(ctx, callMemory(selector, args))
}

/// The values of one `sift_collect` group, kept behind a pointer in SQLite's aggregate context.
private final class Collected {
    var values: [Value] = []
}

/// `sift_collect(tag, value)`: collects the values of the group in row order.
private let siftCollectStep: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    ctx, _, argv in
    let size = Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)
    guard let argv,
        let slot = sqlite3_aggregate_context(ctx, size)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    else {
        sqlite3_result_error_nomem(ctx)
        return
    }
    let c: Collected
    if let raw = slot.pointee {
        c = Unmanaged<Collected>.fromOpaque(raw).takeUnretainedValue()
    } else {
        c = Collected()
        slot.pointee = Unmanaged.passRetained(c).toOpaque()
    }
    let tag = textOf(argv[0]).first.flatMap(ValueTag.init(rawValue:)) ?? .natural
    c.values.append(memoryValue(argv[1], tag))
}

/// The collected values as a BLOB (an empty array when the group had no rows), for `sift_call`'s `c` tag.
private let siftCollectFinal: @convention(c) (OpaquePointer?) -> Void = { ctx in
    var values: [Value] = []
    if let slot = sqlite3_aggregate_context(ctx, 0)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self),
        let raw = slot.pointee
    {
        values = Unmanaged<Collected>.fromOpaque(raw).takeRetainedValue().values
        slot.pointee = nil
    }
    resultBlob(ctx, ValueCodec.encode(.array(values)))
}

/// Sets a BLOB result (copied); an empty one stays a BLOB, not NULL.
private func resultBlob(_ ctx: OpaquePointer?, _ bytes: some ContiguousBytes) {
    bytes.withUnsafeBytes { raw in
        sqlite3_result_blob64(
            ctx, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count),
            unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }
}

/// The base of what SQLite keeps per statement, so one C destructor releases any of them.
private class KeptPerStatement {}

private let releaseKept: @convention(c) (UnsafeMutableRawPointer?) -> Void = { raw in
    if let raw { Unmanaged<KeptPerStatement>.fromOpaque(raw).release() }
}

/// What `sift_document` reads from one of its constant arguments once per statement (the parsed
/// predicate, the decoded variables), kept as SQLite's auxiliary data on that argument.
private final class PerStatement<T>: KeptPerStatement {
    let value: T
    init(_ value: T) { self.value = value }

    /// The value kept on argument `i`, or `make`'s (kept there for the next rows); nil when `make` fails.
    static func value(_ ctx: OpaquePointer?, argument i: Int32, _ make: () -> T?) -> T? {
        if let raw = sqlite3_get_auxdata(ctx, i) {
            return Unmanaged<PerStatement>.fromOpaque(raw).takeUnretainedValue().value
        }
        guard let value = make() else { return nil }
        // SQLite may drop the data at once (for an argument that is not constant): the value
        // returned here is a copy, so that does no harm.
        sqlite3_set_auxdata(ctx, i, Unmanaged.passRetained(PerStatement(value)).toOpaque(), releaseKept)
        return value
    }
}

/// `sift_document(predicate, document [, variables])`: 1 or 0 as memory decides `predicate` with
/// the decoded document as `SELF` (and the decoded dictionary `variables` bound); NULL for a NULL
/// document or where memory raises; an error for bytes `ValueCodec` cannot read.
private let siftDocumentFunction:
    @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { ctx, argc, argv in
        guard let argv, argc == 2 || argc == 3 else {
            sqlite3_result_error(ctx, "sift_document: needs a predicate, a document and optional variables", -1)
            return
        }
        guard let predicate = statementPredicate(ctx, argv[0], lenient: false, "sift_document") else { return }
        guard sqlite3_value_type(argv[1]) == SQLITE_BLOB else {
            sqlite3_result_null(ctx)
            return
        }
        guard let variables = boundVariables(ctx, argc == 3 ? argv[2] : nil, argument: 2, "sift_document"),
            let document = decodedDocument(ctx, argv[1], "sift_document")
        else { return }
        do throws(EvaluationError) {
            sqlite3_result_int64(ctx, try predicate.evaluate(with: document, variables: variables) ? 1 : 0)
        } catch {
            sqlite3_result_null(ctx)
        }
    }

/// The predicate whose text is argument 0 of a document call, parsed once per statement; nil, with
/// the call's error set, when it does not parse.
private func statementPredicate(_ ctx: OpaquePointer?, _ value: OpaquePointer?, lenient: Bool, _ function: String)
    -> SiftPredicate?
{
    var failure: String?
    let predicate = PerStatement<SiftPredicate>.value(ctx, argument: 0) { () -> SiftPredicate? in
        let text = textOf(value)
        do {
            return SiftPredicate(
                try PredicateSyntax.parse(text), source: text, options: EvaluationOptions(lenient: lenient))
        } catch {
            failure = "\(function): \(error)"
            return nil
        }
    }
    if predicate == nil { sqlite3_result_error(ctx, failure ?? "\(function): no predicate", -1) }
    return predicate
}

/// The variables of a document call's argument `value` (none when it is nil), kept for the
/// statement; nil, with the call's error set, when they are not a dictionary in ValueCodec's form.
private func boundVariables(_ ctx: OpaquePointer?, _ value: OpaquePointer?, argument: Int32, _ function: String)
    -> [String: Value]?
{
    guard let value else { return [:] }
    let bound = PerStatement<[String: Value]>.value(ctx, argument: argument) {
        if case .dictionary(let bound)? = try? ValueCodec.decode(blobBytes(value)) { bound } else { nil }
    }
    if bound == nil {
        sqlite3_result_error(ctx, "\(function): the variables are not a dictionary in ValueCodec's form", -1)
    }
    return bound
}

/// The document a BLOB argument holds; nil, with the call's error set, for bytes Sift did not
/// write (a damaged store file): an error, never a row read as another value.
private func decodedDocument(_ ctx: OpaquePointer?, _ value: OpaquePointer?, _ function: String) -> Value? {
    do throws(ValueCodecError) { return try ValueCodec.decode(blobBytes(value)) } catch {
        sqlite3_result_error(ctx, "\(function): unreadable document: \(error)", -1)
        return nil
    }
}

/// The bytes of a BLOB argument (none for another type).
private func blobBytes(_ value: OpaquePointer?) -> [UInt8] {
    let count = Int(sqlite3_value_bytes(value))
    guard sqlite3_value_type(value) == SQLITE_BLOB, count > 0, let p = sqlite3_value_blob(value) else { return [] }
    return Array(UnsafeRawBufferPointer(start: p, count: count))
}

/// The row a `sift_guard` call raised on and memory's error, by connection handle, from the failing
/// call until the connection builds its `SQLiteError`; and the rows whose raising the connection's
/// owner has asked `sift_guard` to skip (``SQLiteConnection/rowsTheGuardSkips``).
final class RaisedRows: @unchecked Sendable {
    static let shared = RaisedRows()
    private let lock = NSLock()
    private var byHandle: [UInt: RowRaised] = [:]
    private var skipped: [UInt: Set<Int64>] = [:]

    func setSkipped(_ rows: Set<Int64>, for db: OpaquePointer) {
        lock.withLock { skipped[UInt(bitPattern: db)] = rows.isEmpty ? nil : rows }
    }

    func skipped(for db: OpaquePointer?) -> Set<Int64> {
        guard let db else { return [] }
        return lock.withLock { skipped[UInt(bitPattern: db)] ?? [] }
    }

    func keep(_ raised: RowRaised, for db: OpaquePointer?) {
        guard let db else { return }
        lock.withLock { byHandle[UInt(bitPattern: db)] = raised }
    }

    /// The error kept for `db`, removed; nil when none is.
    func take(for db: OpaquePointer) -> RowRaised? {
        lock.withLock { byHandle.removeValue(forKey: UInt(bitPattern: db)) }
    }
}

/// `sift_guard(predicate, document, row, lenient [, variables])`: memory's 1 or 0 for the whole
/// predicate on the decoded document (nil for a NULL one); strict, an error where memory raises.
private let siftGuardFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void =
    { ctx, argc, argv in
        guard let argv, argc == 4 || argc == 5 else {
            sqlite3_result_error(
                ctx, "sift_guard: needs a predicate, a document, a row, lenient and optional variables", -1)
            return
        }
        let lenient = sqlite3_value_int64(argv[3]) != 0
        guard let predicate = statementPredicate(ctx, argv[0], lenient: lenient, "sift_guard") else { return }
        guard let variables = boundVariables(ctx, argc == 5 ? argv[4] : nil, argument: 4, "sift_guard") else { return }
        var document = Value.null
        if sqlite3_value_type(argv[1]) == SQLITE_BLOB {
            guard let decoded = decodedDocument(ctx, argv[1], "sift_guard") else { return }
            document = decoded
        }
        do throws(EvaluationError) {
            sqlite3_result_int64(ctx, try predicate.evaluate(with: document, variables: variables) ? 1 : 0)
        } catch {
            let row = sqlite3_value_int64(argv[2])
            // A row its owner replaces with its own object (a store's pending change): no error.
            if RaisedRows.shared.skipped(for: sqlite3_context_db_handle(ctx)).contains(row) {
                sqlite3_result_int64(ctx, 0)
                return
            }
            RaisedRows.shared.keep(RowRaised(row: row, error: error), for: sqlite3_context_db_handle(ctx))
            sqlite3_result_error(ctx, "\(error.id): row \(row): \(error.message)", -1)
        }
    }

/// `sift_row(tags, key, value, …)`: the row's attributes as a dictionary in `ValueCodec`'s form.
private let siftRowFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    ctx, argc, argv in
    guard let argv, argc >= 1, argc % 2 == 1 else {
        sqlite3_result_error(ctx, "sift_row: needs tags and pairs of a key and a value", -1)
        return
    }
    let tags = Array(textOf(argv[0]))
    guard tags.count == Int(argc - 1) / 2 else {
        sqlite3_result_error(ctx, "sift_row: \(tags.count) tags for \((argc - 1) / 2) values", -1)
        return
    }
    var object: [String: Value] = [:]
    for (i, t) in tags.enumerated() {
        guard let tag = ValueTag(rawValue: t) else {
            sqlite3_result_error(ctx, "sift_row: unknown tag '\(t)'", -1)
            return
        }
        object[textOf(argv[2 * i + 1])] = memoryValue(argv[2 * i + 2], tag)
    }
    resultBlob(ctx, ValueCodec.encode(.dictionary(object)))
}
