import Foundation

/// Reads `IDENTITY_*` variables for an executable's typed configuration, collecting every
/// problem so start-up can fail once with a message that names them all.
public struct EnvironmentReader {
    public private(set) var problems: [String] = []
    private let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    /// Records a problem found by a caller's own check.
    public mutating func fail(_ problem: String) { problems.append(problem) }

    public func raw(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    public func string(_ name: String, default fallback: String) -> String {
        raw(name) ?? fallback
    }

    public mutating func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
        guard let text = raw(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            problems.append("\(name)=\(text) must be an integer in \(range.lowerBound)...\(range.upperBound)")
            return fallback
        }
        return value
    }

    /// A secret (a key, a password, a URL with a password in it) in `name`, or in the file named
    /// by `<name>_FILE` (a secrets mount: the value then appears in no process listing or
    /// environment dump), surrounding whitespace and the final newline trimmed. Both set is a
    /// problem, not a choice: the one meant to win would be a guess, and a stale variable left
    /// beside a rotated file would silently keep the old secret. So is a file that cannot be read
    /// or holds nothing: an empty secret is never what a mount meant.
    public mutating func secret(_ name: String) -> String? {
        let fileVariable = name + "_FILE"
        guard let path = raw(fileVariable) else { return raw(name) }
        if raw(name) != nil {
            problems.append("\(name) and \(fileVariable) are both set: set only one (the file keeps the secret out of the environment)")
            return nil
        }
        let text: String
        switch Self.readText(path) {
        case .success(let read): text = read
        case .failure(let unreadable):
            problems.append("\(fileVariable)=\(path) cannot be read (\(unreadable.reason))")
            return nil
        }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if value.isEmpty {
            problems.append("\(fileVariable)=\(path) is empty")
            return nil
        }
        return value
    }

    struct Unreadable: Error { let reason: String }

    /// The whole file as UTF-8 text, or why not in a few words (the system's, for a failed open).
    static func readText(_ path: String) -> Result<String, Unreadable> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Unreadable(reason: String(cString: strerror(errno)))) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(Unreadable(reason: String(cString: strerror(errno)))) }
        guard status.st_mode & S_IFMT != S_IFDIR else { return .failure(Unreadable(reason: "a directory, not a file")) }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            return .failure(Unreadable(reason: "read failed"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return .failure(Unreadable(reason: "not UTF-8 text"))
        }
        return .success(text)
    }

    /// A secret (`secret(_:)`) with a default when neither `name` nor `<name>_FILE` is set.
    public mutating func secret(_ name: String, default fallback: String) -> String {
        secret(name) ?? fallback
    }

    /// A 32-byte key given as 64 hex characters (the master key, a sub-key), in `name` or in the
    /// file named by `<name>_FILE`. A key no random generator would make (all one byte, a short
    /// pattern, a counting sequence: `KeyEntropy`) is refused.
    public mutating func key32(_ name: String, required: Bool) -> [UInt8]? {
        let problemsBefore = problems.count
        guard let text = secret(name) else {
            if required && problems.count == problemsBefore {
                problems.append("\(name) is required (64 hex characters: openssl rand -hex 32)")
            }
            return nil
        }
        guard let bytes = Hex.decode(text), bytes.count == 32 else {
            problems.append("\(name) must be 64 hex characters (32 bytes)")
            return nil
        }
        if let weakness = KeyEntropy.weakness(of: bytes) {
            problems.append("\(name) is not a random key (\(weakness)): make one with openssl rand -hex 32")
            return nil
        }
        return bytes
    }

    /// Ends the process with every problem listed, when there is any.
    public func validateOrExit(program: String) {
        guard !problems.isEmpty else { return }
        // In JSON mode the refusal is a log line too, so a shipper reads every line the same way.
        if Log.currentFormat == .json {
            Log.error("\(program): invalid configuration", ["problems": problems.joined(separator: "; ")])
            exit(2)
        }
        FileHandle.standardError.write(Data(("\(program): invalid configuration:\n" +
            problems.map { "  - \($0)\n" }.joined()).utf8))
        exit(2)
    }
}

/// Settings every process shares: where the store and the broker are.
public struct CommonConfiguration: Sendable {
    public var databaseURL: String
    public var databasePoolSize: Int
    public var amqpURL: String
    /// Heartbeat interval every AMQP connection asks the broker for (the broker may lower it).
    public var amqpHeartbeatSeconds: Int
    /// `IDENTITY_AMQP_QUEUE_TYPE`: quorum (default: replicated over a cluster) or classic (one
    /// dev node, cheaper); see `QueueDeclaration`.
    public var amqpQueueType: QueueDeclaration.QueueType
    /// `IDENTITY_AMQP_DELIVERY_LIMIT`: deliveries of one command before it is dead-lettered.
    public var amqpDeliveryLimit: Int
    public var logLevel: LogLevel
    /// `IDENTITY_LOG_FORMAT`: logfmt (default) or json.
    public var logFormat: LogFormat
    /// `IDENTITY_METRICS_PORT`: the operations listener (`/metrics`, `/healthz`, `/readyz`);
    /// nil (unset or 0) runs none.
    public var metricsPort: UInt16?
    /// `IDENTITY_METRICS_HOST`: the address it binds (a pod's 0.0.0.0, or loopback on a host).
    public var metricsHost: String
    /// `IDENTITY_METRICS_PER_APP`: an `app` label on per-request metrics (one series per app:
    /// off by default, for cardinality).
    public var metricsPerApp: Bool
    /// `IDENTITY_ALLOW_PRIVATE_OUTBOUND`, `IDENTITY_ALLOW_INSECURE_OUTBOUND`: where URLs that
    /// apps set may lead (`OutboundAddressPolicy`).
    public var outboundAddresses: OutboundAddressPolicy

    /// No built-in store or broker address: a process that fell back to one would log in as
    /// whatever account answers there (the broker's `guest`, a database role trusted without a
    /// password), so each is required. `needsBroker` false (identityctl, whose bus commands
    /// check it themselves): the broker's URL may be left out and is then "".
    public init(reading env: inout EnvironmentReader, defaultPoolSize: Int, needsBroker: Bool = true) {
        var before = env.problems.count
        databaseURL = Self.required(env.secret("IDENTITY_DATABASE_URL"), "IDENTITY_DATABASE_URL", problemsBefore: before,
                                    reading: &env, example: "postgresql://identity_gateway:…@db.internal:5432/identity")
        databasePoolSize = env.int("IDENTITY_DB_POOL_SIZE", default: defaultPoolSize, range: 1...200)
        before = env.problems.count
        let broker = env.secret("IDENTITY_AMQP_URL")
        amqpURL = needsBroker
            ? Self.required(broker, "IDENTITY_AMQP_URL", problemsBefore: before, reading: &env,
                            example: "amqp://identity-gateway:…@mq.internal:5672/identity")
            : broker ?? ""
        amqpHeartbeatSeconds = env.int("IDENTITY_AMQP_HEARTBEAT_SECONDS", default: 30, range: 1...600)
        let queueType = env.string("IDENTITY_AMQP_QUEUE_TYPE", default: "quorum")
        if let parsed = QueueDeclaration.QueueType(rawValue: queueType) {
            amqpQueueType = parsed
        } else {
            env.fail("IDENTITY_AMQP_QUEUE_TYPE=\(queueType) must be quorum or classic")
            amqpQueueType = .quorum
        }
        amqpDeliveryLimit = env.int("IDENTITY_AMQP_DELIVERY_LIMIT", default: 5, range: 1...1000)
        (logLevel, logFormat) = Self.logSettings(reading: &env)
        let port = env.int("IDENTITY_METRICS_PORT", default: 0, range: 0...65_535)
        metricsPort = port == 0 ? nil : UInt16(port)
        metricsHost = env.string("IDENTITY_METRICS_HOST", default: "127.0.0.1")
        let perApp = env.string("IDENTITY_METRICS_PER_APP", default: "0")
        metricsPerApp = ["1", "true", "on", "yes"].contains(perApp.lowercased())
        outboundAddresses = env.outboundAddressPolicy()
    }

    /// A URL with credentials that has no default: a problem names it and how it looks.
    private static func required(_ value: String?, _ name: String, problemsBefore: Int, reading env: inout EnvironmentReader,
                                 example: String) -> String {
        guard let value else {
            // Unless reading it already failed (an unreadable `_FILE`), which says more.
            if env.problems.count == problemsBefore { env.fail("\(name) (or \(name)_FILE) is required, e.g. \(example)") }
            return ""
        }
        return value
    }

    /// `IDENTITY_LOG_LEVEL` (info by default) and `IDENTITY_LOG_FORMAT` (logfmt by default).
    static func logSettings(reading env: inout EnvironmentReader) -> (LogLevel, LogFormat) {
        let levelText = env.string("IDENTITY_LOG_LEVEL", default: "info")
        let level = LogLevel(rawValue: levelText)
        if level == nil { env.fail("IDENTITY_LOG_LEVEL=\(levelText) must be debug, info, warning or error") }
        let formatText = env.string("IDENTITY_LOG_FORMAT", default: "logfmt")
        let format = LogFormat(rawValue: formatText)
        if format == nil { env.fail("IDENTITY_LOG_FORMAT=\(formatText) must be logfmt or json") }
        return (level ?? .info, format ?? .logfmt)
    }

    /// Applies the log level and format before anything else is read: reading the rest of the
    /// configuration may log (a warning about a setting), and that line must already be in the
    /// chosen format. An invalid value is reported with the other problems when the whole
    /// configuration is read.
    public static func applyLogSettingsFromEnvironment(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        var env = EnvironmentReader(values)
        let (level, format) = logSettings(reading: &env)
        Log.setLevel(level)
        Log.setFormat(format)
    }

    /// Applies what the process-wide parts take from here: log level and format, metric labels,
    /// the outbound address policy.
    public func applyToProcess() {
        Log.setLevel(logLevel)
        Log.setFormat(logFormat)
        QueueDeclaration.setType(amqpQueueType)
        CommandConsumer.configuredDeliveryLimit.withLock { $0 = amqpDeliveryLimit }
        Metrics.shared.setPerApp(metricsPerApp)
        OutboundAddressPolicy.setCurrent(outboundAddresses)
    }
}

