// swift-tools-version:6.0
// SiftBench: release-mode parse-throughput benchmark for SiftSyntax; EvalBench: evaluation throughput of
// SiftEvaluation vs hand-written closures and Foundation's #Predicate; SQLBench: Sift's lowered SQL vs
// hand-written SQL through the raw SQLite C API (all three run via scripts/bench.sh).
import PackageDescription

let package = Package(
    name: "SiftBenchmarks",
    dependencies: [
        .package(name: "Sift", path: ".."),
    ],
    targets: [
        // Clock, sink, median and seeded generator shared by the three benchmarks.
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
    ],
    swiftLanguageModes: [.v6]
)
