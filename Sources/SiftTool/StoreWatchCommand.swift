// `sift store watch`: a fetched results controller on the command line. It prints a sorted
// request's results as NDJSON, then follows the store's persistent history: the transactions
// other processes commit are merged into its context (`mergeChanges(fromHistory:)`) and the
// controller's changes are printed a line each, every batch closed by an `end` line naming the
// history token it reached. It notices a commit by polling SQLite's `PRAGMA data_version` (prepared
// once, on a connection of its own: a look at the shared WAL index, no table read). Measured on the
// debug build, on 2 shared, busy cores, at the default 50 ms: 0.2% of a core while idle, a save
// printed a median 24–37 ms (at most 53 ms) after its writer exits; at 10 ms, 1% and 2 ms. It
// needs nothing of the platform, where inotify is Linux's alone and wakes for checkpoints and the
// WAL's every write. SIGINT and SIGTERM end it with exit status 0; each batch is written whole as
// soon as it is complete.

import ArgumentParser
import Foundation
import SiftJSON
import SiftSQLite
import SiftStore

struct StoreWatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print an entity's sorted results, then each change other processes save, as NDJSON.",
        discussion: """
            Fetches the ENTITY objects PREDICATE matches (all when it is omitted), sorted by the \
            --sort keys (required: the results are kept in order) and grouped in sections by \
            --section KEYPATH (whose first --sort key must group like it), and prints them, one \
            line per object: {"type": "result", "section": NAME, "path": [SECTION, ITEM], "id": \
            URI, "object": {…}} with the object as 'sift store query' prints it. Then, while other \
            processes ('sift store import', 'update', 'delete', an application) save into DB, it \
            prints each change of the results as it happens, one line each:

              {"type": "deleteSection", "section": NAME, "index": OLD}
              {"type": "insertSection", "section": NAME, "index": NEW}
              {"type": "delete", "section": NAME, "old": [S, I], "id": URI}
              {"type": "insert", "section": NAME, "new": [S, I], "id": URI, "object": …}
              {"type": "move", "section": NAME, "old": [S, I], "new": [S, I], …}
              {"type": "update", "section": NAME, "old": [S, I], "new": [S, I], …}
              {"type": "end", "token": N}

            (a move and an update carry the object's "id" and "object" too).

            A batch is applied as a table view applies a batch update: take out the deleted and \
            moved objects at their old paths (last first), delete the sections at their old \
            indices (last first), insert sections at their new indices and the inserted and moved \
            objects at their new paths (first first), then replace the updated objects. The \
            result is then exactly what 'sift store query' prints with the same predicate and \
            sort. "section" is the object's section (its old one for a delete). An object whose \
            contents changed and that kept its place is an update, never a move to its own place; \
            one that starts or stops matching is an insert or a delete; one that changes section \
            is one move. The 'end' line closes each batch, and the initial result: the lines so \
            far are the results as of history transaction N (null: none yet). A batch may be only \
            its 'end' line, when what was saved left the results as they were.

            The store must record persistent history ('sift store create DB --model MODEL.json \
            --history' turns it on for an existing store). Changes are noticed by polling the \
            file's data version (SQLite's PRAGMA data_version) every --interval seconds (default \
            0.05: about 0.2% of a core while nothing happens; a save shows within about one \
            interval, half of one on average); the history since the last token is then read \
            and merged. Runs until SIGINT (Ctrl-C) or SIGTERM, which end it \
            with exit status 0; each batch is written in full when it is complete, so a reader \
            on a pipe sees it at once.

              sift store watch people.sqlite Record 'age > 30' \\
                  --sort city --sort name --section city

            Exit status: 0 interrupted; 1 invalid predicate, no --sort, a store without history, or \
            a store error; also, as 'sift store query' fails, when the predicate or a sort key \
            raises on a changed object (the object and a caret under the failing part, on \
            standard error; the lines printed before stand); 2 usage error.
            """
    )

    @OptionGroup var fetch: StoreFetchArguments

    @Option(help: ArgumentHelp("Group the results in sections by this key path's value.", valueName: "KEYPATH"))
    var section: String?

    @Option(help: ArgumentHelp("How often to look for saves, in seconds (default 0.05).", valueName: "SECONDS"))
    var interval: Double = 0.05

    func validate() throws {
        guard interval > 0 && interval <= 60 else { throw ValidationError("--interval must be in (0, 60] seconds") }
        if section?.isEmpty == true { throw ValidationError("--section: empty key path") }
    }

    func run() throws {
        try reportingStoreErrors {
            var prepared = try fetch.prepare()
            prepared.request.relationshipKeyPathsForPrefetching = prepared.renderer.printedPaths(of: fetch.entity)
            let watcher = try StoreWatcher(prepared, path: fetch.db, section: section) { error in
                // The controller judges the predicate as printed: located again in the user's text.
                if let located = fetch.located(error, prepared) { return located }
                let sorts = prepared.request.sortDescriptors.map { ("--sort \($0)", $0.keyPath) }
                return storeError(
                    error, predicate: fetch.predicate, parts: sorts + (section.map { [("--section \($0)", $0)] } ?? []))
            }
            try watcher.run(every: interval)
        }
    }
}

/// The signal (SIGINT, SIGTERM) that asked the watch to end, 0 until one did: written by the
/// handler only, read by the loop after each pause (a `sig_atomic_t`, POSIX's one type a handler
/// may set; not Synchronization's `Atomic`, which macOS has from 15 only).
nonisolated(unsafe) private var stopSignal: sig_atomic_t = 0

/// The watch itself: the controller, the history position, the data version it polls.
final class StoreWatcher {
    private let store: PersistentStore
    private let context: ManagedObjectContext
    private let controller: FetchedResultsController
    private let printer: WatchPrinter
    /// `PRAGMA data_version`, prepared once on a connection of the watcher's own.
    private let monitor: SQLiteStatement
    private var version: Int64 = 0
    private var token: HistoryToken?
    /// Words a fetch's or a change's error for standard error (the command knows the texts).
    private let explain: (StoreError) -> StoreCommandError

    init(
        _ prepared: StoreFetchArguments.Prepared, path: String, section: String?,
        explain: @escaping (StoreError) -> StoreCommandError
    ) throws(StoreCommandError) {
        store = prepared.store
        self.explain = explain
        context = ManagedObjectContext(store: store)
        do {
            monitor = try store.openSideConnection().prepare("PRAGMA data_version")
        } catch { throw StoreCommandError("error: \(path): \(error.message)") }
        do {
            controller = try FetchedResultsController(
                fetchRequest: prepared.request, context: context, sectionNameKeyPath: section)
        } catch { throw StoreCommandError(error) }
        printer = WatchPrinter(renderer: prepared.renderer)
        controller.delegate = printer
    }

    /// Prints the results, then each batch of changes, until SIGINT or SIGTERM.
    func run(every interval: Double) throws(StoreCommandError) {
        // A parent may have blocked them (a thread pool's threads do, and a child inherits the mask).
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGINT, SIGTERM] {
            signal(s) { stopSignal = $0 }
            sigaddset(&signals, s)
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        try start()
        var pause = timespec(tv_sec: Int(interval), tv_nsec: Int((interval - interval.rounded(.down)) * 1e9))
        while stopSignal == 0 {
            // A signal cuts the pause short.
            nanosleep(&pause, nil)
            if stopSignal != 0 { break }
            try follow()
        }
    }

    /// Fetches and prints the results. The history token is read before and after the fetch,
    /// and the fetch repeated while saves came in between (a few times at most): following then
    /// starts at the token read before the last fetch, so no save is missed (one taken in twice
    /// moves nothing: at most its objects are told as updated again).
    private func start() throws(StoreCommandError) {
        version = try dataVersion()
        var before = try currentToken()
        for attempt in 0..<5 {
            do { try controller.performFetch() } catch { throw explain(error) }
            let after = try currentToken()
            if after == before || attempt == 4 { break }
            before = after
        }
        token = before
        let sections = controller.sections
        printer.start(sections: sections.map(\.name))
        var out = ""
        for (s, section) in sections.enumerated() {
            for (i, o) in section.objects.enumerated() {
                do {
                    out +=
                        try printer.line(
                            "result", o, section: section.name, old: nil, new: ResultIndexPath(item: i, section: s))
                        + "\n"
                } catch { throw explain(error) }
            }
        }
        write(out + WatchPrinter.end(token))
    }

    /// Takes in what other processes saved since the last look, when the data version moved.
    private func follow() throws(StoreCommandError) {
        let now = try dataVersion()
        guard now != version else { return }
        version = now
        let news: [HistoryTransaction]
        do { news = try store.history(after: token) } catch { throw StoreCommandError(error) }
        guard let last = news.last?.token else { return }
        do { try context.mergeChanges(fromHistory: news) } catch { throw explain(error) }
        if let failure = printer.failure { throw explain(failure) }
        token = last
        write(printer.batch(token))
    }

    private func currentToken() throws(StoreCommandError) -> HistoryToken? {
        do { return try store.currentHistoryToken() } catch  where error.kind == .invalidOperation {
            if store.isCoreDataStore {
                throw StoreCommandError(
                    "error: 'sift store watch' follows the history Sift records, and \(error.message)")
            }
            throw StoreCommandError(
                "error: the store does not record history, which 'sift store watch' follows: turn it on with "
                    + "'sift store create STORE --model MODEL.json --history'")
        } catch { throw StoreCommandError(error) }
    }

    private func dataVersion() throws(StoreCommandError) -> Int64 {
        do {
            defer { try? monitor.reset() }
            guard try monitor.step(), case .integer(let v) = monitor.column(0) else { return 0 }
            return v
        } catch { throw StoreCommandError("error: cannot read the store's data version: \(error.message)") }
    }

    private func write(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }
}

/// The controller's delegate: words each change of a batch as its NDJSON line. It keeps the
/// section names itself (from the section changes), so a batch costs its changes, not the results.
final class WatchPrinter: FetchedResultsControllerDelegate {
    private let renderer: StoreRenderer
    /// The section names as last printed.
    private var names: [String] = []
    /// The batch's section changes and, once an object change came, the names after them.
    private var sectionChanges: [(name: String, index: Int, type: FetchedResultsChangeType)] = []
    private var newNames: [String]?
    private var objectLines: [String] = []
    /// Why the batch could not be printed: the controller's error, or an object that could not
    /// be read to print it.
    private(set) var failure: StoreError?

    init(renderer: StoreRenderer) { self.renderer = renderer }

    /// The results' section names, as the first lines printed them.
    func start(sections: [String]) { names = sections }

    /// The section names after the batch's section changes (deletes at old indices, last first,
    /// then inserts at new ones).
    private func namesAfter() -> [String] {
        var out = names
        for d in sectionChanges.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index }) {
            out.remove(at: d.index)
        }
        for i in sectionChanges.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            out.insert(i.name, at: i.index)
        }
        return out
    }

    /// The lines of the batch taken in since the last call, sections first, closed by the `end`
    /// line for `token`; the section names become the new ones.
    func batch(_ token: HistoryToken?) -> String {
        var out = ""
        for c in sectionChanges {
            out +=
                JSONValue.object([
                    ("type", .string(c.type == .insert ? "insertSection" : "deleteSection")),
                    ("section", .string(c.name)), ("index", .integer(Int64(c.index))),
                ]).text + "\n"
        }
        for line in objectLines { out += line + "\n" }
        names = newNames ?? namesAfter()
        sectionChanges = []
        newNames = nil
        objectLines = []
        return out + Self.end(token)
    }

    static func end(_ token: HistoryToken?) -> String {
        JSONValue.object([("type", .string("end")), ("token", token.map { .integer($0.value) } ?? .null)]).text + "\n"
    }

    func controller(
        _ controller: FetchedResultsController, didChangeSection name: String, atSectionIndex index: Int,
        for type: FetchedResultsChangeType
    ) { sectionChanges.append((name, index, type)) }

    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: ResultIndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: ResultIndexPath?
    ) {
        let after = newNames ?? namesAfter()
        newNames = after
        let name = type == .delete ? indexPath.map { names[$0.section] } : newIndexPath.map { after[$0.section] }
        do throws(StoreError) {
            objectLines.append(try line(type.rawValue, object, section: name ?? "", old: indexPath, new: newIndexPath))
        } catch {
            failure = failure ?? error
        }
    }

    func controller(_ controller: FetchedResultsController, didFailWith error: StoreError) { failure = error }

    /// One object's line; a deleted object's carries no contents (it may be gone from the store).
    func line(_ type: String, _ o: ManagedObject, section: String, old: ResultIndexPath?, new: ResultIndexPath?)
        throws(StoreError) -> String
    {
        func path(_ p: ResultIndexPath) -> JSONValue { .array([.integer(Int64(p.section)), .integer(Int64(p.item))]) }
        var fields: [(String, JSONValue)] = [("type", .string(type)), ("section", .string(section))]
        if type == "result" {
            if let new { fields.append(("path", path(new))) }
        } else {
            if let old { fields.append(("old", path(old))) }
            if let new { fields.append(("new", path(new))) }
        }
        fields.append(("id", .string(o.objectID.uriRepresentation.absoluteString)))
        if type != "delete" { fields.append(("object", try renderer.render(o))) }
        return JSONValue.object(fields).text
    }
}
