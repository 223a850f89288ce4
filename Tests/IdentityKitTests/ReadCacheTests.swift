import XCTest
@testable import IdentityKit

/// The gateway's in-memory session reads (`ReadCache`): it fails closed (nothing served or stored
/// until in use, empty after each restart of use), evicts by CLOCK within its bound, ages entries
/// out, and refuses to store a read that a change overtook. Times are given, never measured.
final class ReadCacheTests: XCTestCase {
    private func cache(capacity: Int = 3, maximumAge: Double = 30) -> ReadCache<String> {
        let cache = ReadCache<String>(capacity: capacity, maximumAge: maximumAge)
        cache.startUsing()
        return cache
    }

    private func put(_ cache: ReadCache<String>, _ key: String, now: Double = 0) {
        guard let ticket = cache.ticket(key) else { return XCTFail("no ticket for \(key)") }
        XCTAssertTrue(cache.store([(key, "v-" + key)], ticket: ticket, now: now))
    }

    func testNothingIsServedOrStoredUntilInUse() {
        let cache = ReadCache<String>(capacity: 3, maximumAge: 30)
        XCTAssertNil(cache.ticket("a"))
        XCTAssertNil(cache.value("a", now: 0))
        cache.startUsing()
        put(cache, "a")
        XCTAssertEqual(cache.value("a", now: 1), "v-a")
    }

    func testLosingTheListenerStopsServingAndReconnectingStartsEmpty() {
        let cache = cache()
        put(cache, "a")
        let ticket = cache.ticket("b")!
        cache.stopUsing()
        XCTAssertNil(cache.value("a", now: 1), "served while changes are not heard")
        XCTAssertNil(cache.ticket("a"))
        cache.startUsing()
        XCTAssertNil(cache.value("a", now: 1), "an entry from before the loss survived the reconnect")
        XCTAssertEqual(cache.count, 0)
        // A read begun before the loss cannot store after the reconnect (it may have missed a change).
        XCTAssertFalse(cache.store([("b", "old")], ticket: ticket, now: 1))
        XCTAssertNil(cache.value("b", now: 1))
    }

    func testAnInvalidationRefusesTheReadItOvertook() {
        let cache = cache()
        let ticket = cache.ticket("s", "u")!
        cache.invalidate("s")  // the sign-out's notification, heard while the read ran
        XCTAssertFalse(cache.store([("s", "live"), ("u", "profile")], ticket: ticket, now: 0))
        XCTAssertNil(cache.values("s", "u", now: 0))
        // A read begun after the change stores.
        let later = cache.ticket("s", "u")!
        XCTAssertTrue(cache.store([("s", "ended?"), ("u", "profile")], ticket: later, now: 0))
        XCTAssertEqual(cache.values("s", "u", now: 0)?.0, "ended?")
    }

    func testInvalidateForgetsTheEntry() {
        let cache = cache()
        put(cache, "a")
        put(cache, "b")
        cache.invalidate("a")
        XCTAssertNil(cache.value("a", now: 0))
        XCTAssertEqual(cache.value("b", now: 0), "v-b")
        XCTAssertNil(cache.values("a", "b", now: 0), "both keys are needed for a hit")
    }

    func testOnlyTheTicketsOwnKeysStore() {
        let cache = cache()
        let ticket = cache.ticket("a")!
        XCTAssertFalse(cache.store([("other", "x")], ticket: ticket, now: 0))
        XCTAssertNil(cache.value("other", now: 0))
    }

    func testEntriesAgeOut() {
        let cache = cache(maximumAge: 30)
        put(cache, "a", now: 100)
        XCTAssertEqual(cache.value("a", now: 129.9), "v-a")
        XCTAssertNil(cache.value("a", now: 130))
        XCTAssertEqual(cache.count, 0)
    }

    func testClockEvictionGivesReadEntriesASecondChance() {
        let cache = cache(capacity: 3)
        put(cache, "a")
        put(cache, "b")
        put(cache, "c")
        XCTAssertEqual(cache.value("a", now: 0), "v-a")  // a is read: kept on the next pass
        put(cache, "d")
        XCTAssertEqual(cache.count, 3)
        XCTAssertNil(cache.value("b", now: 0), "b, not read since stored, goes first")
        XCTAssertEqual(cache.value("a", now: 0), "v-a")
        XCTAssertEqual(cache.value("c", now: 0), "v-c")
        XCTAssertEqual(cache.value("d", now: 0), "v-d")
    }

    func testTheBoundHoldsUnderManyKeys() {
        let cache = cache(capacity: 100)
        for index in 0..<1_000 { put(cache, "k\(index)") }
        XCTAssertEqual(cache.count, 100)
        XCTAssertEqual(cache.value("k999", now: 0), "v-k999")
    }

    func testForgetAllKeepsServing() {
        let cache = cache()
        put(cache, "a")
        cache.forgetAll()
        XCTAssertNil(cache.value("a", now: 0))
        put(cache, "a")
        XCTAssertEqual(cache.value("a", now: 0), "v-a")
    }

    func testChangePayloads() {
        XCTAssertEqual(SessionChange.parse(#"{"k":"s","a":"app_1","id":"ses_2"}"#), .session(appId: "app_1", sessionId: "ses_2"))
        XCTAssertEqual(SessionChange.parse(#"{"k":"u","a":"app_1","id":"usr_2"}"#), .user(appId: "app_1", uid: "usr_2"))
        XCTAssertEqual(SessionChange.parse(SessionChange.syncPayload("sync_01")), .sync(marker: "sync_01"))
        XCTAssertNil(SessionChange.parse(#"{"k":"x","a":"app_1","id":"y"}"#))
        XCTAssertNil(SessionChange.parse(#"{"k":"s","id":"ses_2"}"#))
        XCTAssertNil(SessionChange.parse("not json"))
    }
}
