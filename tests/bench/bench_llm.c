/* bench-llm: 256 concurrent streams at 100 tokens/s each from `specgen replay-llm`
 * (a separate process), each forking 4 times. Prints specgen's CPU time per 1,000
 * tokens, the added delivery latency of tokens against their 10 ms schedule, and the
 * time from a trigger to the fork request's arrival at the server.
 * usage: bench_llm [SPECGEN_BINARY] (default $SPECGEN, else ./specgen) */
#include "common/buf.h"
#include "common/net.h"
#include "common/proc.h"
#include "llm/llm.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { MAX_STREAMS = 256, TOKENS = 500, MS_PER_TOKEN = 10, FORK_EVERY = 100 };
static int STREAMS = MAX_STREAMS; /* BENCH_STREAMS=N runs fewer (to see what load does) */

typedef struct bench bench;
typedef struct stream {
    bench *b;
    int idx, n;
    int64_t *recv; /* receipt time of each token */
    sg_buf text;
} stream;

struct bench {
    sg_loop *loop;
    sg_llm *llm;
    stream st[MAX_STREAMS];
    int pending, forks, fork_errors, errors;
    int64_t tokens;
};

static void end_one(bench *b) {
    if (--b->pending == 0) sg_loop_stop(b->loop);
}
/* One fork in flight: when its trigger fired. */
typedef struct fork_ctx {
    bench *b;
    int64_t trigger_ns;
} fork_ctx;

static int64_t wire_ns[MAX_STREAMS * (TOKENS / FORK_EVERY)];
static size_t n_wire;

static void fork_delta(void *arg, const char *t, size_t n) { ((fork_ctx *)arg)->b->tokens++; }
static void fork_fin(void *arg, const sg_llm_result *r) {
    fork_ctx *f = arg;
    if (r->t_sent_ns && n_wire < sizeof wire_ns / sizeof wire_ns[0])
        wire_ns[n_wire++] = r->t_sent_ns - f->trigger_ns;
    if (getenv("BENCH_DEBUG") && r->t_sent_ns - f->trigger_ns > 5000000)
        fprintf(
            stderr,
            "slow fork: start-trigger %.3f ms, sent-start %.3f ms, first-sent %.3f, attempts %d\n",
            (r->t_start_ns - f->trigger_ns) / 1e6, (r->t_sent_ns - r->t_start_ns) / 1e6,
            (r->t_first_ns - r->t_sent_ns) / 1e6, r->attempts);
    end_one(f->b);
    free(f);
}
static void fork_err(void *arg, const char *msg, const sg_llm_result *r) {
    fork_ctx *f = arg;
    if (!f->b->fork_errors++) fprintf(stderr, "bench-llm: fork: %s\n", msg);
    end_one(f->b);
    free(f);
}

static void on_reasoning(void *arg, const char *t, size_t n) {
    stream *s = arg;
    bench *b = s->b;
    int64_t now = sg_loop_now(b->loop);
    if (s->n < TOKENS) s->recv[s->n] = now;
    s->n++;
    b->tokens++;
    sg_buf_append(&s->text, t, n);
    if (s->n % FORK_EVERY == 0 && s->n < TOKENS) { /* a trigger: fork from the reasoning so far */
        sg_buf p = {0};
        sg_buf_printf(&p, "bench\n<think>\n%s\n</think>\n\n", s->text.data);
        sg_llm_request req = {.api = SG_LLM_COMPLETIONS,
                              .model = "bench",
                              .prompt = p.data,
                              .max_tokens = 8,
                              .temperature = -1,
                              .think = SG_LLM_THINK_OFF,
                              .priority = 1,
                              .trigger_ns = now};
        fork_ctx *f = sg_xmalloc(sizeof *f);
        *f = (fork_ctx){b, now};
        sg_llm_callbacks cb = {fork_delta, fork_delta, NULL, fork_fin, fork_err, f};
        if (sg_llm_start(b->llm, &req, &cb, NULL))
            b->pending++, b->forks++;
        else
            free(f);
        sg_buf_free(&p);
    }
}
static void on_fin(void *arg, const sg_llm_result *r) { end_one(((stream *)arg)->b); }
static void on_err(void *arg, const char *msg, const sg_llm_result *r) {
    stream *s = arg;
    if (!s->b->errors++) fprintf(stderr, "bench-llm: stream: %s\n", msg);
    end_one(s->b);
}

static void start_stream(sg_loop *loop, void *arg) {
    stream *s = arg;
    sg_llm_request req = {.api = SG_LLM_CHAT,
                          .model = "bench",
                          .user = "go",
                          .max_tokens = TOKENS,
                          .temperature = -1};
    sg_llm_callbacks cb = {on_reasoning, NULL, NULL, on_fin, on_err, s};
    sg_err err;
    if (!sg_llm_start(s->b->llm, &req, &cb, &err)) {
        fprintf(stderr, "bench-llm: %s\n", err.msg);
        end_one(s->b);
    }
}

/* The machine's load, printed beside the numbers: latency tails follow it. */
static void loadavg(char *out, size_t n) {
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f || !fgets(out, (int)n, f)) snprintf(out, n, "unknown");
    if (f) fclose(f);
    out[strcspn(out, " ")] = '\0';
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static size_t collect(char *p, size_t sz, size_t nm, void *arg) {
    sg_buf_append(arg, p, sz * nm);
    return sz * nm;
}

static int write_trace(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f,
            "{\"trace\": 1, \"model\": \"bench\", \"ms_per_token\": %d, \"first_token_ms\": 20, "
            "\"fork_first_token_ms\": 2}\n{\"reasoning\": \"",
            MS_PER_TOKEN);
    for (int i = 0; i < TOKENS + 10; i++) fprintf(f, " t%04d", i); /* one token each */
    fprintf(f, "\"}\n{\"answer\": \"done\"}\n{\"fork_at\": 0, \"answer\": \"a b c d e f g h\"}\n");
    return fclose(f);
}

/* Start `bin replay-llm` on trace, niced, and wait until it answers at url: 0, or -1
 * after saying why. */
static int start_server(const char *bin, char *trace, sg_proc *srv, char *url, size_t urln) {
    sg_err err;
    int port = sg_net_pick_port(&err);
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    snprintf(url, urln, "http://%s", listen);
    /* The server stands in for a remote machine: niced, so that its 256 stream threads,
     * all waking on the same 10 ms ticks, do not starve the one loop thread measured here
     * (the scheduler shares CPU per thread). */
    char *args[] = {"nice",       "-n",      "10",  (char *)bin, "--log-level", "warn",
                    "replay-llm", "--trace", trace, "--listen",  listen,        NULL};
    if (sg_proc_spawn(srv, args, SG_PROC_NULL_IO, &err) < 0)
        return fprintf(stderr, "bench-llm: %s\n", err.msg), -1;
    int up = 0;
    for (int i = 0; i < 200 && !up; i++) { /* wait until it listens */
        CURL *e = curl_easy_init();
        sg_buf sink = {0};
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
        up = curl_easy_perform(e) == CURLE_OK;
        curl_easy_cleanup(e);
        sg_buf_free(&sink);
        if (!up) usleep(50000);
    }
    if (!up)
        return fprintf(stderr, "bench-llm: %s replay-llm did not start\n", bin),
               sg_proc_stop(srv, 1000), -1;
    return 0;
}

/* Lateness of token k against the stream's schedule anchor + k * 10 ms, where the
 * anchor is the earliest arrival the stream allows (so the best token is 0 late), sorted;
 * frees the streams' samples. */
static int64_t *lateness(bench *b, size_t *nl_out) {
    int64_t *lat = sg_xmalloc(sizeof *lat * STREAMS * TOKENS);
    size_t nl = 0;
    for (int i = 0; i < STREAMS; i++) {
        stream *s = &b->st[i];
        int n = s->n < TOKENS ? s->n : TOKENS;
        int64_t anchor = INT64_MAX;
        for (int k = 0; k < n; k++)
            if (s->recv[k] - (int64_t)k * MS_PER_TOKEN * SG_MS < anchor)
                anchor = s->recv[k] - (int64_t)k * MS_PER_TOKEN * SG_MS;
        for (int k = 0; k < n; k++)
            lat[nl++] = s->recv[k] - anchor - (int64_t)k * MS_PER_TOKEN * SG_MS;
        free(s->recv);
        sg_buf_free(&s->text);
    }
    qsort(lat, nl, sizeof *lat, cmp_i64);
    *nl_out = nl;
    return lat;
}

int main(int argc, char **argv) {
    const char *bin = argc > 1 ? argv[1] : getenv("SPECGEN") ? getenv("SPECGEN") : "./specgen";
    sg_err err;
    if (getenv("BENCH_STREAMS")) STREAMS = atoi(getenv("BENCH_STREAMS"));
    if (STREAMS < 1 || STREAMS > MAX_STREAMS)
        return fprintf(stderr, "bench-llm: BENCH_STREAMS must be 1..%d\n", MAX_STREAMS), 2;
    char trace[] = "/tmp/bench_llm_XXXXXX.jsonl";
    int tfd = mkstemps(trace, 6);
    if (tfd < 0 || (close(tfd), write_trace(trace)) < 0) return perror("bench-llm: trace"), 1;
    char url[64];
    sg_proc srv;
    if (start_server(bin, trace, &srv, url, sizeof url) < 0) return 1;

    static bench b;
    b.loop = sg_loop_new_real(&err);
    sg_curl_loop *cl = sg_curl_loop_new(b.loop, &err);
    const char *urls[1] = {url};
    sg_llm_config cfg = {.urls = urls, .n_urls = 1};
    b.llm = sg_llm_new(cl, &cfg, &err);
    char load0[64], load1[64];
    loadavg(load0, sizeof load0);
    double c0 = cpu_s();
    int64_t t0 = sg_loop_now(b.loop);
    /* Starts spread over one token period x 100, so that triggers (every 100 tokens) are
     * spread too, as in a real campaign, rather than all 256 firing in the same tick. */
    for (int i = 0; i < STREAMS; i++) {
        stream *s = &b.st[i];
        s->b = &b;
        s->idx = i;
        s->recv = sg_xcalloc(TOKENS, sizeof *s->recv);
        b.pending++;
        sg_loop_timer(b.loop, (int64_t)i * FORK_EVERY * MS_PER_TOKEN * SG_MS / STREAMS,
                      start_stream, s);
    }
    sg_loop_run(b.loop, &err);
    double wall = (double)(sg_loop_now(b.loop) - t0) / 1e9, cpu = cpu_s() - c0;
    loadavg(load1, sizeof load1);

    size_t nl;
    int64_t *lat = lateness(&b, &nl);

    sg_buf stats = {0};
    char surl[96];
    snprintf(surl, sizeof surl, "%s/v1/replay/stats", url);
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, surl);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &stats);
    curl_easy_perform(e);
    curl_easy_cleanup(e);
    json_t *js = json_loads(stats.data ? stats.data : "{}", 0, NULL);
    json_t *tr = json_object_get(js, "trigger_to_request_us");
    double tp50 = json_number_value(json_object_get(tr, "p50")) / 1000,
           tp99 = json_number_value(json_object_get(tr, "p99")) / 1000;
    double tmax = json_number_value(json_object_get(tr, "max")) / 1000;

    qsort(wire_ns, n_wire, sizeof *wire_ns, cmp_i64);
    double w50 = n_wire ? (double)wire_ns[n_wire / 2] / 1e6 : 0;
    double w99 = n_wire ? (double)wire_ns[n_wire * 99 / 100] / 1e6 : 0;
    double wmax = n_wire ? (double)wire_ns[n_wire - 1] / 1e6 : 0;
    printf("bench-llm: %d streams x %d tokens at %d tokens/s each from specgen replay-llm (vllm\n"
           "  dialect; another process on this machine, niced), %d forks (every %d tokens of each "
           "stream)\n",
           STREAMS, TOKENS, 1000 / MS_PER_TOKEN, b.forks, FORK_EVERY);
    printf("  machine load (1-min avg)    %s before, %s after, on %ld cores\n", load0, load1,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("  tokens received             %lld in %.2f s (%.0f tokens/s); errors: %d streams, %d "
           "forks\n",
           (long long)b.tokens, wall, (double)b.tokens / wall, b.errors, b.fork_errors);
    printf("  specgen CPU time            %.3f ms per 1,000 tokens (%.2f s user+sys, %.1f%% of one "
           "core)\n",
           cpu * 1e3 / ((double)b.tokens / 1000), cpu, 100 * cpu / wall);
    printf("  added delivery latency      p50 %.3f ms  p99 %.3f ms  (%zu tokens vs. their stream's "
           "10 ms schedule)\n",
           nl ? (double)lat[nl / 2] / 1e6 : 0, nl ? (double)lat[nl * 99 / 100] / 1e6 : 0, nl);
    printf("  trigger -> fork on the wire p50 %.3f ms  p99 %.3f ms  max %.3f ms  (goal p99 < 2 ms: "
           "%s)\n"
           "                              (client side: the request's last write to the socket, "
           "%zu forks)\n",
           w50, w99, wmax, w99 < 2.0 ? "met" : "NOT met", n_wire);
    printf("  trigger -> fork at server   p50 %.3f ms  p99 %.3f ms  max %.3f ms\n"
           "                              (replay-llm's request handler, %lld samples: adds the "
           "niced server's own wake-up)\n",
           tp50, tp99, tmax, (long long)json_integer_value(json_object_get(tr, "n")));
    json_decref(js);
    sg_buf_free(&stats);
    free(lat);
    sg_llm_free(b.llm);
    sg_curl_loop_free(cl);
    sg_loop_free(b.loop);
    sg_proc_stop(&srv, 2000);
    unlink(trace);
    return b.errors || b.fork_errors ? 1 : 0;
}
