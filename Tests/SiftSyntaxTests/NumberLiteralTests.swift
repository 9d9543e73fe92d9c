import SiftTestSupport
// Decimal literals with a fraction take an exact fast path in the lexer; it must agree with
// Double(String) (correct rounding) bit for bit.
import Testing

@testable import SiftSyntax

@Suite struct NumberLiteralTests {
    private func parsedDouble(_ literal: String) throws -> Double? {
        let e = try ExpressionSyntax.parse(literal)
        guard case .constant(.double(let d)) = e.kind else { return nil }
        return d
    }

    @Test func fractionsMatchDoubleParsing() throws {
        var rng = SplitMix64(seed: 0x5EED_D0B1E)
        var samples = [
            "0.1", "0.2", "0.3", "10.5", "0.25", "4.5", "007.50", "9007199254740993.0",
            "9007199254740992.5", "123456789012345.678", "0.0000000000000000000001",
            "0.00000000000000000000001", "1.7976931348623157", "2.2250738585072014",
        ]
        for _ in 0..<3000 {
            let intDigits = Int(rng.next() % 12)
            let fracDigits = 1 + Int(rng.next() % 24)
            var s = intDigits == 0 ? "0" : String(1 + rng.next() % 9)
            for _ in 1..<max(1, intDigits) { s += String(rng.next() % 10) }
            s += "."
            for _ in 0..<fracDigits { s += String(rng.next() % 10) }
            samples.append(s)
        }
        for s in samples {
            let d = try parsedDouble(s)
            #expect(d?.bitPattern == Double(s)!.bitPattern, "\(s)")
        }
    }

    /// Plain decimal integers take the lexer's fast path; the edges must read as before.
    @Test func integerEdgesReadAsBefore() throws {
        let cases: [(String, LiteralValue)] = [
            ("0", .integer(0)), ("18", .integer(18)), ("007", .integer(7)),
            ("9223372036854775807", .integer(.max)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)),
            ("9999999999999999999", .double(Double("9999999999999999999")!)),
            ("18446744073709551615", .double(Double("18446744073709551615")!)),
            ("18446744073709551616", .double(18_446_744_073_709_551_616)),
            ("123456789012345678901234", .double(Double("123456789012345678901234")!)),
            ("0x1F", .integer(31)), ("0b101", .integer(5)), ("0o17", .integer(15)),
            ("1e3", .double(1000)), ("2.5", .double(2.5)),
        ]
        for (text, expected) in cases {
            let e = try ExpressionSyntax.parse(text)
            #expect(e.kind == .constant(value: expected), "\(text)")
            let inList = try ExpressionSyntax.parse("{\(text), \(text)}")
            #expect(inList.kind == .constant(value: .array([expected, expected])), "\(text)")
        }
        for bad in ["12abc", "1_000", "1e", "0x", "99999999999999999999x"] {
            #expect(throws: SyntaxError.self, "\(bad)") { try ExpressionSyntax.parse(bad) }
        }
        // Strings: the fast path takes only literals without escapes.
        #expect(throws: SyntaxError.self) { try ExpressionSyntax.parse("\"unterminated") }
        #expect(try ExpressionSyntax.parse("\"a\\\"b\"").kind == .constant(value: .string("a\"b")))
    }
}
