// swift-tools-version:6.0
// SiftBench: release-mode parse-throughput benchmark for SiftSyntax; EvalBench: evaluation throughput of
// SiftEvaluation vs hand-written closures and Foundation's #Predicate; SQLBench: Sift's lowered SQL vs
// hand-written SQL through the raw SQLite C API; StoreBench: SiftStore's insert + save, fetch,
// fetchObjectIDs and count vs the raw SQLite C API and GRDB records; PGBench: Sift's lowered SQL vs
// hand-written SQL on a PostgreSQL server (all five run via scripts/bench.sh, PGBench next to a
// throwaway server). GRDB is a dependency of this benchmark package only, never of the main package.
import PackageDescription

/// A benchmark executable: BenchSupport, the named products of Sift, and `other`.
func benchmark(_ name: String, sift products: [String], other: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["BenchSupport"] + products.map { .product(name: $0, package: "Sift") } + other)
}

let package = Package(
    name: "SiftBenchmarks",
    dependencies: [
        .package(name: "Sift", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Clock, sink, median and seeded generator shared by the benchmarks.
        .target(name: "BenchSupport"),
        benchmark("SiftBench", sift: ["SiftSyntax"]),
        benchmark("EvalBench", sift: ["SiftEvaluation"]),
        benchmark("SQLBench", sift: ["SiftSyntax", "SiftSQL", "SiftSQLite", "SiftJSON", "SiftStore"]),
        benchmark("PGBench", sift: ["SiftSyntax", "SiftSQL", "SiftPostgres"]),
        // SiftSQLite is not imported by StoreBench itself: it is named because the CSQLite module of
        // the raw C API baseline reaches this target through it (CSQLite is no product), as for SQLBench.
        benchmark(
            "StoreBench", sift: ["SiftStore", "SiftSQLite"], other: [.product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
