/// How many connections the gateway holds and how long a client may take to send a request
/// (`IDENTITY_HTTP_*`). The deadlines are real deadlines, not idle timeouts: a client that sends
/// one byte a second still loses its connection when the header block or body is not complete
/// in time, which is what keeps trickling sockets from pinning the server.
struct ConnectionLimits: Sendable, Equatable {
    /// Open connections in all (libmicrohttpd's `MHD_OPTION_CONNECTION_LIMIT`).
    var maxConnections = 4096
    /// Open connections per socket peer; peers inside the trusted proxies are exempt (a load
    /// balancer carries many clients).
    var maxConnectionsPerIP = 64
    /// From accept, or from the end of the previous response on a keep-alive connection, to
    /// the end of the header block. Also libmicrohttpd's idle timeout.
    var headerTimeoutSeconds = 10
    /// From the end of the header block to the whole body (and from a worker's answer to the
    /// response written).
    var bodyTimeoutSeconds = 30
}
