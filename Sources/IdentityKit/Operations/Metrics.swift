import Foundation

/// The process's metrics, rendered in the Prometheus text exposition format 0.0.4. One
/// registry per process (`Metrics.shared`); families are declared once, in `ServiceMetrics`,
/// so every name, help text and label set lives in one catalogue.
///
/// Cardinality is bounded by the callers: labels take route *patterns*, command types, error
/// codes and limit names (all from closed lists), never a raw path, an address or a user id.
/// A per-app label is added only when `IDENTITY_METRICS_PER_APP` is on (`Metrics.appLabel`).
public final class Metrics: Sendable {
    public static let shared = Metrics()
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let families = Locked<[MetricFamily]>([])
    private let collectors = Locked<[@Sendable () -> Void]>([])
    private let perApp = Locked(false)

    public init() {}

    /// Turns the `app_id` label on (`IDENTITY_METRICS_PER_APP`): one series per app and label set.
    public func setPerApp(_ on: Bool) { perApp.withLock { $0 = on } }

    /// The value for an `app` label: the app id when per-app labels are on, else "" (which the
    /// renderer leaves out, so the series is the same as without the label).
    public func appLabel(_ appId: String) -> String { perApp.withLock { $0 } ? appId : "" }

    public func counter(_ name: String, _ help: String, labels: [String] = []) -> Counter {
        Counter(register(name, help, "counter", labels, buckets: []))
    }

    public func gauge(_ name: String, _ help: String, labels: [String] = []) -> Gauge {
        Gauge(register(name, help, "gauge", labels, buckets: []))
    }

    public func histogram(_ name: String, _ help: String, labels: [String] = [],
                          buckets: [Double] = Metrics.latencyBuckets) -> Histogram {
        Histogram(register(name, help, "histogram", labels, buckets: buckets.sorted()))
    }

    /// Seconds, from a fast local answer to the slowest a client waits for.
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Runs before every rendering: for gauges read from somewhere else (the outbox's backlog).
    public func onCollect(_ collect: @escaping @Sendable () -> Void) {
        collectors.withLock { $0.append(collect) }
    }

    private func register(_ name: String, _ help: String, _ type: String, _ labels: [String],
                          buckets: [Double]) -> MetricFamily {
        families.withLock { families in
            if let existing = families.first(where: { $0.name == name }) { return existing }
            let family = MetricFamily(name: name, help: help, type: type, labels: labels, buckets: buckets)
            families.append(family)
            return family
        }
    }

    /// The whole registry as Prometheus text.
    public func render() -> String {
        for collect in collectors.withLock({ $0 }) { collect() }
        var out = ""
        for family in families.withLock({ $0 }) { family.render(into: &out) }
        return out
    }
}

/// One metric name with its series (one per label-value tuple).
final class MetricFamily: Sendable {
    let name: String
    let help: String
    let type: String
    let labels: [String]
    let buckets: [Double]
    private let series = Locked<[[String]: Series]>([:])

    struct Series: Sendable {
        var value: Double = 0
        /// Histograms: count per bucket (not cumulative), and the sum.
        var bucketCounts: [UInt64] = []
        var count: UInt64 = 0
    }

    init(name: String, help: String, type: String, labels: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.type = type
        self.labels = labels
        self.buckets = buckets
    }

    func update(_ values: [String], _ change: (inout Series) -> Void) {
        let key = values.count == labels.count ? values : Array((values + Array(repeating: "", count: labels.count)).prefix(labels.count))
        series.withLock { all in
            var current = all[key] ?? Series(bucketCounts: Array(repeating: 0, count: buckets.count))
            change(&current)
            all[key] = current
        }
    }

    func render(into out: inout String) {
        let snapshot = series.withLock { $0 }
        out += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
        for key in snapshot.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard let item = snapshot[key] else { continue }
            let pairs = zip(labels, key).filter { !$0.1.isEmpty }.map { ($0.0, $0.1) }
            if type == "histogram" {
                var cumulative: UInt64 = 0
                for (index, bound) in buckets.enumerated() {
                    cumulative += item.bucketCounts[index]
                    out += "\(name)_bucket\(Self.labelText(pairs + [("le", Self.number(bound))])) \(cumulative)\n"
                }
                out += "\(name)_bucket\(Self.labelText(pairs + [("le", "+Inf")])) \(item.count)\n"
                out += "\(name)_sum\(Self.labelText(pairs)) \(Self.number(item.value))\n"
                out += "\(name)_count\(Self.labelText(pairs)) \(item.count)\n"
            } else {
                out += "\(name)\(Self.labelText(pairs)) \(Self.number(item.value))\n"
            }
        }
    }

    static func labelText(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "" }
        return "{" + pairs.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
    }

    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}

/// Only goes up. Label values in the order the family declared its labels.
public struct Counter: Sendable {
    let family: MetricFamily
    init(_ family: MetricFamily) { self.family = family }
    public func inc(_ labels: String..., by amount: Double = 1) {
        family.update(labels) { $0.value += amount }
    }
}

/// Goes up and down, or is set.
public struct Gauge: Sendable {
    let family: MetricFamily
    init(_ family: MetricFamily) { self.family = family }
    public func set(_ value: Double, _ labels: String...) { family.update(labels) { $0.value = value } }
    public func add(_ amount: Double, _ labels: String...) { family.update(labels) { $0.value += amount } }
}

/// Observations counted into buckets (seconds, for latencies).
public struct Histogram: Sendable {
    let family: MetricFamily
    init(_ family: MetricFamily) { self.family = family }
    public func observe(_ value: Double, _ labels: String...) {
        let buckets = family.buckets
        family.update(labels) { series in
            if let index = buckets.firstIndex(where: { value <= $0 }) { series.bucketCounts[index] += 1 }
            series.count += 1
            series.value += value
        }
    }

    /// Seconds since `start` (a `DispatchTime.now().uptimeNanoseconds`).
    public func observeSince(_ start: UInt64, _ labels: String...) {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
        let buckets = family.buckets
        family.update(labels) { series in
            if let index = buckets.firstIndex(where: { seconds <= $0 }) { series.bucketCounts[index] += 1 }
            series.count += 1
            series.value += seconds
        }
    }
}
