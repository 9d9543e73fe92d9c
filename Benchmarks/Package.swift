// swift-tools-version:6.0
// SiftBench: release-mode parse-throughput benchmark for SiftSyntax; EvalBench: evaluation throughput of
// SiftEvaluation vs hand-written closures and Foundation's #Predicate (both run via scripts/bench.sh).
import PackageDescription

let package = Package(
    name: "SiftBenchmarks",
    dependencies: [
        .package(name: "Sift", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "SiftBench",
            dependencies: [.product(name: "SiftSyntax", package: "Sift")]
        ),
        .executableTarget(
            name: "EvalBench",
            dependencies: [.product(name: "SiftEvaluation", package: "Sift")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
