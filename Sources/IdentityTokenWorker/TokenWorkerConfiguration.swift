import Foundation
import IdentityCredentials
import IdentityKit
import IdentityOutbound

/// Settings of `identity-token-worker`, from `IDENTITY_*` variables, validated at start-up.
public struct TokenWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    /// Unseals the apps' private signing keys; only workers that sign are given it.
    public var masterKey: [UInt8]
    public var passwordCost: PasswordHasher.Cost
    /// Argon2id hashes and checks run at once (`IDENTITY_PASSWORD_HASH_CONCURRENCY`, default the
    /// cores): the other commands in flight wait for a turn rather than share the cores.
    public var concurrentPasswordHashes: Int
    /// Commands handled at once on this process's cores (the broker prefetch adds the hook
    /// calls that may wait at once: `WorkerSlots`).
    public var concurrency: Int
    /// The bounds on waiting for apps' auth hooks (`IDENTITY_HOOK_*`), one per process.
    public var hooks = HookFairness(limits: .init())
    public var refreshTokenLifetimeSeconds: Int
    /// How long a spent refresh token is still answered with its successor (30 s:
    /// docs/api-contract.md, "Tokens and sessions").
    public var refreshGraceSeconds: Int
    /// Lifetime of mailed codes (10 minutes: docs/api-contract.md, "Sign-in methods").
    public var codeLifetimeSeconds: Int
    /// At most one email-verification mail per user in this many seconds.
    public var emailVerificationCooldownSeconds: Int
    /// The operator's ceilings on tenants' settings and the calling codes of its shared SMS
    /// account (`IDENTITY_RATE_LIMIT_CEILINGS`, `IDENTITY_SMS_SHARED_CALLING_CODES`): this worker
    /// writes the admin API's settings and sends the codes, so it is where they are enforced.
    public var operatorLimits: OperatorLimits

    public static func fromEnvironment() -> TokenWorkerConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let concurrency = env.int("IDENTITY_WORKER_CONCURRENCY", default: max(2, cores * 2), range: 1...256)
        let hookLimits = HookFairness.Limits.fromEnvironment(&env)
        var config = TokenWorkerConfiguration(
            // A `before_sign_up` hook waits inside its transaction: that many connections more.
            common: CommonConfiguration(reading: &env, defaultPoolSize: concurrency + hookLimits.holdingConnection),
            masterKey: env.key32("IDENTITY_MASTER_KEY", required: true) ?? [],
            passwordCost: PasswordHasher.Cost(
                memoryKiB: UInt32(env.int("IDENTITY_ARGON2_MEMORY_KIB", default: 19_456, range: 8...4_194_304)),
                iterations: UInt32(env.int("IDENTITY_ARGON2_ITERATIONS", default: 2, range: 1...100)),
                parallelism: UInt32(env.int("IDENTITY_ARGON2_PARALLELISM", default: 1, range: 1...64))),
            concurrentPasswordHashes: env.int("IDENTITY_PASSWORD_HASH_CONCURRENCY", default: cores, range: 1...256),
            concurrency: concurrency,
            refreshTokenLifetimeSeconds: env.int("IDENTITY_REFRESH_TOKEN_TTL_SECONDS", default: 90 * 86_400,
                                                 range: 60...(400 * 86_400)),
            refreshGraceSeconds: env.int("IDENTITY_REFRESH_GRACE_SECONDS", default: 30, range: 1...600),
            codeLifetimeSeconds: env.int("IDENTITY_CODE_TTL_SECONDS", default: 600, range: 10...86_400),
            emailVerificationCooldownSeconds: env.int("IDENTITY_EMAIL_VERIFICATION_COOLDOWN_SECONDS", default: 60,
                                                      range: 0...3600),
            operatorLimits: OperatorLimits.fromEnvironment(&env))
        config.hooks = HookFairness(limits: hookLimits)
        if config.operatorLimits.sharedCallingCodes.isEmpty {
            Log.info("IDENTITY_SMS_SHARED_CALLING_CODES is empty: apps without an SMS account of their own text nowhere")
        }
        env.validateOrExit(program: "identity-token-worker")
        return config
    }
}
