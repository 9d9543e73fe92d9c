// The progress line `sift filter` keeps on standard error while a long input is read: records read,
// matches so far and the reading rate, redrawn in place a few times a second. It only appears when
// standard error is a terminal and the input has taken more than a second, so pipes, logs and the
// tests never see it, and it is erased before anything else is printed.

import Foundation
import SiftJSON

#if canImport(Glibc)
    import Glibc
#endif

struct FilterProgress: RecordFilterProgress {
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var lastDrawn: ContinuousClock.Instant?
    private var shown = false

    /// A progress line, drawn only when `enabled` and standard error is a terminal.
    init(enabled: Bool) {
        self.enabled = enabled && isatty(STDERR_FILENO) == 1
        started = clock.now
    }

    /// Redraws the line if it is due: after the first second, then every 200 ms.
    mutating func update(records: Int, matches: Int, offset: Int) {
        guard enabled else { return }
        let now = clock.now
        guard now - started >= .seconds(1) else { return }
        if let lastDrawn, now - lastDrawn < .milliseconds(200) { return }
        lastDrawn = now
        let c = (now - started).components
        let seconds = Double(c.seconds) + Double(c.attoseconds) / 1e18
        let rate = Double(offset) / 1_000_000 / seconds
        draw(String(format: "\r\u{1B}[Ksift: %ld records read, %ld matched, %.0f MB/s", records, matches, rate))
        shown = true
    }

    /// Erases the line, if it was drawn.
    mutating func finish() {
        guard shown else { return }
        draw("\r\u{1B}[K")
        shown = false
    }

    private func draw(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
