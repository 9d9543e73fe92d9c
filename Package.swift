// swift-tools-version:6.0
// Sift: the NSPredicate format-string language for every platform Swift runs on.
// One target per pipeline stage; dependencies point one way:
//   SiftSyntax (parser, printer, diagnostics, the shape of every error)
//   SiftSyntax ← SiftText (Unicode folding, LIKE, MATCHES through PCRE2)
//   SiftSyntax, SiftText ← SiftEvaluation (compiled predicates, values, key-value coding)
//   SiftText, SiftEvaluation ← SiftJSON (JSON values, the scanner and reader, inputs, the record filter)
//   SiftEvaluation ← SiftSQL (lowering to SQL text + bound values; no database)
//     (the lowering hands the parts that read no row to the evaluator, so their values are memory's)
//   SiftSQL ← SiftSQLite (the C API, and Sift's functions and collations registered on a connection)
//   CLibPQ, SiftSQL ← SiftPostgres (a synchronous PostgreSQL connection over libpq, and a schema's
//     tables there; SiftSQL never imports it)
//   SiftJSON, SiftSQLite ← SiftStore (model, SQLite store, contexts, fetch requests; JSON import,
//     inference and output)
//   SiftStore, SiftJSON, SiftPostgres ← SiftTool (the commands only; nothing public) ← sift
import PackageDescription

let package = Package(
    name: "Sift",
    products: [
        .library(name: "SiftSyntax", targets: ["SiftSyntax"]),
        .library(name: "SiftText", targets: ["SiftText"]),
        .library(name: "SiftEvaluation", targets: ["SiftEvaluation"]),
        .library(name: "SiftJSON", targets: ["SiftJSON"]),
        .library(name: "SiftSQL", targets: ["SiftSQL"]),
        .library(name: "SiftSQLite", targets: ["SiftSQLite"]),
        .library(name: "SiftStore", targets: ["SiftStore"]),
        .library(name: "SiftPostgres", targets: ["SiftPostgres"]),
        .executable(name: "sift", targets: ["sift"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        // `make docs` only: the generate-documentation command plugin (no target depends on it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "SiftSyntax"),
        .systemLibrary(
            name: "CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"]), .brew(["pcre2"])]
        ),
        .target(name: "SiftText", dependencies: ["SiftSyntax", "CPCRE2"]),
        .target(name: "SiftEvaluation", dependencies: ["SiftSyntax", "SiftText"]),
        .target(name: "SiftJSON", dependencies: ["SiftSyntax", "SiftText", "SiftEvaluation"]),
        .target(name: "SiftSQL", dependencies: ["SiftSyntax", "SiftText", "SiftEvaluation"]),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "SiftSQLite", dependencies: ["CSQLite", "SiftSyntax", "SiftSQL", "SiftText", "SiftEvaluation"]),
        // libpq's types only: the library is loaded with dlopen on the first connection (see
        // Sources/SiftPostgres/LibPQ.swift); linked, it would load with every `sift` process.
        .systemLibrary(name: "CLibPQ"),
        .target(name: "SiftPostgres", dependencies: ["CLibPQ", "SiftSyntax", "SiftSQL", "SiftText"]),
        .target(
            name: "SiftStore",
            dependencies: ["SiftSyntax", "SiftText", "SiftEvaluation", "SiftJSON", "SiftSQL", "SiftSQLite"]
        ),
        .target(
            name: "SiftTool",
            dependencies: [
                "SiftStore",
                "SiftJSON",
                "SiftSyntax",
                "SiftEvaluation",
                "SiftSQL",
                "SiftSQLite",
                "SiftPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "sift", dependencies: ["SiftTool"]),
        // SiftJSON's DocC sample: a program that depends on SiftJSON alone (built and run by the tests).
        .executableTarget(name: "filter-ndjson", dependencies: ["SiftJSON"], path: "Samples/FilterNDJSON"),
        // Helpers shared by the test targets (a seeded random generator, the test server's URL).
        .target(name: "SiftTestSupport", dependencies: ["SiftJSON"], path: "Tests/SiftTestSupport"),
        .testTarget(name: "SiftSyntaxTests", dependencies: ["SiftSyntax", "SiftJSON", "SiftTestSupport"]),
        .testTarget(name: "SiftTextTests", dependencies: ["SiftText", "SiftTestSupport"]),
        .testTarget(name: "SiftEvaluationTests", dependencies: ["SiftEvaluation", "SiftSyntax", "SiftTestSupport"]),
        .testTarget(
            name: "SiftJSONTests", dependencies: ["SiftJSON", "SiftEvaluation", "SiftSyntax", "SiftTestSupport"]),
        .testTarget(
            name: "SiftSQLTests", dependencies: ["SiftSQL", "SiftSyntax", "SiftEvaluation", "SiftTestSupport"]),
        .testTarget(
            name: "SiftSQLiteTests",
            dependencies: ["SiftSQLite", "SiftSQL", "SiftSyntax", "SiftText", "SiftEvaluation", "SiftTestSupport"]
        ),
        // The store's fixtures (a company model, temporary store files), shared by its two test targets.
        .target(name: "SiftStoreTestSupport", dependencies: ["SiftStore"], path: "Tests/SiftStoreTestSupport"),
        .testTarget(
            name: "SiftStoreTests",
            dependencies: [
                "SiftStore", "SiftJSON", "SiftEvaluation", "SiftSQL", "SiftSQLite", "SiftSyntax", "SiftTestSupport",
                "SiftStoreTestSupport",
            ]
        ),
        // Contexts sharing a store between threads (queues, parents, merges, automatic merging) and
        // the store query's read in halves on two threads: a target of its own so that the
        // ThreadSanitizer run of `make test` builds these suites only.
        .testTarget(
            name: "SiftStoreConcurrencyTests",
            dependencies: [
                "SiftStore", "SiftJSON", "SiftEvaluation", "SiftSyntax", "SiftTestSupport", "SiftStoreTestSupport",
            ]
        ),
        // Runs against a real PostgreSQL server: `make test` or `bash scripts/with-postgres.sh swift test`.
        .testTarget(
            name: "SiftPostgresTests",
            dependencies: ["SiftPostgres", "SiftSQL", "SiftSyntax", "SiftEvaluation", "SiftTestSupport"]),
        // The writer the store's crash test kills (Tests/SiftStoreTests/CrashTests.swift).
        .executableTarget(name: "sift-crash-child", dependencies: ["SiftStore"], path: "Tests/SiftCrashChild"),
        // Every back-end against memory: the evaluation corpus on memory, SQLite and PostgreSQL, the
        // differential tests over random predicates and records, typed schemas, stack use. The SQL
        // back-ends are driven through the command line's glue (SiftTool's SQLBackend), as `sift
        // filter --backend` runs them.
        .testTarget(
            name: "SiftConformanceTests",
            dependencies: [
                "SiftTool", "SiftJSON", "SiftStore", "SiftSyntax", "SiftEvaluation", "SiftSQL", "SiftSQLite",
                "SiftPostgres", "SiftTestSupport",
            ]
        ),
        // The `sift` command line, run as a subprocess.
        .testTarget(
            name: "SiftToolTests",
            dependencies: [
                "SiftTool", "SiftJSON", "SiftStore", "SiftSyntax", "SiftSQL", "SiftPostgres", "SiftTestSupport",
                "SiftStoreTestSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The sanitizer runs of `make test` build only the test targets whose suites they run: with
// SIFT_TEST_TARGETS set (comma-separated names), the package declares those test targets, the
// targets they depend on, and nothing else (no `sift`, no SiftTool where no kept suite needs them),
// with the products of the targets kept. Each sanitizer builds into a scratch folder of its own,
// so the full package of a plain build is never affected; unset, every target is declared.
if let kept = Context.environment["SIFT_TEST_TARGETS"] {
    let names = Set(kept.split(separator: ",").map(String.init))
    var needed = Set<String>()
    var pending = package.targets.filter { $0.type == .test && names.contains($0.name) }.map(\.name)
    while let name = pending.popLast() {
        guard needed.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else {
            continue
        }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            case .productItem: break
            @unknown default: break
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
    package.products.removeAll { product in
        let targets = (product as? Product.Library)?.targets ?? (product as? Product.Executable)?.targets ?? []
        return targets.contains { !needed.contains($0) }
    }
}
