import Foundation

/// What each identityctl command takes, declared once: its words, how many positional
/// arguments, and its flags. Checked before a command runs, so a mistyped flag is an error, not
/// a silent no-op (a mistyped security setting would otherwise leave it as it was): an unknown
/// flag, a flag without its value or an extra argument exits 2 with the nearest flag the command
/// takes; `--help` (or `-h`) anywhere prints the usage and exits 0.
enum CommandLineRules {
    enum Kind { case value, repeated, present }

    struct Command {
        let words: [String]
        let positionals: Int
        let flags: [String: Kind]
    }

    static let appsSettingsFlags: [String: Kind] = {
        let values = ["access-token-ttl", "google-client-ids", "apple-bundle-ids", "apple-services-ids", "apple-team-id",
                      "apple-key-id", "apple-private-key-file", "firebase-project-id", "firebase-trust-email-verified",
                      "deep-link-url", "mail-from-name", "mail-from-address", "default-locale", "apns-team-id", "apns-key-id", "apns-topic",
                      "apns-private-key-file", "fcm-service-account-file", "security-alerts", "webauthn-rp-id",
                      "webauthn-origins", "webauthn-rp-name", "webauthn-require-uv", "sms-allowed-calling-codes",
                      "sms-breaker-hourly", "sms-api-url", "sms-account-sid", "sms-auth-token-file", "sms-from",
                      "sms-messaging-service-sid", "session-lifetime", "session-idle-timeout", "session-end-proof", "jwks-cache-seconds",
                      "default-metadata", "profile", "domains", "path-prefix", "allowed-origins", "apple-nonce",
                      "failed-sign-in-audit-threshold"]
        var flags = Dictionary(uniqueKeysWithValues: values.map { ("--" + $0, Kind.value) })
        flags["--mail-template"] = .repeated
        flags["--rate-limit"] = .repeated
        return flags
    }()

    static let commands: [Command] = [
        Command(words: ["migrate"], positionals: 0, flags: [:]),
        Command(words: ["apps", "create"], positionals: 0, flags: ["--name": .value, "--access-token-ttl": .value, "--alg": .value]),
        Command(words: ["apps", "list"], positionals: 0, flags: [:]),
        Command(words: ["apps", "settings"], positionals: 1, flags: appsSettingsFlags),
        Command(words: ["apps", "domains"], positionals: 3, flags: [:]),
        Command(words: ["apps", "rotate-secret-key"], positionals: 1, flags: ["--overlap": .value]),
        Command(words: ["keys", "rotate"], positionals: 1, flags: ["--alg": .value]),
        Command(words: ["keys", "list"], positionals: 1, flags: [:]),
        Command(words: ["keys", "mail-payload-key"], positionals: 0, flags: [:]),
        Command(words: ["keys", "push-credential-key"], positionals: 0, flags: [:]),
        Command(words: ["keys", "reseal"], positionals: 0, flags: [:]),
        Command(words: ["hooks", "set"], positionals: 2,
                flags: ["--url": .value, "--timeout-ms": .value, "--failure-policy": .value, "--rotate-secret": .present]),
        Command(words: ["hooks", "list"], positionals: 1, flags: [:]),
        Command(words: ["hooks", "delete"], positionals: 2, flags: [:]),
        Command(words: ["keys", "webhook-secret-key"], positionals: 0, flags: [:]),
        Command(words: ["console", "init"], positionals: 0, flags: ["--origin": .value, "--name": .value, "--require-mfa": .value]),
        Command(words: ["console", "require-mfa"], positionals: 1, flags: [:]),
        Command(words: ["console", "invite"], positionals: 0, flags: ["--app": .value, "--email": .value, "--role": .value]),
        Command(words: ["webhooks", "list"], positionals: 1, flags: [:]),
        Command(words: ["webhooks", "create"], positionals: 1,
                flags: ["--url": .value, "--events": .value, "--description": .value]),
        Command(words: ["webhooks", "delete"], positionals: 2, flags: [:]),
        Command(words: ["webhooks", "rotate-secret"], positionals: 2, flags: ["--overlap": .value]),
        Command(words: ["users", "import"], positionals: 2, flags: ["--allow-weak-hashes": .present]),
        Command(words: ["mail", "replay-dead"], positionals: 0, flags: ["--channel": .value]),
        Command(words: ["phone", "normalize"], positionals: 0, flags: [:]),
        Command(words: ["bench"], positionals: 1, flags: ["--seconds": .value, "--threads": .value, "--concurrency": .value]),
    ]

    /// Nil when `arguments` are a command's words, arguments and flags as it takes them; else
    /// what is wrong. `--help` is answered before this is asked.
    static func problem(with arguments: [String]) -> String? {
        guard let command = commands.first(where: { Array(arguments.prefix($0.words.count)) == $0.words }) else {
            let known = commands.map { $0.words.joined(separator: " ") }
            let given = arguments.prefix(2).joined(separator: " ")
            return "unknown command \(given.isEmpty ? "(none)" : given)" + suggestion(given, among: known)
        }
        let name = command.words.joined(separator: " ")
        var positionals = 0
        var index = command.words.count
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                positionals += 1
                if positionals > command.positionals { return "\(name): unexpected argument \(argument)" }
                continue
            }
            guard let kind = command.flags[argument] else {
                let equals = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                if equals != argument, command.flags[equals] != nil { return "\(name): write \(equals) VALUE, not \(argument)" }
                return "\(name): unknown flag \(argument)" + suggestion(argument, among: Array(command.flags.keys))
            }
            if kind == .present { continue }
            guard index < arguments.count, !arguments[index].hasPrefix("--") else { return "\(name): \(argument) needs a value" }
            index += 1
        }
        return nil
    }

    static func wantsHelp(_ arguments: [String]) -> Bool {
        arguments.contains("--help") || arguments.contains("-h") || arguments.first == "help"
    }

    /// ", did you mean X?" for the nearest of `candidates` within a few edits, else "".
    static func suggestion(_ given: String, among candidates: [String]) -> String {
        var best: (name: String, edits: Int)?
        for candidate in candidates.sorted() {
            let edits = distance(given, candidate)
            if best == nil || edits < best!.edits { best = (candidate, edits) }
        }
        guard let best, best.edits <= max(2, given.count / 3) else { return "" }
        return " (did you mean \(best.name)?)"
    }

    /// Levenshtein distance between two strings, by characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}
