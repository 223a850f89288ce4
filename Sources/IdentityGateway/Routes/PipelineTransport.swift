import Foundation
import IdentityKit
import OperationAPI

/// The gateway's transport of the typed operation API (`Operations`): a call runs its declared
/// route through the whole pipeline (`Gateway.dispatch`: app, access, fresh proof, limits,
/// audit, the handler and its command), the route found by the operation's name, never by a
/// path. So an in-process door gets exactly what the HTTP door gets, refusals included.
struct PipelineTransport: OperationTransport {
    let pipeline: PipelineBox

    func call(_ operation: OperationName, parameters: [String: String], query: [String: String], body: JSONValue?,
              as caller: OperationCaller) async throws(OperationProblem) -> OperationAnswer {
        guard let route = pipeline.routes[operation.rawValue] else {
            throw OperationProblem(status: 404, code: ServiceError.notFound.code, detail: ServiceError.notFound.detail)
        }
        var headers = caller.headers
        var data = Data()
        if let body {
            headers["content-type"] = "application/json"
            data = Data(body.serialized.utf8)
        }
        var request = HTTPRequest(method: route.method, path: Self.path(route.pattern, parameters), headers: headers, body: data,
                                  clientIP: caller.clientIP, peerIP: caller.peerIP, requestId: caller.requestId)
        request.query = query
        request.console = caller.console.map { ConsoleCredential(sessionToken: $0.sessionToken, appId: $0.appId) }
        let core = request
        // The pipeline blocks on the store (app, rate limits, token checks): it runs on a
        // dispatch queue, never on one of Swift concurrency's few cooperative threads.
        let pipeline = self.pipeline
        let result: RouteResult = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: pipeline.dispatchMatched(core, .found(route, parameters: parameters)))
            }
        }
        return try Self.answer(await result.response())
    }

    /// The answer's `data`, or its problem document as the thrown problem.
    static func answer(_ response: HTTPResponse) throws(OperationProblem) -> OperationAnswer {
        let body: JSONValue? = if case .value(let value) = JSONValue.parseBody(response.body) { value } else { nil }
        let kept = response.headers.filter { $0.0.lowercased() != "content-type" }
        guard response.status >= 400 else {
            return OperationAnswer(status: response.status, data: response.status == 204 ? .null : body?["data"] ?? .null,
                                   headers: kept)
        }
        let fallback: ServiceError = response.status >= 500 ? .internal : .validationFailed([])
        let retryAfter = response.headers.first { $0.0.lowercased() == "retry-after" }.flatMap { Int($0.1) }
        throw OperationProblem(status: response.status, code: body?["code"]?.string ?? fallback.code,
                               detail: body?["detail"]?.string ?? HTTPResponse.reasonPhrase(response.status),
                               errors: body?["errors"], retryAfter: retryAfter)
    }

    /// The route's pattern with its parameters, percent-encoded (what logs and the body cap see).
    static func path(_ pattern: String, _ parameters: [String: String]) -> String {
        var path = pattern
        for (name, value) in parameters {
            path = path.replacingOccurrences(of: "{\(name)}", with: value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? "-")
        }
        return path
    }
}

extension RouteResult {
    /// The answer, now or once a worker's reply has come.
    func response() async -> HTTPResponse {
        switch self {
        case .now(let response): return response
        case .later(let work):
            return await withCheckedContinuation { continuation in work { continuation.resume(returning: $0) } }
        }
    }
}

/// Lets routes built before the gateway reach its pipeline (set once in `Gateway.init`).
final class PipelineBox: @unchecked Sendable {
    var dispatch: @Sendable (HTTPRequest) -> RouteResult = { .now(.problem(.unavailable, requestId: $0.requestId)) }
    /// `dispatch` with the route already found (`PipelineTransport`).
    var dispatchMatched: @Sendable (HTTPRequest, Router.Match) -> RouteResult = { request, _ in
        .now(.problem(.unavailable, requestId: request.requestId))
    }
    /// The declared operations' routes by operation id.
    var routes: [String: Route] = [:]
}
