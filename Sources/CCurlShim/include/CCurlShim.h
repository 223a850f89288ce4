// libcurl's curl_easy_setopt and curl_easy_getinfo are variadic: one small request function
// does the whole exchange in C.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <stddef.h>

/// The answer of one HTTP exchange. `body` and `cache_control` are malloc'd; free them with
/// ccurlshim_free_response.
typedef struct {
    long status;
    char *body;
    size_t body_length;
    char *cache_control;
    /// 1 (HTTP/1.x), 2 or 3: what the exchange spoke.
    long http_version;
    char error[256];
    /// The first address the exchange's check refused to connect to, as text ("" when none).
    char refused_address[64];
} ccurlshim_response;

/// Whether the exchange may connect to an address: 4 (IPv4) or 16 (IPv6) bytes in network
/// order; nonzero allows. Called before each connect, with what the name actually resolved to.
typedef int (*ccurlshim_address_check)(const unsigned char *address, size_t length);

/// curl_global_init, once, before any thread sends a request.
int ccurlshim_global_init(void);

/// Sends one request (GET when `post_body` is NULL, else POST with `content_type`), following
/// no redirects, within `timeout_ms`. Returns 0 when an HTTP answer came back (any status),
/// else a CURLcode with `error` filled.
int ccurlshim_request(const char *url, const char *post_body, size_t post_length, const char *content_type,
                      long timeout_ms, ccurlshim_response *response);

/// The same with `header_lines` ("Name: value" lines joined by "\n"), `http2_only` (HTTP/2 over
/// TLS, as APNs requires; an answer in another version is an error) and `ca_file` (a CA bundle
/// to trust instead of the system's, for stand-ins; NULL or "" for the system's).
int ccurlshim_request_with(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                           int http2_only, const char *ca_file, long timeout_ms, ccurlshim_response *response);

/// ccurlshim_request_with for a URL an app set: every address libcurl is about to connect to
/// passes `check` first (CURLOPT_OPENSOCKETFUNCTION; one refused is not connected to, and when
/// none is left the exchange fails with `refused_address` set), no proxy is used (the check must
/// see the target's own address, not a proxy's), and `https_only` refuses plain http.
int ccurlshim_request_checked(const char *url, const char *post_body, size_t post_length, const char *header_lines,
                              long timeout_ms, ccurlshim_address_check check, int https_only,
                              ccurlshim_response *response);

void ccurlshim_free_response(ccurlshim_response *response);

/// Sends one message over SMTP (`smtp://host:port`, or `smtps://` for implicit TLS;
/// `require_starttls` 1 upgrades a plain connection and fails without it). Returns 0 when the
/// server accepted the message, else a CURLcode with `error` filled and `smtp_code` the last
/// reply code (550 and the like: a permanent refusal).
int ccurlshim_smtp_send(const char *url, const char *username, const char *password, int require_starttls,
                        const char *from, const char *recipient, const char *payload, size_t payload_length,
                        long timeout_ms, long *smtp_code, char *error, size_t error_size);

/// Percent-encodes a string for a form body; free with ccurlshim_free.
char *ccurlshim_escape(const char *value);
void ccurlshim_free(char *value);

#endif
