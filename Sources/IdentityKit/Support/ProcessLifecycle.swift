import Foundation

/// A long-lived part of an executable (a gateway, a worker): started once, stopped on shutdown.
public protocol Service: Sendable {
    func start() throws
    func stop()
}

/// The life of every executable: build and start its service, wait for SIGTERM or SIGINT,
/// stop it (draining what it can), exit. A start-up failure ends the process with status 1.
public enum ProcessLifecycle {
    public static func run(_ program: String, fields: [String: String] = [:], _ make: () throws -> Service) -> Never {
        let service: Service
        do {
            service = try make()
            try service.start()
        } catch {
            Log.error("\(program) failed to start", ["error": String(describing: error)])
            exit(1)
        }
        Log.info("\(program) started", fields)
        ShutdownSignal.wait()
        Log.info("\(program) stopping")
        service.stop()
        exit(0)
    }
}
