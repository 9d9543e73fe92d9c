// swift-tools-version:6.0
// Sift: the NSPredicate format-string language for every platform Swift runs on.
// One target per pipeline stage; dependencies point one way: SiftSyntax ← SiftTool ← sift.
import PackageDescription

let package = Package(
    name: "Sift",
    products: [
        .library(name: "SiftSyntax", targets: ["SiftSyntax"]),
        .executable(name: "sift", targets: ["sift"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
    ],
    targets: [
        .target(name: "SiftSyntax"),
        .target(
            name: "SiftTool",
            dependencies: [
                "SiftSyntax",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "sift", dependencies: ["SiftTool"]),
        .testTarget(name: "SiftSyntaxTests", dependencies: ["SiftSyntax"]),
        .testTarget(name: "SiftToolTests", dependencies: ["SiftTool", "SiftSyntax"]),
    ],
    swiftLanguageModes: [.v6]
)
