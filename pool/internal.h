/* pool/internal.h — what the pool's own files share: the wire format between a remote
 * slot and its agent (results, task bundles, timing options), and the agent's parts.
 *
 * Contract
 *  - Results travel as JSON (sg_pool_result_to_json / _from_json): the verdict and numbers
 *    of sg_pool_result, the validator's result under "val", the profiler's under "prof",
 *    each present when the slot produced it. Numbers that JSON cannot hold (Inf, NaN) are
 *    null and read back as NaN (max_abs / max_rel keep the validator's own rule).
 *    _from_json points r->val / r->prof at the caller's vr / pr.
 *  - A task bundle is the regular files directly in a task folder (not hidden, valid UTF-8,
 *    each at most SG_SOURCE_MAX, all together at most SG_POOL_TASK_MAX): a JSON object
 *    name -> text. Its hash is SHA-256 (hex) over the names in byte order, each as
 *    "name\0<length in decimal>\0text", so the agent can check what it was sent.
 *  - File names in a bundle are [A-Za-z0-9_][A-Za-z0-9._-]{0,127}: nothing from a request
 *    names a path outside the agent's cache folder. */
#ifndef SG_POOL_INTERNAL_H
#define SG_POOL_INTERNAL_H

#include "pool/pool.h"

#include <jansson.h>

#define SG_POOL_TASK_MAX ((size_t)8 << 20)
#define SG_POOL_HASH_HEX 65 /* 64 hex digits + NUL */

/* ---- results (wire.c) ---- */
json_t *sg_pool_result_to_json(const sg_pool_result *r);
int sg_pool_result_from_json(const json_t *j, sg_pool_result *r, sg_val_result *vr,
                             sg_prof_result *pr, sg_err *err);
/* Timing options both ways; _from_json checks ranges (a request's, so errors name it). */
json_t *sg_pool_prof_opts_to_json(const sg_prof_opts *o);
int sg_pool_prof_opts_from_json(const json_t *j, sg_prof_opts *o, sg_err *err);

/* ---- task bundles (task_bundle.c) ---- */
int sg_pool_bundle_name_ok(const char *name);
/* The bundle of dir (a new reference) and its hash; -1 with err when the folder cannot be
 * read, holds no task.json, or is too large. Files that cannot travel (too large, not UTF-8)
 * are left out, and named in *skipped (a new string the caller frees; NULL: none). */
json_t *sg_pool_bundle_read(const char *dir, char hash[SG_POOL_HASH_HEX], char **skipped,
                            sg_err *err);
/* The hash of a bundle object; -1 with err when a name or value is not allowed. */
int sg_pool_bundle_hash(const json_t *files, char hash[SG_POOL_HASH_HEX], sg_err *err);
/* Write a bundle into cache_dir/HASH (atomically: a temporary folder renamed), after
 * checking its hash and that its task.json loads. out: the folder. 1: written now; 0: it was
 * there already; -1: the bundle is wrong (hash, names, a task that does not load); -2: it
 * cannot be written (the cache folder's fault, not the sender's). Messages may name paths
 * under cache_dir. */
int sg_pool_bundle_store(const char *cache_dir, const char *hash, const json_t *files, char *out,
                         size_t outlen, sg_err *err);

/* ---- HTTP requests to agents, on the loop (remote_xfer.c) ---- */
typedef struct sg_pool_xfer sg_pool_xfer;
/* status: the HTTP status, 0 when no answer came (msg says why); body: the answer. */
typedef void (*sg_pool_xfer_fn)(void *arg, sg_pool_xfer *x, long status, const char *body,
                                size_t len, const char *msg);
typedef struct sg_pool_http {
    struct sg_curl_loop *cl;
    const char *token;  /* NULL: none */
    const char *cacert; /* NULL: the system's */
} sg_pool_http;
/* method "GET" / "POST" / "PUT"; body NULL: none. timeout_ms covers the whole request.
 * fn runs once, on the loop, never inside this call; sg_pool_xfer_cancel stops it without
 * fn. The returned handle is valid until fn ran or it was cancelled. */
sg_pool_xfer *sg_pool_xfer_start(const sg_pool_http *h, const char *method, const char *url,
                                 const char *body, size_t len, long timeout_ms, sg_pool_xfer_fn fn,
                                 void *arg);
void sg_pool_xfer_cancel(sg_pool_xfer *x);
/* A blocking GET (before the loop runs): the body (caller frees) and status, or NULL with
 * err. */
char *sg_pool_http_get_now(const sg_pool_http *h, const char *url, long timeout_ms, long *status,
                           sg_err *err);
/* "URL[,URL...]" or "@FILE" (one URL a line; blank lines and # comments skipped) into a
 * list of http(s) URLs without a trailing slash; -1 with err naming the bad one. */
int sg_pool_urls_parse(const char *spec, char ***urls, int *n, sg_err *err);
void sg_pool_urls_free(char **urls, int n);

#endif
