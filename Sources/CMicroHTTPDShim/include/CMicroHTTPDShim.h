// A thin layer over libmicrohttpd for what Swift cannot call directly: MHD_start_daemon and
// MHD_get_connection_info are variadic, a response needs several calls, and header iteration
// wants a plain callback. Also the two socket-level calls the HTTP server makes (shutdown of an
// overdue connection, the open-files limit), so Swift touches no C outside this module.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

/// What the daemon is started with.
struct cmhdshim_settings {
    uint16_t port;
    unsigned int threads;
    /// libmicrohttpd's idle timeout (MHD_OPTION_CONNECTION_TIMEOUT); 0 = none.
    unsigned int idle_timeout_seconds;
    /// MHD_OPTION_CONNECTION_LIMIT: open connections in all (divided among the threads).
    unsigned int connection_limit;
};

/// Starts a daemon with an epoll thread pool and suspend/resume enabled, listening on
/// `bind_ip:port` (IPv4). `notify` is told of every connection opened and closed
/// (MHD_OPTION_NOTIFY_CONNECTION). Returns NULL when the port cannot be bound.
struct MHD_Daemon *cmhdshim_start(const char *bind_ip, struct cmhdshim_settings settings,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  MHD_NotifyConnectionCallback notify, void *notify_cls);

/// Called once per request header line, in the order received; `value` is never NULL.
typedef void (*cmhdshim_header_visitor)(void *context, const char *name, const char *value);

/// Visits every request header line (MHD_get_connection_values, so repeated names are all
/// seen). Returns the number of lines.
int cmhdshim_each_header(struct MHD_Connection *connection, cmhdshim_header_visitor visit, void *context);

/// Visits every query-string argument (URL-decoded by MHD; a key without `=` has value "").
int cmhdshim_each_argument(struct MHD_Connection *connection, cmhdshim_header_visitor visit, void *context);

/// Writes the client's IP address (text) into `buffer`; returns 0 on success.
int cmhdshim_client_ip(struct MHD_Connection *connection, char *buffer, size_t size);

/// The connection's socket, or -1.
int cmhdshim_connection_fd(struct MHD_Connection *connection);

/// shutdown(fd, SHUT_RDWR): the peer gets end-of-file, and so does MHD's next read, which then
/// closes and frees the connection on its own thread.
void cmhdshim_shutdown_socket(int fd);

/// Raises the soft RLIMIT_NOFILE toward `wanted` (never past the hard limit, never lowers it).
/// Writes the resulting soft and hard limits; returns 0, or -1 when the limits cannot be read.
int cmhdshim_raise_open_files_limit(uint64_t wanted, uint64_t *soft, uint64_t *hard);

/// Stops the daemon listening (MHD_quiesce_daemon) while it keeps serving the connections it
/// has. Connections the kernel completed but MHD had not accepted yet are accepted here and
/// handed to MHD (MHD_add_connection), so their clients are answered rather than reset; then
/// the socket stops listening (shutdown), so new connections are refused at once. Returns the
/// listening socket, which must be closed only after MHD_stop_daemon (MHD's threads may still
/// refer to it), or -1 when the daemon was not listening. `*adopted` is the number of
/// connections handed to MHD.
int cmhdshim_quiesce(struct MHD_Daemon *daemon, unsigned int *adopted);

/// close(fd), for the socket cmhdshim_quiesce returned.
void cmhdshim_close_socket(int fd);

/// Queues a response built from a copy of `body`, with `header_count` name/value pairs.
/// Returns 1 when queued.
int cmhdshim_respond(struct MHD_Connection *connection, unsigned int status,
                     const char *body, size_t length,
                     const char *const *headers, size_t header_count);


#endif
