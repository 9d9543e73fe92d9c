// The open snapshot streams of a controller. A stream may end on any thread (its consumer's task
// cancelled), while snapshots are yielded on the context's: the continuations sit behind a lock.

import Foundation

/// The continuations of a controller's `snapshots` streams.
final class SnapshotStreams: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<FetchedResultsSnapshot>.Continuation] = [:]

    /// A new stream, starting with `first` when given.
    func make(first: FetchedResultsSnapshot?) -> AsyncStream<FetchedResultsSnapshot> {
        let (stream, continuation) = AsyncStream<FetchedResultsSnapshot>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in self?.lock.withLock { self?.continuations[id] = nil } }
        lock.withLock { continuations[id] = continuation }
        if let first { continuation.yield(first) }
        return stream
    }

    /// Whether any stream is open (a snapshot costs a pass over the results).
    var isEmpty: Bool { lock.withLock { continuations.isEmpty } }

    /// Sends `snapshot` to every open stream.
    func yield(_ snapshot: @autoclosure () -> FetchedResultsSnapshot) {
        let open = lock.withLock { Array(continuations.values) }
        guard !open.isEmpty else { return }
        let s = snapshot()
        for c in open { c.yield(s) }
    }

    /// Ends every stream.
    func finish() {
        let open = lock.withLock {
            defer { continuations = [:] }
            return Array(continuations.values)
        }
        for c in open { c.finish() }
    }
}
