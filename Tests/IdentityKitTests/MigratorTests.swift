import Foundation
import XCTest
@testable import IdentityKit

/// `identityctl migrate`'s rules, on a real database (`IDENTITY_TEST_DATABASE_URL`; skipped
/// without it). Each test works in a schema of its own (libpq's `options=-c search_path=…`), so
/// it starts from an empty database whatever else ran.
final class MigratorTests: XCTestCase {
    private var baseURL = ""
    private var schema = ""
    private var folder: URL!

    override func setUpWithError() throws {
        guard let url = ProcessInfo.processInfo.environment["IDENTITY_TEST_DATABASE_URL"], !url.isEmpty else {
            throw XCTSkip("IDENTITY_TEST_DATABASE_URL is unset: migrator tests need a PostgreSQL database")
        }
        baseURL = url
        schema = "migrator_" + Identifiers.nowULID()
        try PGPool(url: url, size: 1).withConnection { try $0.execute("CREATE SCHEMA \(schema)") }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(schema)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if !schema.isEmpty {
            try? PGPool(url: baseURL, size: 1).withConnection { try $0.execute("DROP SCHEMA \(schema) CASCADE") }
        }
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// In the test's own schema. Function bodies are not checked at creation (as pg_restore
    /// does): the migrations' SECURITY DEFINER functions pin `search_path = public`, where the
    /// tables they name may not exist in this database.
    private var pool: PGPool {
        PGPool(url: baseURL + (baseURL.contains("?") ? "&" : "?")
                   + "options=-csearch_path%3D\(schema)%20-ccheck_function_bodies%3Doff", size: 1)
    }

    private func write(_ name: String, _ sql: String, in directory: URL? = nil) throws {
        try sql.write(to: (directory ?? folder).appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func testAppliesInOrderOnceAndRefusesAnEditedAppliedFile() throws {
        try write("0001_a.sql", "CREATE TABLE a (x int);")
        try write("0002_b.sql", "CREATE TABLE b (y int);")
        XCTAssertEqual(try Migrator(pool: pool, directory: folder).migrate(), [1, 2])
        XCTAssertEqual(try Migrator(pool: pool, directory: folder).migrate(), [])
        let recorded = try pool.withConnection { try $0.query("SELECT checksum FROM schema_migrations ORDER BY version") }
        XCTAssertEqual(try recorded.map { try $0.string("checksum").count }, [64, 64])

        // An applied file edited: nothing runs, not even a new file, and the error names it.
        try write("0001_a.sql", "CREATE TABLE a (x int, z int);")
        try write("0003_c.sql", "CREATE TABLE c (w int);")
        XCTAssertThrowsError(try Migrator(pool: pool, directory: folder).migrate()) { error in
            guard let changed = error as? Migrator.ChangedMigration else { return XCTFail("\(error)") }
            XCTAssertEqual(changed.name, "0001_a.sql")
        }
        XCTAssertEqual(try pool.withConnection { try $0.query("SELECT to_regclass('c') IS NULL AS gone") }.first?.bool("gone") as Bool?,
                       true)
        try write("0001_a.sql", "CREATE TABLE a (x int);")
        XCTAssertEqual(try Migrator(pool: pool, directory: folder).migrate(), [3])
    }

    /// A database migrated before `0005_guests_devices.sql` gained `sessions.command_id` (and
    /// before checksums were kept) gets the column from 0007, and its old rows their checksums.
    func testADatabaseMigratedBeforeTheEditOf0005CatchesUp() throws {
        let real = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("migrations")
        let old = folder.appendingPathComponent("old")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        for name in ["0001_foundation.sql", "0002_outbox.sql", "0003_providers.sql", "0004_mail.sql"] {
            try write(name, try String(contentsOf: real.appendingPathComponent(name), encoding: .utf8), in: old)
        }
        let current0005 = try String(contentsOf: real.appendingPathComponent("0005_guests_devices.sql"), encoding: .utf8)
        let marker = try XCTUnwrap(current0005.range(of: "-- The command that started a session"))
        try write("0005_guests_devices.sql", String(current0005[..<marker.lowerBound]), in: old)
        XCTAssertEqual(try Migrator(pool: pool, directory: old).migrate(), [1, 2, 3, 4, 5])
        // As the migrator before checksums left it.
        try pool.withConnection { try $0.execute("UPDATE schema_migrations SET checksum = NULL") }
        // 0039 keeps the key as a hash (`command_key`): the column 0007 adds is the same one.
        let hasColumn = { (name: String) in
            try self.pool.withConnection {
                try $0.query("""
                    SELECT count(*) AS n FROM information_schema.columns
                    WHERE table_schema = '\(self.schema)' AND table_name = 'sessions' AND column_name = '\(name)'
                    """).first?.int("n")
            }
        }
        XCTAssertEqual(try hasColumn("command_id"), 0)

        let applied = try Migrator(pool: pool, directory: real).migrate()
        XCTAssertTrue(applied.contains(7), "\(applied)")
        XCTAssertFalse(applied.contains(5))
        XCTAssertEqual(try hasColumn("command_key"), 1)
        XCTAssertEqual(try pool.withConnection { try $0.query("SELECT count(*) AS n FROM schema_migrations WHERE checksum IS NULL") }
                        .first?.int("n"), 0)
    }
}
