// swift-tools-version:6.0
// The identity service: an HTTP gateway and workers that talk over RabbitMQ and share one
// PostgreSQL store. Only the toolchain's modules and Debian's C libraries are used: each C
// library sits in its own `C<Name>` system-library target (module map + pkg-config), with a
// tiny `C<Name>Shim` target where the C API is variadic or made of macros.
import PackageDescription

let package = Package(
    name: "identity",
    // macOS 15: the service's minimum. iOS only ever builds the IdentityClient SDK, whose own
    // minimum is iOS 15 (clients/swift is the same SDK with macOS 12).
    platforms: [.macOS(.v15), .iOS(.v15)],
    products: [
        .executable(name: "identity-gateway", targets: ["identity-gateway"]),
        .executable(name: "identity-token-worker", targets: ["identity-token-worker"]),
        .executable(name: "identity-provider-worker", targets: ["identity-provider-worker"]),
        .executable(name: "identity-mailer-worker", targets: ["identity-mailer-worker"]),
        .executable(name: "identity-revocation-worker", targets: ["identity-revocation-worker"]),
        .executable(name: "identity-webhook-worker", targets: ["identity-webhook-worker"]),
        .executable(name: "identityctl", targets: ["identityctl"]),
        // The Swift client SDK for apps (iOS, macOS, Linux): Foundation only.
        .library(name: "IdentityClient", targets: ["IdentityClient"]),
    ],
    targets: [
        // C libraries (Debian -dev packages).
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        .systemLibrary(name: "CRabbitMQ", pkgConfig: "librabbitmq",
                       providers: [.apt(["librabbitmq-dev"]), .brew(["rabbitmq-c"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2",
                       providers: [.apt(["libargon2-dev"]), .brew(["argon2"])]),
        // Argon2id with run-time-selected SIMD code (libargon2 from Debian is the portable build).
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]),
        // libxcrypt: bcrypt for imported password hashes.
        .systemLibrary(name: "CCrypt", pkgConfig: "libcrypt",
                       providers: [.apt(["libcrypt-dev"]), .brew(["libxcrypt"])]),
        .systemLibrary(name: "CCbor", pkgConfig: "libcbor",
                       providers: [.apt(["libcbor-dev"]), .brew(["libcbor"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),
        .target(name: "COpenSSLShim", dependencies: ["COpenSSL"]),
        .target(name: "CRabbitMQShim", dependencies: ["CRabbitMQ"]),
        // Argon2id's working memory kept between libsodium's hashes (its shim.c says why).
        .target(name: "CSodiumShim"),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode",
                       providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]),

        // Shared by every process, the gateway included: configuration, errors, the bus, the store's
        // connection and pool, messages, JWT verification and the public crypto (digests, signing
        // keys' public halves), and the store's reads that need no secret. Nothing here reads or
        // writes a secret column (password, refresh-token, code or key hashes, sealed keys and
        // credentials), and nothing derives a key from the master key: `make test` fails when the
        // gateway's modules name such a column (scripts/check-gateway-secrets.py).
        // What every module shares and needs nothing else for: JSON reading and writing,
        // base64url, hex, text scanning, HTML escaping. Foundation only, no C library: the doors
        // (GraphQL) and the operation API build on it without linking libpq or rabbitmq-c.
        .target(name: "IdentityBasics"),
        .target(name: "IdentityKit",
                dependencies: ["IdentityBasics", "CPostgres", "CRabbitMQ", "CRabbitMQShim", "COpenSSL", "COpenSSLShim",
                               "CMicroHTTPD", "CMicroHTTPDShim"]),
        // What reads or writes secret columns, and the secret-handling code behind it: password
        // hashing (Argon2id, imported bcrypt/scrypt/PBKDF2), TOTP and backup codes, the master key's
        // sub-keys and seals, the stores of users, MFA, codes, nonces, passkeys, provider/push/SMS
        // credentials and the private halves of signing keys, refresh-token rotation, and the
        // admin writes (settings apply, user import, key rotation). Its own module so that the
        // gateway, which never reads a secret and holds no master key, does not link it: every
        // worker and identityctl do; IdentityGateway must not (the same check fails if it does).
        .target(name: "IdentityCredentials",
                dependencies: ["IdentityKit", "COpenSSL", "CArgon2", "CSodium", "CSodiumShim", "CCrypt"]),
        // The typed operation API, generated from gateway.proto: one method per operation, run by
        // a transport (the gateway's runs the route's whole pipeline). The doors build on it.
        .target(name: "OperationAPI", dependencies: ["IdentityBasics"]),
        // The GraphQL door (seed 003's schema): resolvers call the operation API, nothing else of
        // the service (no store, no bus, no route table: `make test` checks its imports).
        .target(name: "IdentityGraphQL", dependencies: ["GraphQL", "OperationAPI", "IdentityBasics"]),
        // GraphQL documents: lexer, parser, validation, executor, introspection (seed 003). No
        // dependency on the service (IdentityBasics for its JSON writing): a door gives it a
        // schema with resolvers.
        .target(name: "GraphQL", dependencies: ["IdentityBasics"]),
        // The HTTP gateway: routing, validation, reads, commands to workers. IdentityKit only, never
        // IdentityCredentials (see above).
        .target(name: "IdentityGateway", dependencies: ["IdentityKit", "GraphQL", "OperationAPI", "IdentityGraphQL", "CMicroHTTPD", "CMicroHTTPDShim"]),
        // The token worker: credentials and tokens.
        .target(name: "IdentityTokenWorker", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound", "CQRencode",
                                                           "WebAuthn"]),
        // WebAuthn relying-party checks: clientData, authenticator data, attestation objects
        // (libcbor), COSE keys and assertion signatures (OpenSSL). No store, no bus.
        .target(name: "WebAuthn", dependencies: ["IdentityKit", "CCbor", "COpenSSL", "COpenSSLShim"]),
        // Calls to the outside world (Apple, Google, Firebase) over libcurl. IdentityCredentials:
        // it unseals the Apple key it signs client secrets with.
        .target(name: "IdentityOutbound", dependencies: ["IdentityKit", "IdentityCredentials", "CCurl", "CCurlShim"]),
        // The provider worker: nonces, id-token verification, Apple code exchange.
        .target(name: "IdentityProviderWorker", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound"]),
        // The mailer worker: renders and delivers mail (SMTP or .eml files), with retries.
        .target(name: "IdentityMailerWorker", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound"]),
        // The revocation worker: ends sessions, relays the event outbox.
        .target(name: "IdentityRevocationWorker", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound"]),
        // The webhook worker: the event stream to the apps' own endpoints, signed, with retries.
        .target(name: "IdentityWebhookWorker", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound"]),

        // The client SDK: no dependency beyond Foundation (FoundationNetworking on Linux).
        .target(name: "IdentityClient"),

        .executableTarget(name: "identity-gateway", dependencies: ["IdentityGateway"]),
        .executableTarget(name: "identity-token-worker", dependencies: ["IdentityTokenWorker"]),
        .executableTarget(name: "identity-provider-worker", dependencies: ["IdentityProviderWorker"]),
        .executableTarget(name: "identity-mailer-worker", dependencies: ["IdentityMailerWorker"]),
        .executableTarget(name: "identity-revocation-worker", dependencies: ["IdentityRevocationWorker"]),
        .executableTarget(name: "identity-webhook-worker", dependencies: ["IdentityWebhookWorker"]),
        .executableTarget(name: "identityctl", dependencies: ["IdentityKit", "IdentityCredentials", "IdentityOutbound"]),

        .testTarget(name: "IdentityBasicsTests", dependencies: ["IdentityBasics"]),
        .testTarget(name: "IdentityKitTests", dependencies: ["IdentityKit"]),
        // Password hashing, seals, TOTP and backup codes; the store tests (StoreTenancyTests,
        // StoreRolesTests: a real database, skipped without IDENTITY_TEST_DATABASE_URL).
        .testTarget(name: "IdentityCredentialsTests", dependencies: ["IdentityCredentials", "IdentityKit", "CArgon2"]),
        // IdentityCredentials for the fixtures only: creating apps and signing tokens as the token
        // worker would.
        .testTarget(name: "IdentityGatewayTests", dependencies: ["IdentityGateway", "IdentityCredentials", "OperationAPI", "IdentityGraphQL"]),
        .testTarget(name: "IdentityMailerWorkerTests", dependencies: ["IdentityMailerWorker", "IdentityCredentials"]),
        .testTarget(name: "IdentityTokenWorkerTests", dependencies: ["IdentityTokenWorker", "IdentityCredentials", "IdentityOutbound"]),
        .testTarget(name: "IdentityProviderWorkerTests", dependencies: ["IdentityProviderWorker"]),
        .testTarget(name: "IdentityWebhookWorkerTests", dependencies: ["IdentityWebhookWorker", "IdentityKit"]),
        .testTarget(name: "GraphQLTests", dependencies: ["GraphQL"]),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "IdentityKit"]),
        // The SDK's refresh logic and error decoding against a stubbed URLProtocol.
        .testTarget(name: "IdentityClientTests", dependencies: ["IdentityClient"]),
        // The SDK against the real running service: started by Tests/e2e/test_swift_client.py with
        // IDENTITY_CLIENT_E2E_* variables, skipped without them. IdentityCredentials for the
        // server's own TOTP (RFC 6238) code computation.
        .testTarget(name: "IdentityClientE2ETests", dependencies: ["IdentityClient", "IdentityCredentials"]),
    ],
    swiftLanguageModes: [.v6]
)
