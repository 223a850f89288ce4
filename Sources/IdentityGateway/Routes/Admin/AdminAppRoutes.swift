import Foundation
import IdentityKit

/// The app's own admin resources: its secret key (rotation, with an overlap) and its audit log.
struct AdminAppRoutes: AdminAppApiHandlers {
    let secretKeys: SecretKeyStep
    let audit: AuditLog
    let commands: CommandSender


    /// What `identityctl apps settings` sets, checked by the same `AppSettingsUpdate` here (for
    /// a 422 before any command) and in the token worker, which writes them (it seals an Apple
    /// key with the master key). Answers the settings after the change. Turning a limit off and
    /// the operator's ceilings are left to the worker: they are its environment's word.
    // The declared operations that share a handler, each with its own route.
    func adminGetSettings(_ context: RouteContext) throws -> RouteResult { try settings(context, body: .object([:])) }
    func adminUpdateSettings(_ context: RouteContext) throws -> RouteResult { try settings(context, body: try BodyReader.parse(context.request.body)) }

    func settings(_ context: RouteContext, body: JSONValue) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let (update, shape) = AppSettingsUpdate.parse(body)
        let rules = update.problems(offAllowed: true).map { ServiceError.FieldProblem(location: "body.\($0.setting)", message: $0.message) }
        guard shape.isEmpty && rules.isEmpty else { throw ServiceError.validationFailed(shape + rules) }
        let command = AdminV1.UpdateAppSettings(appId: caller.app.id, settingsJson: body.serialized, actor: caller.actor)
        return commands.send(command, expecting: AdminV1.AppSettings.self, appId: caller.app.id, request: context.request) {
            HTTPResponse.data(JSONValue.parse(Data($0.settingsJson.utf8)) ?? .null)
        }
    }

    /// A new secret key, shown once; the keys live now keep working for `overlap_seconds`
    /// (default 1 day, at most 30 days, 0: they stop at once).
    func adminRotateSecretKey(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        let body = try GatewayV1.RotateSecretKeyRequest(declaredBodyOf: context)
        let command = AdminV1.RotateSecretKey(appId: caller.app.id, overlapSeconds: body.overlapSeconds, actor: caller.actor)
        let secretKeys = self.secretKeys
        let appId = caller.app.id
        return commands.send(command, expecting: AdminV1.SecretKeyRotated.self, appId: appId, request: context.request) {
            secretKeys.forget(appId: appId)
            return HTTPResponse.data(.object([
                "key_id": .string($0.keyId),
                "secret_key": .string($0.secretKey),
                "previous_key_ids": JSONValue($0.previousKeyIds),
                "previous_keys_expire_at": $0.previousKeysExpireAt.isEmpty ? .null : .string($0.previousKeysExpireAt),
            ]), status: 201)
        }
    }

    /// The app's audit rows, newest first, with filters and a cursor.
    func adminAuditLog(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        var query = QueryReader(context.request)
        var filter = AuditLog.Query(limit: query.integer("limit", in: 1...200) ?? 50)
        filter.actor = query.string("actor", maxLength: 128)
        filter.action = query.string("action", maxLength: 128)
        filter.target = query.string("target", maxLength: 128)
        filter.sinceMicros = query.time("since")
        filter.untilMicros = query.time("until")
        if let cursor = query.string("cursor", maxLength: 20) {
            if let id = Int64(cursor), id > 0 { filter.before = id } else {
                query.add(.init(location: "query.cursor", message: "must be a next_cursor this endpoint gave"))
            }
        }
        try query.finish()
        let rows = try audit.list(appId: caller.app.id, filter)
        let items: [JSONValue] = rows.map { row in
            .object([
                "id": .string(String(row.id)),
                "at": .string(Timestamp.rfc3339(microsecondsSinceEpoch: row.atMicros)),
                "actor": .string(row.entry.actor),
                "action": .string(row.entry.action),
                "target": JSONValue(row.entry.target),
                "ip": JSONValue(row.entry.ip),
                "request_id": JSONValue(row.entry.requestId),
                "detail": row.entry.detail,
            ])
        }
        let next: JSONValue = rows.count == filter.limit ? JSONValue(rows.last.map { String($0.id) }) : .null
        return .now(.json(.object(["data": .array(items), "next_cursor": next])))
    }
}
