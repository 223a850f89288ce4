import Foundation
import IdentityKit

/// `/v1/admin/users…`: the app's backend manages its users with its secret key. Reads come
/// from the `user_profiles` view; every change is a command to the token worker (or, for
/// sessions, the revocation worker). The app is the secret key's own: every query and command
/// carries its id, so another app's uid is simply not found.
struct AdminUserRoutes: Sendable {
    let users: UserProfileStore
    let sessions: SessionStore
    let commands: CommandSender

    var routes: [Route] {
        [Route(method: "GET", pattern: "/v1/admin/users", needsApp: false, takesBody: false, limits: .admin,
               secretKey: .admin("admin.users.list"), handler: list),
         Route(method: "GET", pattern: "/v1/admin/users/{uid}", needsApp: false, takesBody: false, limits: .admin,
               errors: [.notFound], secretKey: .admin("admin.users.get"), handler: get)]
    }

    func list(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        var query = QueryReader(context.request)
        var filter = UserProfileStore.Filter(limit: query.integer("limit", in: 1...100) ?? 50)
        filter.emailPrefix = query.string("email", maxLength: 254)
        filter.phonePrefix = query.string("phone", maxLength: 32)
        filter.usernamePrefix = query.string("username", maxLength: 32)
        filter.provider = query.oneOf("provider", ["password", "apple", "google", "firebase"])
        filter.createdAfter = query.time("created_after").map(Timestamp.rfc3339(microsecondsSinceEpoch:))
        filter.createdBefore = query.time("created_before").map(Timestamp.rfc3339(microsecondsSinceEpoch:))
        filter.disabled = query.bool("disabled")
        filter.guest = query.bool("guest")
        if let cursor = query.string("cursor", maxLength: 64) {
            // The cursor is the last uid of the previous page (a ULID), nothing else.
            if cursor.utf8.count == 26, cursor.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }) {
                filter.beforeUid = cursor
            } else {
                query.add(.init(location: "query.cursor", message: "must be a next_cursor this endpoint gave"))
            }
        }
        try query.finish()
        let page = try users.list(appId: caller.app.id, filter)
        let next: JSONValue = page.count == filter.limit ? JSONValue(page.last?.uid) : .null
        return .now(.json(.object([
            "data": .array(page.map { UserJSON.admin($0.message) }),
            "next_cursor": next,
        ])))
    }

    func get(_ context: RouteContext) throws -> RouteResult {
        let caller = try context.requireAdmin()
        guard let uid = context.request.parameters["uid"], uid.utf8.count <= 64,
              let user = try users.find(appId: caller.app.id, uid: uid) else { throw ServiceError.notFound }
        return .now(.data(UserJSON.admin(user.message)))
    }
}
