/// One environment variable a process of the service reads: its name, the processes that read
/// it, its default as an operator sees it, and what it means. `ConfigurationVariables.all` is
/// the one list of them: `tools/configdoc.py` writes docs/configuration.md's table from it, and
/// `ConfigurationVariablesTests` fails when a process reads a variable the list does not hold.
public struct ConfigurationVariable: Sendable, Equatable {
    /// The executables, named as they are installed.
    public enum Process: String, Sendable, CaseIterable {
        case gateway = "identity-gateway"
        case tokenWorker = "identity-token-worker"
        case providerWorker = "identity-provider-worker"
        case mailerWorker = "identity-mailer-worker"
        case revocationWorker = "identity-revocation-worker"
        case webhookWorker = "identity-webhook-worker"
        case identityctl = "identityctl"
    }

    public let name: String
    public let readBy: [Process]
    /// Markdown, as the table shows it: a literal default in backticks first, when there is one.
    public let defaultValue: String
    /// Markdown.
    public let meaning: String

    public init(_ name: String, read readBy: [Process], default defaultValue: String, meaning: String) {
        self.name = name
        self.readBy = readBy
        self.defaultValue = defaultValue
        self.meaning = meaning
    }
}

/// Every `IDENTITY_*` variable the executables read, in the order docs/configuration.md shows
/// them. Keep each entry in this exact shape (string literals joined with `+` at most):
/// tools/configdoc.py reads this file as text.
public enum ConfigurationVariables {
    public static func named(_ name: String) -> ConfigurationVariable? {
        all.first { $0.name == name }
    }

    public static let all: [ConfigurationVariable] = [
        // Store and broker: every process.
        ConfigurationVariable(
            "IDENTITY_DATABASE_URL",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "(required)",
            meaning: "libpq connection URL; each process gets its own role's (docs/architecture.md, "
                + "\"Database roles\"). Several hosts with `?target_session_attrs=read-write` "
                + "(`postgresql://u:p@db1:5432,db2:5432/identity?target_session_attrs=read-write`) "
                + "find a promoted standby without a restart"),
        ConfigurationVariable(
            "IDENTITY_DATABASE_URL_FILE",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "(unset)",
            meaning: "a file holding `IDENTITY_DATABASE_URL` (a secrets mount instead of the environment); "
                + "set one of the two, never both"),
        ConfigurationVariable(
            "IDENTITY_DB_POOL_SIZE",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "HTTP threads (gateway), concurrency (workers; +1 for the revocation worker's relay, +4 for the token worker's `before_sign_up` hooks)",
            meaning: "PostgreSQL connections per process (1–200)"),
        ConfigurationVariable(
            "IDENTITY_AMQP_URL",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "(required; identityctl: only for its bus commands)",
            meaning: "RabbitMQ URL (vhost URL-encoded), or the URLs of a cluster's nodes separated by "
                + "commas (failover); each process kind should log in as its own broker user"),
        ConfigurationVariable(
            "IDENTITY_AMQP_URL_FILE",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "(unset)",
            meaning: "a file holding `IDENTITY_AMQP_URL` (a secrets mount instead of the environment); "
                + "set one of the two, never both"),
        ConfigurationVariable(
            "IDENTITY_AMQP_HEARTBEAT_SECONDS",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`30`",
            meaning: "AMQP heartbeat interval each connection asks for (1–600; the broker may lower it, "
                + "and drops a connection silent for about two intervals)"),
        ConfigurationVariable(
            "IDENTITY_AMQP_QUEUE_TYPE",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`quorum`",
            meaning: "`quorum` (replicated; delivery limits) or `classic` (one dev node) for every durable "
                + "queue the process declares; an existing queue of the other type is replaced once empty "
                + "and unused"),
        ConfigurationVariable(
            "IDENTITY_AMQP_DELIVERY_LIMIT",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`5`",
            meaning: "failed deliveries of one command after which a worker dead-letters it "
                + "(`identity.<kind>.dead`, an error line, `identity_commands_dead_lettered_total`); "
                + "the broker's policy dead-letters at one more"),
        ConfigurationVariable(
            "IDENTITY_AMQP_TRUSTED_REPUBLISHERS",
            read: [.tokenWorker, .providerWorker, .mailerWorker, .revocationWorker],
            default: "`identity-gateway`",
            meaning: "broker users (comma-separated) whose `republished` header a worker believes (with "
                + "the broker's `user_id` check); the receiver's own user is always trusted"),
        ConfigurationVariable(
            "IDENTITY_AMQP_EVENT_PUBLISHERS",
            read: [.webhookWorker],
            default: "`identity-revocation-worker`",
            meaning: "broker users (comma-separated) whose events the webhook worker delivers (the outbox "
                + "relay's, checked by the broker as `user_id`); the worker's own user is always trusted, "
                + "any other publisher's event is dropped and counted"),
        // Logs, metrics and the outbound policy: every process.
        ConfigurationVariable(
            "IDENTITY_LOG_LEVEL",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`info`",
            meaning: "`debug`, `info`, `warning` or `error` (on stderr; secrets are never logged)"),
        ConfigurationVariable(
            "IDENTITY_LOG_FORMAT",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`logfmt`",
            meaning: "`logfmt` or `json` (one object per line); every line logged while handling a "
                + "request carries its `request_id`"),
        ConfigurationVariable(
            "IDENTITY_METRICS_PORT",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`0` (no listener)",
            meaning: "port of the operations listener: `/metrics`, `/healthz`, `/readyz`"),
        ConfigurationVariable(
            "IDENTITY_METRICS_HOST",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`127.0.0.1`",
            meaning: "IPv4 address the operations listener binds (`0.0.0.0` in a pod)"),
        ConfigurationVariable(
            "IDENTITY_METRICS_PER_APP",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`0`",
            meaning: "`1` adds an `app` label to the per-app metrics (one series per app: mind the "
                + "cardinality)"),
        ConfigurationVariable(
            "IDENTITY_ALLOW_PRIVATE_OUTBOUND",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`0`",
            meaning: "`1` lets URLs apps set reach loopback, private, link-local and metadata addresses "
                + "(tests' stand-ins); checked at save (gateway, token worker, identityctl) and at "
                + "connect (mailer); any value but `0` or `1` stops start-up"),
        ConfigurationVariable(
            "IDENTITY_ALLOW_INSECURE_OUTBOUND",
            read: [.gateway, .tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .webhookWorker,
                   .identityctl],
            default: "`0`",
            meaning: "`1` lets URLs apps set be plain `http://` (tests)"),
        // Keys.
        ConfigurationVariable(
            "IDENTITY_MASTER_KEY",
            read: [.tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .identityctl],
            default: "(required by the token, provider and revocation workers)",
            meaning: "64 hex characters (`openssl rand -hex 32`); seals private signing keys, Apple "
                + "`.p8` keys and Apple refresh tokens. Never given to the gateway; a mailer given it "
                + "derives its sub-keys from it, with a warning"),
        ConfigurationVariable(
            "IDENTITY_MASTER_KEY_FILE",
            read: [.tokenWorker, .providerWorker, .mailerWorker, .revocationWorker, .identityctl],
            default: "(unset)",
            meaning: "a file holding the master key (a secrets mount instead of the environment); set it "
                + "or `IDENTITY_MASTER_KEY`, never both"),
        // The webhook worker (docs/webhooks.md).
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_SECRET_KEY", read: [.webhookWorker], default: "(required)",
            meaning: "64 hex characters: the sub-key that opens the webhook endpoints' secrets "
                + "(`identityctl keys webhook-secret-key` prints it); never the master key"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_SECRET_KEY_FILE", read: [.webhookWorker], default: "(unset)",
            meaning: "a file holding `IDENTITY_WEBHOOK_SECRET_KEY`; set one of the two, never both"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_RETRY_SCHEDULE", read: [.webhookWorker], default: "`5s,5m,30m,2h,5h,10h,10h`",
            meaning: "delays between a delivery's attempts (`ms`, `s`, `m`, `h`); after the last, "
                + "dead-lettered (tests use seconds)"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_CONCURRENCY", read: [.webhookWorker], default: "`32`",
            meaning: "deliveries in flight at once, in all"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_APP_CONCURRENCY", read: [.webhookWorker], default: "`8`",
            meaning: "deliveries in flight at once for one app, whatever its number of endpoints: the "
                + "rest stays free for the other apps (at most `IDENTITY_WEBHOOK_CONCURRENCY`)"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_ENDPOINT_CONCURRENCY", read: [.webhookWorker], default: "`4`",
            meaning: "deliveries in flight at once to one endpoint: a slow endpoint holds at most these, "
                + "and one whose last attempt failed holds one (a probe) until an attempt succeeds"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_TIMEOUT_MS", read: [.webhookWorker], default: "`10000`",
            meaning: "per delivery attempt"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_POLL_MS", read: [.webhookWorker], default: "`200`",
            meaning: "how often the worker looks for deliveries that are due"),
        ConfigurationVariable(
            "IDENTITY_MAIL_PAYLOAD_KEY",
            read: [.mailerWorker],
            default: "(required unless `IDENTITY_MASTER_KEY` is given)",
            meaning: "64 hex characters: the sub-key that opens mail codes "
                + "(`identityctl keys mail-payload-key` prints it)"),
        ConfigurationVariable(
            "IDENTITY_MAIL_PAYLOAD_KEY_FILE",
            read: [.mailerWorker],
            default: "(unset)",
            meaning: "a file holding the mail payload key; set it or `IDENTITY_MAIL_PAYLOAD_KEY`, never both"),
        ConfigurationVariable(
            "IDENTITY_PUSH_CREDENTIAL_KEY",
            read: [.mailerWorker],
            default: "(unset: derived from `IDENTITY_MASTER_KEY` when given, else push is dead-lettered)",
            meaning: "64 hex characters: the sub-key that opens apps' APNs and FCM credentials "
                + "(`identityctl keys push-credential-key` prints it)"),
        ConfigurationVariable(
            "IDENTITY_PUSH_CREDENTIAL_KEY_FILE",
            read: [.mailerWorker],
            default: "(unset)",
            meaning: "a file holding the push credential key; set it or `IDENTITY_PUSH_CREDENTIAL_KEY`, "
                + "never both"),
        // The gateway.
        ConfigurationVariable(
            "IDENTITY_HTTP_HOST", read: [.gateway], default: "`127.0.0.1`",
            meaning: "address the public HTTP port listens on"),
        ConfigurationVariable(
            "IDENTITY_HTTP_PORT", read: [.gateway], default: "`8080`",
            meaning: "the public HTTP port"),
        ConfigurationVariable(
            "IDENTITY_HTTP_THREADS", read: [.gateway], default: "2 × cores (at least 2)",
            meaning: "HTTP thread pool (1–256)"),
        ConfigurationVariable(
            "IDENTITY_REQUEST_TIMEOUT_MS", read: [.gateway], default: "`5000`",
            meaning: "how long a request waits for a worker before 503 `auth/unavailable`; also how "
                + "long a starting gateway waits for the broker before opening its port anyway"),
        ConfigurationVariable(
            "IDENTITY_SHUTDOWN_GRACE_MS", read: [.gateway], default: "request timeout + 2000",
            meaning: "on SIGTERM, how long the gateway waits for the requests it has before answering "
                + "those still waiting for a worker 503 `auth/unavailable`"),
        ConfigurationVariable(
            "IDENTITY_PUBLIC_BASE_URL", read: [.gateway, .identityctl],
            default: "`http://127.0.0.1:8080` (the gateway: `http://127.0.0.1:<IDENTITY_HTTP_PORT>`)",
            meaning: "the service's public URL: base of each app's issuer (`<base>/v1/apps/<app_id>`), "
                + "fixed when `identityctl apps create` makes the app"),
        ConfigurationVariable(
            "IDENTITY_TRUSTED_PROXIES", read: [.gateway], default: "(none)",
            meaning: "comma-separated CIDR ranges, IPv4 or IPv6 (`10.0.0.0/8, fd00::/8`), of the proxies "
                + "whose `X-Forwarded-For` is believed and which are exempt from the per-IP connection "
                + "limit; an invalid entry stops start-up"),
        ConfigurationVariable(
            "IDENTITY_HTTP_MAX_CONNECTIONS", read: [.gateway], default: "`4096`",
            meaning: "open connections in all; the open-files soft limit is raised to fit (lowered with "
                + "a warning when the hard limit is too low)"),
        ConfigurationVariable(
            "IDENTITY_HTTP_MAX_CONNECTIONS_PER_IP", read: [.gateway], default: "`64`",
            meaning: "open connections per socket peer; more are closed at once (trusted proxies "
                + "exempt)"),
        ConfigurationVariable(
            "IDENTITY_HTTP_HEADER_TIMEOUT_SECONDS", read: [.gateway], default: "`10`",
            meaning: "the whole header block must arrive within this of accept, or of the previous "
                + "response on a keep-alive connection; also the idle timeout"),
        ConfigurationVariable(
            "IDENTITY_HTTP_BODY_TIMEOUT_SECONDS", read: [.gateway], default: "`30`",
            meaning: "the whole body must arrive within this of the end of the headers"),
        // Every worker.
        ConfigurationVariable(
            "IDENTITY_WORKER_CONCURRENCY",
            read: [.tokenWorker, .providerWorker, .mailerWorker, .revocationWorker],
            default: "2 × cores, at least 2 (mailer: `4`)",
            meaning: "commands in flight (the broker prefetch)"),
        // Apps' auth hooks (docs/hooks.md, "A slow or dead hook costs only its own app").
        ConfigurationVariable(
            "IDENTITY_HOOK_APP_CONCURRENCY", read: [.tokenWorker, .mailerWorker], default: "`16`",
            meaning: "calls to one app's auth hooks waiting at once in a worker; as many more may wait for "
                + "one of them to end (within their caller's time), and one beyond fails at once (the hook's "
                + "failure policy applies)"),
        ConfigurationVariable(
            "IDENTITY_HOOK_CONCURRENCY", read: [.tokenWorker, .mailerWorker], default: "`64`",
            meaning: "calls to auth hooks made or waiting for a spot at once in a worker, in all; each waits "
                + "without its worker slot (the broker prefetch is `IDENTITY_WORKER_CONCURRENCY` plus this)"),
        ConfigurationVariable(
            "IDENTITY_HOOK_BREAKER_FAILURES", read: [.tokenWorker, .mailerWorker], default: "`5`",
            meaning: "failures in a row of one app's hook after which it is not called for "
                + "`IDENTITY_HOOK_BREAKER_SECONDS` (its failure policy applies at once)"),
        ConfigurationVariable(
            "IDENTITY_HOOK_BREAKER_SECONDS", read: [.tokenWorker, .mailerWorker], default: "`30`",
            meaning: "how long an open breaker skips the hook before one call probes it again"),
        // The token worker.
        ConfigurationVariable(
            "IDENTITY_PASSWORD_HASH_CONCURRENCY", read: [.tokenWorker], default: "cores",
            meaning: "Argon2id hashes and checks at once; other sign-ins wait their turn (more than the "
                + "cores costs throughput: docs/performance.md). Each slot keeps its Argon2id memory mapped "
                + "between hashes, so the token worker holds this many times `IDENTITY_ARGON2_MEMORY_KIB` resident"),
        ConfigurationVariable(
            "IDENTITY_ARGON2_MEMORY_KIB", read: [.tokenWorker, .identityctl], default: "`19456`",
            meaning: "Argon2id memory (the OWASP minimum; tests use 1024)"),
        ConfigurationVariable(
            "IDENTITY_ARGON2_ITERATIONS", read: [.tokenWorker, .identityctl], default: "`2`",
            meaning: "Argon2id passes (tests use 1)"),
        ConfigurationVariable(
            "IDENTITY_ARGON2_PARALLELISM", read: [.tokenWorker, .identityctl], default: "`1`",
            meaning: "Argon2id lanes (libsodium hashes with one lane; above 1 the hash is made by "
                + "libargon2, and every hash verifies through libsodium)"),
        ConfigurationVariable(
            "IDENTITY_REFRESH_TOKEN_TTL_SECONDS", read: [.tokenWorker], default: "`7776000` (90 days)",
            meaning: "a refresh token unused this long expires (`auth/refresh-token-expired`)"),
        ConfigurationVariable(
            "IDENTITY_REFRESH_GRACE_SECONDS", read: [.tokenWorker], default: "`30`",
            meaning: "a spent refresh token presented again within this gets the same successor; later "
                + "it is theft and ends the session"),
        ConfigurationVariable(
            "IDENTITY_CODE_TTL_SECONDS", read: [.tokenWorker], default: "`600`",
            meaning: "lifetime of mailed and texted codes"),
        ConfigurationVariable(
            "IDENTITY_EMAIL_VERIFICATION_COOLDOWN_SECONDS", read: [.tokenWorker], default: "`60`",
            meaning: "at most one verification mail per user this often (429 otherwise)"),
        ConfigurationVariable(
            "IDENTITY_RATE_LIMIT_CEILINGS", read: [.tokenWorker, .identityctl], default: "10× each default",
            meaning: "`NAME=COUNT/WINDOW,…` or `NAME=none`: the most a tenant's own limit (admin API, "
                + "`identityctl apps settings`) may be set to"),
        ConfigurationVariable(
            "IDENTITY_SMS_SHARED_CALLING_CODES", read: [.tokenWorker, .identityctl], default: "(none)",
            meaning: "calling codes (e.g. `1,33,44`) an app without its own SMS account may text on the "
                + "operator's; others are refused at save (422) and at send (answered like a send)"),
        // The provider worker (and Apple's endpoints for the revocation worker).
        ConfigurationVariable(
            "IDENTITY_APPLE_JWKS_URL", read: [.providerWorker],
            default: "`https://appleid.apple.com/auth/keys`",
            meaning: "Apple's signing keys"),
        ConfigurationVariable(
            "IDENTITY_APPLE_TOKEN_URL", read: [.providerWorker, .revocationWorker],
            default: "`https://appleid.apple.com/auth/token`",
            meaning: "Apple's authorization-code exchange"),
        ConfigurationVariable(
            "IDENTITY_APPLE_REVOKE_URL", read: [.providerWorker, .revocationWorker],
            default: "`https://appleid.apple.com/auth/revoke`",
            meaning: "Apple's token revocation"),
        ConfigurationVariable(
            "IDENTITY_GOOGLE_JWKS_URL", read: [.providerWorker],
            default: "`https://www.googleapis.com/oauth2/v3/certs`",
            meaning: "Google's signing keys"),
        ConfigurationVariable(
            "IDENTITY_FIREBASE_JWKS_URL", read: [.providerWorker],
            default: "`https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`",
            meaning: "Firebase's signing keys"),
        ConfigurationVariable(
            "IDENTITY_ALLOW_INSECURE_PROVIDER_URLS", read: [.providerWorker, .revocationWorker],
            default: "(unset)",
            meaning: "`1` lets the provider URLs above be plain `http://` (tests' stand-ins); otherwise "
                + "each must be `https://` or the process refuses to start"),
        ConfigurationVariable(
            "IDENTITY_JWKS_REFETCH_INTERVAL_SECONDS", read: [.providerWorker], default: "`60`",
            meaning: "an unknown `kid` refetches a JWKS at most this often"),
        ConfigurationVariable(
            "IDENTITY_JWKS_MAX_STALENESS_SECONDS", read: [.providerWorker], default: "`86400`",
            meaning: "cached provider keys are trusted while the provider is unreachable only this long "
                + "after the last successful fetch; then 503 `auth/provider-unavailable`"),
        ConfigurationVariable(
            "IDENTITY_NONCE_TTL_SECONDS", read: [.providerWorker], default: "`300`",
            meaning: "lifetime of a nonce from `GET /v1/auth/nonce`"),
        ConfigurationVariable(
            "IDENTITY_OUTBOUND_TIMEOUT_MS", read: [.providerWorker, .revocationWorker], default: "`5000`",
            meaning: "timeout of each call to a provider"),
        // The mailer worker.
        ConfigurationVariable(
            "IDENTITY_MAILER_CHANNELS", read: [.mailerWorker], default: "`email,push,sms`",
            meaning: "the channels (queues) this worker consumes, to scale them apart"),
        ConfigurationVariable(
            "IDENTITY_SMTP_HOST", read: [.mailerWorker], default: "(unset: `.eml` files)",
            meaning: "SMTP relay host"),
        ConfigurationVariable(
            "IDENTITY_SMTP_PORT", read: [.mailerWorker], default: "`587` (`465` with implicit TLS)",
            meaning: "SMTP port"),
        ConfigurationVariable(
            "IDENTITY_SMTP_TLS", read: [.mailerWorker], default: "`starttls`",
            meaning: "`starttls` (required), `implicit` or `none`"),
        ConfigurationVariable(
            "IDENTITY_SMTP_USERNAME", read: [.mailerWorker], default: "(none)",
            meaning: "SMTP login"),
        ConfigurationVariable(
            "IDENTITY_SMTP_PASSWORD", read: [.mailerWorker], default: "(none)",
            meaning: "SMTP password"),
        ConfigurationVariable(
            "IDENTITY_SMTP_PASSWORD_FILE",
            read: [.mailerWorker],
            default: "(unset)",
            meaning: "a file holding `IDENTITY_SMTP_PASSWORD` (a secrets mount instead of the environment); "
                + "set one of the two, never both"),
        ConfigurationVariable(
            "IDENTITY_SMTP_TIMEOUT_MS", read: [.mailerWorker], default: "`10000`",
            meaning: "per delivery"),
        ConfigurationVariable(
            "IDENTITY_MAIL_FROM", read: [.mailerWorker], default: "`Identity <no-reply@localhost>`",
            meaning: "sender when the app sets none"),
        ConfigurationVariable(
            "IDENTITY_MAIL_DIR", read: [.mailerWorker], default: "`mail-outbox`",
            meaning: "where mail is written as `.eml` files without `IDENTITY_SMTP_HOST` (`make run`: "
                + "`.run/mail`)"),
        ConfigurationVariable(
            "IDENTITY_MAIL_RETRY_DELAYS_MS", read: [.mailerWorker], default: "`5000,30000,120000,600000,1800000`",
            meaning: "delay before each retry of a failed delivery; after the last, dead-lettered"),
        ConfigurationVariable(
            "IDENTITY_SMS_API_URL", read: [.mailerWorker], default: "`https://api.twilio.com`",
            meaning: "base URL of the Twilio-compatible Messaging API "
                + "(`/2010-04-01/Accounts/{sid}/Messages.json` is appended), also for apps that set an "
                + "account but no URL"),
        ConfigurationVariable(
            "IDENTITY_SMS_ACCOUNT_SID", read: [.mailerWorker], default: "(unset: `.sms` files)",
            meaning: "the worker's own SMS account, for apps without one (needs "
                + "`IDENTITY_SMS_AUTH_TOKEN`)"),
        ConfigurationVariable(
            "IDENTITY_SMS_AUTH_TOKEN", read: [.mailerWorker], default: "(none)",
            meaning: "that account's token (Basic auth)"),
        ConfigurationVariable(
            "IDENTITY_SMS_AUTH_TOKEN_FILE",
            read: [.mailerWorker],
            default: "(unset)",
            meaning: "a file holding `IDENTITY_SMS_AUTH_TOKEN` (a secrets mount instead of the environment); "
                + "set one of the two, never both"),
        ConfigurationVariable(
            "IDENTITY_SMS_FROM", read: [.mailerWorker], default: "(this or a messaging service with an account)",
            meaning: "the sender: a number or an alphanumeric id"),
        ConfigurationVariable(
            "IDENTITY_SMS_MESSAGING_SERVICE_SID", read: [.mailerWorker], default: "(none)",
            meaning: "the sender as a messaging service, instead of `IDENTITY_SMS_FROM`"),
        ConfigurationVariable(
            "IDENTITY_SMS_TIMEOUT_MS", read: [.mailerWorker], default: "`10000`",
            meaning: "per SMS request"),
        ConfigurationVariable(
            "IDENTITY_SMS_DIR", read: [.mailerWorker], default: "`IDENTITY_MAIL_DIR`",
            meaning: "where SMS are written as `.sms` files without an account (`To: +…`, a blank "
                + "line, the text)"),
        ConfigurationVariable(
            "IDENTITY_APNS_URL", read: [.mailerWorker], default: "`https://api.push.apple.com`",
            meaning: "APNs base URL (`https://api.sandbox.push.apple.com` for development builds)"),
        ConfigurationVariable(
            "IDENTITY_FCM_URL", read: [.mailerWorker], default: "`https://fcm.googleapis.com`",
            meaning: "FCM HTTP v1 base URL"),
        ConfigurationVariable(
            "IDENTITY_FCM_TOKEN_URL", read: [.mailerWorker], default: "`https://oauth2.googleapis.com/token`",
            meaning: "where a service account's JWT-bearer assertion is exchanged (and its `aud`)"),
        ConfigurationVariable(
            "IDENTITY_PUSH_CA_FILE", read: [.mailerWorker], default: "(system CAs)",
            meaning: "a CA bundle to trust for APNs and FCM instead of the system's"),
        ConfigurationVariable(
            "IDENTITY_PUSH_TIMEOUT_MS", read: [.mailerWorker], default: "`10000`",
            meaning: "per push request"),
        // The revocation worker.
        ConfigurationVariable(
            "IDENTITY_APPLE_REVOKE_RETRY_DELAYS_MS", read: [.revocationWorker],
            default: "`5000,30000,120000,600000,3600000`",
            meaning: "delays between tries of an Apple revocation; the last repeats until Apple answers "
                + "200; a code Apple will not exchange goes to `identity.revocation.dead` instead"),
        ConfigurationVariable(
            "IDENTITY_RETENTION_SECONDS", read: [.revocationWorker], default: "`2592000` (30 days)",
            meaning: "spent or expired nonces, codes, refresh tokens and ended sessions are purged this "
                + "long after"),
        ConfigurationVariable(
            "IDENTITY_GUEST_RETENTION_SECONDS", read: [.revocationWorker], default: "`31536000` (365 days)",
            meaning: "guests neither created nor seen for this long are deleted (`user.deleted`)"),
        ConfigurationVariable(
            "IDENTITY_KNOWN_DEVICE_RETENTION_SECONDS", read: [.revocationWorker],
            default: "`31536000` (365 days)",
            meaning: "a known device (security alerts) unseen this long is forgotten; its next sign-in "
                + "alerts as a new device"),
        ConfigurationVariable(
            "IDENTITY_WEBHOOK_DELIVERY_RETENTION_SECONDS", read: [.revocationWorker], default: "`604800` (7 days)",
            meaning: "a webhook delivery that is over (delivered, or given up on) stays in the delivery log "
                + "this long, then is purged with its attempts"),
        ConfigurationVariable(
            "IDENTITY_PURGE_INTERVAL_SECONDS", read: [.revocationWorker], default: "`60`",
            meaning: "how often the retention purge runs"),
        // identityctl.
        ConfigurationVariable(
            "IDENTITY_MIGRATIONS_DIR", read: [.identityctl], default: "`migrations`",
            meaning: "folder of numbered `.sql` files (`identityctl migrate`)"),
        ConfigurationVariable(
            "IDENTITY_DOMAIN_VERIFICATION_URL_TEMPLATE", read: [.identityctl],
            default: "`https://{domain}/.well-known/identity-domain-verification`",
            meaning: "where `identityctl apps domains verify` fetches a host's token"),
        ConfigurationVariable(
            "IDENTITY_RATE_LIMIT_OFF_ALLOWED", read: [.identityctl], default: "(unset)",
            meaning: "`1` lets `identityctl apps settings --rate-limit NAME=off` through (tests and "
                + "benchmarks only)"),
    ]
}
