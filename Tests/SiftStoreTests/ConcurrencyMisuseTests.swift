// Swift 6 refuses, at compile time, to hand a managed object to another thread (issue 29): the
// compiler is run here on small files against the modules this test build made, and must reject
// an object returned from `perform` or used both by a detached task and its sender, and accept the same code
// passing the object's ID (which shows the check itself works).

import Foundation
import SiftTestSupport
import Testing

@Suite struct ConcurrencyMisuseTests {
    /// The compiler's diagnostics for `source`, compiled to SIL in Swift 6 mode against this build's
    /// modules (next to the test executable).
    static func typecheck(_ source: String) throws -> (status: Int32, output: String) {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var build = executable.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: build.appendingPathComponent("Modules").path),
            build.pathComponents.count > 1
        {
            build.deleteLastPathComponent()
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("misuse-\(UUID().uuidString).swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let maps = ["CSQLite", "CPCRE2", "CLibPQ"].flatMap {
            ["-Xcc", "-fmodule-map-file=" + packageRoot.appendingPathComponent("Sources/\($0)/module.modulemap").path]
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Up to SIL: data-race diagnostics come from region analysis there, after type-checking.
        let modules = build.appendingPathComponent("Modules").path
        p.arguments =
            ["swiftc", "-emit-sil", "-o", "/dev/null", "-swift-version", "6", "-I", modules] + maps + [file.path]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static let header = """
        import SiftStore
        func use(_ store: PersistentStore) async throws {
            let c = ManagedObjectContext(store: store, concurrency: .privateQueue)

        """

    @Test func returningAnObjectFromPerformDoesNotCompile() throws {
        let bad = try Self.typecheck(
            Self.header + "    let o = try await c.perform { try c.insert(\"Item\") }\n    _ = o\n}\n")
        #expect(bad.status != 0)
        #expect(bad.output.contains("conformance of 'ManagedObject' to 'Sendable' is unavailable"), "\(bad.output)")
        let good = try Self.typecheck(
            Self.header + "    let id = try await c.perform { try c.insert(\"Item\").objectID }\n    _ = id\n}\n")
        #expect(good.status == 0, "\(good.output)")
    }

    /// An object used both by a detached task and where it came from is refused. (Swift's region
    /// analysis does accept sending an object the sender never touches again, since nothing in
    /// the object's type ties it to its context; the context still holds it, so that is misuse
    /// the compiler cannot see, as in Core Data: the article says so.) The ID crosses freely.
    @Test func anObjectUsedOnTwoThreadsDoesNotCompile() throws {
        let body =
            "    let o = try c.performAndWait { try c.insert(\"Item\").objectID }\n    let x = try c.object(with: o)\n"
        let bad = try Self.typecheck(
            Self.header + body + "    Task.detached { _ = x.entityName }\n    _ = x.entityName\n}\n")
        #expect(bad.status != 0)
        #expect(bad.output.contains("risks causing data races"), "\(bad.output)")
        let good = try Self.typecheck(
            Self.header + body + "    Task.detached { _ = o.entityName }\n    _ = x.entityName\n}\n")
        #expect(good.status == 0, "\(good.output)")
    }
}
