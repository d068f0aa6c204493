/* HTTP requests from remote slots to their agents: asynchronous ones on the loop (through
 * common/curl_loop.h, so connections are kept alive and reused), one blocking GET for the
 * start, and the --pool URL list (pool/internal.h). */
#include "pool/internal.h"

#include "common/buf.h"
#include "common/curl_loop.h"
#include "common/log.h"
#include "common/redact.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct sg_pool_xfer {
    sg_curl_loop *cl;
    CURL *e;
    struct curl_slist *hdr;
    sg_buf resp;
    char *body;
    sg_pool_xfer_fn fn;
    void *arg;
    uint64_t fail_timer; /* the request could not start: reported from the loop */
};

static size_t collect(char *p, size_t size, size_t n, void *arg) {
    sg_buf *b = arg;
    if (b->len + size * n > ((size_t)64 << 20)) return 0; /* no agent says that much */
    sg_buf_append(b, p, size * n);
    return size * n;
}

static struct curl_slist *headers(const sg_pool_http *h, int json) {
    struct curl_slist *l = NULL;
    if (json) l = curl_slist_append(l, "Content-Type: application/json");
    l = curl_slist_append(l, "Expect:"); /* no 100-continue round trip before a body */
    if (h->token) {
        sg_buf b = {0};
        sg_buf_printf(&b, "Authorization: Bearer %s", h->token);
        l = curl_slist_append(l, b.data);
        sg_buf_free(&b);
    }
    return l;
}

static CURL *easy(const sg_pool_http *h, const char *method, const char *url, long timeout_ms,
                  sg_buf *resp, struct curl_slist *hdr) {
    CURL *e = curl_easy_init();
    if (!e) return NULL;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 5000 ? timeout_ms : 5000L);
    if (h->cacert) curl_easy_setopt(e, CURLOPT_CAINFO, h->cacert);
    return e;
}

static void done(sg_curl_loop *cl, CURL *e, CURLcode rc, void *arg) {
    (void)cl;
    sg_pool_xfer *x = arg;
    long status = 0;
    char msg[300] = "";
    if (rc == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    else
        snprintf(msg, sizeof msg, "%s", curl_easy_strerror(rc));
    x->fn(x->arg, x, status, x->resp.data ? x->resp.data : "", x->resp.len, msg);
    sg_pool_xfer_cancel(x); /* frees; the transfer is over */
}

static void failed(sg_loop *loop, void *arg) {
    (void)loop;
    sg_pool_xfer *x = arg;
    x->fail_timer = 0;
    x->fn(x->arg, x, 0, "", 0, "the request could not be started");
    sg_pool_xfer_cancel(x);
}

sg_pool_xfer *sg_pool_xfer_start(const sg_pool_http *h, const char *method, const char *url,
                                 const char *body, size_t len, long timeout_ms, sg_pool_xfer_fn fn,
                                 void *arg) {
    sg_pool_xfer *x = sg_xcalloc(1, sizeof *x);
    x->cl = h->cl;
    x->fn = fn;
    x->arg = arg;
    x->hdr = headers(h, body != NULL);
    x->e = easy(h, method, url, timeout_ms, &x->resp, x->hdr);
    if (body) {
        x->body = sg_xmalloc(len + 1);
        memcpy(x->body, body, len);
        x->body[len] = 0;
        curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt(x->e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    sg_err err;
    if (!x->e || sg_curl_loop_add(h->cl, x->e, done, x, &err) < 0) {
        if (x->e) curl_easy_cleanup(x->e);
        x->e = NULL; /* reported from the loop like any failure, never inside this call */
        x->fail_timer = sg_loop_timer(sg_curl_loop_loop(h->cl), 0, failed, x);
        return x;
    }
    /* Not sg_curl_loop_kick: it would run `done` callbacks (this transfer's or another's)
     * inside this call, while the caller still holds what the callback may free. */
    sg_curl_loop_kick_soon(h->cl);
    return x;
}

void sg_pool_xfer_cancel(sg_pool_xfer *x) {
    if (!x) return;
    if (x->fail_timer) sg_loop_timer_cancel(sg_curl_loop_loop(x->cl), x->fail_timer);
    if (x->e) {
        sg_curl_loop_remove(x->cl, x->e);
        curl_easy_cleanup(x->e);
    }
    curl_slist_free_all(x->hdr);
    sg_buf_free(&x->resp);
    free(x->body);
    free(x);
}

char *sg_pool_http_get_now(const sg_pool_http *h, const char *url, long timeout_ms, long *status,
                           sg_err *err) {
    sg_buf resp = {0};
    struct curl_slist *hdr = headers(h, 0);
    CURL *e = easy(h, "GET", url, timeout_ms, &resp, hdr);
    CURLcode rc = e ? curl_easy_perform(e) : CURLE_FAILED_INIT;
    *status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    if (e) curl_easy_cleanup(e);
    curl_slist_free_all(hdr);
    if (rc != CURLE_OK) {
        sg_buf_free(&resp);
        sg_errf(err, "%s", curl_easy_strerror(rc));
        return NULL;
    }
    if (!resp.data) sg_buf_append_str(&resp, "");
    return sg_buf_steal(&resp);
}

static int add_url(char *u, char ***urls, int *n, const char *where, sg_err *err) {
    while (*u == ' ' || *u == '\t') u++;
    size_t len = strlen(u);
    while (len && strchr(" \t\r/", u[len - 1])) u[--len] = 0;
    if (!len || u[0] == '#') return 0;
    if ((strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) || strchr(u, ' ') || len > 400 ||
        !strchr(u, ':') || strlen(strchr(u, ':') + 3) == 0) {
        char *w = sg_redact_url(where), *shown = sg_redact_url(u);
        sg_errf(err, "--pool %s: '%s' is not an http:// or https:// URL", w, shown);
        free(w);
        free(shown);
        return -1;
    }
    if (*n == 256) return sg_errf(err, "--pool %s: at most 256 agents", where);
    *urls = sg_xrealloc(*urls, (size_t)(*n + 1) * sizeof **urls);
    (*urls)[(*n)++] = sg_xstrdup(u);
    return 0;
}

int sg_pool_urls_parse(const char *spec, char ***urls, int *n, sg_err *err) {
    *urls = NULL;
    *n = 0;
    sg_buf b = {0};
    const char *sep = ",";
    int rc = 0;
    if (spec[0] == '@') {
        if (sg_buf_read_small(&b, "--pool", spec + 1, err) < 0) return -1;
        sep = "\n";
    } else {
        sg_buf_append_str(&b, spec);
    }
    char *save = NULL;
    for (char *u = strtok_r(b.data ? b.data : "", sep, &save); u && rc == 0;
         u = strtok_r(NULL, sep, &save))
        rc = add_url(u, urls, n, spec, err);
    sg_buf_free(&b);
    if (rc == 0 && *n == 0) rc = sg_errf(err, "--pool %s: no agent URL in it", spec);
    if (rc < 0) {
        sg_pool_urls_free(*urls, *n);
        *urls = NULL;
        *n = 0;
    }
    return rc;
}

void sg_pool_urls_free(char **urls, int n) {
    for (int i = 0; i < n; i++) free(urls[i]);
    free(urls);
}

/* The first line of a small file (a token): NULL with err. */
char *sg_pool_token_read(const char *opt, const char *path, sg_err *err) {
    int others;
    char *t = sg_read_secret_line(opt, path, "token", &others, err);
    if (t && others) sg_warn("pool", "%s is readable by other users (chmod 600 it)", path);
    return t;
}
