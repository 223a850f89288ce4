import Foundation
import IdentityKit

/// The pipeline's first and last step: every request is counted and timed by its route
/// *pattern* (never the raw path: `/v1/apps/{app_id}/...` is one series whatever the id),
/// method and status class (no app label here, even with per-app labels on: the key a
/// request names is the sender's word, and unresolved keys must not make series), and every line logged while it is dispatched carries its request id.
extension Gateway {
    func measured(_ request: HTTPRequest) -> RouteResult {
        let started = DispatchTime.now().uptimeNanoseconds
        let route: String
        let method: String
        // Matched once: the series' label here, the route `dispatch` runs.
        let match = router.match(method: request.method, path: request.path)
        if case .found(let matched, _) = match {
            route = matched.pattern
            method = matched.method
        } else {
            // Unknown paths and methods are one series each, whatever was asked for.
            route = "unmatched"
            method = "other"
        }
        let requestId = request.requestId
        let record: @Sendable (HTTPResponse) -> Void = { response in
            let statusClass = ServiceMetrics.statusClass(response.status)
            ServiceMetrics.httpRequests.inc(route, method, statusClass)
            ServiceMetrics.httpDuration.observeSince(started, route, method, statusClass)
            // The access log (debug): the pattern, never the raw path (it may carry an id).
            Log.debug("request answered", ["request_id": requestId, "route": route, "method": method,
                                           "status": response.status,
                                           "took_ms": (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000])
        }
        switch Log.withRequestId(request.requestId, { dispatch(request, match: match) }) {
        case .now(let response):
            record(response)
            return .now(response)
        case .later(let work):
            return .later { respond in
                work { response in
                    record(response)
                    respond(response)
                }
            }
        }
    }

}
