import Foundation
import IdentityCredentials
import IdentityKit

/// `identityctl bench …`: the machine's own limits for `make bench`, measured with the same
/// code paths the service uses. Each prints one JSON object.
enum Benchmarks {
    /// Latencies in milliseconds → p50/p99.
    static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
        guard !samples.isEmpty else { return (0, 0) }
        let sorted = samples.sorted()
        let at = { (q: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        return (at(0.50), at(0.99))
    }

    /// Raw Argon2id hashes per second at the service's cost, one thread per core.
    static func argon2(cost: PasswordHasher.Cost, seconds: Double, threads: Int) throws -> [String: Any] {
        let hasher = try PasswordHasher(cost: cost)
        let counts = Locked([Int](repeating: 0, count: threads))
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread {
                var done = 0
                while Date() < deadline {
                    _ = try? hasher.hash("benchmark-password-\(done)")
                    done += 1
                }
                counts.withLock { $0[index] = done }
                group.leave()
            }.start()
        }
        group.wait()
        let total = counts.withLock { $0.reduce(0, +) }
        return ["hashes": total, "seconds": seconds, "per_second": Double(total) / seconds, "threads": threads,
                "memory_kib": cost.memoryKiB, "iterations": cost.iterations, "parallelism": cost.parallelism]
    }

    /// Gateway → worker request/reply over the bus: a no-op `Ping` to the token workers, with
    /// `concurrency` requests in flight, as the gateway's BusClient sends them.
    static func busRoundTrip(url: String, heartbeatSeconds: Int, seconds: Double, concurrency: Int) throws -> [String: Any] {
        let bus = try BusClient(url: url, heartbeatSeconds: heartbeatSeconds)
        bus.start()
        guard bus.waitUntilConnected(timeout: 10) else { throw BusError("cannot reach the broker") }
        let latencies = Locked<[Double]>([])
        let failures = Locked(0)
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for _ in 0..<concurrency {
            group.enter()
            Thread {
                var mine: [Double] = []
                let semaphore = DispatchSemaphore(value: 0)
                while Date() < deadline {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let ok = Locked(false)
                    bus.request(TokenV1.Ping(appId: "bench"), queue: BusTopology.tokenCommands, appId: "bench",
                                requestId: "bench", timeout: 5) { result in
                        if case .success(let reply) = result, reply.type == TokenV1.Pong.protoName { ok.withLock { $0 = true } }
                        semaphore.signal()
                    }
                    semaphore.wait()
                    if ok.withLock({ $0 }) {
                        mine.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000)
                    } else {
                        failures.withLock { $0 += 1 }
                    }
                }
                latencies.withLock { $0 += mine }
                group.leave()
            }.start()
        }
        group.wait()
        bus.stop()
        let all = latencies.withLock { $0 }
        let (p50, p99) = percentiles(all)
        return ["requests": all.count, "failures": failures.withLock { $0 }, "seconds": seconds,
                "per_second": Double(all.count) / seconds, "p50_ms": p50, "p99_ms": p99, "concurrency": concurrency]
    }

    /// The broker's own rate for one small message through one connection: publish to a
    /// scratch queue and consume it back (auto-ack), counting what arrives.
    static func brokerRate(url: String, heartbeatSeconds: Int, seconds: Double) throws -> [String: Any] {
        let queue = "identity.bench.\(getpid())"
        let received = Locked(0)
        let link = try AMQPLink(url: url, name: "bench", heartbeatSeconds: heartbeatSeconds, setup: { channel in
            try channel.declareQueue(queue, durable: false)
            try channel.consume(queue, autoAck: true)
        }, onDelivery: { _ in received.withLock { $0 += 1 } })
        link.start()
        guard link.waitUntilConnected(timeout: 10) else { throw BusError("cannot reach the broker") }
        let body = Data(#"{"app_id":"bench"}"#.utf8)
        let start = Date()
        var sent = 0
        // Keep at most a few thousand messages in flight so the rate is the steady one.
        while Date().timeIntervalSince(start) < seconds {
            if sent - received.withLock({ $0 }) < 2000 {
                for _ in 0..<100 {
                    link.send(.publish(OutgoingMessage(exchange: "", routingKey: queue, type: "bench", body: body)))
                }
                sent += 100
            } else {
                Thread.sleep(forTimeInterval: 0.0005)
            }
        }
        let drainUntil = Date().addingTimeInterval(5)
        while received.withLock({ $0 }) < sent && Date() < drainUntil { Thread.sleep(forTimeInterval: 0.01) }
        let elapsed = Date().timeIntervalSince(start)
        let count = received.withLock { $0 }
        link.stop()
        return ["messages": count, "seconds": elapsed, "per_second": Double(count) / elapsed]
    }
}
