/* bench_racing: racing in the profiler against full timing, side by side, per builtin
 * OpenCL task (PoCL here). Each task gets a set of candidates made from its baseline:
 *   - "copy": the baseline itself (close: an A/A pair);
 *   - "x2": every launch line twice (the work done twice: clearly slower);
 *   - "b/2", "b/4", "b*2": the block size of every launch line halved, quartered or
 *     doubled, the grid's ceil_div(.., block) changed with it (on a CPU some are faster,
 *     some slower, some close).
 * Each candidate is validated (a variant the kernel's code does not allow fails and is
 * left out), then timed twice in the same worker, in alternating order: once until its
 * median is stable (full timing, racing off) and once racing against the best speedup of
 * the candidates raced before it (the baseline's 1 at first) and the task's target.
 * The best kernel of a task, by either method: the highest speedup among the candidates
 * measured faster than the baseline (beyond the noise band), else the baseline itself.
 * Printed: per task the device time of the timed runs both ways, the saving, the runs,
 * racing's stops, each method's best; then the totals and a verdict line against issue
 * 27's goal (racing saves >= 30% of profiling device time and picks the same best kernel
 * per task). Usage: bench_racing [SUITE_DIR (default suites/builtin)] [TASK ...] */
#include "profiler/profiler.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXC 8

typedef struct cand {
    char name[16];
    sg_buf src;
} cand;

/* The launch line with every block dimension b replaced by f(b) (mul/div), and each
 * ceil_div(E,b) of the grid with it; 0 when the line has no literal block. */
static int scale_line(const char *line, size_t len, int mul, int div, sg_buf *out) {
    char l[512];
    if (len >= sizeof l) return 0;
    memcpy(l, line, len);
    l[len] = 0;
    char *bp = strstr(l, " block=");
    if (!bp) return 0;
    int b[3], nb = 0;
    const char *q = bp + 7;
    if (*q == '(') q++;
    while (nb < 3 && sscanf(q, "%d", &b[nb]) == 1) {
        nb++;
        while (*q >= '0' && *q <= '9') q++;
        if (*q != ',') break;
        q++;
    }
    if (!nb) return 0;
    for (int i = 0; i < nb; i++)
        if (b[i] * mul % div || b[i] * mul / div < 1) return 0;
    sg_buf nl = {0};
    /* the grid: ceil_div(..,b) -> ceil_div(..,b') (first dimension's b, then the others) */
    for (const char *s = l; s < bp;) {
        const char *cd = strstr(s, "ceil_div(");
        if (!cd || cd >= bp) {
            sg_buf_append(&nl, s, (size_t)(bp - s));
            break;
        }
        const char *comma = NULL;
        int depth = 0;
        const char *e = cd + 9;
        for (; *e && !(depth == 0 && *e == ')'); e++) {
            if (*e == '(') depth++;
            if (*e == ')') depth--;
            if (*e == ',' && depth == 0) comma = e;
        }
        int v = 0, done = 0;
        if (comma && sscanf(comma + 1, "%d", &v) == 1)
            for (int i = 0; i < nb && !done; i++)
                if (v == b[i]) {
                    sg_buf_append(&nl, s, (size_t)(comma + 1 - s));
                    sg_buf_printf(&nl, "%d)", v * mul / div);
                    done = 1;
                }
        if (!done) sg_buf_append(&nl, s, (size_t)(e + 1 - s));
        s = e + 1;
    }
    sg_buf_append_str(&nl, " block=");
    if (nb > 1) sg_buf_append_str(&nl, "(");
    for (int i = 0; i < nb; i++) sg_buf_printf(&nl, "%s%d", i ? "," : "", b[i] * mul / div);
    if (nb > 1) sg_buf_append_str(&nl, ")");
    while (*q && *q != ' ') q++; /* past the block's value */
    sg_buf_append_str(&nl, q);
    sg_buf_append(out, nl.data, nl.len);
    sg_buf_free(&nl);
    return 1;
}

/* A variant of src: kind 0 copy, 1 every launch twice, 2.. block scaled. 0: not possible. */
static int variant(const char *src, int kind, sg_buf *out) {
    static const int mul[] = {1, 1, 1, 2}, div[] = {1, 2, 4, 1};
    sg_buf launches = {0};
    int changed = kind == 0;
    for (const char *s = src; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        int is_launch = !strncmp(s, "//@launch ", 10);
        if (is_launch && kind >= 2)
            changed |= scale_line(s, len, mul[kind - 1], div[kind - 1], out)
                           ? 1
                           : (sg_buf_append(out, s, len), 0);
        else
            sg_buf_append(out, s, len);
        sg_buf_append_str(out, "\n");
        if (is_launch) {
            sg_buf_append(&launches, s, len);
            sg_buf_append_str(&launches, "\n");
        }
        s += len + (nl ? 1 : 0);
    }
    if (kind == 1 && launches.len) {
        sg_buf_append(out, launches.data, launches.len);
        changed = 1;
    }
    sg_buf_free(&launches);
    return changed;
}

typedef struct tally {
    double full_ms, race_ms, replay_ms;
    int full_runs, race_runs, replay_runs, stops, replay_stops, cands, tasks;
    int same, ties, replay_same;
} tally;

/* The best by the bench's rule: the highest speedup among those measured faster. */
static int best_of(const sg_speedup *s, int n) {
    int best = -1;
    for (int i = 0; i < n; i++)
        if (s[i].verdict == SG_CMP_FASTER && (best < 0 || s[i].speedup > s[best].speedup)) best = i;
    return best;
}

/* One timing with its raw samples (full timing: racing off). */
static int time_raw(sg_val_pool *pool, const sg_val_job *job, const sg_prof_opts *o,
                    sg_prof_result *r, double **base, double **cand, sg_err *err) {
    json_t *req = sg_prof_request(job, o, err), *reply = NULL;
    sg_val_result vr;
    if (!req) return -1;
    int rc = sg_val_pool_call(pool, 0, job, req, &reply, &vr, err);
    json_decref(req);
    if (rc != 0) return rc < 0 ? -1 : sg_errf(err, "%s", vr.message);
    rc = sg_prof_from_reply(reply, r, err);
    int n = r->candidate.runs;
    *base = sg_xcalloc((size_t)n + 1, sizeof **base);
    *cand = sg_xcalloc((size_t)n + 1, sizeof **cand);
    for (int i = 0; rc == 0 && i < n; i++) {
        (*base)[i] = json_number_value(json_array_get(json_object_get(reply, "base"), i));
        (*cand)[i] = json_number_value(json_array_get(json_object_get(reply, "cand"), i));
    }
    json_decref(reply);
    return rc;
}

/* Racing replayed on full timing's own samples: where the rule stops (the same samples,
 * so the only difference is the rule), its device time and speedup then. */
static int replay(const double *b, const double *c, int n, const sg_race *r, double *ms,
                  sg_speedup *sp) {
    int k = n, stop = 0;
    double lo, hi;
    for (int i = 1; i <= n && !stop; i++)
        if (sg_race_check(b, c, i, r, &lo, &hi) != SG_RACE_GO) k = i, stop = 1;
    *ms = 0;
    for (int i = 0; i < k; i++) *ms += (b[i] + c[i]) / 1e6;
    sg_timing tb, tc;
    sg_timing_summarize(b, k, &tb);
    sg_timing_summarize(c, k, &tc);
    *sp = sg_speedup_compare(&tb, &tc);
    return stop ? k : -k;
}

typedef struct task_row {
    sg_speedup full[MAXC], race[MAXC], rep[MAXC];
    double fms, rms, pms;
    int fr, rr, pr;
    char stops[64];
} task_row;

static int time_cands(sg_val_pool *pool, const char *dir, const char *name, cand *c, int nc,
                      double target, task_row *w, tally *t) {
    sg_prof_opts of, orc;
    sg_prof_opts_default(&of);
    of.race.on = 0;
    sg_prof_opts_default(&orc);
    orc.race.best = 1;
    orc.race.target = target;
    sg_race rep = orc.race; /* the replay's own best so far */
    sg_err err;
    for (int i = 0; i < nc; i++) {
        sg_val_job job = {.task_dir = dir,
                          .candidate = c[i].src.data,
                          .candidate_len = c[i].src.len,
                          .candidate_name = c[i].name};
        sg_prof_result fr, rr;
        double *b = NULL, *cs = NULL;
        int rc = 0;
        for (int pass = 0; pass < 2 && rc == 0; pass++) /* alternating which goes first */
            rc = (pass + i) % 2 ? sg_prof_time(pool, 0, &job, &orc, &rr, &err)
                                : time_raw(pool, &job, &of, &fr, &b, &cs, &err);
        if (rc < 0) {
            printf("%-18s %s: %s\n", name, c[i].name, err.msg);
            free(b);
            free(cs);
            return -1;
        }
        double pms;
        int k = replay(b, cs, fr.candidate.runs, &rep, &pms, &w->rep[i]);
        free(b);
        free(cs);
        w->full[i] = fr.speedup;
        w->race[i] = rr.speedup;
        w->fms += fr.device_ms;
        w->rms += rr.device_ms;
        w->pms += pms;
        w->fr += fr.candidate.runs;
        w->rr += rr.candidate.runs;
        w->pr += k < 0 ? -k : k;
        t->replay_stops += k > 0;
        if (rr.race_stop[0]) {
            t->stops++;
            snprintf(w->stops + strlen(w->stops), sizeof w->stops - strlen(w->stops), "%s%s:%s",
                     w->stops[0] ? "," : "", c[i].name, strcmp(rr.race_stop, "slower") ? "T" : "S");
        }
        if (rr.verdict == SG_VAL_PASS && rr.speedup.speedup > orc.race.best)
            orc.race.best = rr.speedup.speedup;
        if (w->rep[i].speedup > rep.best) rep.best = w->rep[i].speedup;
    }
    return 0;
}

static void one_task(sg_val_pool *pool, const char *dir, const char *name, tally *t) {
    char path[1200];
    snprintf(path, sizeof path, "%s/baseline.cl", dir);
    sg_buf base = {0};
    sg_val_task task;
    sg_err err;
    if (sg_buf_read_file(&base, path) < 0 || sg_val_task_load(dir, &task, &err) < 0) {
        sg_buf_free(&base);
        return;
    }
    double target = task.target_speedup;
    sg_val_task_free(&task);
    static const char *const names[] = {"copy", "x2", "b/2", "b/4", "b*2"};
    cand c[MAXC];
    int nc = 0;
    for (int k = 0; k < 5; k++) {
        memset(&c[nc], 0, sizeof c[nc]);
        snprintf(c[nc].name, sizeof c[nc].name, "%s", names[k]);
        sg_val_job job = {.task_dir = dir, .candidate_name = c[nc].name};
        sg_val_result vr;
        if (variant(base.data, k, &c[nc].src)) {
            job.candidate = c[nc].src.data;
            job.candidate_len = c[nc].src.len;
            if (sg_val_pool_validate(pool, 0, &job, &vr, &err) == 0 && vr.verdict == SG_VAL_PASS) {
                nc++;
                continue;
            }
        }
        sg_buf_free(&c[nc].src);
    }
    task_row w;
    memset(&w, 0, sizeof w);
    if (nc && time_cands(pool, dir, name, c, nc, target, &w, t) == 0) {
        int bf = best_of(w.full, nc), br = best_of(w.race, nc), bp = best_of(w.rep, nc);
        /* a tie: both picks measured faster, and within full timing's band of each other */
        int tie = bf != br && bf >= 0 && br >= 0 &&
                  w.full[bf].speedup <= w.full[br].speedup * (1 + w.full[bf].band);
        printf("%-18s %5d %9.1f %9.1f %5.0f%% %9.1f %5.0f%% %5d %5d %5d  %-20s %-5s %-5s %-5s %s\n",
               name, nc, w.fms, w.rms, w.fms > 0 ? 100 * (1 - w.rms / w.fms) : 0, w.pms,
               w.fms > 0 ? 100 * (1 - w.pms / w.fms) : 0, w.fr, w.rr, w.pr,
               w.stops[0] ? w.stops : "-", bf < 0 ? "base" : c[bf].name,
               br < 0 ? "base" : c[br].name, bp < 0 ? "base" : c[bp].name,
               bf == bp ? (bf == br ? "same"
                           : tie    ? "replay same, race tie"
                                    : "replay same")
                        : "REPLAY DIFFERENT");
        t->full_ms += w.fms;
        t->race_ms += w.rms;
        t->replay_ms += w.pms;
        t->full_runs += w.fr;
        t->race_runs += w.rr;
        t->replay_runs += w.pr;
        t->cands += nc;
        t->tasks++;
        t->same += bf == br;
        t->ties += tie;
        t->replay_same += bf == bp;
        fflush(stdout);
    }
    for (int i = 0; i < nc; i++) sg_buf_free(&c[i].src);
    sg_buf_free(&base);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    const char *suite = argc > 1 ? argv[1] : "suites/builtin";
    char *names[256];
    int n = 0;
    if (argc > 2) {
        for (int i = 2; i < argc && n < 256; i++) names[n++] = strdup(argv[i]);
    } else {
        DIR *d = opendir(suite);
        if (!d) return fprintf(stderr, "bench_racing: cannot open %s\n", suite), 1;
        for (struct dirent *e; (e = readdir(d)) && n < 256;) {
            char path[1024];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s/baseline.cl", suite, e->d_name);
            if (e->d_name[0] != '.' && stat(path, &st) == 0) names[n++] = strdup(e->d_name);
        }
        closedir(d);
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    sg_dev_opts po;
    sg_dev_opts_default(&po);
    po.kinds = sg_prof_kinds;
    po.nkinds = 2;
    sg_val_pool *pool;
    sg_err err;
    if (sg_val_pool_new(&po, &pool, &err) < 0) return fprintf(stderr, "%s\n", err.msg), 1;
    printf("racing vs full timing per candidate (OpenCL; device time of the timed runs, both "
           "sides, ms; race: a second, racing timing; replay: racing's rule on full timing's own "
           "samples; stops: S clearly slower than the best so far, T clearly past the target)\n");
    printf("%-18s %5s %9s %9s %6s %9s %6s %5s %5s %5s  %-20s %-5s %-5s %-5s\n", "task", "cands",
           "full", "race", "saved", "replay", "saved", "runs", "runs", "runs", "racing stops",
           "best", "best", "best");
    printf("%-18s %5s %9s %9s %6s %9s %6s %5s %5s %5s  %-20s %-5s %-5s %-5s\n", "", "", "", "", "",
           "", "", "full", "race", "rep", "", "full", "race", "rep");
    tally t = {0};
    for (int i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", suite, names[i]);
        one_task(pool, dir, names[i], &t);
        free(names[i]);
    }
    double saved = t.full_ms > 0 ? 1 - t.race_ms / t.full_ms : 0;
    double rsaved = t.full_ms > 0 ? 1 - t.replay_ms / t.full_ms : 0;
    printf(
        "%-18s %5d %9.1f %9.1f %5.0f%% %9.1f %5.0f%% %5d %5d %5d  racing stopped %d, replay %d\n",
        "all", t.cands, t.full_ms, t.race_ms, 100 * saved, t.replay_ms, 100 * rsaved, t.full_runs,
        t.race_runs, t.replay_runs, t.stops, t.replay_stops);
    printf("goal: racing saves >= 30%% of profiling device time, same best kernel per task "
           "(issue 27), racing's rule on the same samples: %s, %.0f%% saved; same best in %d of "
           "%d tasks\n",
           rsaved >= 0.30 && t.replay_same == t.tasks ? "met" : "missed", 100 * rsaved,
           t.replay_same, t.tasks);
    printf("goal: the same, racing timed separately (each candidate's two timings differ by "
           "the load's noise too): %s, %.0f%% saved; same best in %d of %d tasks (%d more "
           "ties within full timing's band)\n",
           saved >= 0.30 && t.same + t.ties == t.tasks ? "met" : "missed", 100 * saved, t.same,
           t.tasks, t.ties);
    sg_val_pool_free(pool);
    return 0;
}
