// MATCHES through PCRE2. A pattern is compiled once (UTF, Unicode properties, `.` matching newlines,
// multi-line anchors, whole-string match) and cached process-wide, so a predicate evaluated over a
// million records compiles its regex once whichever back-end runs it. Matching is bounded by a
// match limit and a depth limit so a catastrophic pattern fails with `.regexLimitExceeded` instead
// of hanging a query.
//
// Options: `[c]` is PCRE2_CASELESS, which uses Unicode simple case folding, so unlike `==[c]` it does
// not equate "ß" with "SS". `[d]` strips diacritics (and folds width) in both the pattern and the
// subject before matching; a pattern whose meaning depends on literal combining marks (for example a
// class listing U+0300…U+036F directly) loses them, while escapes such as `\x{301}` or `\p{Mn}` are
// ASCII and survive, but then find no marks in the stripped subject. `[n]` overrides `c` and `d`.
// Without `[d]` neither side is normalised: the pattern is PCRE2's business, scalar for scalar.

import CPCRE2
import Foundation

/// A compiled MATCHES pattern: the whole subject must match.
///
/// ```swift
/// let p = try RegexPattern.compile("hel{2}o", [])
/// try p.matches("hello")    // true
/// try p.matches("hello!")   // false: the whole string must match
/// try RegexPattern.compile("abc", .caseInsensitive).matches("ABC")  // true
/// ```
///
/// Instances are immutable and safe to share between threads: PCRE2 compiled code and the match
/// context are only read while matching, and every match gets its own match data. That is also why
/// the conformance is unchecked: the stored C pointers are not `Sendable` to the compiler.
public final class RegexPattern: @unchecked Sendable {
    /// The backtracking budget: roughly how many times the matcher may try a path. A million keeps
    /// a catastrophic pattern to milliseconds while leaving ordinary patterns far from the limit.
    public static let matchLimit: UInt32 = 1_000_000
    /// The nesting budget of the interpreter's backtracking (ignored by the JIT, which is bounded
    /// by its own stack and reports that as the same error).
    public static let depthLimit: UInt32 = 10_000
    /// How many compiled patterns the process keeps; the oldest is dropped beyond this.
    public static let cacheCapacity = 256

    /// The pattern as the user wrote it.
    public let pattern: String
    /// The options the pattern was compiled with (`[c]` caseless, `[d]` accents stripped).
    public let options: TextOptions

    /// Nil for the empty pattern, which never matches.
    private let code: OpaquePointer?
    private let matchContext: OpaquePointer?
    private let stripsDiacritics: Bool

    private init(pattern: String, options: TextOptions) throws(TextError) {
        self.pattern = pattern
        self.options = options
        let mode = FoldMode(options)
        var flags = UInt32(PCRE2_UTF | PCRE2_UCP | PCRE2_DOTALL | PCRE2_MULTILINE)
        // Anchoring at compile time (not per match) keeps the JIT usable.
        flags |= UInt32(PCRE2_ANCHORED) | UInt32(PCRE2_ENDANCHORED)
        var source = pattern
        stripsDiacritics = if case .folded(_, true) = mode { true } else { false }
        if case .folded(let c, let d) = mode {
            if c { flags |= UInt32(PCRE2_CASELESS) }
            if d { source = TextFolding.fold(pattern, .folded(caseInsensitive: false, diacriticInsensitive: true)) }
        }
        guard !pattern.isEmpty else {
            code = nil
            matchContext = nil
            return
        }
        var errorCode: Int32 = 0
        var errorOffset = 0
        let compiled = withUTF8Bytes(source) { bytes -> OpaquePointer? in
            // Should folding ever leave nothing, PCRE2 still wants a non-null pointer.
            var empty: UInt8 = 0
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return pcre2_compile_8(&empty, 0, flags, &errorCode, &errorOffset, nil)
            }
            return pcre2_compile_8(base, bytes.count, flags, &errorCode, &errorOffset, nil)
        }
        guard let compiled else {
            throw TextError(
                kind: .invalidRegex,
                message:
                    "invalid regular expression '\(pattern)' at offset \(errorOffset): \(Self.message(for: errorCode))")
        }
        // The JIT is an optimisation only: when it is unavailable the interpreter is used.
        _ = pcre2_jit_compile_8(compiled, UInt32(PCRE2_JIT_COMPLETE))
        let context = pcre2_match_context_create_8(nil)
        if let context {
            pcre2_set_match_limit_8(context, Self.matchLimit)
            pcre2_set_depth_limit_8(context, Self.depthLimit)
        }
        code = compiled
        matchContext = context
    }

    deinit {
        if let matchContext { pcre2_match_context_free_8(matchContext) }
        if let code { pcre2_code_free_8(code) }
    }

    /// The compiled pattern for `pattern` and `options`, from the process-wide cache when it has
    /// been compiled before. Throws `.invalidRegex` with PCRE2's message and offset (in UTF-8 bytes
    /// of the pattern as compiled, i.e. after `[d]` stripping).
    ///
    /// ```swift
    /// try RegexPattern.compile("a(", [])  // throws: invalid regular expression 'a(' at offset 2: missing closing parenthesis
    /// ```
    public static func compile(_ pattern: String, _ options: TextOptions) throws(TextError) -> RegexPattern {
        let key = CacheKey(pattern: pattern, mode: FoldMode(options))
        if let cached = cache.withLock({ $0.entries[key] }) { return cached }
        // Compiled outside the lock so one slow pattern does not stall every other thread.
        let compiled = try RegexPattern(pattern: pattern, options: options)
        return cache.withLock { state in
            if let raced = state.entries[key] { return raced }
            state.insert(key, compiled)
            return compiled
        }
    }

    /// Whether the whole of `s` matches. Throws `.regexLimitExceeded` when the match or depth
    /// limit is reached before an answer.
    public func matches(_ s: String) throws(TextError) -> Bool {
        guard let code else { return false }
        let subject =
            stripsDiacritics
            ? TextFolding.fold(s, .folded(caseInsensitive: false, diacriticInsensitive: true)) : s
        guard let matchData = pcre2_match_data_create_8(1, nil) else {
            throw TextError(
                kind: .regexLimitExceeded, message: "out of memory matching regular expression '\(pattern)'")
        }
        defer { pcre2_match_data_free_8(matchData) }
        let rc = withUTF8Bytes(subject) { bytes -> Int32 in
            // PCRE2 before 10.43 rejects a null subject even when it is empty.
            var empty: UInt8 = 0
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return pcre2_match_8(code, &empty, 0, 0, 0, matchData, matchContext)
            }
            return pcre2_match_8(code, base, bytes.count, 0, 0, matchData, matchContext)
        }
        if rc >= 0 { return true }
        switch rc {
        case PCRE2_ERROR_NOMATCH, PCRE2_ERROR_PARTIAL:
            return false
        case PCRE2_ERROR_MATCHLIMIT, PCRE2_ERROR_DEPTHLIMIT, PCRE2_ERROR_HEAPLIMIT, PCRE2_ERROR_JIT_STACKLIMIT:
            throw TextError(
                kind: .regexLimitExceeded,
                message: "regular expression '\(pattern)' gave up: \(Self.message(for: rc))")
        default:
            throw TextError(
                kind: .invalidRegex,
                message: "regular expression '\(pattern)' failed: \(Self.message(for: rc))")
        }
    }

    private static func message(for errorCode: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBufferPointer {
            pcre2_get_error_message_8(errorCode, $0.baseAddress, $0.count)
        }
        guard length > 0 else { return "pcre2 error \(errorCode)" }
        return String(decoding: buffer[0..<Int(length)], as: UTF8.self)
    }

    // MARK: Cache

    /// Keyed by the pattern's bytes, not `String` equality: canonically equivalent patterns can
    /// match differently (PCRE2 sees scalars), so they must not share an entry.
    private struct CacheKey: Hashable {
        var pattern: String
        var mode: FoldMode

        static func == (a: CacheKey, b: CacheKey) -> Bool {
            a.mode == b.mode && a.pattern.utf8.elementsEqual(b.pattern.utf8)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(pattern.utf8.count)
            for byte in pattern.utf8 { hasher.combine(byte) }
            switch mode {
            case .literal: hasher.combine(0)
            case .canonical: hasher.combine(1)
            case .folded(let c, let d):
                hasher.combine(2)
                hasher.combine(c)
                hasher.combine(d)
            }
        }
    }

    private struct CacheState {
        var entries: [CacheKey: RegexPattern] = [:]
        /// Insertion order, oldest first, for eviction.
        var order: [CacheKey] = []

        mutating func insert(_ key: CacheKey, _ value: RegexPattern) {
            if order.count >= RegexPattern.cacheCapacity {
                entries[order.removeFirst()] = nil
            }
            entries[key] = value
            order.append(key)
        }
    }

    /// The cache behind a pthread mutex (`NSLock`) rather than `Synchronization.Mutex`: on Linux
    /// the latter is built on futexes that ThreadSanitizer cannot see, so every cache access would
    /// be reported as a race in the sanitizer runs, ours and our users'.
    private static let cache = LockedCache()

    private final class LockedCache: @unchecked Sendable {
        private let lock = NSLock()
        private var state = CacheState()

        func withLock<R>(_ body: (inout CacheState) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&state)
        }
    }
}
