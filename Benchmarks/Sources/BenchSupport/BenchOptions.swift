// The benchmarks' command lines, read one way: each executable lists its options (an integer, a
// text or a flag) with what each sets, and any other word prints its usage line and exits 2.

import Foundation

/// One command-line option of a benchmark, and what it sets.
///
/// ```swift
/// nonisolated(unsafe) var rows = 1_000
/// readOptions([.integer("--rows") { rows = $0 }], usage: "usage: Bench [--rows N]")
/// ```
public struct BenchOption {
    let name: String
    let takesValue: Bool
    let apply: (String?) -> Void

    /// `--name N`: `set` is called with N, or not at all when N is missing or not an integer.
    public static func integer(_ name: String, _ set: @escaping (Int) -> Void) -> BenchOption {
        BenchOption(name: name, takesValue: true) { value in value.flatMap { Int($0) }.map(set) }
    }

    /// `--name TEXT`: `set` is called with TEXT (nil when the command line ends).
    public static func text(_ name: String, _ set: @escaping (String?) -> Void) -> BenchOption {
        BenchOption(name: name, takesValue: true, apply: set)
    }

    /// `--name` alone.
    public static func flag(_ name: String, _ set: @escaping () -> Void) -> BenchOption {
        BenchOption(name: name, takesValue: false) { _ in set() }
    }
}

/// Applies `options` to the process's arguments, in order; an unknown word writes `usage` (and a
/// newline) to standard error and exits with status 2.
public func readOptions(_ options: [BenchOption], usage: String) {
    var args = CommandLine.arguments.dropFirst()
    while let word = args.popFirst() {
        guard let option = options.first(where: { $0.name == word }) else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        option.apply(option.takesValue ? args.popFirst() : nil)
    }
}
