import Foundation

/// Applies the numbered SQL files of `migrations/` (`0001_name.sql`, …) in order, each in its
/// own transaction, under an advisory lock so two migrators cannot race. Applied files are
/// recorded in `schema_migrations` with their SHA-256 and never run twice. Landed files are
/// never edited: a file whose content differs from what was applied stops the run (a database
/// migrated before the edit would silently lack what the edit added). Rows recorded before
/// checksums existed take the file's current checksum on the next run.
public struct Migrator {
    /// An applied migration's file changed since it was applied.
    public struct ChangedMigration: Error, CustomStringConvertible {
        public let name: String
        public let applied: String
        public let current: String
        public var description: String {
            "\(name) changed after it was applied (sha256 \(applied.prefix(12))… then, \(current.prefix(12))… now): "
                + "landed migrations are never edited; restore it and add a new migration"
        }
    }

    let pool: PGPool
    let directory: URL

    public init(pool: PGPool, directory: URL) {
        self.pool = pool
        self.directory = directory
    }

    /// Returns the versions applied by this run.
    public func migrate() throws -> [Int] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
            .compactMap { name -> (Int, String)? in
                guard let version = Int(name.prefix { $0.isNumber }) else { return nil }
                return (version, name)
            }
            .sorted { $0.0 < $1.0 }
        return try pool.withConnection { connection in
            try connection.execute("SET client_min_messages = warning")
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            try connection.execute("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text")
            try connection.execute("SELECT pg_advisory_lock(727274)")
            defer { try? connection.execute("SELECT pg_advisory_unlock(727274)") }
            var applied: [Int: String?] = [:]
            for row in try connection.query("SELECT version, checksum FROM schema_migrations") {
                applied[try row.int("version")] = try row.optionalString("checksum")
            }
            var pending: [(Int, String, String, String)] = []
            for (version, name) in files {
                let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                let checksum = Hex.encode(Digest.sha256(sql))
                guard let recorded = applied[version] else {
                    pending.append((version, name, sql, checksum))
                    continue
                }
                if let recorded {
                    guard recorded == checksum else { throw ChangedMigration(name: name, applied: recorded, current: checksum) }
                } else {
                    try connection.query("UPDATE schema_migrations SET checksum = $2 WHERE version = $1",
                                         [String(version), checksum])
                }
            }
            var done: [Int] = []
            for (version, name, sql, checksum) in pending {
                try connection.execute("BEGIN")
                do {
                    try connection.execute(sql)
                    try connection.query("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                         [String(version), name, checksum])
                    try connection.execute("COMMIT")
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
                done.append(version)
            }
            return done
        }
    }
}
