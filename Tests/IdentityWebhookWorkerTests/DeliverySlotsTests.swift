import IdentityKit
import XCTest

@testable import IdentityWebhookWorker

/// How the webhook worker shares its delivery slots: one app, however many endpoints it has and
/// however slow they are, leaves the rest to the other apps; a failing endpoint holds one probe.
final class DeliverySlotsTests: XCTestCase {
    private let settings = DeliveryLoop.Settings(concurrency: 10, appConcurrency: 4, endpointConcurrency: 3,
                                                  retrySchedule: [1], pollSeconds: 1, policy: OutboundAddressPolicy())

    func testOneAppsEndpointsTakeAtMostItsShare() {
        var slots = DeliveryLoop.Slots()
        var taken = 0
        for endpoint in 0..<8 where slots.take(endpoint: "ep\(endpoint)", app: "slow", settings) { taken += 1 }
        XCTAssertEqual(taken, 4)
        XCTAssertEqual(slots.full(settings).apps, ["slow"])
        // Another app still finds slots.
        XCTAssertTrue(slots.take(endpoint: "other-ep", app: "other", settings))
        XCTAssertEqual(slots.total, 5)
    }

    func testAnEndpointTakesAtMostItsOwnLimit() {
        var slots = DeliveryLoop.Slots()
        XCTAssertEqual((0..<5).filter { _ in slots.take(endpoint: "ep", app: "app", settings) }.count, 3)
        XCTAssertEqual(slots.full(settings).endpoints, ["ep"])
    }

    func testAFailingEndpointHoldsOneProbeUntilAnAttemptSucceeds() {
        var slots = DeliveryLoop.Slots()
        XCTAssertTrue(slots.take(endpoint: "ep", app: "app", settings))
        slots.give(endpoint: "ep", app: "app", succeeded: false)
        XCTAssertTrue(slots.take(endpoint: "ep", app: "app", settings))
        XCTAssertFalse(slots.take(endpoint: "ep", app: "app", settings))
        XCTAssertEqual(slots.full(settings).endpoints, ["ep"])
        slots.give(endpoint: "ep", app: "app", succeeded: true)
        XCTAssertEqual((0..<5).filter { _ in slots.take(endpoint: "ep", app: "app", settings) }.count, 3)
    }

    func testTheTotalBoundsEveryApp() {
        var slots = DeliveryLoop.Slots()
        var taken = 0
        for app in 0..<5 {
            for endpoint in 0..<4 where slots.take(endpoint: "ep\(app)-\(endpoint)", app: "app\(app)", settings) { taken += 1 }
        }
        XCTAssertEqual(taken, 10)
        XCTAssertEqual(slots.total, 10)
        slots.give(endpoint: "ep0-0", app: "app0", succeeded: true)
        XCTAssertEqual(slots.total, 9)
        XCTAssertNil(slots.endpoint["ep0-0"])
    }
}
