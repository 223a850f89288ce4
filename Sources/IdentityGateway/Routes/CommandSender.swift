import Foundation
import IdentityKit

/// Sends a command to a worker and turns its reply into an HTTP answer: the expected reply
/// type is rendered, `identity.common.v1.Error` becomes problem+json with the worker's code,
/// and no reply by the deadline becomes 503 `auth/unavailable`. The answer waits until this
/// replica has heard the store's changes the command committed (`SessionReads.afterCommitted`),
/// so the caller's next request here never reads a session or profile from before them; only
/// the success of a command that only adds sessions (`DeclaredOperation.onlyAddsSessions`: a
/// sign-in, a refresh) goes at once, as nothing held in memory changed and the new session is
/// read from the store on its first use.
struct CommandSender: Sendable {
    let bus: BusClient
    let timeout: Double
    var reads: SessionReads? = nil

    /// Answers once what was committed before now is heard (at once without `reads`, or when
    /// `command` only added sessions and succeeded; a refusal may have ended one).
    private static func answer(_ response: HTTPResponse, of command: String, reads: SessionReads?,
                               _ respond: @escaping @Sendable (HTTPResponse) -> Void) {
        guard let reads, !answersAtOnce(command, status: response.status) else { return respond(response) }
        reads.afterCommitted { respond(response) }
    }

    /// Whether an answer of `status` to `command` changed nothing `SessionReads` may hold.
    static func answersAtOnce(_ command: String, status: Int) -> Bool {
        status < 400 && DeclaredOperation.commandsOnlyAddingSessions.contains(command)
    }

    /// `authority`: what the command carries as its caller's token when it is not the request's
    /// Bearer token (the secret key an OAuth client presented as Basic or in its form).
    func send<Command: ProtoMessage, Reply: ProtoMessage>(
        _ command: Command, expecting: Reply.Type, queue: String = BusTopology.tokenCommands,
        appId: String, request: HTTPRequest, authority: String? = nil, render: @escaping @Sendable (Reply) -> HTTPResponse
    ) -> RouteResult {
        let requestId = request.requestId
        let callerToken = authority ?? Self.callerToken(request, queue: queue)
        let languages = Self.languages(request)
        let reads = self.reads
        return .later { respond in
            bus.request(command, queue: queue, appId: appId, requestId: requestId, callerToken: callerToken,
                        languages: languages, timeout: timeout) { result in
                Self.answer(Self.response(to: result, expecting: Reply.self, requestId: requestId, render: render),
                            of: Command.protoName, reads: reads, respond)
            }
        }
    }

    /// Two commands in a row: `first`'s reply becomes the second command (built by `next`), whose
    /// reply is rendered. A failure of either answers as `send` would, except that a refusal of
    /// the first (a 4xx) may be replaced by `firstRefusal` (deletion's proof → 403). Used when
    /// one worker verifies and another acts (a provider's id token, then the sign-in).
    func send<First: ProtoMessage, Middle: ProtoMessage, Second: ProtoMessage, Reply: ProtoMessage>(
        _ first: First, expecting middle: Middle.Type, queue firstQueue: String,
        then next: @escaping @Sendable (Middle) -> Second, expecting reply: Reply.Type,
        queue secondQueue: String = BusTopology.tokenCommands, firstRefusal: ServiceError? = nil,
        appId: String, request: HTTPRequest, render: @escaping @Sendable (Reply) -> HTTPResponse
    ) -> RouteResult {
        let requestId = request.requestId
        let bus = self.bus
        let timeout = self.timeout
        let firstCaller = Self.callerToken(request, queue: firstQueue)
        let secondCaller = Self.callerToken(request, queue: secondQueue)
        let languages = Self.languages(request)
        let reads = self.reads
        return .later { respond in
            bus.request(first, queue: firstQueue, appId: appId, requestId: requestId, callerToken: firstCaller,
                        timeout: timeout) { result in
                var intermediate: Middle?
                let failure = Self.response(to: result, expecting: Middle.self, requestId: requestId) { value in
                    intermediate = value
                    return .noContent
                }
                guard let intermediate else {
                    if let firstRefusal, (400...499).contains(failure.status) {
                        return Self.answer(.problem(firstRefusal, requestId: requestId), of: First.protoName, reads: reads, respond)
                    }
                    return Self.answer(failure, of: First.protoName, reads: reads, respond)
                }
                bus.request(next(intermediate), queue: secondQueue, appId: appId, requestId: requestId,
                            callerToken: secondCaller, languages: languages, timeout: timeout) { result in
                    Self.answer(Self.response(to: result, expecting: Reply.self, requestId: requestId, render: render),
                                of: Second.protoName, reads: reads, respond)
                }
            }
        }
    }

    /// The caller's bearer token, forwarded so the worker can check that a command acting for a
    /// user comes with that user's token (`CallerAuthority`). Only to the workers that act for
    /// users: the provider worker verifies third-party tokens and has no use for ours.
    private static func callerToken(_ request: HTTPRequest, queue: String) -> String {
        guard queue == BusTopology.tokenCommands || queue == BusTopology.revocationCommands,
              let authorization = request.header("authorization"), authorization.hasPrefix("Bearer ") else { return "" }
        let token = authorization.dropFirst(7).drop { $0 == " " }
        return token.utf8.count < 8192 ? String(token) : ""
    }

    /// The request's Accept-Language, for the messages a command sends (when the user has no
    /// stored locale): travels with every command as its `languages` header.
    private static func languages(_ request: HTTPRequest) -> [String] {
        request.header("accept-language").map { AcceptLanguage.parse($0) } ?? []
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
            var problem = ServiceError(code: error.code, status: Int(error.status), detail: error.detail,
                                       errors: error.errors.map { .init(location: $0.location, message: $0.message) },
                                       retryAfter: error.retryAfter > 0 ? Int(error.retryAfter) : nil)
            if !error.rateLimitPolicy.isEmpty {
                problem.rateLimit = RateLimitHeaders(policy: error.rateLimitPolicy, state: error.rateLimit)
            }
            return .problem(problem, requestId: requestId)
        }
        guard message.type == Reply.protoName, let reply = try? ProtoJSON.decode(Reply.self, from: message.body) else {
            Log.error("unexpected reply", ["type": message.type, "request_id": requestId])
            return .problem(.internal, requestId: requestId)
        }
        return render(reply)
    }
}
