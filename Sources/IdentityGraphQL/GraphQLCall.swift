import GraphQL
import IdentityBasics
import OperationAPI

/// What a resolver has: the typed operation API and the caller of the GraphQL request (its
/// `X-App-Key`, bearer, client address and request id go with every call). Each call runs the
/// declared operation as its REST route does (access, body checks, limits, the command), so no
/// flow is implemented twice; a refusal becomes a GraphQL error carrying the catalogue's code.
public struct GraphQLCall: Sendable {
    public let operations: Operations
    public let caller: OperationCaller
    /// The app's client profile decides what `token` is (docs/client-profiles.md, "GraphQL").
    public let singleToken: Bool
    /// The single-token profile's long-lived session token for a new session, as its REST
    /// edge issues it (access token, uid, session id in).
    public let sessionToken: @Sendable (String, String, String) async throws(OperationProblem) -> String

    public init(operations: Operations, caller: OperationCaller, singleToken: Bool,
                sessionToken: @escaping @Sendable (String, String, String) async throws(OperationProblem) -> String) {
        self.operations = operations
        self.caller = caller
        self.singleToken = singleToken
        self.sessionToken = sessionToken
    }

    /// One operation call's `data`, or its refusal thrown as a GraphQL error.
    func data(_ call: (Operations, OperationCaller) async throws -> OperationAnswer) async throws -> JSONValue {
        do {
            return try await call(operations, caller).data
        } catch let problem as OperationProblem {
            throw Self.graphQLError(problem)
        }
    }

    /// A refusal as a GraphQL error: its `code`, its `detail`, and the HTTP status, field errors
    /// and wait as further extensions.
    static func graphQLError(_ problem: OperationProblem) -> GraphQLError {
        var extensions: [(String, GraphQLValue)] = [("status", .int(problem.status))]
        if let errors = problem.errors { extensions.append(("errors", GraphQLBridge.value(errors))) }
        if let retryAfter = problem.retryAfter { extensions.append(("retryAfter", .int(retryAfter))) }
        return GraphQLError(problem.detail, code: problem.code, extensions: extensions)
    }

    static let internalError = GraphQLError("Internal error.", code: "auth/internal")

    /// A sign-in's answer as `AuthPayload`: the token of the app's profile, or the MFA
    /// challenge (`requiresTwoFactor`). `userMetadata`: fields the new user keeps in
    /// `user_metadata` (seed 003's profile fields), written with the new session's token by
    /// `updateMe`, so the answer's user has them.
    func signIn(userMetadata: JSONValue? = nil,
                _ call: (Operations, OperationCaller) async throws -> OperationAnswer) async throws -> GraphQLValue {
        var data = try await self.data(call)
        if let userMetadata, data["mfa"] == nil, case .string(let access)? = data["access_token"], case .object(var fields) = data {
            let caller = self.caller.signedIn(as: access)
            fields["user"] = try await self.data { operations, _ in
                try await operations.updateMe(UpdateMeInput(userMetadata: userMetadata), as: caller)
            }
            data = .object(fields)
        }
        if case .object(let mfa)? = data["mfa"] {
            var method: GraphQLValue = .null
            if case .array(let methods)? = mfa["methods"], case .string(let first)? = methods.first {
                method = .string(first == "totp" ? "authenticator" : first)
            }
            return .object([("user", .null), ("token", .null), ("refreshToken", .null), ("requiresTwoFactor", .bool(true)),
                            ("twoFactorToken", GraphQLBridge.value(mfa["challenge_token"] ?? .null)), ("twoFactorMethod", method)])
        }
        guard case .string(let access)? = data["access_token"], case .string(let sessionId)? = data["session_id"],
              let user = data["user"], case .string(let uid)? = user["uid"] else {
            throw Self.internalError
        }
        var token = access
        var refresh: GraphQLValue = GraphQLBridge.value(data["refresh_token"] ?? .null)
        if singleToken {
            do {
                token = try await sessionToken(access, uid, sessionId)
            } catch {
                throw Self.graphQLError(error)
            }
            refresh = .null
        }
        return .object([("user", GraphQLBridge.user(user)), ("token", .string(token)), ("refreshToken", refresh),
                        ("requiresTwoFactor", .bool(false)), ("twoFactorToken", .null), ("twoFactorMethod", .null)])
    }
}
