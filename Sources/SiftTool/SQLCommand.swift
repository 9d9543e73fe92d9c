// `sift sql`: lower one predicate to SQL against a schema file and print the SQL text and the values
// to bind, without touching a database, so the output can be fed to any SQLite (or, with
// `--dialect postgres`, PostgreSQL) driver.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON
import SiftSQL
import SiftSyntax

struct SQLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Print the SQL a predicate lowers to, and its bound values.",
        discussion: """
            Lowers PREDICATE against the entity NAME of the schema in FILE (the JSON form of a Sift \
            schema: entities with their table, primary key, attributes and relationships; see \
            Samples/people.schema.json) and prints the SQL on one line, then one line per bound \
            value: '?N = JSON'. With --json, prints {"sql": "…", "bindings": [...]} instead; a blob \
            is {"$blob": "hex"}.

            --arg and --var take JSON values as for 'sift filter'; $VARIABLES are bound at lowering \
            time. --sort KEY[opts][:desc] adds ORDER BY terms that order like 'sift filter --sort'.

            --dialect postgres prints PostgreSQL's form ($1 placeholders, no Sift functions): what \
            PostgreSQL cannot select exactly (string options, MATCHES, functions, double arithmetic, \
            dynamically typed attributes without a text column) is an error naming the construct. \
            Where a row's values may make memory raise (a dynamically typed attribute ordered or \
            matched, a record's document), a second statement follows, after the line '-- rows memory \
            decides …' (with --json, "rowsMemoryDecides": {"sql", "bindings"}): it selects the primary \
            keys of the rows whose answer the caller takes from memory instead, strict or lenient.

            Exit status: 0 success; 1 invalid predicate, unreadable or invalid schema, unknown entity, \
            or a predicate the SQL back-end cannot express faithfully (line:column and a caret); \
            2 usage error.
            """
    )

    @Argument(help: "The predicate format string.")
    var predicate: String

    @Option(help: ArgumentHelp("The schema mapping, a JSON file.", valueName: "FILE"))
    var schema: String

    @Option(help: ArgumentHelp("The entity the predicate is evaluated against.", valueName: "NAME"))
    var entity: String

    @OptionGroup var inputs: PredicateInputs

    @Flag(help: "Print {\"sql\": …, \"bindings\": […]} as one line of JSON.")
    var json = false

    @Option(help: ArgumentHelp("The SQL dialect: sqlite or postgres.", valueName: "NAME"))
    var dialect: SQLDialectName = .sqlite

    func run() throws {
        let variables = try inputs.variables().mapValues(\.literal)
        let descriptors = try inputs.sortDescriptors()
        let arguments = try inputs.arguments()

        let syntax: PredicateSyntax
        do throws(SyntaxError) { syntax = try PredicateSyntax.parse(predicate, arguments: arguments) } catch {
            writeError(error.annotated)
            throw ExitCode.failure
        }

        let mapping: Schema
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: schema))
            mapping = try Schema(jsonData: data)
        } catch let error as SchemaError {
            writeError("\(schema): error: \(error.message)")
            throw ExitCode.failure
        } catch {
            writeError("\(schema): error: cannot read the schema (\(error.localizedDescription))")
            throw ExitCode.failure
        }

        let query: SQLQuery
        do throws(SQLLoweringError) {
            let lowering = try SQLLowering(schema: mapping, entity: entity, dialect: dialect.dialect)
            query = try lowering.select(
                syntax, source: predicate, variables: variables,
                sortedBy: descriptors.map {
                    SQLSortKey(keyPath: $0.keyPath, ascending: $0.ascending, options: $0.options)
                })
        } catch {
            writeError(error.annotated)
            throw ExitCode.failure
        }

        FileHandle.standardOutput.write(Data(printed(query).utf8))
    }

    /// The statement and its bindings as the options say; with the rows memory decides (a
    /// dialect that cannot call memory) as a second, labelled statement.
    func printed(_ query: SQLQuery) -> String {
        var out = ""
        if json {
            func statement(_ q: SQLQuery) -> [(String, JSONValue)] {
                [("sql", .string(q.sql)), ("bindings", .array(q.bindings.map(\.json)))]
            }
            var members = statement(query)
            if let rows = query.rowsMemoryDecides { members.append(("rowsMemoryDecides", .object(statement(rows)))) }
            JSONValue.object(members).write(into: &out)
            return out + "\n"
        }
        func lines(_ q: SQLQuery) {
            out += q.sql + "\n"
            for (n, value) in q.bindings.enumerated() {
                out += dialect == .postgres ? "$\(n + 1) = " : "?\(n + 1) = "
                value.json.write(into: &out)
                out += "\n"
            }
        }
        lines(query)
        if let rows = query.rowsMemoryDecides {
            out += "-- rows memory decides (evaluate the predicate on these rows' objects in memory; "
            out += "their answer, or memory's error, replaces the statement's):\n"
            lines(rows)
        }
        return out
    }
}

/// The dialects `sift sql --dialect` names.
enum SQLDialectName: String, ExpressibleByArgument, CaseIterable {
    case sqlite
    case postgres

    var dialect: any SQLDialect {
        switch self {
        case .sqlite: SQLiteDialect()
        case .postgres: PostgreSQLDialect()
        }
    }
}
