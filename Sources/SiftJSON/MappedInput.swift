// The input of the record filter (and `sift filter`) as one memory-mapped byte range, so a file of any size is read without
// copying it into the process: standard input that is not a regular file (a pipe) is first spooled
// to an unlinked temporary file. Pages already scanned are handed back to the kernel as the scan
// moves on, so the resident size stays bounded whatever the input's size. `RecordCursor` walks the
// records of the range: the elements of one top-level array, or a sequence of values.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A JSON input mapped into memory: a file, or standard input (a pipe is first spooled to an
/// unlinked temporary file). Pages already read are handed back to the kernel as a
/// ``RecordFilter`` moves on, so the resident size stays bounded whatever the input's size.
///
/// ```swift
/// let input = try MappedInput.open("records.ndjson")   // or nil / "-" for standard input
/// let selection = try RecordFilter(try SiftPredicate("age > 30")).select(from: input)
/// ```
public final class MappedInput {
    /// The whole input.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// Where pages were last released up to.
    private var released = 0
    private static let releaseStep = 32 << 20

    /// Whether `bytes` is a mapping (else memory this object allocated).
    private let isMapped: Bool

    private init(bytes: UnsafeBufferPointer<UInt8>, isMapped: Bool = true) {
        self.bytes = bytes
        self.isMapped = isMapped
    }

    deinit {
        guard let base = bytes.baseAddress else { return }
        if isMapped { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) } else { base.deallocate() }
    }

    /// Maps `path`, or standard input when `path` is nil or `-`; a missing, unreadable or
    /// directory path is an error naming it.
    public static func open(_ path: String?) throws(RecordsError) -> MappedInput {
        guard let path, path != "-" else {
            if let mapped = map(STDIN_FILENO, requireStart: true) { return mapped }
            return try spool(STDIN_FILENO)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw RecordsError(.noSuchFile, input: path, message: "no such file")
        }
        if isDirectory.boolValue { throw RecordsError(.isDirectory, input: path, message: "is a directory") }
        let fd = Glibc.open(path, O_RDONLY)
        // The reader the tool always used words the failure (permissions…); ask it for the message.
        guard fd >= 0 else { return MappedInput(bytes: try copy(Records.read(path)), isMapped: false) }
        defer { close(fd) }
        if let mapped = map(fd, requireStart: false) { return mapped }
        return try spool(fd)
    }

    /// An input holding a copy of `bytes`, for JSON already in memory.
    public convenience init(copying bytes: [UInt8]) {
        self.init(bytes: MappedInput.copy(bytes), isMapped: false)
    }

    /// The mapping of `fd` when it is a regular file (read from its start), else nil.
    private static func map(_ fd: Int32, requireStart: Bool) -> MappedInput? {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        if requireStart && lseek(fd, 0, SEEK_CUR) != 0 { return nil }
        let size = Int(info.st_size)
        if size == 0 { return MappedInput(bytes: UnsafeBufferPointer(start: nil, count: 0)) }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else { return nil }
        madvise(p, size, MADV_SEQUENTIAL)
        return MappedInput(bytes: UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: size))
    }

    /// Copies everything `fd` still has to read into an unlinked temporary file, and maps that.
    private static func spool(_ fd: Int32) throws(RecordsError) -> MappedInput {
        func failure(_ what: String) -> RecordsError {
            RecordsError(
                .unreadable, input: "<stdin>",
                message: "cannot read the input (\(what): \(String(cString: strerror(errno))))")
        }
        var template = Array((NSTemporaryDirectory() + "/sift-stdin-XXXXXX").utf8CString)
        let tmp = mkstemp(&template)
        guard tmp >= 0 else { throw failure("temporary file") }
        unlink(template)
        defer { close(tmp) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, chunk)
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("read")
            }
            var written = 0
            while written < n {
                let w = write(tmp, buffer + written, n - written)
                if w < 0 {
                    if errno == EINTR { continue }
                    throw failure("temporary file")
                }
                written += w
            }
        }
        guard let mapped = map(tmp, requireStart: false) else { throw failure("temporary file") }
        return mapped
    }

    /// Bytes read some other way, kept in memory this object owns.
    private static func copy(_ bytes: [UInt8]) -> UnsafeBufferPointer<UInt8> {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: Swift.max(bytes.count, 1))
        p.initialize(from: bytes, count: bytes.count)
        return UnsafeBufferPointer(start: p, count: bytes.count)
    }

    /// Hands the pages wholly before `offset` back to the kernel, once per `releaseStep` bytes
    /// read; reading them again later faults them back in from the page cache.
    func release(before offset: Int) {
        guard isMapped, offset - released >= Self.releaseStep, let base = bytes.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = offset / page * page
        guard end > released else { return }
        madvise(UnsafeMutableRawPointer(mutating: base) + released, end - released, MADV_DONTNEED)
        released = end
    }

    /// As `release(before:)`, from the caller's own position `released`: for a part of the input
    /// read on another thread (disjoint parts release their pages independently).
    func release(_ released: inout Int, before offset: Int) {
        guard isMapped, offset - released >= Self.releaseStep, let base = bytes.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let from = (released + page - 1) / page * page
        let end = offset / page * page
        guard end > from else { return }
        madvise(UnsafeMutableRawPointer(mutating: base) + from, end - from, MADV_DONTNEED)
        released = end
    }

    /// Starts releasing from the beginning again (for a second pass over the input).
    func rewind() { released = 0 }
}

/// Walks the records of an input: the elements of a top-level array (the first non-blank byte is
/// '['), else every value of a sequence, with `JSONReader`'s errors between records.
struct RecordCursor {
    var scanner: JSONScanner
    /// Whether the records are the elements of a top-level array.
    let isArray: Bool
    private var started = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        scanner = JSONScanner(bytes)
        scanner.skipSpace()
        isArray = !scanner.atEnd && scanner.current == UInt8(ascii: "[")
    }

    /// A cursor over the values of a sequence from `offset` on, which must be where a value starts
    /// (for the second half of a sequence read on two threads).
    init(sequenceIn bytes: UnsafeBufferPointer<UInt8>, from offset: Int) {
        scanner = JSONScanner(bytes, at: offset)
        isArray = false
    }

    /// The depth of each record, as `JSONReader` counts it (for its nesting limit).
    var depth: Int { isArray ? 1 : 0 }

    /// Moves to the start of the next record and answers its offset, or nil after the last one
    /// (the rest of the input then checked). The caller reads the record before calling again.
    @inline(__always)
    mutating func next() throws(JSONScanError) -> Int? {
        if !isArray {
            scanner.skipSpace()
            return scanner.atEnd ? nil : scanner.i
        }
        return try nextElement()
    }

    /// `next` in a top-level array.
    private mutating func nextElement() throws(JSONScanError) -> Int? {
        if !started {
            started = true
            scanner.i += 1
            scanner.skipSpace()
            if !scanner.atEnd, scanner.current == UInt8(ascii: "]") { return try close() }
            scanner.skipSpace()
            return scanner.i
        }
        scanner.skipSpace()
        guard !scanner.atEnd else { throw scanner.expectedSeparator("]") }
        if scanner.current == UInt8(ascii: ",") {
            scanner.i += 1
            scanner.skipSpace()
            return scanner.i
        }
        if scanner.current == UInt8(ascii: "]") { return try close() }
        throw scanner.expectedSeparator("]")
    }

    private mutating func close() throws(JSONScanError) -> Int? {
        scanner.i += 1
        scanner.skipSpace()
        if !scanner.atEnd { throw scanner.trailing() }
        return nil
    }
}
