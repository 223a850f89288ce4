import Foundation

/// Applies the numbered SQL files of `migrations/` (`0001_name.sql`, …) in order, each in its
/// own transaction, under an advisory lock so two migrators cannot race. Applied files are
/// recorded in `schema_migrations` and never run twice; landed files are never edited.
public struct Migrator {
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
            try connection.execute("SELECT pg_advisory_lock(727274)")
            defer { try? connection.execute("SELECT pg_advisory_unlock(727274)") }
            let applied = Set(try connection.query("SELECT version FROM schema_migrations").map { $0.int("version") })
            var done: [Int] = []
            for (version, name) in files where !applied.contains(version) {
                let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                try connection.execute("BEGIN")
                do {
                    try connection.execute(sql)
                    try connection.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                         [String(version), name])
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
