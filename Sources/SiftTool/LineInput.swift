// Standard input read in large blocks and cut into lines, and standard output written in large
// blocks, for `sift parse`: `readLine` and `print` cost a call, a lock and a String per line, more
// than parsing a typical predicate does. Lines are handed out in runs of whole lines (a block less
// its last, partial line), split at "\n" with a "\r" before it dropped, as
// `readLine(strippingNewline: true)` does; a large run can be cut in two at a line boundary and
// handled on two threads. The output is flushed before every read that may wait, so interactive use
// still answers line by line.

import SiftSyntax

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a file descriptor in blocks and calls back with runs of whole lines, valid only during the
/// call.
struct LineInput {
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    /// The bytes read and not yet handed out: `buffer[0..<end]`.
    private var end = 0

    init(fd: Int32, blockSize: Int = 1 << 20) {
        self.fd = fd
        buffer = .allocate(byteCount: blockSize, alignment: 16)
    }

    /// Frees the block; the reader must not be used afterwards.
    func deallocate() { buffer.deallocate() }

    /// Calls `lines` with every run of whole lines (each ending with "\n", except a last line
    /// without one at the end of the input) until the end of the input, and `beforeRead` before
    /// each read (which may wait for more input). Answers false when a read failed.
    mutating func forEachRun(beforeRead: () -> Void, _ lines: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows
        -> Bool
    {
        while true {
            beforeRead()
            let n = read(fd, buffer.baseAddress! + end, buffer.count - end)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if n == 0 {
                if end > 0 { try lines(UnsafeBufferPointer(start: base, count: end)) }
                end = 0
                return true
            }
            let scanned = end
            end += n
            // The run ends after the last "\n" read; the partial line after it waits for more.
            var last = end - 1
            while last >= scanned, base[last] != 0x0A { last -= 1 }
            guard last >= scanned else {
                if end == buffer.count { grow() }
                continue
            }
            let runEnd = last + 1
            try lines(UnsafeBufferPointer(start: base, count: runEnd))
            if end > runEnd { memmove(base, base + runEnd, end - runEnd) }
            end -= runEnd
        }
    }

    /// Doubles the block, for a line longer than it.
    private mutating func grow() {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
        larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[..<end]))
        buffer.deallocate()
        buffer = larger
    }

    /// Calls `line` for each line of `run` (a run of whole lines), without its terminator.
    static func forEachLine(in run: UnsafeBufferPointer<UInt8>, _ line: (UnsafeBufferPointer<UInt8>) throws -> Void)
        rethrows
    {
        guard let base = run.baseAddress else { return }
        var start = 0
        while start < run.count {
            let stop: Int
            if let nl = memchr(base + start, 0x0A, run.count - start) {
                stop = base.distance(to: nl.assumingMemoryBound(to: UInt8.self))
            } else {
                stop = run.count
            }
            var last = stop
            if stop < run.count, last > start, base[last - 1] == 0x0D { last -= 1 }
            try line(UnsafeBufferPointer(start: base + start, count: last - start))
            start = stop + 1
        }
    }

    /// Where to cut `run` in two at a line boundary near its middle (the start of the second
    /// part), or nil when it has no "\n" past the middle.
    static func middleLineBoundary(of run: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = run.baseAddress else { return nil }
        let middle = run.count / 2
        guard let nl = memchr(base + middle, 0x0A, run.count - middle) else { return nil }
        let cut = base.distance(to: nl.assumingMemoryBound(to: UInt8.self)) + 1
        return cut < run.count ? cut : nil
    }
}

/// Text for standard output gathered in one buffer and written with `write(2)` in large blocks.
struct OutputBuffer {
    /// The text not yet written.
    var text = PrintBuffer()
    private let fd: Int32
    private let limit: Int

    init(fd: Int32 = STDOUT_FILENO, limit: Int = 1 << 16) {
        self.fd = fd
        self.limit = limit
        text.reserve(limit + 4096)
    }

    /// Writes the text when it has grown past the limit.
    mutating func flushIfFull() { if text.bytes.count >= limit { flush() } }

    /// Writes the text gathered so far. A failed write (a closed pipe) drops the text, as `print`
    /// does.
    mutating func flush() {
        guard !text.bytes.isEmpty else { return }
        OutputBuffer.write(text.bytes, to: fd)
        text.bytes.removeAll(keepingCapacity: true)
    }

    /// Writes all of `bytes` to `fd` (a failed write drops the rest).
    static func write(_ bytes: [UInt8], to fd: Int32 = STDOUT_FILENO) {
        bytes.withUnsafeBytes { bytes in
            guard var p = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let n = Glibc.write(fd, p, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                p += n
                left -= n
            }
        }
    }
}
