// Predicates nested as deeply as the parser allows, one family per way of nesting, and a runner
// that executes a stage on a thread with a small stack. Every recursive walk over the tree must
// survive the deepest accepted predicate on a 512 KB stack (Swift's default for secondary
// threads), so the tests search each family for its deepest accepted member instead of
// hard-coding how many levels a family spends per repetition.

import Foundation

/// The stack size the nesting tests run on: Swift's default for secondary threads.
public let smallStackSize = 512 * 1024

/// Runs `body` on a new thread whose stack is `stackSize` bytes and waits for it, rethrowing its
/// error. A stack overflow crashes the test process, which is the failure these tests look for.
///
/// ```swift
/// let p = try onSmallStack { try PredicateSyntax.parse(deep) }
/// ```
public func onSmallStack<T>(stackSize: Int = smallStackSize, _ body: @escaping () throws -> T) throws -> T {
    // The caller waits for the thread, so the closure and its captures are never used by two
    // threads at once: the box only carries them across.
    let box = ResultBox<T>(body)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = Result { try box.body() }
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
    return try box.result!.get()
}

/// The result a small-stack thread hands back; written once before the semaphore is signalled.
private final class ResultBox<T>: @unchecked Sendable {
    let body: () throws -> T
    var result: Result<T, any Error>?
    init(_ body: @escaping () throws -> T) { self.body = body }
}

/// One way of nesting: `make(n)` is a predicate nested `n` times that way, and `expected(n)` is
/// what it gives for `nestingRecord` (nil where the evaluator reports an error instead).
public struct NestingFamily: Sendable, CustomStringConvertible {
    public let name: String
    public let make: @Sendable (Int) -> String
    public let expected: @Sendable (Int) -> Bool?
    public var description: String { name }

    public init(
        _ name: String, expected: @escaping @Sendable (Int) -> Bool? = { _ in true },
        _ make: @escaping @Sendable (Int) -> String
    ) {
        self.name = name
        self.make = make
        self.expected = expected
    }

    /// The largest `n` for which `accepts(make(n))`, by doubling then bisection (acceptance is
    /// monotonic in `n` for every family).
    public func deepest(upTo cap: Int = 100_000, _ accepts: (String) -> Bool) -> Int {
        var low = 1
        var high = 2
        guard accepts(make(low)) else { return 0 }
        while high < cap, accepts(make(high)) {
            low = high
            high *= 2
        }
        while high - low > 1 {
            let mid = (low + high) / 2
            if accepts(make(mid)) { low = mid } else { high = mid }
        }
        return low
    }
}

private func repeated(_ s: String, _ n: Int) -> String { String(repeating: s, count: n) }

/// The record the families are evaluated against, as JSON: one kid (so nested SUBQUERYs over
/// `kids` stay linear), a list of numbers and one of strings.
public let nestingRecordJSON = #"{"a": 1, "s": "x", "nums": [0, 1], "tags": ["x"], "kids": [{"age": 2}]}"#

/// The schema of `nestingRecordJSON` for the SQL back-ends: `kids` rows of their own, `nums` and
/// `tags` in ordered value tables.
public let nestingRecordSchemaJSON = #"""
    {"entities": [
      {"name": "Record", "table": "record",
       "attributes": [{"name": "a", "type": "integer"}, {"name": "s", "type": "string"}],
       "relationships": [
         {"name": "kids", "toMany": "Kid", "foreignKey": "record_id"},
         {"name": "nums", "values": {"table": "record_num", "owner": "record_id", "type": "integer"}, "orderColumn": "position"},
         {"name": "tags", "values": {"table": "record_tag", "owner": "record_id", "type": "string"}, "orderColumn": "position"}]},
      {"name": "Kid", "table": "kid", "attributes": [{"name": "age", "type": "integer"}]}
    ]}
    """#

/// The families the nesting tests walk, over the keys of `nestingRecordJSON`.
public let nestingFamilies: [NestingFamily] = [
    NestingFamily("parenthesised predicates") { repeated("(", $0) + "a == 1" + repeated(")", $0) },
    NestingFamily("NOT", expected: { $0 % 2 == 0 }) { repeated("NOT ", $0) + "a == 1" },
    NestingFamily("NOT of groups", expected: { $0 % 2 == 0 }) { repeated("NOT (", $0) + "a == 1" + repeated(")", $0) },
    NestingFamily(
        "AND/OR groups",
        expected: { n in
            var value = false
            for i in 0..<n { value = i % 2 == 0 ? (i % 7 == 1 || value) : (i % 7 == 1 && value) }
            return value
        }
    ) { n in
        var s = "a == 0"
        for i in 0..<n { s = "a == \(i % 7) " + (i % 2 == 0 ? "OR" : "AND") + " (" + s + ")" }
        return s
    },
    NestingFamily("left-deep arithmetic in parentheses") { repeated("(", $0) + "a" + repeated(" + 1)", $0) + " > 0" },
    NestingFamily("arithmetic chain") { "a" + repeated(" + 1", $0) + " > 0" },
    NestingFamily("mixed arithmetic chain") { n in
        "a" + (0..<n).map { [" + 1", " * 1", " - 1", " / 1"][$0 % 4] }.joined() + " > 0"
    },
    NestingFamily("right-deep arithmetic") { repeated("1 + (", $0) + "a" + repeated(")", $0) + " > 0" },
    NestingFamily("unary minus") { repeated("-(", $0) + "a" + repeated(")", $0) + " != 0" },
    NestingFamily("function calls") { repeated("abs:(", $0) + "a" + repeated(")", $0) + " >= 0" },
    NestingFamily("SUBQUERY") { n in
        var s = "$k.age > 1"
        for _ in 0..<n { s = "SUBQUERY(kids, $k, " + s + ").@count >= 0" }
        return s
    },
    NestingFamily("TERNARY") { repeated("TERNARY(a > 0, ", $0) + "a" + repeated(", 2)", $0) + " > 0" },
    NestingFamily("TERNARY conditions") { n in
        var s = "a > 0"
        for _ in 0..<n { s = "TERNARY(" + s + ", 1, 0) == 1" }
        return s
    },
    NestingFamily("aggregates", expected: { $0 == 1 }) { "a IN " + repeated("{", $0) + "a" + repeated("}", $0) },
    NestingFamily("constant aggregates", expected: { $0 == 1 }) {
        "a IN " + repeated("{", $0) + "1" + repeated("}", $0)
    },
    NestingFamily("key path indexes") { "nums[" + repeated("nums[", $0) + "0" + repeated("]", $0) + "] == 0" },
    NestingFamily("index chain", expected: { $0 == 1 ? true : nil }) { "tags" + repeated("[0]", $0) + " == \"x\"" },
    NestingFamily("CAST") { repeated("CAST(", $0) + "a" + repeated(", \"NSNumber\")", $0) + " > 0" },
]

#if canImport(Glibc)
    import Glibc

    /// The most stack `body` used, in bytes: it runs on a thread whose stack is memory allocated and
    /// filled with a pattern here, and the untouched pattern left at the far end is measured when the
    /// thread has ended. For the nesting tests' reports of bytes per level, not for assertions on
    /// speed. `stackSize` bounds what can be measured (a deeper use crashes, as on any stack).
    ///
    /// ```swift
    /// let used = stackUsed { _ = try? PredicateSyntax.parse(deep) }
    /// ```
    public func stackUsed(stackSize: Int = 64 << 20, _ body: @escaping () -> Void) -> Int {
        let pattern: UInt8 = 0xA5
        let stack = UnsafeMutableRawPointer.allocate(byteCount: stackSize, alignment: 4096)
        defer { stack.deallocate() }
        stack.initializeMemory(as: UInt8.self, repeating: pattern, count: stackSize)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstack(&attributes, stack, stackSize)
        let context = Unmanaged.passRetained(StackProbe(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, &attributes,
            { context in
                let probe = Unmanaged<StackProbe>.fromOpaque(context!).takeRetainedValue()
                probe.body()
                return nil
            }, context)
        precondition(started == 0, "pthread_create failed: \(started)")
        pthread_join(thread, nil)
        // The stack grows down from the end of the block: the untouched bytes are at its start.
        let bytes = stack.assumingMemoryBound(to: UInt8.self)
        var untouched = 0
        while untouched < stackSize, bytes[untouched] == pattern { untouched += 1 }
        return stackSize - untouched
    }

    private final class StackProbe {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
#endif
