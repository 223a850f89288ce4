/// The one place a worker turns a command's outcome into its reply: the flow's answer, or
/// `identity.common.v1.Error` with a catalogue code, mapped by `ServiceError.answering` (the
/// gateway's mapping too).
public enum CommandReplies {
    /// Runs `route`, which returns nil for a command type it does not know.
    public static func answer(_ message: BusMessage,
                              _ route: (BusMessage) throws -> CommandConsumer.Reply?) -> CommandConsumer.Reply {
        let fields = ["type": message.type, "request_id": message.requestId]
        do {
            if let reply = try route(message) { return reply }
            Log.warning("unknown command type", fields)
            return error(.internal)
        } catch {
            return self.error(.answering(error, what: "command", fields: fields))
        }
    }

    public static func error(_ error: ServiceError) -> CommandConsumer.Reply {
        let message = CommonV1.Error(code: error.code, status: Int32(error.status), detail: error.detail,
                                     errors: error.errors.map { CommonV1.FieldError(location: $0.location, message: $0.message) },
                                     retryAfter: Int32(error.retryAfter ?? 0),
                                     rateLimitPolicy: error.rateLimit?.policy ?? "",
                                     rateLimit: error.rateLimit?.state ?? "")
        // Encoding a generated message of plain strings cannot fail; the fallback keeps the
        // reply path free of crash paths all the same.
        return (try? CommandConsumer.Reply(message)) ?? CommandConsumer.Reply.empty
    }
}
