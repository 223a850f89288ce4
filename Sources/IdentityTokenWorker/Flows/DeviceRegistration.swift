import IdentityKit

/// `identity.token.v1.RegisterDevice` (POST /v1/me/devices).
struct DeviceRegistration: Sendable {
    let pool: PGPool
    let devices: DeviceStore

    func handle(_ command: TokenV1.RegisterDevice) throws -> TokenV1.DeviceResult {
        let device = try pool.transaction { connection -> DeviceRecord in
            guard let device = try devices.register(appId: command.appId, uid: command.uid, sessionId: command.sessionId,
                                                    token: command.token, platform: command.platform, kind: command.kind,
                                                    deviceName: command.deviceName, on: connection)
            else { throw ServiceError.internal }
            try Events.deviceRegistered(device, on: connection)
            return device
        }
        return TokenV1.DeviceResult(device: device.message)
    }
}
