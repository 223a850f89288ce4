import Foundation

/// A long-lived part of an executable (a gateway, a worker): started once, stopped on shutdown.
public protocol Service: Sendable {
    func start() throws
    /// Stops gracefully: in-flight work is finished (or handed back) and threads are joined
    /// before this returns.
    func stop()
    /// How long `stop()` may take before the process gives up on it and exits with status 1:
    /// a safety net for a hung dependency, above every bound `stop()` sets itself.
    var stopTimeLimit: Double { get }
    /// What `/readyz` checks (store and broker reachable, consuming), each named.
    var readinessChecks: [OperationsListener.Check] { get }
}

extension Service {
    public var stopTimeLimit: Double { 60 }
    public var readinessChecks: [OperationsListener.Check] { [] }
}

/// The life of every executable: build and start its service, wait for SIGTERM or SIGINT,
/// stop it (draining what it can), exit 0. A start-up failure ends the process with status 1,
/// and so does a stop that outlives `stopTimeLimit` or a second signal while stopping (the
/// operator chose not to wait).
public enum ProcessLifecycle {
    public static func run(_ program: String, exports: ServiceMetrics.Exports, fields: LogFields = [:],
                           operations: CommonConfiguration? = nil,
                           _ make: () throws -> Service) -> Never {
        // Caught before anything starts: a SIGTERM during start-up stops the service once it is up.
        let shutdown = ShutdownSignal(onRepeat: { number in
            Log.warning("\(program): second signal while stopping; exiting without finishing the drain",
                        ["signal": number])
            // _exit: no exit handlers, which could wait on whatever the drain is stuck on.
            _exit(1)
        })
        let service: Service
        let stopping = Locked(false)
        var listener: OperationsListener?
        ServiceMetrics.register(for: exports, program: program)
        do {
            service = try make()
            try service.start()
            // After the service: /readyz has its checks to run. Not ready once stopping.
            if let operations, let port = operations.metricsPort {
                let checks = service.readinessChecks + [(name: "running", check: { @Sendable in !stopping.withLock { $0 } })]
                listener = OperationsListener(host: operations.metricsHost, port: port, checks: checks)
                try listener?.start()
            }
        } catch {
            Log.error("\(program) failed to start", ["error": String(describing: error)])
            exit(1)
        }
        Log.info("\(program) started", fields)
        shutdown.wait()
        stopping.withLock { $0 = true }
        let started = DispatchTime.now().uptimeNanoseconds
        let limit = service.stopTimeLimit
        Log.info("\(program) stopping", ["time_limit_s": Int(limit)])
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
            Log.error("\(program) did not stop within its time limit; exiting", ["time_limit_s": Int(limit)])
            _exit(1)
        }
        service.stop()
        listener?.stop()
        Log.info("\(program) stopped", ["took_ms": (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000])
        exit(0)
    }
}
