import Foundation

/// The readiness checks a process's `/readyz` runs (OperationsListener).
public enum Readiness {
    /// The store answers a trivial query through the process's own pool (and role).
    public static func store(_ pool: PGPool) -> OperationsListener.Check {
        (name: "store", check: { @Sendable in (try? pool.withConnection { try $0.query("SELECT 1") }) != nil })
    }

    /// The worker's command consumer is connected to the broker and consuming.
    public static func consuming(_ consumer: CommandConsumer) -> OperationsListener.Check {
        (name: "broker", check: { @Sendable in consumer.isConsuming })
    }
}
