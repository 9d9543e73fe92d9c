// `sift store codegen` run as a subprocess: the classes it writes for a model file (inheritance,
// abstract entities, class names, every kind of property, names that are not Swift identifiers)
// are compiled with swiftc together with a small program against the SiftStore just built, and
// the program is run: it inserts, saves, fetches typed and prints what it reads.

import Foundation
import SiftTestSupport
import Testing

private let model = """
    {"entities": [
      {"name": "Person", "abstract": true, "attributes": [
        {"name": "name", "type": "string"},
        {"name": "first-name", "type": "string"},
        {"name": "default", "type": "string"},
        {"name": "description", "type": "string"}]},
      {"name": "Employee", "parent": "Person", "attributes": [
        {"name": "salary", "type": "double", "optional": false, "default": 1000.5},
        {"name": "level", "type": "integer16", "optional": false},
        {"name": "badge", "type": "integer32"},
        {"name": "serial", "type": "integer64"},
        {"name": "ratio", "type": "float"},
        {"name": "bonus", "type": "decimal"},
        {"name": "active", "type": "boolean", "optional": false, "default": true},
        {"name": "hired", "type": "date"},
        {"name": "photo", "type": "binary"},
        {"name": "uuid", "type": "uuid"},
        {"name": "site", "type": "uri"},
        {"name": "tags", "type": "string", "collection": true},
        {"name": "extra", "type": "transformable"},
        {"name": "note", "type": "dynamic"}],
       "relationships": [
        {"name": "team", "destination": "Team", "inverse": "members"},
        {"name": "boss", "destination": "Manager", "inverse": "reports"}]},
      {"name": "Manager", "parent": "Employee", "relationships": [
        {"name": "reports", "destination": "Employee", "toMany": true, "inverse": "boss"}]},
      {"name": "Team", "className": "Squad", "attributes": [{"name": "title", "type": "string"}],
       "relationships": [
        {"name": "members", "destination": "Employee", "toMany": true, "inverse": "team"},
        {"name": "steps", "destination": "Step", "toMany": true, "ordered": true}]},
      {"name": "Step", "attributes": [{"name": "label", "type": "string"}]}
    ]}
    """

/// The program compiled with the generated classes: every property written, saved, read back.
private let program = """
    import Foundation
    import SiftEvaluation
    import SiftStore

    let data = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
    let model = try ManagedObjectModel(json: data, classes: ModelClasses.all)
    let store = try PersistentStore.inMemory(model: model)
    let c = ManagedObjectContext(store: store)
    let squad = try c.insert(Squad.self)
    squad.title = "core"
    let ann = try c.insert(Manager.self)
    ann.name = "Ann"
    ann.first_name = "A"
    ann.`default` = "d"
    ann.descriptionProperty = "boss"
    print("defaults", ann.salary, ann.level, ann.active, ann.badge == nil)
    ann.salary = 9000
    ann.level = 3
    ann.badge = 42
    ann.serial = 1 << 40
    ann.ratio = 0.5
    ann.bonus = Decimal(string: "1.25")
    ann.active = false
    ann.hired = Date(timeIntervalSince1970: 86400)
    ann.photo = Data([7])
    ann.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    ann.site = URL(string: "https://example.com")
    ann.tags = ["x", "y"]
    ann.note = .string("n")
    ann.team = squad
    let bob = try c.insert(Employee.self)
    bob.name = "Bob"
    bob.level = 1
    bob.boss = ann
    bob.team = squad
    let steps = try ["one", "two"].map { (l: String) throws -> Step in
        let s = try c.insert(Step.self)
        s.label = l
        return s
    }
    squad.steps = steps.reversed()
    try c.save()
    let fresh = ManagedObjectContext(store: store)
    for e in try fresh.fetch(FetchRequest(Employee.self, sortDescriptors: [try SiftSortDescriptor("name")])) {
        print(e.name ?? "-", type(of: e), e.salary, e.level, e.active, e.team?.title ?? "-", e.boss?.name ?? "-")
    }
    let m = try fresh.fetch(FetchRequest(Manager.self))[0]
    print(m.first_name ?? "-", m.`default` ?? "-", m.descriptionProperty ?? "-", m.badge ?? 0, m.serial ?? 0)
    print(m.ratio ?? 0, m.bonus ?? 0, m.hired?.timeIntervalSince1970 ?? 0, m.photo ?? Data(), m.uuid?.uuidString ?? "-")
    print(m.site?.absoluteString ?? "-", m.tags ?? [], m.note ?? .null, m.reports.map { $0.name ?? "-" })
    print(try fresh.fetch(FetchRequest(Squad.self))[0].steps.map { $0.label ?? "-" })
    print(try fresh.fetch(FetchRequest(Person.self)).count)
    """

private let expected = """
    defaults 1000.5 0 true true
    Ann Manager 9000.0 3 false core -
    Bob Employee 1000.5 1 true core Ann
    A d boss 42 1099511627776
    0.5 1.25 86400.0 1 bytes E621E1F8-C36C-495A-93FC-0C247A3E6E5F
    https://example.com ["x", "y"] "n" ["Bob"]
    ["two", "one"]
    2

    """

@Suite struct StoreCodegenCLITests {
    /// A temporary directory holding the model file.
    func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sift-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(model.utf8).write(to: dir.appendingPathComponent("model.json"))
        return dir
    }

    @Test func generatedClassesCompileAndRunAgainstTheStore() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("Generated")
        let run = try runSift(["store", "codegen", dir.appendingPathComponent("model.json").path, "--output", out.path])
        #expect(run.status == 0 && run.stdout.isEmpty, "\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(
            files == [
                "Employee.swift", "Manager.swift", "ModelClasses.swift", "Person.swift", "Squad.swift", "Step.swift",
            ])
        let manager = try String(contentsOf: out.appendingPathComponent("Manager.swift"), encoding: .utf8)
        #expect(manager.contains("public final class Manager: Employee {"))
        #expect(manager.contains("public var reports: Set<Employee> {"))
        let person = try String(contentsOf: out.appendingPathComponent("Person.swift"), encoding: .utf8)
        #expect(
            person.contains("(abstract: made only as a sub-entity)")
                && person.contains("public class Person: ManagedObject {"))

        try Data(program.utf8).write(to: dir.appendingPathComponent("main.swift"))
        let sources =
            files.map { out.appendingPathComponent($0).path } + [dir.appendingPathComponent("main.swift").path]
        let exe = dir.appendingPathComponent("typed").path
        let compiled = try compile(sources, to: exe)
        try #require(compiled.status == 0, "\(compiled.stderr)")
        let ran = try runSift([dir.appendingPathComponent("model.json").path], executable: URL(fileURLWithPath: exe))
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(ran.stdout == expected)
    }

    @Test func withoutOutputEverythingIsPrintedAsOneFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try runSift(["store", "codegen", dir.appendingPathComponent("model.json").path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.components(separatedBy: "import SiftStore").count == 2)
        for line in [
            "public class Employee: Person {", "public final class Squad: ManagedObject {",
            "public var steps: [Step] {", "public var team: Squad? {", "public var salary: Double {",
            "get { attribute(\"salary\", default: 1000.5) }", "public var level: Int16 {", "public var badge: Int32? {",
            "public var tags: [String]? {", "public var first_name: String? {", "get { attribute(\"first-name\") }",
            "public var `default`: String? {", "public var descriptionProperty: String? {",
            "public static let all: [ManagedObject.Type] = [",
        ] {
            #expect(run.stdout.contains(line), "\(line)")
        }
    }

    @Test func anInvalidModelIsAnError() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"entities": [{"name": "A", "parent": "Missing"}]}"#.utf8).write(to: bad)
        let run = try runSift(["store", "codegen", bad.path])
        #expect(run.status == 1 && run.stdout.isEmpty)
        #expect(run.stderr.contains("unknown parent 'Missing'"))
    }

    /// Compiles `sources` with the toolchain's swiftc against the modules and objects of this
    /// build (SiftStore and what it depends on), into `exe`.
    func compile(_ sources: [String], to exe: String) throws -> (status: Int32, stderr: String) {
        let sift = try #require(builtExecutable(named: "sift"))
        let build = sift.deletingLastPathComponent()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var objects: [String] = []
        for module in ["SiftSyntax", "SiftText", "SiftEvaluation", "SiftJSON", "SiftSQL", "SiftSQLite", "SiftStore"] {
            // The objects of the module's current sources (its `sources` list), not every `.o` in
            // the folder: a file renamed since an earlier build leaves its old object behind.
            let dir = build.appendingPathComponent("\(module).build")
            let list = try String(contentsOf: dir.appendingPathComponent("sources"), encoding: .utf8)
            objects += list.split(separator: "\n").map {
                dir.appendingPathComponent(URL(fileURLWithPath: String($0)).lastPathComponent + ".o").path
            }
        }
        var args = ["-I", build.appendingPathComponent("Modules").path]
        for c in ["CPCRE2", "CSQLite"] {
            args += ["-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/\(c)/module.modulemap").path]
        }
        args += sources + objects + ["-lpcre2-8", "-lsqlite3", "-o", exe]
        let r = try runSift(args, executable: URL(fileURLWithPath: try swiftc()))
        return (r.status, r.stderr)
    }

    /// The swiftc on PATH, or the toolchain's at /opt/swift.
    func swiftc() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in path.split(separator: ":") + ["/opt/swift/usr/bin"] {
            let candidate = "\(dir)/swiftc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CocoaError(.fileNoSuchFile)
    }
}
