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
#include <time.h>

#define MAXC 8
#define MAXR 5

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

/* The methods compared: full timing (racing off), racing timed on its own, and racing's
 * rule replayed on full timing's own samples, with every stop and with the separation
 * stops alone (no "not_better": the rule before it, an ablation). */
enum { FULL, RACE, REPLAY, REPLAY_SEP, NM };

typedef struct meas {
    double ms;   /* device time of the timed runs, both sides */
    double wall; /* the job's wall time (compile, warm-up, flushes, checks); 0 for replays */
    int runs;    /* runs of the candidate's side */
    sg_speedup sp;
    double lo; /* the speedup's 99% interval's lower end: a later candidate's bar */
    sg_race_stop stop;
    int pass; /* the checks after timing passed */
} meas;

typedef struct task_res {
    int nc, reps;
    char cname[MAXC][16];
    meas m[NM][MAXR][MAXC];
} task_res;

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One timing with its raw samples (the caller frees them). */
static int time_raw(sg_val_pool *pool, const sg_val_job *job, const sg_prof_opts *o, meas *m,
                    double **base, double **cand, sg_err *err) {
    double t0 = mono_ms();
    json_t *req = sg_prof_request(job, o, err), *reply = NULL;
    sg_val_result vr;
    if (!req) return -1;
    int rc = sg_val_pool_call(pool, 0, job, req, &reply, &vr, err);
    json_decref(req);
    if (rc != 0) return rc < 0 ? -1 : sg_errf(err, "%s", vr.message);
    sg_prof_result r;
    rc = sg_prof_from_reply(reply, &r, err);
    int n = r.candidate.runs;
    *base = sg_xcalloc((size_t)n + 1, sizeof **base);
    *cand = sg_xcalloc((size_t)n + 1, sizeof **cand);
    for (int i = 0; rc == 0 && i < n; i++) {
        (*base)[i] = json_number_value(json_array_get(json_object_get(reply, "base"), i));
        (*cand)[i] = json_number_value(json_array_get(json_object_get(reply, "cand"), i));
    }
    json_decref(reply);
    if (rc < 0) return -1;
    m->ms = r.device_ms;
    m->wall = mono_ms() - t0;
    m->runs = n;
    m->sp = r.speedup;
    m->lo = r.speedup_lo;
    m->stop = !strcmp(r.race_stop, "slower")        ? SG_RACE_SLOWER
              : !strcmp(r.race_stop, "past_target") ? SG_RACE_PAST_TARGET
              : !strcmp(r.race_stop, "not_better")  ? SG_RACE_NOT_BETTER
                                                    : SG_RACE_GO;
    m->pass = r.verdict == SG_VAL_PASS;
    if (!m->pass) m->sp.verdict = SG_CMP_SLOWER; /* never the best */
    return 0;
}

/* Racing's rule on full timing's own samples: where it stops (the same samples, so the
 * only difference is the rule), the device time up to there, the speedup then. */
static void replay(const double *b, const double *c, int n, const sg_race *r, meas *m) {
    int k = n;
    double lo = 0, hi = 0;
    m->stop = SG_RACE_GO;
    for (int i = 1; i <= n && m->stop == SG_RACE_GO; i++)
        if ((m->stop = sg_race_check(b, c, i, r, &lo, &hi)) != SG_RACE_GO) k = i;
    m->lo = lo;
    m->ms = m->wall = 0;
    for (int i = 0; i < k; i++) m->ms += (b[i] + c[i]) / 1e6;
    sg_timing tb, tc;
    sg_timing_summarize(b, k, &tb);
    sg_timing_summarize(c, k, &tc);
    m->sp = sg_speedup_compare(&tb, &tc);
    m->runs = k;
}

/* Repetition `rep` of a task: every candidate timed fully and racing, in alternating
 * order, each method racing against its own best so far (the baseline's 1 at first). */
static int time_rep(sg_val_pool *pool, const char *dir, const char *name, cand *c, int rep,
                    double target, task_res *w) {
    sg_prof_opts of, orc;
    sg_prof_opts_default(&of);
    of.race.on = 0;
    sg_prof_opts_default(&orc);
    orc.race.best = 1;
    orc.race.target = target;
    sg_race rp = orc.race, rs = orc.race; /* the replays' own bars */
    rp.tie_min_runs = orc.stab.min_runs;  /* as the request resolves sg_prof_opts_default's -1 */
    rs.tie_min_runs = 0;
    sg_err err;
    for (int i = 0; i < w->nc; i++) {
        sg_val_job job = {.task_dir = dir,
                          .candidate = c[i].src.data,
                          .candidate_len = c[i].src.len,
                          .candidate_name = c[i].name};
        double *b[2] = {NULL, NULL}, *cs[2] = {NULL, NULL};
        int rc = 0;
        for (int pass = 0; pass < 2 && rc == 0; pass++) { /* alternating which goes first */
            int m = (pass + i + rep) % 2 ? RACE : FULL;
            rc =
                time_raw(pool, &job, m == RACE ? &orc : &of, &w->m[m][rep][i], &b[m], &cs[m], &err);
        }
        if (rc == 0) {
            replay(b[FULL], cs[FULL], w->m[FULL][rep][i].runs, &rp, &w->m[REPLAY][rep][i]);
            replay(b[FULL], cs[FULL], w->m[FULL][rep][i].runs, &rs, &w->m[REPLAY_SEP][rep][i]);
        }
        for (int k = 0; k < 2; k++) free(b[k]), free(cs[k]);
        if (rc < 0) return printf("%-18s %s: %s\n", name, c[i].name, err.msg), -1;
        /* the bar: what the best so far surely reaches (its interval's lower end, the
         * baseline's exact 1 at least), not its point figure (profiler.h speedup_lo) */
        if (w->m[RACE][rep][i].pass && w->m[RACE][rep][i].lo > orc.race.best)
            orc.race.best = w->m[RACE][rep][i].lo;
        if (w->m[REPLAY][rep][i].lo > rp.best) rp.best = w->m[REPLAY][rep][i].lo;
        if (w->m[REPLAY_SEP][rep][i].lo > rs.best) rs.best = w->m[REPLAY_SEP][rep][i].lo;
    }
    return 0;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A candidate's figure by one method over repetitions [r0, r1): the median speedup and
 * the median band, "faster" beyond that band. */
static sg_speedup pooled(const task_res *w, int m, int i, int r0, int r1) {
    double s[MAXR], b[MAXR];
    int n = 0;
    for (int r = r0; r < r1; r++, n++) {
        s[n] = w->m[m][r][i].sp.speedup;
        b[n] = w->m[m][r][i].sp.band;
    }
    sg_speedup p = {median(s, n), median(b, n), SG_CMP_SAME};
    if (p.speedup > 1 + p.band) p.verdict = SG_CMP_FASTER;
    return p;
}

/* The best kernel by one method: the highest pooled speedup among the candidates measured
 * faster than the baseline beyond the band, else the baseline (-1). */
static int best_of(const task_res *w, int m, int r0, int r1) {
    int best = -1;
    double bs = 0;
    for (int i = 0; i < w->nc; i++) {
        sg_speedup p = pooled(w, m, i, r0, r1);
        if (p.verdict == SG_CMP_FASTER && (best < 0 || p.speedup > bs)) best = i, bs = p.speedup;
    }
    return best;
}

/* 1: picks a and b are the same, 2: a tie by full timing's own figures (within its band),
 * 0: different. */
static int agree(const task_res *w, int a, int b, int r0, int r1) {
    if (a == b) return 1;
    sg_speedup pa = a < 0 ? (sg_speedup){1, 0, SG_CMP_SAME} : pooled(w, FULL, a, r0, r1);
    sg_speedup pb = b < 0 ? (sg_speedup){1, 0, SG_CMP_SAME} : pooled(w, FULL, b, r0, r1);
    double band = pa.band > pb.band ? pa.band : pb.band;
    double hi = pa.speedup > pb.speedup ? pa.speedup : pb.speedup;
    double lo = pa.speedup > pb.speedup ? pb.speedup : pa.speedup;
    return hi <= lo * (1 + band) ? 2 : 0;
}

typedef struct tally {
    double ms[NM][MAXR], wall[NM][MAXR];
    int runs[NM], stops[NM], tasks, cands, reps;
    int same[3], ties[3]; /* race vs full, replay vs full, full vs itself (rep 1 vs 2) */
    int aa, aa_slower;    /* racing timings of the A/A pair (copy), and those stopped "slower" */
    int diff_stopped;     /* different picks where racing stopped one of the two picks */
} tally;

static void count_agree(tally *t, int k, int a) {
    t->same[k] += a == 1;
    t->ties[k] += a == 2;
}

/* 1: racing stopped candidate i (not the baseline, -1) in some repetition. */
static int stopped(const task_res *w, int i) {
    for (int r = 0; i >= 0 && r < w->reps; r++)
        if (w->m[RACE][r][i].stop != SG_RACE_GO) return 1;
    return 0;
}

static const char *pick(const task_res *w, int b) { return b < 0 ? "base" : w->cname[b]; }

/* The task's line: device time over all repetitions by each method, racing's stops (one
 * letter per repetition: S slower, T past the target, N not better), each method's best. */
static void report(const char *name, const task_res *w, tally *t) {
    double ms[NM] = {0};
    int runs[NM] = {0};
    char stops[96] = "";
    for (int m = 0; m < NM; m++)
        for (int r = 0; r < w->reps; r++)
            for (int i = 0; i < w->nc; i++) {
                const meas *x = &w->m[m][r][i];
                ms[m] += x->ms;
                runs[m] += x->runs;
                t->ms[m][r] += x->ms;
                t->wall[m][r] += x->wall;
                t->runs[m] += x->runs;
                t->stops[m] += x->stop != SG_RACE_GO;
            }
    for (int i = 0; i < w->nc; i++)
        for (int r = 0; r < w->reps && !strcmp(w->cname[i], "copy"); r++) {
            t->aa++;
            t->aa_slower += w->m[RACE][r][i].stop == SG_RACE_SLOWER;
        }
    for (int i = 0; i < w->nc; i++) {
        char l[MAXR + 1] = "";
        for (int r = 0, k = 0; r < w->reps; r++) {
            sg_race_stop s = w->m[RACE][r][i].stop;
            if (s != SG_RACE_GO) l[k++] = "-STN"[s];
        }
        if (l[0] && strlen(stops) + strlen(l) + 20 < sizeof stops)
            snprintf(stops + strlen(stops), sizeof stops - strlen(stops), "%s%s:%s",
                     stops[0] ? "," : "", w->cname[i], l);
    }
    int bf = best_of(w, FULL, 0, w->reps), br = best_of(w, RACE, 0, w->reps);
    int bp = best_of(w, REPLAY, 0, w->reps);
    int ar = agree(w, bf, br, 0, w->reps), ap = agree(w, bf, bp, 0, w->reps);
    count_agree(t, 0, ar);
    t->diff_stopped += !ar && (stopped(w, bf) || stopped(w, br));
    count_agree(t, 1, ap);
    if (w->reps >= 2)
        count_agree(t, 2, agree(w, best_of(w, FULL, 0, 1), best_of(w, FULL, 1, 2), 0, w->reps));
#define PCT(m) (ms[FULL] > 0 ? 100 * (1 - ms[m] / ms[FULL]) : 0)
    printf("%-18s %5d %9.1f %9.1f %5.0f%% %5.0f%% %5.0f%% %5d %5d  %-24s %-5s %-5s %-5s %s\n", name,
           w->nc, ms[FULL], ms[RACE], PCT(RACE), PCT(REPLAY), PCT(REPLAY_SEP), runs[FULL],
           runs[RACE], stops[0] ? stops : "-", pick(w, bf), pick(w, br), pick(w, bp),
           ar == 1   ? "same"
           : ar == 2 ? "tie"
                     : "DIFFERENT");
#undef PCT
    t->tasks++;
    t->cands += w->nc;
    fflush(stdout);
}

static void one_task(sg_val_pool *pool, const char *dir, const char *name, int reps, tally *t) {
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
    task_res *w = sg_xcalloc(1, sizeof *w);
    w->reps = reps;
    for (int k = 0; k < 5; k++) {
        cand *x = &c[w->nc];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", names[k]);
        sg_val_job job = {.task_dir = dir, .candidate_name = x->name};
        sg_val_result vr;
        if (variant(base.data, k, &x->src)) {
            job.candidate = x->src.data;
            job.candidate_len = x->src.len;
            if (sg_val_pool_validate(pool, 0, &job, &vr, &err) == 0 && vr.verdict == SG_VAL_PASS) {
                snprintf(w->cname[w->nc++], sizeof w->cname[0], "%s", x->name);
                continue;
            }
        }
        sg_buf_free(&x->src);
    }
    int rc = 0;
    for (int r = 0; r < reps && rc == 0 && w->nc; r++)
        rc = time_rep(pool, dir, name, c, r, target, w);
    if (w->nc && rc == 0) report(name, w, t);
    for (int i = 0; i < w->nc; i++) sg_buf_free(&c[i].src);
    free(w);
    sg_buf_free(&base);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void loadavg(char *out, size_t n) {
    sg_buf b = {0};
    snprintf(out, n, "?");
    if (sg_buf_read_file(&b, "/proc/loadavg") == 0 && b.data) {
        char *sp = b.data;
        for (int k = 0; k < 3 && sp; k++) sp = strchr(sp + 1, ' ');
        if (sp) *sp = 0;
        snprintf(out, n, "%s", b.data);
    }
    sg_buf_free(&b);
}

/* Saving of method m against full timing in each repetition, their median and range. */
static double savings(const tally *t, int m, const double (*v)[MAXR], char *out, size_t n) {
    double s[MAXR], sorted[MAXR];
    size_t len = 0;
    out[0] = 0;
    for (int r = 0; r < t->reps; r++) {
        s[r] = sorted[r] = v[FULL][r] > 0 ? 1 - v[m][r] / v[FULL][r] : 0;
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%.1f%%", r ? ", " : "",
                                100 * s[r]);
    }
    return median(sorted, t->reps);
}

static void totals(const tally *t, const char *load0) {
    char load1[64], sr[128], sp[128], ss[128], sw[128];
    loadavg(load1, sizeof load1);
    double mr = savings(t, RACE, t->ms, sr, sizeof sr),
           mp = savings(t, REPLAY, t->ms, sp, sizeof sp);
    double ms = savings(t, REPLAY_SEP, t->ms, ss, sizeof ss),
           mw = savings(t, RACE, t->wall, sw, sizeof sw);
    double f = 0, r = 0;
    for (int k = 0; k < t->reps; k++) f += t->ms[FULL][k], r += t->ms[RACE][k];
    printf(
        "%-18s %5d %9.1f %9.1f %5.0f%% %5.0f%% %5.0f%% %5d %5d  racing stopped %d of %d timings\n",
        "all", t->cands, f, r, 100 * mr, 100 * mp, 100 * ms, t->runs[FULL], t->runs[RACE],
        t->stops[RACE], t->cands * t->reps);
    printf("saving per repetition (device time of the timed runs): racing %s; replayed %s; "
           "replayed without not_better %s\n",
           sr, sp, ss);
    printf("saving of the jobs' wall time (compile, warm-up, flushes and checks included): "
           "median %.0f%% (%s)\n",
           100 * mw, sw);
    printf("load average at start %s, at end %s\n", load0, load1);
    printf("the A/A pair (copy: the baseline itself) stopped as clearly slower in %d of %d "
           "racing timings (a wrong stop: the 99%% looks are not corrected for their number)\n",
           t->aa_slower, t->aa);
    /* The picks of two separate timings differ by their noise too: full timing against
     * itself (repetitions 1 and 2) is the floor. A difference counts against racing when
     * racing stopped one of the two picks, or when there are more than that floor. */
    int diff = t->tasks - t->same[0] - t->ties[0];
    int floor = t->reps >= 2 ? t->tasks - t->same[2] - t->ties[2] : 0;
    char fl[128] = "one repetition: no comparison";
    if (t->reps >= 2)
        snprintf(fl, sizeof fl, "%d of %d the same, +%d ties, %d different", t->same[2], t->tasks,
                 t->ties[2], floor);
    printf("picks, racing timed on its own: same best in %d of %d tasks, +%d ties within full "
           "timing's band, %d different (%d where racing stopped one of the two picks, %d where "
           "neither was stopped: the two timings' noise); full timing against itself, "
           "repetition 1 vs 2: %s\n",
           t->same[0], t->tasks, t->ties[0], diff, t->diff_stopped, diff - t->diff_stopped, fl);
    printf("goal: racing saves >= 30%% of profiling device time and picks the same best kernel "
           "per task (issue 27), racing timed on its own: %s, median %.1f%% saved over %d "
           "repetitions; %d different picks, %d of them from a racing stop, against %d between "
           "two full timings\n",
           mr >= 0.30 && t->diff_stopped == 0 && diff <= floor ? "met" : "missed", 100 * mr,
           t->reps, diff, t->diff_stopped, floor);
    printf("goal: the same, racing's rule replayed on full timing's samples: %s, median %.1f%% "
           "saved; same best in %d of %d tasks, +%d ties\n",
           mp >= 0.30 && t->same[1] + t->ties[1] == t->tasks ? "met" : "missed", 100 * mp,
           t->same[1], t->tasks, t->ties[1]);
}

int main(int argc, char **argv) {
    int reps = 2, a = 1;
    if (argc > 2 && !strcmp(argv[1], "--reps")) reps = atoi(argv[2]), a = 3;
    if (reps < 1 || reps > MAXR)
        return fprintf(stderr, "bench_racing: --reps must be 1..%d, not %d\n", MAXR, reps), 1;
    const char *suite = argc > a ? argv[a] : "suites/builtin";
    char *names[256];
    int n = 0;
    if (argc > a + 1) {
        for (int i = a + 1; i < argc && n < 256; i++) names[n++] = strdup(argv[i]);
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
    char load0[64];
    loadavg(load0, sizeof load0);
    printf("racing vs full timing per candidate, %d repetitions (OpenCL; device time of the timed "
           "runs, both sides, ms, summed over the repetitions; saved: racing timed on its own, "
           "its rule replayed on full timing's samples, and replayed without the not_better "
           "stop; stops per repetition: S clearly slower than the best so far, T clearly past "
           "the target, N not better than the best beyond the noise band)\n",
           reps);
    printf("%-18s %5s %9s %9s %6s %6s %6s %5s %5s  %-24s %-5s %-5s %-5s\n", "task", "cands", "full",
           "race", "saved", "replay", "no-N", "runs", "runs", "racing stops", "best", "best",
           "best");
    printf("%-18s %5s %9s %9s %6s %6s %6s %5s %5s  %-24s %-5s %-5s %-5s\n", "", "", "", "", "",
           "saved", "saved", "full", "race", "", "full", "race", "rep");
    tally t = {.reps = reps};
    for (int i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", suite, names[i]);
        one_task(pool, dir, names[i], reps, &t);
        free(names[i]);
    }
    totals(&t, load0);
    sg_val_pool_free(pool);
    return 0;
}
