// Checks that the linked SQLite is recent enough for the SQL Sift emits (IS / IS NOT between any
// values, NULLS FIRST/LAST, deterministic functions).

import SiftSQLite
import Testing

@Suite struct LibraryTests {
    @Test func linkedSQLiteIsAtLeast3_30() throws {
        let parts = SQLiteConnection.libraryVersion.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count >= 2)
        #expect(parts[0] > 3 || (parts[0] == 3 && parts[1] >= 30), "SQLite \(SQLiteConnection.libraryVersion)")
    }
}
