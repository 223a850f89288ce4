#include "CCurlShim.h"
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

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
    memset(response, 0, sizeof(*response));
    CURL *curl = curl_easy_init();
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
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, response);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, response);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, response->error);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "identity-service");
    if (post_body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)post_length);
        if (content_type != NULL) {
            char header[256];
            snprintf(header, sizeof(header), "Content-Type: %s", content_type);
            headers = curl_slist_append(headers, header);
            curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        }
    }
    CURLcode code = curl_easy_perform(curl);
    if (code == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
    } else if (response->error[0] == '\0') {
        strncpy(response->error, curl_easy_strerror(code), sizeof(response->error) - 1);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
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
