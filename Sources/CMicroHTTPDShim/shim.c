// accept4, SOCK_NONBLOCK and SOCK_CLOEXEC (cmhdshim_quiesce).
#define _GNU_SOURCE
#include "CMicroHTTPDShim.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

struct MHD_Daemon *cmhdshim_start(const char *bind_ip, struct cmhdshim_settings settings,
                                  MHD_AccessHandlerCallback handler, void *handler_cls,
                                  MHD_RequestCompletedCallback completed, void *completed_cls,
                                  MHD_NotifyConnectionCallback notify, void *notify_cls) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_port = htons(settings.port);
    if (inet_pton(AF_INET, bind_ip, &address.sin_addr) != 1) return NULL;
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    return MHD_start_daemon(flags, settings.port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_THREAD_POOL_SIZE, settings.threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, settings.idle_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, settings.connection_limit,
                            MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
                            MHD_OPTION_END);
}

struct header_visit {
    cmhdshim_header_visitor visit;
    void *context;
};

static enum MHD_Result visit_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    const struct header_visit *visit = cls;
    if (key != NULL) visit->visit(visit->context, key, value != NULL ? value : "");
    return MHD_YES;
}

int cmhdshim_each_header(struct MHD_Connection *connection, cmhdshim_header_visitor visit, void *context) {
    struct header_visit state = { visit, context };
    return MHD_get_connection_values(connection, MHD_HEADER_KIND, visit_header, &state);
}

int cmhdshim_each_argument(struct MHD_Connection *connection, cmhdshim_header_visitor visit, void *context) {
    struct header_visit state = { visit, context };
    return MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, visit_header, &state);
}

int cmhdshim_client_ip(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buffer, (socklen_t)size) ? 0 : -1;
    }
    if (sa->sa_family == AF_INET6) {
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buffer, (socklen_t)size) ? 0 : -1;
    }
    return -1;
}

int cmhdshim_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

void cmhdshim_shutdown_socket(int fd) {
    if (fd >= 0) (void)shutdown(fd, SHUT_RDWR);
}

int cmhdshim_quiesce(struct MHD_Daemon *daemon, unsigned int *adopted) {
    *adopted = 0;
    MHD_socket fd = MHD_quiesce_daemon(daemon);
    if (fd == MHD_INVALID_SOCKET) return -1;
    // MHD no longer polls the socket; non-blocking, so the loop below ends when the backlog is empty.
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    for (;;) {
        struct sockaddr_storage address;
        socklen_t length = sizeof(address);
        int client = accept4(fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            break;
        }
        // MHD closes the socket itself when it cannot take it.
        if (MHD_add_connection(daemon, client, (const struct sockaddr *)&address, length) == MHD_YES) (*adopted)++;
    }
    // On Linux, shutdown of a listening socket stops it listening: later SYNs are refused (or
    // go to another process listening on the port with SO_REUSEPORT).
    (void)shutdown(fd, SHUT_RDWR);
    return fd;
}

void cmhdshim_close_socket(int fd) {
    if (fd >= 0) (void)close(fd);
}

int cmhdshim_raise_open_files_limit(uint64_t wanted, uint64_t *soft, uint64_t *hard) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    rlim_t target = (rlim_t)wanted;
    if (limit.rlim_max != RLIM_INFINITY && target > limit.rlim_max) target = limit.rlim_max;
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < target) {
        struct rlimit raised = { target, limit.rlim_max };
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.rlim_cur = target;
    }
    *soft = limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)limit.rlim_cur;
    *hard = limit.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)limit.rlim_max;
    return 0;
}

int cmhdshim_respond(struct MHD_Connection *connection, unsigned int status,
                     const char *body, size_t length,
                     const char *const *headers, size_t header_count) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return 0;
    for (size_t i = 0; i + 1 < header_count * 2; i += 2) {
        MHD_add_response_header(response, headers[i], headers[i + 1]);
    }
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued == MHD_YES ? 1 : 0;
}
