import Foundation
import XCTest
@testable import IdentityKit

final class MetricsTests: XCTestCase {
    func testCountersGaugesAndHistogramsRenderInTheTextFormat() {
        let metrics = Metrics()
        let requests = metrics.counter("t_requests_total", "Requests.", labels: ["route", "status_class"])
        requests.inc("/v1/me", "2xx")
        requests.inc("/v1/me", "2xx")
        requests.inc("/v1/auth/signup", "4xx", by: 3)
        let inFlight = metrics.gauge("t_in_flight", "In flight.")
        inFlight.add(2)
        inFlight.add(-1)
        let latency = metrics.histogram("t_seconds", "Latency.", labels: ["route"], buckets: [0.1, 1])
        latency.observe(0.05, "/x")
        latency.observe(0.5, "/x")
        latency.observe(3, "/x")
        let text = metrics.render()
        XCTAssertTrue(text.contains("# HELP t_requests_total Requests.\n# TYPE t_requests_total counter\n"))
        XCTAssertTrue(text.contains("t_requests_total{route=\"/v1/me\",status_class=\"2xx\"} 2\n"))
        XCTAssertTrue(text.contains("t_requests_total{route=\"/v1/auth/signup\",status_class=\"4xx\"} 3\n"))
        XCTAssertTrue(text.contains("# TYPE t_in_flight gauge\nt_in_flight 1\n"))
        // Buckets are cumulative, +Inf equals the count.
        XCTAssertTrue(text.contains("t_seconds_bucket{route=\"/x\",le=\"0.1\"} 1\n"))
        XCTAssertTrue(text.contains("t_seconds_bucket{route=\"/x\",le=\"1\"} 2\n"))
        XCTAssertTrue(text.contains("t_seconds_bucket{route=\"/x\",le=\"+Inf\"} 3\n"))
        XCTAssertTrue(text.contains("t_seconds_sum{route=\"/x\"} 3.55\n"))
        XCTAssertTrue(text.contains("t_seconds_count{route=\"/x\"} 3\n"))
    }

    func testLabelValuesAreEscapedAndEmptyLabelsLeftOut() {
        let metrics = Metrics()
        let counter = metrics.counter("t_total", "Help with \\ and\nnewline.", labels: ["code", "app"])
        counter.inc("a\"b\\c\nd", "")
        let text = metrics.render()
        XCTAssertTrue(text.contains("# HELP t_total Help with \\\\ and\\nnewline.\n"), text)
        XCTAssertTrue(text.contains("t_total{code=\"a\\\"b\\\\c\\nd\"} 1\n"), text)
    }

    func testPerAppLabelIsOffByDefault() {
        let metrics = Metrics()
        XCTAssertEqual(metrics.appLabel("app_1"), "")
        metrics.setPerApp(true)
        XCTAssertEqual(metrics.appLabel("app_1"), "app_1")
    }

    func testCommandTypeLabelsAreBounded() {
        XCTAssertEqual(ServiceMetrics.commandType("identity.token.v1.SignUp"), "identity.token.v1.SignUp")
        XCTAssertEqual(ServiceMetrics.commandType("evil\"type"), "other")
        XCTAssertEqual(ServiceMetrics.commandType("identity." + String(repeating: "x", count: 100)), "other")
        XCTAssertEqual(ServiceMetrics.outcome(replyType: "identity.token.v1.Session", body: Data()), "ok")
        XCTAssertEqual(ServiceMetrics.outcome(replyType: "identity.common.v1.Error",
                                              body: Data(#"{"code":"auth/user-disabled","status":403}"#.utf8)),
                       "auth/user-disabled")
        XCTAssertEqual(ServiceMetrics.outcome(replyType: "identity.common.v1.Error", body: Data("{".utf8)), "error")
    }

    func testCollectorsRunBeforeRendering() {
        let metrics = Metrics()
        let gauge = metrics.gauge("t_backlog", "Backlog.")
        let reads = Locked(0)
        metrics.onCollect {
            reads.withLock { $0 += 1 }
            gauge.set(Double(reads.withLock { $0 }) * 10)
        }
        XCTAssertTrue(metrics.render().contains("t_backlog 10\n"))
        XCTAssertTrue(metrics.render().contains("t_backlog 20\n"))
    }
}
