import Foundation
import IdentityKit

/// Sends a command to a worker and turns its reply into an HTTP answer: the expected reply
/// type is rendered, `identity.common.v1.Error` becomes problem+json with the worker's code,
/// and no reply by the deadline becomes 503 `auth/unavailable`.
struct CommandSender: Sendable {
    let bus: BusClient
    let timeout: Double

    func send<Command: ProtoMessage, Reply: ProtoMessage>(
        _ command: Command, expecting: Reply.Type, queue: String = BusTopology.tokenCommands,
        appId: String, request: HTTPRequest, render: @escaping @Sendable (Reply) -> HTTPResponse
    ) -> RouteResult {
        let requestId = request.requestId
        return .later { respond in
            bus.request(command, queue: queue, appId: appId, requestId: requestId, timeout: timeout) { result in
                respond(Self.response(to: result, expecting: Reply.self, requestId: requestId, render: render))
            }
        }
    }

    private static func response<Reply: ProtoMessage>(
        to result: Result<BusMessage, BusClient.Failure>, expecting: Reply.Type, requestId: String,
        render: (Reply) -> HTTPResponse
    ) -> HTTPResponse {
        guard case .success(let message) = result else {
            return .problem(.unavailable, requestId: requestId)
        }
        if message.type == CommonV1.Error.protoName,
           let error = try? ProtoJSON.decode(CommonV1.Error.self, from: message.body) {
            let problem = ServiceError(code: error.code, status: Int(error.status), detail: error.detail,
                                       errors: error.errors.map { .init(location: $0.location, message: $0.message) })
            return .problem(problem, requestId: requestId)
        }
        guard message.type == Reply.protoName, let reply = try? ProtoJSON.decode(Reply.self, from: message.body) else {
            Log.error("unexpected reply", ["type": message.type, "request_id": requestId])
            return .problem(.internal, requestId: requestId)
        }
        return render(reply)
    }
}
