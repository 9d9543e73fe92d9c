// Records read one at a time from a mapped input, for the commands that must not hold a whole file
// in memory (`sift store import`, `sift store infer-model`): the same cursor and scanner
// `sift filter` reads with, so the records and the syntax errors (with their line and column) are
// the ones `Records.load` gives, and the pages already read go back to the kernel as it moves on.
// A first pass (`checkSyntax`) finds a syntax error before any record is used, as loading whole
// does; a pipe is read from the temporary file `MappedInput` spools it to, so it can be read twice.

import Foundation

/// The records of a ``MappedInput`` as `JSONValue`s, one at a time: the elements of a top-level
/// array, else every value of a sequence (NDJSON).
///
/// ```swift
/// var stream = RecordStream(try MappedInput.open("people.ndjson"), name: "people.ndjson")
/// while let record = try stream.next() { print(record.text) }
/// ```
package struct RecordStream {
    package let input: MappedInput
    /// The name syntax errors start with (`FILE:line:col: error: …`).
    package let name: String
    private var cursor: RecordCursor

    package init(_ input: MappedInput, name: String) {
        self.input = input
        self.name = name
        cursor = RecordCursor(input.bytes)
    }

    /// The next record, or nil after the last one (the rest of the input checked).
    package mutating func next() throws(RecordsError) -> JSONValue? {
        do throws(JSONScanError) {
            guard let at = try cursor.next() else { return nil }
            input.release(before: at)
            return try cursor.scanner.jsonValue(depth: cursor.depth)
        } catch {
            throw RecordsError(error.located(in: input.bytes), input: name)
        }
    }

    /// Reads the whole input without making values, and starts again from the first record: a
    /// syntax error anywhere is then reported before any record is used, as when the input is
    /// loaded whole. Returns the number of records.
    package mutating func checkSyntax() throws(RecordsError) -> Int {
        var n = 0
        do throws(JSONScanError) {
            while let at = try cursor.next() {
                input.release(before: at)
                try cursor.scanner.skipValue(depth: cursor.depth)
                n += 1
            }
        } catch {
            throw RecordsError(error.located(in: input.bytes), input: name)
        }
        rewind()
        return n
    }

    /// Starts again from the first record (for a second pass over a mapped input).
    package mutating func rewind() {
        input.rewind()
        cursor = RecordCursor(input.bytes)
    }
}
