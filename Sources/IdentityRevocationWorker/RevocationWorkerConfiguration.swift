import Foundation
import IdentityKit

/// Settings of `identity-revocation-worker`, from `IDENTITY_*` variables. It needs no master key.
public struct RevocationWorkerConfiguration: Sendable {
    public var common: CommonConfiguration
    public var concurrency: Int

    public static func fromEnvironment() -> RevocationWorkerConfiguration {
        var env = EnvironmentReader()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let concurrency = env.int("IDENTITY_WORKER_CONCURRENCY", default: max(2, cores * 2), range: 1...256)
        // One more connection than commands in flight: the outbox relay holds one.
        let config = RevocationWorkerConfiguration(
            common: CommonConfiguration(reading: &env, defaultPoolSize: concurrency + 1), concurrency: concurrency)
        env.validateOrExit(program: "identity-revocation-worker")
        return config
    }
}
