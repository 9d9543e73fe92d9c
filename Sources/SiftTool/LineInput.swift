// Standard input read line by line in large blocks, and standard output written in large blocks,
// for `sift parse`: `readLine` and `print` cost a call, a lock and a String per line, more than
// parsing a typical predicate does. Lines are handed out as byte ranges of the block (split at
// "\n", a "\r" before it dropped, as `readLine(strippingNewline: true)` does), and the output is
// flushed before every read that may wait, so interactive use still answers line by line.

import SiftSyntax

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file descriptor in blocks and calls back once per line, with the line's bytes (without
/// its terminator) valid only during the call.
struct LineInput {
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    /// The bytes read and not yet handed out: `buffer[start..<end]`.
    private var start = 0, end = 0

    init(fd: Int32, blockSize: Int = 1 << 20) {
        self.fd = fd
        buffer = .allocate(byteCount: blockSize, alignment: 16)
    }

    /// Frees the block; the reader must not be used afterwards.
    func deallocate() { buffer.deallocate() }

    /// Calls `line` for every line until the end of the input, and `beforeRead` before each read
    /// (which may wait for more input). A last line without a terminator is a line; nothing after
    /// the last terminator is not. Answers false when a read failed.
    mutating func forEachLine(beforeRead: () -> Void, _ line: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows -> Bool {
        while true {
            // Hand out the complete lines the buffer holds.
            while start < end, let base = buffer.baseAddress {
                guard let nl = memchr(base + start, 0x0A, end - start) else { break }
                let stop = base.distance(to: nl)
                var last = stop
                if last > start, buffer[last - 1] == 0x0D { last -= 1 }
                try line(UnsafeBufferPointer(start: (base + start).assumingMemoryBound(to: UInt8.self), count: last - start))
                start = stop + 1
            }
            // Keep the partial line at the front, growing the block when it fills it.
            if start > 0 {
                if end > start, let base = buffer.baseAddress { memmove(base, base + start, end - start) }
                end -= start
                start = 0
            }
            if end == buffer.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[..<end]))
                buffer.deallocate()
                buffer = larger
            }
            beforeRead()
            let n = read(fd, buffer.baseAddress! + end, buffer.count - end)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 {
                if end > 0, let base = buffer.baseAddress {
                    try line(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: end))
                }
                start = 0; end = 0
                return true
            }
            end += n
        }
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
        text.bytes.withUnsafeBytes { bytes in
            guard var p = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let n = write(fd, p, left)
                if n < 0 { if errno == EINTR { continue }; return }
                p += n
                left -= n
            }
        }
        text.bytes.removeAll(keepingCapacity: true)
    }
}
