// Decimal literals with a fraction take an exact fast path in the lexer; it must agree with
// Double(String) (correct rounding) bit for bit.
import Testing
import SiftTestSupport
@testable import SiftSyntax

@Suite struct NumberLiteralTests {
    private func parsedDouble(_ literal: String) throws -> Double? {
        let e = try ExpressionSyntax.parse(literal)
        guard case .constant(.double(let d)) = e.kind else { return nil }
        return d
    }

    @Test func fractionsMatchDoubleParsing() throws {
        var rng = SplitMix64(seed: 0x5EED_D0B1E)
        var samples = ["0.1", "0.2", "0.3", "10.5", "0.25", "4.5", "007.50", "9007199254740993.0",
                       "9007199254740992.5", "123456789012345.678", "0.0000000000000000000001",
                       "0.00000000000000000000001", "1.7976931348623157", "2.2250738585072014"]
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
}
