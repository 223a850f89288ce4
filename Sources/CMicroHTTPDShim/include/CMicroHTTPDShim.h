// A thin layer over libmicrohttpd for what Swift cannot call directly: MHD_start_daemon and
// MHD_get_connection_info are variadic, and a response needs several calls.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

/// Starts a daemon with an epoll thread pool and suspend/resume enabled, listening on
/// `bind_ip:port` (IPv4). Returns NULL when the port cannot be bound.
struct MHD_Daemon *cmhdshim_start(const char *bind_ip, uint16_t port, unsigned int threads,
                                  unsigned int connection_timeout_seconds,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls);

/// A request header's value, or NULL.
const char *cmhdshim_header(struct MHD_Connection *connection, const char *name);

/// Writes the client's IP address (text) into `buffer`; returns 0 on success.
int cmhdshim_client_ip(struct MHD_Connection *connection, char *buffer, size_t size);

/// Queues a response built from a copy of `body`, with `header_count` name/value pairs.
/// Returns 1 when queued.
int cmhdshim_respond(struct MHD_Connection *connection, unsigned int status,
                     const char *body, size_t length,
                     const char *const *headers, size_t header_count);


#endif
