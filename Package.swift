// swift-tools-version:6.0
// Sift: the NSPredicate format-string language for every platform Swift runs on.
// One target per pipeline stage; dependencies point one way:
//   SiftSyntax ← SiftEvaluation ← SiftTool ← sift
//   SiftText (Unicode folding, LIKE, MATCHES through PCRE2) ← SiftEvaluation
import PackageDescription

let package = Package(
    name: "Sift",
    products: [
        .library(name: "SiftSyntax", targets: ["SiftSyntax"]),
        .library(name: "SiftText", targets: ["SiftText"]),
        .library(name: "SiftEvaluation", targets: ["SiftEvaluation"]),
        .executable(name: "sift", targets: ["sift"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
    ],
    targets: [
        .target(name: "SiftSyntax"),
        .systemLibrary(
            name: "CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"]), .brew(["pcre2"])]
        ),
        .target(name: "SiftText", dependencies: ["CPCRE2"]),
        .target(name: "SiftEvaluation", dependencies: ["SiftSyntax", "SiftText"]),
        .target(
            name: "SiftTool",
            dependencies: [
                "SiftSyntax",
                "SiftEvaluation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "sift", dependencies: ["SiftTool"]),
        // Helpers shared by the test targets (a seeded random generator).
        .target(name: "SiftTestSupport", path: "Tests/SiftTestSupport"),
        .testTarget(name: "SiftSyntaxTests", dependencies: ["SiftSyntax", "SiftTestSupport"]),
        .testTarget(name: "SiftTextTests", dependencies: ["SiftText", "SiftTestSupport"]),
        .testTarget(name: "SiftEvaluationTests", dependencies: ["SiftEvaluation", "SiftSyntax", "SiftTestSupport"]),
        .testTarget(name: "SiftToolTests", dependencies: ["SiftTool", "SiftSyntax", "SiftEvaluation"]),
    ],
    swiftLanguageModes: [.v6]
)
