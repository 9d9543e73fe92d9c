// `sift store`: the persistence core (SiftStore) on the command line. `infer-model` writes a model
// for a JSON file, `create` makes a SQLite store with a model, `import` streams JSON records into
// it in one all-or-nothing transaction, `query` fetches with a predicate (objects as NDJSON, counts,
// dictionaries, groups and aggregates, or the SQL plan), `update` and `delete` run batch requests,
// `history` prints the persistent history (StoreHistoryCommand.swift), `watch` follows a sorted
// result as other processes save (StoreWatchCommand.swift).
// The conventions are `sift filter`'s: JSON with integers apart from doubles and `{"$date": s}`
// dates, NDJSON output written only once everything succeeded, predicate errors as `line:column`
// with a caret, exit status 0 success, 1 invalid predicate, data or store error, 2 usage error.

import ArgumentParser
import Foundation
import SiftEvaluation
import SiftJSON
import SiftStore
import SiftSyntax

struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Create, fill and query a SQLite store (SiftStore) from the command line.",
        discussion: """
            A typical session:

              sift store infer-model people.json > people.model.json
              sift store create people.sqlite --model people.model.json
              sift store import people.sqlite Record people.json
              sift store query people.sqlite Record 'ANY kids.age < 10' --sort name

            The store file keeps its model, so only 'create' takes one. Input JSON is one array of \
            records or NDJSON ('-' reads standard input), with 'sift filter''s conventions: numbers \
            without '.' or exponent are integers, other numbers doubles, {"$date": seconds since \
            1970} a date. Output is written only when the whole command succeeded.

            Exit status: 0 success; 1 invalid predicate (line:column and a caret), invalid or \
            unreadable JSON, a record the model does not accept, or a store error ('error: …'; the \
            store is unchanged); 2 usage error.
            """,
        subcommands: [
            StoreInferModelCommand.self, StoreCreateCommand.self, StoreImportCommand.self,
            StoreQueryCommand.self, StoreUpdateCommand.self, StoreDeleteCommand.self, StoreHistoryCommand.self,
            StoreWatchCommand.self, StoreCodegenCommand.self, StoreModelCommand.self, StoreMigrateCommand.self,
            StoreInfoCommand.self,
        ]
    )
}

/// Runs a command body, printing a `StoreCommandError`'s lines on standard error (exit status 1).
func reportingStoreErrors(_ body: () throws -> Void) throws {
    do { try body() } catch let e as StoreCommandError {
        for line in e.lines { writeError(line) }
        throw ExitCode.failure
    }
}

/// A predicate compiled for a store request; a syntax error is printed with its caret.
func storePredicate(_ text: String, arguments: [Any?], lenient: Bool) throws(StoreCommandError) -> SiftPredicate {
    do {
        return try SiftPredicate(format: text, arguments: arguments, options: EvaluationOptions(lenient: lenient))
    } catch {
        throw StoreCommandError(lines: [error.annotated])
    }
}

/// A store error met while running a request. One that knows its source text (the predicate, a
/// sort key, a property, an aggregate, an expression) prints that text with a caret under the
/// failing part, after the option it came from (`--aggregate n=@sum.prise: 1:8: error: …`);
/// `parts` pairs each option's label with its text. Otherwise a message that carries
/// `line:column` gets the predicate's line and a caret under that column.
func storeError(_ e: StoreError, predicate source: String?, parts: [(label: String, text: String)] = [])
    -> StoreCommandError
{
    if let text = e.source, e.location != nil {
        var lines = e.annotated.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if text != source, let part = parts.first(where: { $0.text == text }) {
            lines[0] = "\(part.label): " + lines[0]
        }
        return StoreCommandError(lines: lines)
    }
    let head = e.message.split(separator: ":", maxSplits: 2)
    guard e.kind == .evaluation || e.kind == .syntax, let source, head.count == 3,
        head[2].hasPrefix(" error: "), let line = Int(head[0]), let column = Int(head[1]), line > 0, column > 0
    else {
        return StoreCommandError(e)
    }
    let text = SourceText(source).line(line)
    let indent = String(text.prefix(column - 1).map { $0 == "\t" ? "\t" : " " })
    return StoreCommandError(lines: [e.message, String(text), indent + "^"])
}

/// The arguments of the commands that fetch (`query`, `watch`): the store, the entity, the
/// predicate with its `--arg`, `--var` and `--sort` inputs, `--lenient` and `--nulls`.
struct StoreFetchArguments: ParsableArguments {
    @Argument(help: "The store file.")
    var db: String

    @Argument(help: "The entity to fetch.")
    var entity: String

    @Argument(help: "The predicate format string (all objects when omitted).")
    var predicate: String?

    @OptionGroup var coreData: CoreDataModelOption

    @OptionGroup var inputs: PredicateInputs

    @Flag(
        help:
            "Evaluate leniently: a comparison memory cannot make (\"abc\" > 30) is false instead of an error, on every path."
    )
    var lenient = false

    @Flag(help: "Print nil attributes and to-one relationships as null instead of leaving them out.")
    var nulls = false

    func validate() throws {
        if predicate == nil && !inputs.args.isEmpty { throw ValidationError("--arg needs a PREDICATE") }
    }

    /// What a fetching command starts from.
    struct Prepared {
        let store: PersistentStore
        /// The entity's objects the predicate matches, sorted, with the `--var` bindings.
        var request: FetchRequest<ManagedObject>
        /// Prints objects as `sift store query` does.
        let renderer: StoreRenderer
        let compiled: SiftPredicate?
        let variables: [String: LiteralValue]
    }

    /// Compiles the predicate, opens the store, checks the entity and makes the request.
    func prepare() throws -> Prepared {
        let variables = try inputs.variables().mapValues(\.literal)
        let descriptors = try inputs.sortDescriptors()
        let arguments = try inputs.arguments()
        let compiled = try predicate.map { (p) throws(StoreCommandError) in
            try storePredicate(p, arguments: arguments, lenient: lenient)
        }
        let store = try StoreAccess.open(db, model: coreData.model)
        try StoreAccess.requireEntity(entity, in: store)
        var request = FetchRequest(entity, predicate: compiled, sortDescriptors: descriptors)
        request.variables = variables
        let renderer = StoreRenderer(model: store.model, keyOrder: StoreAccess.keyOrder(store), printsNils: nulls)
        return Prepared(store: store, request: request, renderer: renderer, compiled: compiled, variables: variables)
    }

    /// The error the predicate raises in memory on the first object (in primary-key order) it
    /// raises on, with the object and the caret (`Record 17: 1:5: error: …`), for an evaluation
    /// error. The store evaluates the part of a predicate SQL cannot run without its source
    /// text, and a controller judges a changed object with the predicate as printed, so their
    /// errors do not point into the user's text; running the whole predicate again, on the error
    /// path only, finds the node that failed.
    func located(_ error: StoreError, _ p: Prepared) -> StoreCommandError? {
        guard error.kind == .evaluation, let compiled = p.compiled,
            let all = try? ManagedObjectContext(store: p.store).fetch(FetchRequest(entity))
        else { return nil }
        let values = p.variables.mapValues { Value($0) }
        for o in all {
            do throws(EvaluationError) { _ = try compiled.evaluate(with: o, variables: values) } catch {
                return StoreCommandError(lines: ["\(o.objectID): \(error.annotated)"])
            }
        }
        return nil
    }
}

// MARK: - infer-model

struct StoreInferModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer-model",
        abstract: "Print a model (JSON) inferred from JSON records.",
        discussion: """
            Reads FILE (a JSON array of objects, or NDJSON; '-' or omitted: standard input) and \
            prints the model a store needs to hold the records, as 'sift store create --model' reads \
            it. The root entity is NAME (--entity, default Record); every key becomes a property:

              integers everywhere              integer64
              doubles ('.' or exponent)        double
              strings, booleans, {"$date": s}  string, boolean, date
              integers and doubles mixed       dynamic (1 and 1.0 stay apart)
              numbers and strings mixed        dynamic (each value keeps its kind)
              objects                          to-one relationship to a new entity
                                               NAME_key, which has a to-many
                                               'owner' back
              arrays of objects                ordered to-many relationship to
                                               NAME_key, with a to-one 'owner' back
                                               (allowing nil where some records
                                               have null or no array)
              arrays of scalars                collection attribute of their type
              booleans or dates mixed with     mixed (keeps each value as it is; SQL
              other kinds, arrays of scalars   queries each row by its shape)
              or of dates mixed with those
              objects mixed with anything      transformable (keeps any JSON value;
              else, arrays mixing dates with   predicates on it run in memory, not
              scalars                          in SQL)
              null or missing everywhere       dynamic
              empty arrays (or arrays of       a collection of dynamic
              nulls) only

            Every attribute is optional; null and missing keys are nil. The model knows every key \
            it saw: a key no record has is an unknown-key error in 'sift store query' (with the \
            closest key names), where 'sift filter' reads nil; a model written by hand with \
            "open": true, and the --document entity, read nil for it instead. Parents cascade deletes to \
            nested objects; the relationships back nullify. Each key where the records disagree, \
            or whose representation loses something, gets one 'note: key …' line on standard error \
            saying what was chosen and why. An array of objects that is null or missing in some \
            records becomes a to-many relationship that allows nil ("allowsNil": true), so nil \
            and [] stay apart.

            Any key names a property as it is ('first name', 'a' beside 'A'); a nested entity's \
            name takes the key with each character other than an ASCII letter, digit or '_' made \
            '_'. Records that are not objects are errors (exit 1) unless --document is given.

            With --document the model has one document entity NAME instead: each record is one \
            object, kept exactly as read, whatever its shape (objects whose keys disagree, null \
            elements, records that are strings, numbers or arrays), with the shapes of its keys \
            declared so that predicates run in SQL with the answers 'sift filter' gives; this is \
            how 'sift filter --backend sqlite' loads records. Keys the tables cannot hold (arrays \
            of arrays, arrays mixing objects with values) get a 'note:' line: predicates naming \
            them run in memory.
            """
    )

    @Argument(help: "The JSON records (a JSON array, or NDJSON; '-' or omitted: standard input).")
    var file: String?

    @Option(help: ArgumentHelp("The root entity's name.", valueName: "NAME"))
    var entity = "Record"

    @Flag(help: "One document entity whose objects are the records as they are (any JSON).")
    var document = false

    func run() throws {
        try reportingStoreErrors {
            // Read record by record (a pipe spooled to a temporary file): memory holds the merged
            // shapes, not the records.
            let input: MappedInput
            do throws(RecordsError) { input = try MappedInput.open(file) } catch {
                throw StoreCommandError(error.description)
            }
            var records = RecordStream(input, name: Records.displayName(file))
            if document {
                let described: DocumentDescription
                do throws(RecordsError) {
                    described = try DocumentInference.describe { () throws(RecordsError) in try records.next() }
                } catch {
                    throw StoreCommandError(error.description)
                }
                let model: ManagedObjectModel
                do throws(ModelError) {
                    model = try ManagedObjectModel(entities: [EntityDescription(entity, document: described)])
                } catch {
                    throw StoreCommandError("error: the inferred model is invalid: \(error.message)")
                }
                for (key, why) in model.unsupportedDocumentKeys(of: entity).sorted(by: { $0.key < $1.key }) {
                    writeError(
                        "note: key '\(key)': \(why); kept in the documents, and predicates naming it run in memory")
                }
                FileHandle.standardOutput.write(Data((model.jsonString + "\n").utf8))
                return
            }
            let inferred: InferredModel
            do throws(JSONImportError) { inferred = try ModelInference.infer(&records, entity: entity) } catch {
                throw StoreCommandError(lines: error.lines)
            }
            let model: ManagedObjectModel
            do throws(ModelError) { model = try ManagedObjectModel(entities: inferred.entities) } catch {
                throw StoreCommandError("error: the inferred model is invalid: \(error.message)")
            }
            for note in inferred.notes { writeError(note) }
            FileHandle.standardOutput.write(Data((model.jsonString + "\n").utf8))
        }
    }
}

// MARK: - create

struct StoreCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a SQLite store with a model.",
        discussion: """
            Creates the store DB (a SQLite file) with the model in MODEL.json ('sift store \
            infer-model' writes one; the format is ManagedObjectModel's JSON: {"entities": [{"name", \
            "attributes", "relationships", …}]}, published as Schemas/model.schema.json). A model file \
            with mistakes (invalid JSON, an unknown key, bounds in the wrong order or on a type they \
            do not apply to, a default that breaks its rules) is refused with one \
            'MODEL.json:line:column: error: key.path: …' line per problem (exit 1). The store keeps \
            its model: later commands read it \
            from DB. Running it again with the same model does nothing; an existing store made with \
            another model is an error naming what differs (exit 1; 'sift store migrate' migrates it), as \
            is a file that is not a Sift store. --history makes the store record persistent \
            history ('sift store history'; given to an existing store, it turns it on; 'sift store \
            history DB --off' turns it off). Prints nothing on success.
            """
    )

    @Argument(help: "The store file to create.")
    var db: String

    @Option(help: ArgumentHelp("The model, a JSON file.", valueName: "MODEL.json"))
    var model: String

    @Flag(help: "Record persistent history (kept on until 'sift store history DB --off').")
    var history = false

    func run() throws {
        try reportingStoreErrors {
            let parsed = try readModelFile(model)
            do throws(StoreError) { _ = try PersistentStore(model: parsed, path: db, historyTracking: history) } catch {
                throw StoreCommandError(error)
            }
        }
    }
}

// MARK: - import

struct StoreImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import JSON records into a store as objects of one entity.",
        discussion: """
            Reads FILE (a JSON array of objects, or NDJSON; '-' or omitted: standard input) and \
            inserts one ENTITY object per record, in one transaction: all records or none. \
            Values follow the model: a JSON object under a to-one relationship and each object of \
            an array under a to-many become objects of the destination entity (recursively); an \
            array under a collection attribute is its elements; any JSON under a transformable \
            attribute is kept as it reads in memory; dates are {"$date": seconds since 1970}, \
            binary data {"$data": "base64"}, UUIDs and URIs strings; dynamic attributes take \
            numbers and strings; null or a missing key is nil (a missing key keeps the model's \
            default value). Into a document entity each record is one object kept as it is (any \
            JSON value when the entity allows values), checked against the entity's shapes.

            A key the entity does not have, a value of the wrong type, or a broken validation rule \
            is an error naming the 0-based record index and the key path in it ('error: record 3: \
            key 'kids[1].age': …'), exit 1, and nothing is imported. On success prints the number \
            of ENTITY objects inserted (nested objects are not counted).

            The store also remembers the order in which the keys first appeared, so that 'sift \
            store query' prints keys in that order.

            The input is read twice, record by record: once for its syntax (an error anywhere is \
            reported before anything is imported), then to import, in batches of a few thousand \
            objects written into the one transaction, so memory stays bounded whatever the input's \
            size (standard input is first copied to a temporary file). When a batch is refused, \
            its failures are reported and later records are not read.
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @Argument(help: "The entity each record becomes.")
    var entity: String

    @Argument(help: "The JSON records (a JSON array, or NDJSON; '-' or omitted: standard input).")
    var file: String?

    func run() throws {
        try reportingStoreErrors {
            // Mapped (a pipe spooled to a temporary file) and read record by record: memory holds
            // one batch of objects whatever the input's size.
            let input: MappedInput
            do throws(RecordsError) { input = try MappedInput.open(file) } catch {
                throw StoreCommandError(error.description)
            }
            var records = RecordStream(input, name: Records.displayName(file))
            // A syntax error anywhere is reported before the store is opened, as before streaming.
            do throws(RecordsError) { _ = try records.checkSyntax() } catch {
                throw StoreCommandError(error.description)
            }
            let store = try StoreAccess.open(db)
            var importer = StoreImporter(context: StoreAccess.writer(store, "store import"))
            let n: Int
            do throws(JSONImportError) { n = try importer.run(&records, entity: entity) } catch {
                throw StoreCommandError(error)
            }
            do { try StoreAccess.recordKeyOrder(store, importer.seenKeys) } catch {
                // The objects are saved; only the output's key order is not remembered.
                writeError("warning: the records were imported, but their key order could not be recorded: \(error)")
            }
            FileHandle.standardOutput.write(Data("\(n)\n".utf8))
        }
    }
}

// MARK: - query

struct StoreQueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of an entity a predicate matches.",
        discussion: """
            Fetches the ENTITY objects PREDICATE matches (all of them when it is omitted) and \
            prints them as NDJSON, one compact JSON object per line, in primary-key order (the order \
            they were imported in) unless --sort is given. The parts of the predicate SQL can \
            express exactly run in SQLite; the rest runs in memory on the rows SQL returns, so \
            every predicate 'sift filter' accepts works (--explain shows the split).

            Objects print in 'sift filter''s JSON conventions: integers, doubles, strings, \
            booleans, {"$date": seconds since 1970} (whole seconds as an integer), {"$data": \
            "base64"}; collection attributes as arrays; to-one relationships as nested objects and \
            to-many relationships as arrays of nested objects. Keys come in the order 'sift store \
            import' first saw them, then any others in model order. A nil attribute or to-one is \
            left out, so a record whose key was missing prints as it was imported (with --nulls it \
            prints as null instead); so is a nil to-many (one that allows nil), and an empty one \
            prints []. \
            The relationship back to the object a nested object was reached through is not \
            printed (the output would recurse).

            So for a file imported with a model from 'sift store infer-model', 'sift store \
            query DB Record P' prints the lines 'sift filter P FILE' prints, wherever memory \
            does not raise, except where the store cannot keep what the file said: a null \
            value prints as a missing key (with --nulls, a missing key as null); a missing or \
            null array of objects as []; text in NFC; keys inside transformable objects \
            sorted; a record whose keys came in another order than the records before it in \
            the order they were first seen. A key the model does not have is an error rather \
            than nil (unknown-key, before any row is read, with the closest key names), in the \
            predicate, --sort, --properties, --group-by and --aggregate alike; only an entity \
            that is open ("open": true in the model, or a --document entity) reads nil for it, \
            as 'sift filter' does. Errors in --sort, --properties, --group-by and --aggregate \
            print that option's text with a caret under the failing part, and an error raised \
            on one object names it (Record 17).

            --arg, --var and --sort work as in 'sift filter'. --limit and --offset page the \
            result. --count prints the number of matches (after --offset/--limit). \
            --properties a,b.c prints only those key paths (attributes or to-one paths), every one \
            of them, nil as null; --distinct drops repeated rows. --group-by KEY (repeatable) \
            prints one row per distinct combination of the keys, in order of first appearance, \
            with each --aggregate NAME=@op.key (@count, @sum, @avg, @min, @max; @count alone \
            counts objects, @count.key the objects whose key is not nil) computed over the group; --aggregate without --group-by prints one row \
            over all matches. --explain prints the SQL, SQLite's plan and the part left for \
            memory, instead of results.

            Exit status: 0 success (also when nothing matches); 1 invalid predicate (line:column \
            and a caret), an error while evaluating it, or a store error; 2 usage error.
            """
    )

    @OptionGroup var fetch: StoreFetchArguments

    @Option(help: ArgumentHelp("Print at most N results.", valueName: "N"))
    var limit: Int?

    @Option(help: ArgumentHelp("Skip the first N results.", valueName: "N"))
    var offset: Int?

    @Flag(help: "Print only the number of matching objects.")
    var count = false

    @Option(help: ArgumentHelp("Print only these key paths (comma-separated; repeatable).", valueName: "a,b.c"))
    var properties: [String] = []

    @Flag(help: "With --properties (or all attributes): drop repeated rows.")
    var distinct = false

    @Option(
        name: .customLong("group-by"),
        help: ArgumentHelp("Print one row per distinct value of KEY (repeatable).", valueName: "KEY"))
    var groupBy: [String] = []

    @Option(
        name: .customLong("aggregate"),
        help: ArgumentHelp("An aggregate per group (repeatable).", valueName: "NAME=@op.key"))
    var aggregates: [String] = []

    @Flag(help: "Print the SQL, SQLite's query plan and the part evaluated in memory.")
    var explain = false

    var propertyList: [String] {
        properties.flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    var wantsDictionaries: Bool { !properties.isEmpty || distinct || !groupBy.isEmpty || !aggregates.isEmpty }

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset must not be negative") }
        if count && explain { throw ValidationError("--count and --explain cannot be used together") }
        if (count || explain) && wantsDictionaries {
            throw ValidationError(
                "--\(count ? "count" : "explain") cannot be used with --properties, --distinct, --group-by or --aggregate"
            )
        }
        if !groupBy.isEmpty && (!properties.isEmpty || distinct) {
            throw ValidationError(
                "--group-by rows hold the group keys and aggregates: --properties and --distinct do not apply")
        }
        if propertyList.contains(where: \.isEmpty) { throw ValidationError("--properties: empty key path") }
        var names = Set(groupBy)
        for a in aggregates {
            do {
                let parsed = try FetchRequest.Aggregate(parsing: a)
                if !names.insert(parsed.name).inserted {
                    throw ValidationError("--aggregate \(a): '\(parsed.name)' names another column")
                }
            } catch let e as StoreError {
                throw ValidationError("--aggregate \(e.message)")
            }
        }
    }

    func run() throws {
        try reportingStoreErrors {
            let prepared = try fetch.prepare()
            let (renderer, entity, predicate) = (prepared.renderer, fetch.entity, fetch.predicate)
            let context = ManagedObjectContext(store: prepared.store)
            var request = prepared.request
            request.fetchLimit = limit
            request.fetchOffset = offset ?? 0
            // The stored rows' lines, in blocks (an error after the first says how many were printed).
            let write = { (bytes: [UInt8]) in OutputBuffer.write(bytes) }
            var out = ""
            do throws(StoreError) {
                if explain {
                    out = try context.explain(request).description + "\n"
                } else if count {
                    out = "\(try context.count(for: request))\n"
                } else if wantsDictionaries {
                    out = try dictionaries(context, request, renderer)
                } else if try !context.printStoredRows(request, renderer: renderer, into: write).printed {
                    // Memory judges part of the request: fetched objects, with what printing reads
                    // read a table at a time rather than an object at a time.
                    request.relationshipKeyPathsForPrefetching = renderer.printedPaths(of: entity)
                    for o in try context.fetch(request) {
                        try renderer.render(o).write(into: &out)
                        out += "\n"
                    }
                }
            } catch {
                // The row guard's error is located in the predicate as SQL carried it (printed):
                // run again in memory for the user's own text.
                if error.source == nil || error.source == predicate || error.raisedRow != nil,
                    let located = fetch.located(error, prepared)
                {
                    throw located
                }
                throw storeError(error, predicate: predicate, parts: parts(request.sortDescriptors))
            }
            FileHandle.standardOutput.write(Data(out.utf8))
        }
    }

    /// The texts of the options other than the predicate, labelled as errors print them.
    func parts(_ descriptors: [SiftSortDescriptor]) -> [(label: String, text: String)] {
        descriptors.map { ("--sort \($0)", $0.keyPath) } + propertyList.map { ("--properties \($0)", $0) }
            + groupBy.map { ("--group-by \($0)", $0) } + aggregates.map { ("--aggregate \($0)", $0) }
    }

    /// Rows of a dictionary fetch, keys in the order asked for: the properties (every attribute
    /// when none are named), or the group keys followed by the aggregates.
    func dictionaries(_ context: ManagedObjectContext, _ base: FetchRequest<ManagedObject>, _ renderer: StoreRenderer)
        throws(StoreError) -> String
    {
        var request = base
        var parsed: [FetchRequest.Aggregate] = []
        for a in aggregates { parsed.append(try FetchRequest.Aggregate(parsing: a)) }
        let keys: [String]
        if !groupBy.isEmpty || !parsed.isEmpty {
            // Without --group-by the aggregates cover every match: one group with no keys.
            request.propertiesToGroupBy = groupBy
            request.aggregates = parsed
            keys = groupBy + parsed.map(\.name)
        } else {
            let named = propertyList
            keys =
                named.isEmpty
                ? renderer.properties(of: fetch.entity).compactMap { if case .attribute(let n) = $0 { n } else { nil } }
                : named
            request.propertiesToFetch = keys
            request.returnsDistinctResults = distinct
        }
        var rows = try context.fetchDictionaries(request)
        if groupBy.isEmpty, !parsed.isEmpty, rows.isEmpty, base.fetchOffset == 0 && base.fetchLimit != 0 {
            // Aggregates over nothing still make one row, with the collection operators' values
            // for an empty collection: @count and @sum 0, the others nil.
            var row: [String: Value] = [:]
            for a in parsed { row[a.name] = a.function == .count || a.function == .sum ? .integer(0) : .null }
            rows = [row]
        }
        var out = ""
        for row in rows {
            JSONValue.object(keys.map { ($0, renderer.json(row[$0] ?? .null, keyPath: $0, from: fetch.entity)) }).write(
                into: &out)
            out += "\n"
        }
        return out
    }
}

// MARK: - update

struct StoreUpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Set attributes of every object a predicate matches (a batch update).",
        discussion: """
            Runs a batch update on the store: every ENTITY object PREDICATE matches (use \
            TRUEPREDICATE for all) gets the new values, in one transaction. --set KEY=JSON sets a \
            constant (JSON as for --arg: {"$date": s} is a date, an array a collection's \
            elements); --set-expression KEY=EXPR sets the value of an expression evaluated on each \
            object as in memory ('score * 2', 'name', 'address.city'). Values are checked against \
            the attribute's type and the model's validation rules; any failure changes nothing \
            (exit 1). Only attributes can be set. A key the entity does not have, in --set, \
            --set-expression or the predicate, is an error before any object is read (unknown-key, \
            with the closest key names, a caret under the key); an expression that raises on an \
            object names it ('Record 17: + needs numbers, got nil in 'age + 1''). Prints the \
            number of objects updated.
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @Argument(help: "The entity to update.")
    var entity: String

    @Argument(help: "The predicate selecting the objects.")
    var predicate: String

    @OptionGroup var coreData: CoreDataModelOption

    @Option(
        name: .customLong("set"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Set KEY to a JSON constant (repeatable).", valueName: "KEY=JSON"))
    var sets: [String] = []

    @Option(
        name: .customLong("set-expression"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Set KEY to an expression of the object (repeatable).", valueName: "KEY=EXPR"))
    var expressions: [String] = []

    @Flag(
        help:
            "Evaluate leniently: a comparison memory cannot make (\"abc\" > 30) is false instead of an error, on every path."
    )
    var lenient = false

    @OptionGroup var inputs: FormatInputs

    /// The context name recorded in the store's history.
    static let command = "store update"

    /// `KEY=REST` split at the first '='.
    static func split(_ text: String, option: String) throws -> (String, String) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw ValidationError("\(option) \(text): expected KEY=VALUE")
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }

    func validate() throws {
        if sets.isEmpty && expressions.isEmpty {
            throw ValidationError("nothing to set: give --set KEY=JSON or --set-expression KEY=EXPR")
        }
        var keys = Set<String>()
        for s in sets {
            let (k, json) = try Self.split(s, option: "--set")
            do { _ = try JSONReader.parse(json) } catch { throw ValidationError("--set \(k): \(error)") }
            if !keys.insert(k).inserted { throw ValidationError("--set \(k): the key is set twice") }
        }
        for e in expressions {
            let (k, _) = try Self.split(e, option: "--set-expression")
            if !keys.insert(k).inserted { throw ValidationError("--set-expression \(k): the key is set twice") }
        }
    }

    func run() throws {
        let variables = try inputs.variables().mapValues(\.literal)
        let arguments = try inputs.arguments()
        try reportingStoreErrors {
            let compiled = try storePredicate(predicate, arguments: arguments, lenient: lenient)
            var request = BatchUpdateRequest(entity, predicate: compiled)
            request.variables = variables
            for s in sets {
                let (k, json) = try Self.split(s, option: "--set")
                request.propertiesToUpdate[k] = .constant(try JSONReader.parse(json).literal)
            }
            for e in expressions {
                let (k, text) = try Self.split(e, option: "--set-expression")
                // Parsed here too, for the caret under the expression's own text.
                do throws(SyntaxError) { _ = try ExpressionSyntax.parse(text) } catch {
                    throw StoreCommandError(lines: ["--set-expression \(k): " + error.annotated])
                }
                request.propertiesToUpdate[k] = .expression(text)
            }
            let store = try StoreAccess.open(db, model: coreData.model)
            let result: BatchResult
            do throws(StoreError) { result = try StoreAccess.writer(store, Self.command).execute(request) } catch {
                let parts = try expressions.map { (e) throws -> (label: String, text: String) in
                    let (k, text) = try Self.split(e, option: "--set-expression")
                    return ("--set-expression \(k)", text)
                }
                throw storeError(error, predicate: predicate, parts: parts)
            }
            FileHandle.standardOutput.write(Data("\(result.count)\n".utf8))
        }
    }
}

// MARK: - delete

struct StoreDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete every object a predicate matches (a batch delete).",
        discussion: """
            Runs a batch delete on the store: every ENTITY object PREDICATE matches (use \
            TRUEPREDICATE for all) is deleted in one transaction, with the model's delete rules \
            (cascade deletes nested objects, nullify clears the links to the deleted objects, deny \
            refuses the whole batch: exit 1, nothing deleted). Prints the number of ENTITY objects \
            deleted; objects of other entities deleted by cascade rules are counted in a note on \
            standard error.
            """
    )

    @Argument(help: "The store file.")
    var db: String

    @Argument(help: "The entity to delete from.")
    var entity: String

    @Argument(help: "The predicate selecting the objects.")
    var predicate: String

    @OptionGroup var coreData: CoreDataModelOption

    @Flag(
        help:
            "Evaluate leniently: a comparison memory cannot make (\"abc\" > 30) is false instead of an error, on every path."
    )
    var lenient = false

    @OptionGroup var inputs: FormatInputs

    /// The context name recorded in the store's history.
    static let command = "store delete"

    func run() throws {
        let variables = try inputs.variables().mapValues(\.literal)
        let arguments = try inputs.arguments()
        try reportingStoreErrors {
            let compiled = try storePredicate(predicate, arguments: arguments, lenient: lenient)
            var request = BatchDeleteRequest(entity, predicate: compiled)
            request.variables = variables
            let store = try StoreAccess.open(db, model: coreData.model)
            let result: BatchResult
            do throws(StoreError) { result = try StoreAccess.writer(store, Self.command).execute(request) } catch {
                throw storeError(error, predicate: predicate)
            }
            // The entity and its sub-entities are what the predicate selected.
            let family = Set(
                store.model.entities.filter { store.model.lineage(of: $0.name).contains { $0.name == entity } }.map(
                    \.name))
            let selected = result.objectIDs.filter { family.contains($0.entityName) }.count
            if result.count > selected {
                writeError(
                    "note: \(result.count - selected) related object\(result.count - selected == 1 ? "" : "s") of other entities deleted by cascade rules"
                )
            }
            FileHandle.standardOutput.write(Data("\(selected)\n".utf8))
        }
    }
}
