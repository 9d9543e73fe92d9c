// libpq, the PostgreSQL client library, loaded with dlopen on the first connection instead of
// linked. Linked, it made every `sift` process load it and its twenty dependencies (TLS, Kerberos,
// LDAP…) at start-up, about 18 million instructions, whether or not it ever spoke to a server. The
// function types are libpq's public C interface (libpq-fe.h; the types and constants are declared
// in CLibPQ), and each `sift_PQ…` function calls the libpq function of the same name: the code
// that uses them reads as libpq's own documentation does.

import CLibPQ

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The libpq functions SiftPostgres calls, resolved once.
struct LibPQ: @unchecked Sendable {
    let PQconnectdbParams:
        @convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?, Int32) ->
            OpaquePointer?
    let PQstatus: @convention(c) (OpaquePointer?) -> ConnStatusType
    let PQerrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQfinish: @convention(c) (OpaquePointer?) -> Void
    let PQhost: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQport: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQsetNoticeProcessor:
        @convention(c) (OpaquePointer?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?
    let PQexec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    let PQexecParams:
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
            UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
        ) -> OpaquePointer?
    let PQgetResult: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let PQresultStatus: @convention(c) (OpaquePointer?) -> ExecStatusType
    let PQresultErrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let PQresultErrorField: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    let PQclear: @convention(c) (OpaquePointer?) -> Void
    let PQntuples: @convention(c) (OpaquePointer?) -> Int32
    let PQnfields: @convention(c) (OpaquePointer?) -> Int32
    let PQftype: @convention(c) (OpaquePointer?, Int32) -> Oid
    let PQgetvalue: @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let PQgetlength: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    let PQgetisnull: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    let PQputCopyData: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    let PQputCopyEnd: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let PQgetCopyData:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, Int32) -> Int32
    let PQunescapeBytea:
        @convention(c) (UnsafePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> UnsafeMutablePointer<UInt8>?
    let PQfreemem: @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// libpq, or why it could not be loaded; resolved on first use, once.
    static let loaded: Result<LibPQ, PostgresError> = load()

    private static func load() -> Result<LibPQ, PostgresError> {
        // The names libpq has on Debian and other Linux systems, and on macOS (Homebrew's keg).
        let libraries = [
            "libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib",
            "/opt/homebrew/opt/libpq/lib/libpq.5.dylib", "/usr/local/opt/libpq/lib/libpq.5.dylib",
        ]
        guard let handle = libraries.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(
                PostgresError(
                    kind: .connection,
                    message:
                        "cannot connect to PostgreSQL: the PostgreSQL client library (libpq) could not be loaded: \(reason)"
                ))
        }
        let names = [
            "PQconnectdbParams", "PQstatus", "PQerrorMessage", "PQfinish", "PQhost", "PQport", "PQsetNoticeProcessor",
            "PQexec", "PQexecParams", "PQgetResult", "PQresultStatus", "PQresultErrorMessage", "PQresultErrorField",
            "PQclear", "PQntuples", "PQnfields", "PQftype", "PQgetvalue", "PQgetlength", "PQgetisnull", "PQputCopyData",
            "PQputCopyEnd", "PQgetCopyData", "PQunescapeBytea", "PQfreemem",
        ]
        if let absent = names.first(where: { dlsym(handle, $0) == nil }) {
            return .failure(
                PostgresError(
                    kind: .connection,
                    message: "cannot connect to PostgreSQL: the PostgreSQL client library (libpq) has no \(absent)"))
        }
        return .success(bind(handle))
    }

    /// The functions of the library `handle`, each of whose names `load` found.
    private static func bind(_ handle: UnsafeMutableRawPointer) -> LibPQ {
        // Each name was found by `load`; POSIX guarantees a function pointer survives the trip through void *.
        func symbol<F>(_ name: String, _: F.Type) -> F { unsafeBitCast(dlsym(handle, name)!, to: F.self) }
        return LibPQ(
            PQconnectdbParams: symbol(
                "PQconnectdbParams",
                (@convention(c) (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<UnsafePointer<CChar>?>?, Int32) ->
                    OpaquePointer?).self),
            PQstatus: symbol("PQstatus", (@convention(c) (OpaquePointer?) -> ConnStatusType).self),
            PQerrorMessage: symbol(
                "PQerrorMessage", (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?).self),
            PQfinish: symbol("PQfinish", (@convention(c) (OpaquePointer?) -> Void).self),
            PQhost: symbol("PQhost", (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?).self),
            PQport: symbol("PQport", (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?).self),
            PQsetNoticeProcessor: symbol(
                "PQsetNoticeProcessor",
                (@convention(c) (OpaquePointer?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?)
                    .self),
            PQexec: symbol("PQexec", (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?).self),
            PQexecParams: symbol(
                "PQexecParams",
                (@convention(c) (
                    OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?,
                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
                ) -> OpaquePointer?).self),
            PQgetResult: symbol("PQgetResult", (@convention(c) (OpaquePointer?) -> OpaquePointer?).self),
            PQresultStatus: symbol("PQresultStatus", (@convention(c) (OpaquePointer?) -> ExecStatusType).self),
            PQresultErrorMessage: symbol(
                "PQresultErrorMessage", (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?).self),
            PQresultErrorField: symbol(
                "PQresultErrorField", (@convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?).self),
            PQclear: symbol("PQclear", (@convention(c) (OpaquePointer?) -> Void).self),
            PQntuples: symbol("PQntuples", (@convention(c) (OpaquePointer?) -> Int32).self),
            PQnfields: symbol("PQnfields", (@convention(c) (OpaquePointer?) -> Int32).self),
            PQftype: symbol("PQftype", (@convention(c) (OpaquePointer?, Int32) -> Oid).self),
            PQgetvalue: symbol(
                "PQgetvalue", (@convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?).self),
            PQgetlength: symbol("PQgetlength", (@convention(c) (OpaquePointer?, Int32, Int32) -> Int32).self),
            PQgetisnull: symbol("PQgetisnull", (@convention(c) (OpaquePointer?, Int32, Int32) -> Int32).self),
            PQputCopyData: symbol(
                "PQputCopyData", (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32).self),
            PQputCopyEnd: symbol(
                "PQputCopyEnd", (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32).self),
            PQgetCopyData: symbol(
                "PQgetCopyData",
                (@convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, Int32) -> Int32)
                    .self),
            PQunescapeBytea: symbol(
                "PQunescapeBytea",
                (@convention(c) (UnsafePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> UnsafeMutablePointer<UInt8>?)
                    .self),
            PQfreemem: symbol("PQfreemem", (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
        )
    }

    /// The loaded library, matched once: only reached once a connection exists, which needed it loaded.
    static let functions: LibPQ = {
        guard case .success(let pq) = loaded else { preconditionFailure("libpq is used before a connection loaded it") }
        return pq
    }()
}

@discardableResult func sift_PQconnectdbParams(
    _ keywords: UnsafePointer<UnsafePointer<CChar>?>?, _ values: UnsafePointer<UnsafePointer<CChar>?>?,
    _ expand_dbname: Int32
) -> OpaquePointer? { LibPQ.functions.PQconnectdbParams(keywords, values, expand_dbname) }

@discardableResult func sift_PQstatus(_ conn: OpaquePointer?) -> ConnStatusType { LibPQ.functions.PQstatus(conn) }

@discardableResult func sift_PQerrorMessage(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    LibPQ.functions.PQerrorMessage(conn)
}

func sift_PQfinish(_ conn: OpaquePointer?) { LibPQ.functions.PQfinish(conn) }

@discardableResult func sift_PQhost(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    LibPQ.functions.PQhost(conn)
}

@discardableResult func sift_PQport(_ conn: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    LibPQ.functions.PQport(conn)
}

@discardableResult func sift_PQsetNoticeProcessor(
    _ conn: OpaquePointer?, _ proc: PQnoticeProcessor?, _ arg: UnsafeMutableRawPointer?
) -> PQnoticeProcessor? { LibPQ.functions.PQsetNoticeProcessor(conn, proc, arg) }

@discardableResult func sift_PQexec(_ conn: OpaquePointer?, _ query: UnsafePointer<CChar>?) -> OpaquePointer? {
    LibPQ.functions.PQexec(conn, query)
}

@discardableResult func sift_PQexecParams(
    _ conn: OpaquePointer?, _ command: UnsafePointer<CChar>?, _ nParams: Int32, _ paramTypes: UnsafePointer<Oid>?,
    _ paramValues: UnsafePointer<UnsafePointer<CChar>?>?, _ paramLengths: UnsafePointer<Int32>?,
    _ paramFormats: UnsafePointer<Int32>?, _ resultFormat: Int32
) -> OpaquePointer? {
    LibPQ.functions.PQexecParams(
        conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat)
}

@discardableResult func sift_PQgetResult(_ conn: OpaquePointer?) -> OpaquePointer? { LibPQ.functions.PQgetResult(conn) }

@discardableResult func sift_PQresultStatus(_ res: OpaquePointer?) -> ExecStatusType {
    LibPQ.functions.PQresultStatus(res)
}

@discardableResult func sift_PQresultErrorMessage(_ res: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    LibPQ.functions.PQresultErrorMessage(res)
}

@discardableResult func sift_PQresultErrorField(_ res: OpaquePointer?, _ fieldcode: Int32) -> UnsafeMutablePointer<
    CChar
>? { LibPQ.functions.PQresultErrorField(res, fieldcode) }

func sift_PQclear(_ res: OpaquePointer?) { LibPQ.functions.PQclear(res) }

@discardableResult func sift_PQntuples(_ res: OpaquePointer?) -> Int32 { LibPQ.functions.PQntuples(res) }

@discardableResult func sift_PQnfields(_ res: OpaquePointer?) -> Int32 { LibPQ.functions.PQnfields(res) }

@discardableResult func sift_PQftype(_ res: OpaquePointer?, _ field_num: Int32) -> Oid {
    LibPQ.functions.PQftype(res, field_num)
}

@discardableResult func sift_PQgetvalue(_ res: OpaquePointer?, _ tup_num: Int32, _ field_num: Int32)
    -> UnsafeMutablePointer<CChar>?
{ LibPQ.functions.PQgetvalue(res, tup_num, field_num) }

@discardableResult func sift_PQgetlength(_ res: OpaquePointer?, _ tup_num: Int32, _ field_num: Int32) -> Int32 {
    LibPQ.functions.PQgetlength(res, tup_num, field_num)
}

@discardableResult func sift_PQgetisnull(_ res: OpaquePointer?, _ tup_num: Int32, _ field_num: Int32) -> Int32 {
    LibPQ.functions.PQgetisnull(res, tup_num, field_num)
}

@discardableResult func sift_PQputCopyData(_ conn: OpaquePointer?, _ buffer: UnsafePointer<CChar>?, _ nbytes: Int32)
    -> Int32
{ LibPQ.functions.PQputCopyData(conn, buffer, nbytes) }

@discardableResult func sift_PQputCopyEnd(_ conn: OpaquePointer?, _ errormsg: UnsafePointer<CChar>?) -> Int32 {
    LibPQ.functions.PQputCopyEnd(conn, errormsg)
}

@discardableResult func sift_PQgetCopyData(
    _ conn: OpaquePointer?, _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ async: Int32
) -> Int32 { LibPQ.functions.PQgetCopyData(conn, buffer, async) }

@discardableResult func sift_PQunescapeBytea(_ strtext: UnsafePointer<UInt8>?, _ retbuflen: UnsafeMutablePointer<Int>?)
    -> UnsafeMutablePointer<UInt8>?
{ LibPQ.functions.PQunescapeBytea(strtext, retbuflen) }

func sift_PQfreemem(_ ptr: UnsafeMutableRawPointer?) { LibPQ.functions.PQfreemem(ptr) }
