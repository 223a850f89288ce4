#include "CCurlShim.h"
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    ccurlshim_response *response = context;
    size_t length = size * count;
    if (response->body_length + length > 4 * 1024 * 1024) return 0; /* answers are small; refuse floods */
    char *grown = realloc(response->body, response->body_length + length + 1);
    if (grown == NULL) return 0;
    memcpy(grown + response->body_length, data, length);
    response->body = grown;
    response->body_length += length;
    response->body[response->body_length] = '\0';
    return length;
}

static size_t on_header(char *data, size_t size, size_t count, void *context) {
    ccurlshim_response *response = context;
    size_t length = size * count;
    static const char name[] = "cache-control:";
    if (length > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        size_t start = sizeof(name) - 1;
        while (start < length && isspace((unsigned char)data[start])) start++;
        size_t end = length;
        while (end > start && isspace((unsigned char)data[end - 1])) end--;
        free(response->cache_control);
        response->cache_control = strndup(data + start, end - start);
    }
    return length;
}

int ccurlshim_global_init(void) { return (int)curl_global_init(CURL_GLOBAL_DEFAULT); }

int ccurlshim_request(const char *url, const char *post_body, size_t post_length, const char *content_type,
                      long timeout_ms, ccurlshim_response *response) {
    char header[256];
    const char *headers = NULL;
    if (post_body != NULL && content_type != NULL) {
        snprintf(header, sizeof(header), "Content-Type: %s", content_type);
        headers = header;
    }
    return ccurlshim_request_with(url, post_body, post_length, headers, 0, NULL, timeout_ms, response);
}

/* What the opensocket callback needs: the caller's check, and where to say what it refused. */
typedef struct {
    ccurlshim_address_check check;
    ccurlshim_response *response;
} address_guard;

/* Called by libcurl for each address it tries, after resolution and before connect: the one
   point that sees the address itself, whatever the name resolved to at save or resolves to now. */
static curl_socket_t open_checked(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    address_guard *guard = context;
    const unsigned char *bytes = NULL;
    size_t length = 0;
    if (address->family == AF_INET) {
        bytes = (const unsigned char *)&((const struct sockaddr_in *)&address->addr)->sin_addr;
        length = 4;
    } else if (address->family == AF_INET6) {
        bytes = (const unsigned char *)&((const struct sockaddr_in6 *)&address->addr)->sin6_addr;
        length = 16;
    }
    /* Any other family (a Unix socket) is refused: a tenant's URL names an internet host. */
    if (bytes == NULL || !guard->check(bytes, length)) {
        char *refused = guard->response->refused_address;
        if (refused[0] == '\0') {
            if (bytes == NULL || inet_ntop(address->family, bytes, refused, sizeof(guard->response->refused_address)) == NULL) {
                strncpy(refused, "an address of another family", sizeof(guard->response->refused_address) - 1);
            }
        }
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

static int perform(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                   int http2_only, const char *ca_file, long timeout_ms, address_guard *guard, int https_only,
                   int pooled, ccurlshim_response *response);

int ccurlshim_request_with(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                           int http2_only, const char *ca_file, long timeout_ms, ccurlshim_response *response) {
    memset(response, 0, sizeof(*response));
    return perform(url, post_body, post_length, header_lines, http2_only, ca_file, timeout_ms, NULL, 0, 0, response);
}

int ccurlshim_request_checked(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                              long timeout_ms, ccurlshim_address_check check, int https_only,
                              ccurlshim_response *response) {
    memset(response, 0, sizeof(*response));
    address_guard guard = {check, response};
    return perform(url, post_body, post_length, header_lines, 0, NULL, timeout_ms, check ? &guard : NULL, https_only,
                   1, response);
}

/* Handles of requests to apps' URLs (hooks, SMS APIs: `ccurlshim_request_checked`), kept between
   requests so that the next call to the same host reuses its connection (and TLS session)
   instead of a new handshake: taken most recently used first, one thread at a time each, and
   given back after. Only those requests use them, all under the process's one address policy,
   so a connection in their caches was opened through `open_checked` whenever the policy checks. */
#define IDLE_CHECKED_HANDLES 16
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *idle_handles[IDLE_CHECKED_HANDLES];
static int idle_count = 0;

static CURL *take_checked_handle(void) {
    pthread_mutex_lock(&idle_lock);
    CURL *curl = idle_count > 0 ? idle_handles[--idle_count] : NULL;
    pthread_mutex_unlock(&idle_lock);
    if (curl == NULL) return curl_easy_init();
    curl_easy_reset(curl); /* options only: its live connections and TLS sessions stay */
    return curl;
}

static void give_back_checked_handle(CURL *curl) {
    pthread_mutex_lock(&idle_lock);
    if (idle_count < IDLE_CHECKED_HANDLES) {
        idle_handles[idle_count++] = curl;
        curl = NULL;
    }
    pthread_mutex_unlock(&idle_lock);
    if (curl != NULL) curl_easy_cleanup(curl);
}

static int perform(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                   int http2_only, const char *ca_file, long timeout_ms, address_guard *guard, int https_only,
                   int pooled, ccurlshim_response *response) {
    CURL *curl = pooled ? take_checked_handle() : curl_easy_init();
    if (curl == NULL) {
        strncpy(response->error, "curl_easy_init failed", sizeof(response->error) - 1);
        return CURLE_FAILED_INIT;
    }
    struct curl_slist *headers = NULL;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, https_only ? "https" : "http,https");
    if (guard != NULL) {
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked);
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, guard);
        /* "" turns off the proxies of the environment (http_proxy, …): through one, the check
           would see the proxy's address and the proxy would reach the target unchecked. */
        curl_easy_setopt(curl, CURLOPT_PROXY, "");
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, response);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, response);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, response->error);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "identity-service");
    /* APNs speaks HTTP/2 only: negotiate it over TLS (ALPN h2) and refuse HTTP/1.1. */
    if (http2_only) curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    if (ca_file != NULL && ca_file[0] != '\0') curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    if (header_lines != NULL) {
        /* One header a line; no line may carry a CR or LF of its own (the caller builds them). */
        const char *line = header_lines;
        while (*line != '\0') {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line) : strlen(line);
            if (length > 0 && length < 8192) {
                char *copy = strndup(line, length);
                if (copy != NULL) { headers = curl_slist_append(headers, copy); free(copy); }
            }
            if (end == NULL) break;
            line = end + 1;
        }
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    if (post_body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)post_length);
    }
    CURLcode code = curl_easy_perform(curl);
    if (code == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
        long version = 0;
        curl_easy_getinfo(curl, CURLINFO_HTTP_VERSION, &version);
        response->http_version = version == CURL_HTTP_VERSION_2_0 ? 2 : (version == CURL_HTTP_VERSION_3 ? 3 : 1);
        if (http2_only && response->http_version != 2) {
            strncpy(response->error, "the server did not speak HTTP/2", sizeof(response->error) - 1);
            code = CURLE_HTTP2;
        }
    } else if (response->error[0] == '\0') {
        strncpy(response->error, curl_easy_strerror(code), sizeof(response->error) - 1);
    }
    curl_slist_free_all(headers);
    if (pooled) {
        /* Nothing of this request may outlive it in the handle: its callbacks point at it. */
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, NULL);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, NULL);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
        give_back_checked_handle(curl);
    } else {
        curl_easy_cleanup(curl);
    }
    return (int)code;
}

void ccurlshim_free_response(ccurlshim_response *response) {
    free(response->body);
    free(response->cache_control);
    response->body = NULL;
    response->cache_control = NULL;
}

char *ccurlshim_escape(const char *value) {
    return curl_easy_escape(NULL, value, 0);
}

void ccurlshim_free(char *value) { curl_free(value); }

typedef struct {
    const char *data;
    size_t length;
    size_t offset;
} upload_cursor;

static size_t on_upload(char *buffer, size_t size, size_t count, void *context) {
    upload_cursor *cursor = context;
    size_t room = size * count;
    size_t left = cursor->length - cursor->offset;
    size_t chunk = left < room ? left : room;
    memcpy(buffer, cursor->data + cursor->offset, chunk);
    cursor->offset += chunk;
    return chunk;
}

int ccurlshim_smtp_send(const char *url, const char *username, const char *password, int require_starttls,
                        const char *from, const char *recipient, const char *payload, size_t payload_length,
                        long timeout_ms, long *smtp_code, char *error, size_t error_size) {
    char curl_error[CURL_ERROR_SIZE] = {0};
    *smtp_code = 0;
    CURL *curl = curl_easy_init();
    if (curl == NULL) {
        snprintf(error, error_size, "curl_easy_init failed");
        return CURLE_FAILED_INIT;
    }
    upload_cursor cursor = {payload, payload_length, 0};
    struct curl_slist *recipients = curl_slist_append(NULL, recipient);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    if (username != NULL && username[0] != '\0') {
        curl_easy_setopt(curl, CURLOPT_USERNAME, username);
        curl_easy_setopt(curl, CURLOPT_PASSWORD, password != NULL ? password : "");
    }
    if (require_starttls) curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
    curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
    curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, recipients);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &cursor);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, smtp_code);
    if (code != CURLE_OK) {
        snprintf(error, error_size, "%s", curl_error[0] ? curl_error : curl_easy_strerror(code));
    }
    curl_slist_free_all(recipients);
    curl_easy_cleanup(curl);
    return (int)code;
}
