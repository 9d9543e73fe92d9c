// swift-tools-version:6.0
// SiftBench: release-mode parse-throughput benchmark for SiftSyntax (run via scripts/bench.sh).
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
    ],
    swiftLanguageModes: [.v6]
)
