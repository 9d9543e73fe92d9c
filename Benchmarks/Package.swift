// swift-tools-version:6.0
// SiftBench: release-mode parse-throughput benchmark for SiftSyntax; EvalBench: evaluation throughput of
// SiftEvaluation vs hand-written closures and Foundation's #Predicate; SQLBench: Sift's lowered SQL vs
// hand-written SQL through the raw SQLite C API; StoreBench: SiftStore's insert + save, fetch,
// fetchObjectIDs and count vs the raw SQLite C API and GRDB records; PGBench: Sift's lowered SQL vs
// hand-written SQL on a PostgreSQL server (all five run via scripts/bench.sh, PGBench next to a
// throwaway server). GRDB is a dependency of this benchmark package only, never of the main package.
import PackageDescription

let package = Package(
    name: "SiftBenchmarks",
    dependencies: [
        .package(name: "Sift", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // Clock, sink, median and seeded generator shared by the benchmarks.
        .target(name: "BenchSupport"),
        .executableTarget(
            name: "SiftBench",
            dependencies: ["BenchSupport", .product(name: "SiftSyntax", package: "Sift")]
        ),
        .executableTarget(
            name: "EvalBench",
            dependencies: ["BenchSupport", .product(name: "SiftEvaluation", package: "Sift")]
        ),
        .executableTarget(
            name: "SQLBench",
            dependencies: [
                "BenchSupport",
                .product(name: "SiftSyntax", package: "Sift"),
                .product(name: "SiftSQL", package: "Sift"),
                .product(name: "SiftSQLite", package: "Sift"),
            ]
        ),
        .executableTarget(
            name: "PGBench",
            dependencies: [
                "BenchSupport",
                .product(name: "SiftSyntax", package: "Sift"),
                .product(name: "SiftSQL", package: "Sift"),
                .product(name: "SiftPostgres", package: "Sift"),
            ]
        ),
        .executableTarget(
            name: "StoreBench",
            dependencies: [
                "BenchSupport",
                .product(name: "SiftStore", package: "Sift"),
                // Not imported itself: named because the CSQLite module of the raw C API baseline
                // reaches this target through it (CSQLite is no product), as for SQLBench.
                .product(name: "SiftSQLite", package: "Sift"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
