/* One blocking HTTP request to a route at the server's root (BASE without /v1), for
 * commands and setup (/metrics, /tokenize), never for the event loop. */
#include "llm/llm_impl.h"

#include "common/redact.h"

#include <string.h>

static size_t collect(char *p, size_t sz, size_t nm, void *arg) {
    sg_buf_append(arg, p, sz * nm);
    return sz * nm;
}

CURL *sg_llm_http_easy(const char *base_url, const char *route, const char *post_json,
                       const char *api_key, long timeout_ms, sg_buf *body, sg_buf *url,
                       struct curl_slist **headers) {
    sg_buf auth = {0};
    sg_buf_append_str(url, base_url);
    while (url->len && url->data[url->len - 1] == '/') url->data[--url->len] = '\0';
    if (url->len >= 3 && !strcmp(url->data + url->len - 3, "/v1")) url->data[url->len -= 3] = 0;
    sg_buf_append_str(url, route);
    struct curl_slist *h = NULL;
    if (post_json) h = curl_slist_append(h, "Content-Type: application/json");
    if (api_key && *api_key) {
        sg_buf_printf(&auth, "Authorization: Bearer %s", api_key);
        h = curl_slist_append(h, auth.data); /* curl copies it */
        explicit_bzero(auth.data, auth.len);
        sg_buf_free(&auth);
    }
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url->data);
    if (h) curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    if (post_json) curl_easy_setopt(e, CURLOPT_POSTFIELDS, post_json);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    *headers = h;
    return e;
}

int sg_llm_http_root(const char *base_url, const char *route, const char *post_json,
                     const char *api_key, long timeout_ms, sg_buf *body, long *status,
                     sg_err *err) {
    sg_buf url = {0};
    struct curl_slist *h;
    CURL *e = sg_llm_http_easy(base_url, route, post_json, api_key, timeout_ms, body, &url, &h);
    CURLcode rc = curl_easy_perform(e);
    *status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(e);
    curl_slist_free_all(h);
    char shown[512];
    sg_redact_url_fit(shown, sizeof shown, url.data);
    sg_buf_free(&url);
    if (rc == CURLE_OK) return 0;
    return sg_errf(err, "%s: %s", shown, curl_easy_strerror(rc));
}
