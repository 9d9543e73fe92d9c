// swift-format-ignore-file
// (Its documentation samples are checked line for line against the article, so it keeps their layout.)
// The samples of the PortingCoreDataCode article (the seed articles' Employee, Manager, Department and
// ColorTransformer code with typed classes), copied verbatim and run, with what their comments state
// asserted; one test checks that every sample block of the article appears in this file.

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation
import SiftStore

/// The article's classes, in a namespace of their own (the entity names are the class names).
enum PortingSample {
    typealias Color = TransformerSample.Color
    typealias ColorTransformer = TransformerSample.ColorTransformer

    class Person: ManagedObject {
        var firstName: String? {
            get { attribute("firstName") }
            set { setAttribute(newValue, "firstName") }
        }
        var lastName: String? {
            get { attribute("lastName") }
            set { setAttribute(newValue, "lastName") }
        }
        var age: Int64 {
            get { attribute("age", default: 0) }
            set { setAttribute(newValue, "age") }
        }
    }

    class Employee: Person {
        var manager: Manager? {
            get { toOne("manager") }
            set { setToOne(newValue, "manager") }
        }
        var department: Department? {
            get { toOne("department") }
            set { setToOne(newValue, "department") }
        }
    }

    final class Manager: Employee {
        var employees: Set<Employee> {
            get { toMany("employees") }
            set { setToMany(newValue, "employees") }
        }
    }

    final class Department: ManagedObject {
        var name: String? {
            get { attribute("name") }
            set { setAttribute(newValue, "name") }
        }
        var color: Color? {
            get { transformable("color") }
            set { setTransformable(newValue, "color") }
        }
        var staff: Set<Employee> {
            get { toMany("staff") }
            set { setToMany(newValue, "staff") }
        }
    }
}

@Suite struct PortingSampleTests {
    typealias Color = TransformerSample.Color
    typealias ColorTransformer = TransformerSample.ColorTransformer
    typealias Person = PortingSample.Person
    typealias Employee = PortingSample.Employee
    typealias Manager = PortingSample.Manager
    typealias Department = PortingSample.Department

    @Test func portingSamplesAreTested() throws { try expectArticleSamplesTested("PortingCoreDataCode.md", of: "SiftStore") }

    @Test func theSeedArticlesProgram() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("porting-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("company.sqlite").path

        AttributeTransformers.setValueTransformer(ColorTransformer(), forName: "ColorTransformer")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Person", abstract: true, attributes: [
                AttributeDescription("firstName", .string, optional: false),
                AttributeDescription("lastName", .string, optional: false),
                AttributeDescription("age", .integer16, optional: false, minValue: 0),
            ]),
            EntityDescription("Employee", parent: "Person", relationships: [
                RelationshipDescription("manager", to: "Manager", inverse: "employees"),
                RelationshipDescription("department", to: "Department", inverse: "staff"),
            ]),
            EntityDescription("Manager", parent: "Employee", relationships: [
                RelationshipDescription("employees", to: "Employee", toMany: true, inverse: "manager"),
            ]),
            EntityDescription("Department", attributes: [
                AttributeDescription("name", .string, optional: false),
                AttributeDescription("color", .transformable, valueTransformerName: "ColorTransformer"),
            ], relationships: [
                RelationshipDescription("staff", to: "Employee", toMany: true, inverse: "department", deleteRule: .deny),
            ]),
        ], classes: [Person.self, Employee.self, Manager.self, Department.self])
        let context = ManagedObjectContext(store: try PersistentStore(model: model, path: path))

        let design = try context.insert(Department.self)
        design.name = "Design"
        design.color = Color(red: 0.9, green: 0.4, blue: 0.1)

        let ann = try context.insert(Manager.self)
        (ann.firstName, ann.lastName, ann.age) = ("Ann", "Lee", 52)
        ann.department = design
        for (first, age) in [("Bob", 31), ("Cleo", 27), ("Dan", 31)] {
            let employee = try context.insert(Employee.self)
            (employee.firstName, employee.lastName, employee.age) = (first, "Ray", Int64(age))
            employee.manager = ann           // ann.employees gains the employee: the inverse follows
            employee.department = design
        }
        try context.save()

        var request = try FetchRequest(Employee.self, predicate: "manager == %@", ann)
        request.sortDescriptors = [try SiftSortDescriptor("age"), try SiftSortDescriptor("firstName")]
        let team = try context.fetch(request)
        // team.map(\.firstName): ["Cleo", "Bob", "Dan"]

        let everyone = try context.fetch(FetchRequest(Employee.self))
        // 4 employees; the one that is a Manager is fetched as a Manager
        let warm = try context.fetch(FetchRequest(Department.self, predicate: "color.red > 0.5"))
        // [Design]: the predicate reads the color the transformer gives back
        #expect(team.map(\.firstName) == ["Cleo", "Bob", "Dan"])
        #expect(everyone.count == 4)
        #expect(everyone.filter { $0 is Manager }.map(\.firstName) == ["Ann"])
        #expect(warm.map(\.name) == ["Design"])
        #expect(abs((warm.first?.color?.red ?? 0) - 0.9) < 1e-12)

        team[0].age += 1
        try context.save()

        try context.delete(team[2])
        try context.save()
        // ann.employees.count: 2

        team[0].age = -3
        do { try context.save() } catch {
            // error.kind: .validation; error.key: "age"; error.constraint: .minValue
            context.rollback()
        }
        #expect(ann.employees.count == 2)
        #expect(team[0].age == 28)
        team[0].age = -3
        let refused = try #require(throws: StoreError.self) { try context.save() }
        #expect(refused.kind == .validation && refused.key == "age" && refused.constraint == .minValue)
        #expect(refused.objectID == team[0].objectID && refused.value == .integer(-3))
        context.rollback()

        // What was saved is on disk: a second store on the file reads the same objects.
        let reread = ManagedObjectContext(store: try PersistentStore(model: model, path: path))
        let staff = try reread.fetch(FetchRequest(Employee.self, predicate: "department.name == 'Design'"))
        #expect(Set(staff.compactMap(\.firstName)) == ["Ann", "Bob", "Cleo"])
        #expect(staff.first { $0.firstName == "Cleo" }?.age == 28)
        let design2 = try #require(try reread.fetch(FetchRequest(Department.self)).first)
        #expect(design2.staff.count == 3 && design2.color?.green == 0.4)

        // The deny rule: the department with staff cannot be deleted.
        try reread.delete(design2)
        #expect(throws: StoreError.self) { try reread.save() }
    }
}
