/// How old an Apple server-to-server notification may be (its `iat`): the provider worker
/// refuses an older one, so the record that makes an event apply once is needed no longer than
/// this; the retention purge then forgets it.
public enum AppleNotificationWindow {
    public static let seconds: Int64 = 7 * 24 * 3600
}
