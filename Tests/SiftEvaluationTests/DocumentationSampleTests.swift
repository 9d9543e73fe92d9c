// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// The Swift samples of SiftEvaluation's DocC catalog, each copied verbatim from its article and
// run, with the results its comments state asserted; one test checks that every sample block of
// the catalog still appears in this file, so an article cannot drift from the code it shows.

import Foundation
import Testing
import SiftTestSupport
import SiftEvaluation

@Suite struct DocumentationSampleTests {
    @Test(arguments: ["SiftEvaluation.md", "GettingStarted.md", "EvaluatingYourOwnTypes.md"])
    func articleSamplesAreTested(article: String) throws { try expectArticleSamplesTested(article, of: "SiftEvaluation") }

    /// The README's SiftEvaluation example is this file's too.
    @Test func readmeSampleIsTested() throws { try expectReadmeSampleTested(of: "SiftEvaluation") }

    @Test func landingPage() throws {
        let p = try SiftPredicate("age > %@ AND name BEGINSWITH[cd] %@", 30, "jo")
        let matches = try p.evaluate(with: ["name": "José", "age": 41])   // true
        #expect(matches)
        #expect(try !p.evaluate(with: ["name": "Ann", "age": 41]))
    }

    @Test func gettingStartedEvaluation() throws {
        let p = try SiftPredicate("age > %@ AND name BEGINSWITH[cd] %@", 30, "jo")
        let matches = try p.evaluate(with: ["name": "José", "age": 41])   // true

        let people: [[String: Any]] = [
            ["name": "Ann", "age": 41, "address": ["city": "Lisbon"]],
            ["name": "Bo", "age": 7, "address": ["city": "lima"]],
            ["name": "Cy", "age": 19, "address": ["city": "Lima"]],
        ]
        let adults = try people.filter(SiftPredicate("age >= 18"))        // Ann, Cy
        let sorted = try people.sorted(by: [SiftSortDescriptor("address.city", options: .caseInsensitive),
                                            SiftSortDescriptor("age", ascending: false)])   // Cy, Bo, Ann
        let high = try SiftPredicate("age >= $min").evaluate(with: people[0], variables: ["min": 40])   // true

        #expect(matches)
        #expect(adults.map { $0["name"] as? String } == ["Ann", "Cy"])
        #expect(sorted.map { $0["name"] as? String } == ["Cy", "Bo", "Ann"])
        #expect(high)
    }

    @Test func gettingStartedErrors() throws {
        var failure: EvaluationError?
        do {
            _ = try SiftPredicate("name < 5").evaluate(with: ["name": "Ann"])
        } catch let error as EvaluationError {
            failure = error
        }
        let message = failure?.description   // 1:1: error: cannot order "Ann" and 5
        let id = failure?.id                  // incomparable-values

        #expect(message == #"1:1: error: cannot order "Ann" and 5"#)
        #expect(id == "incomparable-values")
    }

    @Test func gettingStartedLenient() throws {
        let lenient = try SiftPredicate("name < 5 OR age > 30", options: EvaluationOptions(lenient: true))
        let kept = try lenient.evaluate(with: ["name": "Ann", "age": 41])   // true: unknown OR true
        #expect(kept)
        // The same data without the lenient option raises, so the option is what kept the record.
        #expect(throws: EvaluationError.self) {
            try SiftPredicate("name < 5 OR age > 30").evaluate(with: ["name": "Ann", "age": 41])
        }
    }

    @Test func whatPredicatesRead() throws {
        struct Pet: Codable { var name: String; var born: Date? }
        let rex = Pet(name: "Rex", born: nil)
        let named = try SiftPredicate("name BEGINSWITH 'R' AND born == nil").evaluate(with: rex)   // true
        #expect(named)
        #expect(try !SiftPredicate("born != nil").evaluate(with: rex))
    }

    @Test func ownTypes() throws {
        struct Person: KeyValueCoding {
            var name: String, age: Int?, tags: [String]
            static func reader(forKey key: String) -> KeyReader<Person>? {
                switch key {
                case "name": .string { $0.name }
                case "age": .integer { $0.age }
                case "tags": .strings { $0.tags }
                default: nil
                }
            }
        }
        let people = [Person(name: "Ann", age: 41, tags: ["swift"]),
                      Person(name: "Bo", age: 7, tags: ["swift"]),
                      Person(name: "Cy", age: nil, tags: [])]
        let adults = try SiftPredicate("age >= 18 AND ANY tags == 'swift'").compiled(for: Person.self)
        let n = try adults.count(in: people)   // 1

        #expect(n == 1)
        #expect(try adults.filter(people).map(\.name) == ["Ann"])
    }

    @Test func extendingIt() throws {
        var functions = FunctionRegistry()
        functions.register("double:") { target, args in
            guard case .integer(let i) = args.first else { throw FunctionError("double: needs an integer") }
            return .integer(i * 2)
        }
        let doubled = try SiftPredicate("FUNCTION(SELF, 'double:', age) > 60",
                                        options: EvaluationOptions(functions: functions))
        let old = try doubled.evaluate(with: ["age": 41])   // true

        #expect(old)
        #expect(try !doubled.evaluate(with: ["age": 30]))
    }
}
