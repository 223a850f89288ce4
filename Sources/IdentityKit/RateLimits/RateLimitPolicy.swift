/// One named rate limit: at most `count` requests per `window` seconds for one subject (an IP,
/// an address, a user) of one app. Apps override a limit by name (`identityctl apps settings
/// --rate-limit NAME=COUNT/WINDOW`); the override is read by the store function that counts,
/// so a change applies to every replica at once.
public struct RateLimitPolicy: Sendable, Equatable {
    public let name: String
    public let count: Int
    public let window: Double

    public init(name: String, count: Int, window: Double) {
        self.name = name
        self.count = count
        self.window = window
    }
}
