import IdentityKit

/// Apple's server-to-server notifications (docs/api-contract.md, "Operating the service";
/// docs/flows.md, "Apple's notifications"): the provider worker verifies the signed event against
/// Apple's keys for one of the app's client ids and seals it; the token worker applies it once. The
/// answer is an empty 200 either way it succeeds (applied now, or already): Apple retries anything
/// else.
struct AppleNotificationRoutes: AppleNotificationApiHandlers {
    let commands: CommandSender

    func appleNotification(_ context: RouteContext) throws -> RouteResult {
        guard let app = context.app else { throw ServiceError.notFound }
        let body = try GatewayV1.AppleNotificationRequest(declaredBodyOf: context)
        let verify = ProviderV1.VerifyAppleNotification(appId: app.id, payload: body.payload)
        return commands.send(verify, expecting: ProviderV1.VerifiedAppleEvent.self, queue: BusTopology.providerCommands,
                             then: { TokenV1.ApplyAppleEvent(appId: app.id, event: $0) },
                             expecting: TokenV1.Done.self, appId: app.id, request: context.request) { _ in
            HTTPResponse.data(.object([:]))
        }
    }
}
