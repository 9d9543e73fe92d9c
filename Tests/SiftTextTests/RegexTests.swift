// MATCHES: PCRE2 flags, whole-string matching, options, errors, limits, the cache and concurrent use.

import Dispatch
import Synchronization
import Testing

@testable import SiftText

private func matches(_ s: String, _ pattern: String, _ options: TextOptions = []) throws -> Bool {
    try RegexPattern.compile(pattern, options).matches(s)
}

@Test func regexExamples() throws {
    #expect(try matches("hello", "hel{2}o"))
    #expect(try matches("heo", "he[l]*o"))
    #expect(try !matches("abc", "b"))
    #expect(try matches("abc", ".b."))
    #expect(try !matches("ABC", "abc"))
    #expect(try matches("ABC", "abc", .caseInsensitive))
    #expect(try matches("a\nb", "a.b"))
    #expect(try matches("Ä", "\\p{Lu}"))
    #expect(try !matches("ä", "\\p{Lu}"))
    #expect(try matches("日本", "\\w\\w"))  // UCP: \w is Unicode-aware
}

@Test func wholeStringIncludingAlternation() throws {
    #expect(try matches("ab", "a|ab"))
    #expect(try !matches("abc", "a|ab"))
    #expect(try !matches("xa", "a"))
    #expect(try !matches("hello\n", "hello"))
    #expect(try matches("one\ntwo", "one$\n^two"))  // MULTILINE
}

@Test func emptyPatternNeverMatches() throws {
    #expect(try !matches("", ""))
    #expect(try !matches("a", ""))
    #expect(try matches("", "a*"))
    // Foundation keeps a lone leading mark under [d] (there is no base to strip it from).
    #expect(try !matches("", "\u{301}", .diacriticInsensitive))
    #expect(try matches("\u{301}", "\u{301}", .diacriticInsensitive))
    #expect(try !matches("a", "\u{301}", .diacriticInsensitive))
}

@Test func regexOptions() throws {
    #expect(try matches("José", "jose", [.caseInsensitive, .diacriticInsensitive]))
    #expect(try matches("José", "Jose", .diacriticInsensitive))
    #expect(try matches("Jose", "José", .diacriticInsensitive))
    #expect(try !matches("José", "Jose", []))
    #expect(try !matches("ABC", "abc", [.normalized, .caseInsensitive]))
    #expect(try matches("ΣΑΣ", "σας", .caseInsensitive))
    #expect(try matches("ABC", "abc", [.caseInsensitive, .localeSensitive]))
}

@Test func invalidRegexReportsPCRE2Message() {
    do {
        _ = try RegexPattern.compile("a(", [])
        Issue.record("no error")
    } catch {
        #expect(error.kind == .invalidRegex)
        #expect(error.kind.rawValue == "invalid-regex")
        #expect(error.message == "invalid regular expression 'a(' at offset 2: missing closing parenthesis")
    }
    #expect(throws: TextError.self) { try RegexPattern.compile("[z-a]", []) }
    #expect(throws: TextError.self) { try RegexPattern.compile("*", .caseInsensitive) }
}

@Test func catastrophicBacktrackingHitsTheLimit() throws {
    let pattern = try RegexPattern.compile("(a+)+$", [])
    #expect(try pattern.matches("aaaa"))
    do {
        _ = try pattern.matches(String(repeating: "a", count: 32) + "!")
        Issue.record("no error")
    } catch {
        #expect(error.kind == .regexLimitExceeded)
        #expect(error.kind.rawValue == "regex-limit")
        #expect(error.message.hasPrefix("regular expression '(a+)+$' gave up: "))
    }
}

@Test func compiledPatternsAreCached() throws {
    let a = try RegexPattern.compile("ca(che)?d", [])
    let b = try RegexPattern.compile("ca(che)?d", [])
    #expect(a === b)
    let caseless = try RegexPattern.compile("ca(che)?d", .caseInsensitive)
    #expect(a !== caseless)
    #expect(try caseless.matches("CACHED"))
    #expect(try !a.matches("CACHED"))
    // Canonically equivalent but different scalars: separate entries.
    let pre = try RegexPattern.compile("\u{E9}", [])
    let de = try RegexPattern.compile("e\u{301}", [])
    #expect(pre !== de)
    #expect(try pre.matches("\u{E9}"))
    #expect(try !pre.matches("e\u{301}"))
}

@Test func cacheStaysBounded() throws {
    let first = try RegexPattern.compile("evict-me-\\d", [])
    for i in 0..<(RegexPattern.cacheCapacity + 10) {
        _ = try RegexPattern.compile("filler\(i)x*", [])
    }
    // The first entry was pushed out; a fresh compile yields a working, new instance.
    let again = try RegexPattern.compile("evict-me-\\d", [])
    #expect(first !== again)
    #expect(try again.matches("evict-me-7"))
    #expect(try first.matches("evict-me-7"))  // the old instance stays valid for its holders
}

@Test func concurrentMatching() throws {
    let pattern = try RegexPattern.compile("(\\w+)@(\\w+)\\.com", .caseInsensitive)
    let subjects = (0..<64).map { $0 % 2 == 0 ? "user\($0)@Example.COM" : "user\($0) at example.com" }
    let results = Mutex<[Bool]>([])
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
        var ok = true
        for round in 0..<200 {
            for (i, subject) in subjects.enumerated() {
                // Half the work goes through the cache so lookups and inserts race too.
                let p = round % 2 == 0 ? pattern : (try? RegexPattern.compile("(\\w+)@(\\w+)\\.com", .caseInsensitive))
                let matched = (try? p?.matches(subject)) ?? nil
                if matched != (i % 2 == 0) { ok = false }
            }
            if (try? RegexPattern.compile("w\(worker)r\(round % 5)", []).matches("w\(worker)r\(round % 5)")) != true {
                ok = false
            }
        }
        results.withLock { $0.append(ok) }
    }
    #expect(results.withLock { $0 } == Array(repeating: true, count: 8))
}
