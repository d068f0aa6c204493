/* libFuzzer target: the pool agent's request handling (sg_agent_handle), as the HTTP layer
 * hands it requests after the token and body-size checks: routes, job ids and slot numbers
 * in paths, query arguments, job submissions (JSON bodies), cancels, role changes, event
 * long-polls. The input is up to 8 requests separated by a line "====", each:
 *
 *     METHOD PATH
 *     name=value          (query arguments, any number)
 *                         (an empty line)
 *     body
 *
 * "@TASK@" anywhere stands for the SHA-256 of a task stored in the agent's cache at start,
 * so submissions can get past the hash check and queue real jobs. The loop never runs, so
 * no worker starts: queued jobs stay queued, and cancels drop them.
 * Invariants besides no crash, leak or undefined behaviour: every status is 200..599; an
 * error (>= 400) is a JSON object with an "error" string; a JSON reply parses; a suspended
 * long-poll asked again with its wait over answers. */
#include "common/loop.h"
#include "pool/agent.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cache[64];
static char task_hash[SG_POOL_HASH_HEX];

static const char task_json[] =
    "{\"name\": \"k\", \"baseline\": \"baseline.cl\", \"reference\": \"reference.cl\","
    " \"sizes\": {\"N\": 64},"
    " \"buffers\": [{\"name\": \"x\", \"type\": \"f32\", \"count\": \"N\", \"role\": \"in\"},"
    "  {\"name\": \"y\", \"type\": \"f32\", \"count\": \"N\", \"role\": \"out\"}],"
    " \"scalars\": [{\"name\": \"N\", \"type\": \"i32\", \"value\": \"N\"}],"
    " \"args\": [\"x\", \"y\", \"N\"]}";
static const char kernel[] = "//@launch k grid=ceil_div(N,64) block=64\n"
                             "__kernel void k(__global const float *x, __global float *y, int "
                             "n) { int i = get_global_id(0); if (i < n) y[i] = x[i]; }\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(cache, sizeof cache, "/tmp/fuzz_agent.XXXXXX");
    if (!mkdtemp(cache)) abort();
    json_t *files = json_pack("{s:s,s:s,s:s}", "task.json", task_json, "baseline.cl", kernel,
                              "reference.cl", kernel);
    sg_err e;
    char dir[4200];
    if (sg_pool_bundle_hash(files, task_hash, &e) < 0 ||
        sg_pool_bundle_store(cache, task_hash, files, dir, sizeof dir, &e) < 0) {
        fprintf(stderr, "fuzz_agent: cannot store its task: %s\n", e.msg);
        abort();
    }
    json_decref(files);
    return 0;
}

typedef struct query {
    int n;
    const char *name[16], *value[16];
} query;

static const char *query_arg(void *ctx, const char *name) {
    query *q = ctx;
    for (int i = 0; i < q->n; i++)
        if (!strcmp(q->name[i], name)) return q->value[i];
    return NULL;
}

/* Every error body is {"error": "..."}; every other JSON body parses. */
static void check_reply(const sg_agent_reply *r) {
    if (r->status < 200 || r->status > 599) abort();
    if (r->ctype) return; /* /metrics: Prometheus text */
    json_error_t je;
    json_t *j = json_loadb(r->body.data ? r->body.data : "", r->body.len, 0, &je);
    if (!j || (r->status >= 400 && !json_is_string(json_object_get(j, "error")))) {
        fprintf(stderr, "fuzz_agent: status %d with a body that is no %s: %.*s\n", r->status,
                j ? "error object" : "JSON", (int)r->body.len, r->body.data ? r->body.data : "");
        abort();
    }
    json_decref(j);
}

/* One request: text is modified in place (lines cut at their newlines). */
static void one_request(sg_agent *a, char *text) {
    char *body = strstr(text, "\n\n");
    if (body) *body = 0, body += 2;
    char *line = strtok(text, "\n");
    if (!line) return;
    char *path = strchr(line, ' ');
    if (!path) return;
    *path++ = 0;
    query q = {0};
    for (char *l; (l = strtok(NULL, "\n")) && q.n < 16;) {
        char *eq = strchr(l, '=');
        if (!eq) continue;
        *eq = 0;
        q.name[q.n] = l;
        q.value[q.n++] = eq + 1;
    }
    sg_agent_request rq = {.method = line,
                           .path = path,
                           .arg = query_arg,
                           .ctx = &q,
                           .body = body,
                           .len = body ? strlen(body) : 0};
    sg_agent_reply r = {0};
    sg_agent_handle(a, &rq, &r);
    if (r.suspend_s > 0) {       /* a long-poll: the HTTP layer asks again when its wait is over */
        if (r.body.len) abort(); /* a suspended request has no answer yet */
        rq.expired = 1;
        sg_agent_handle(a, &rq, &r);
        if (r.suspend_s > 0) abort();
    }
    if (getenv("FUZZ_AGENT_TRACE")) /* to read what a seed or a finding does */
        fprintf(stderr, "%s %s -> %d %.*s\n", rq.method, rq.path, r.status, (int)r.body.len,
                r.body.data ? r.body.data : "");
    check_reply(&r);
    sg_buf_free(&r.body);
}

/* The input with @TASK@ replaced by the stored task's hash, NUL-terminated. */
static char *expand(const unsigned char *data, size_t size) {
    sg_buf b = {0};
    for (size_t i = 0; i < size;) {
        if (size - i >= 6 && !memcmp(data + i, "@TASK@", 6)) {
            sg_buf_append(&b, task_hash, strlen(task_hash));
            i += 6;
        } else {
            sg_buf_append(&b, (const char *)data + i, 1);
            i++;
        }
    }
    sg_buf_append(&b, "", 1);
    return sg_buf_steal(&b);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size > 1 << 16 || memchr(data, 0, size)) return 0; /* the HTTP layer's texts hold no NUL */
    sg_err e;
    sg_loop *loop = sg_loop_new_virtual(0, &e);
    if (!loop) abort();
    sg_agent_config cfg = {.lang = SG_DEV_OPENCL,
                           .ndevices = 1,
                           .devices = {0},
                           .per_device = 2,
                           .cache_dir = cache,
                           .max_jobs = 4};
    sg_agent *a;
    if (sg_agent_new(loop, &cfg, &a, &e) < 0) abort();
    char *text = expand(data, size);
    char *req = text;
    for (int n = 0; req && n < 8; n++) {
        char *next = strstr(req, "\n====\n");
        if (next) *next = 0, next += 6;
        one_request(a, req);
        req = next;
    }
    free(text);
    sg_agent_free(a);
    sg_loop_free(loop);
    return 0;
}
