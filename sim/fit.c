/* fit.c — a workload fitted to calibration data (sim.h's sg_sim_fit), and written as a
 * workload file. */
#include "sim/sim.h"

#include "common/buf.h"
#include "results/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_sim_fit_quality(const sg_calib_data *d, sg_fit *f);

static sg_fit_param *param(sg_fit *f, const char *name, int n) {
    sg_fit_param *p = &f->p[f->np++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n = n;
    return p;
}

static void reject(sg_fit *f, const char *name, int n, int need, const char *what) {
    sg_fit_param *p = param(f, name, n);
    snprintf(p->why, sizeof p->why, "too few data: %d %s, at least %d needed", n, what, need);
}

/* A fitted value, unless its interval spans more than a factor of 4 (the data are too few,
 * or too spread, to say anything a run would rest on). */
static void accept(sg_fit *f, const char *name, int n, double v, double lo, double hi) {
    sg_fit_param *p = param(f, name, n);
    p->value = v, p->lo = lo, p->hi = hi, p->fitted = !(lo > 0 && hi > 4 * lo);
    if (!p->fitted)
        snprintf(p->why, sizeof p->why,
                 "too few data: %d samples give %.4g with a 95%% interval of %.4g-%.4g, wider "
                 "than a factor of 4",
                 n, v, lo, hi);
}

/* Lognormal by maximum likelihood: its mean and cv, with intervals (delta method on the
 * mean's log; the log-sd's standard error 1/sqrt(2(n-1))). */
static int lognormal(const double *x, int n, double *mean, double mi[2], double *cv, double ci[2]) {
    double m = 0, s2 = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (x[i] > 0) m += log(x[i]), k++;
    if (k < 2) return -1;
    m /= k;
    for (int i = 0; i < n; i++)
        if (x[i] > 0) s2 += (log(x[i]) - m) * (log(x[i]) - m);
    s2 /= k - 1;
    double s = sqrt(s2), lm = m + s2 / 2, se = sqrt(s2 / k + s2 * s2 / (2.0 * (k - 1)));
    *mean = exp(lm);
    mi[0] = exp(lm - 1.96 * se), mi[1] = exp(lm + 1.96 * se);
    double ls = 1.96 / sqrt(2.0 * (k - 1)), a = s * exp(-ls), b = s * exp(ls);
    *cv = sqrt(exp(s2) - 1);
    ci[0] = sqrt(exp(a * a) - 1), ci[1] = sqrt(exp(b * b) - 1);
    return k;
}

static void fit_reasoning(const sg_calib_data *d, sg_fit *f) {
    double *x = sg_xcalloc((size_t)d->ntraces + 1, sizeof *x);
    for (int i = 0; i < d->ntraces; i++) x[i] = d->traces[i].reasoning_tokens;
    double mean, mi[2], cv, ci[2];
    int k = d->ntraces >= 10 ? lognormal(x, d->ntraces, &mean, mi, &cv, ci) : -1;
    if (k < 10) {
        reject(f, "reasoning_tokens", d->ntraces, 10, "reasoning traces");
        reject(f, "reasoning_cv", d->ntraces, 10, "reasoning traces");
    } else {
        accept(f, "reasoning_tokens", k, mean, mi[0], mi[1]);
        accept(f, "reasoning_cv", k, cv, ci[0], ci[1]);
        f->w.reasoning_tokens = mean, f->w.reasoning_cv = cv;
    }
    free(x);
}

/* Points of one kind as a Poisson process with `dead` tokens after each: the mean spacing
 * is the exposure (the traces' length less the dead time) over the count. */
static void fit_spacing(const sg_calib_data *d, sg_fit *f, int code, const char *name, double dead,
                        double *out) {
    double exposure = 0;
    int k = 0;
    for (int t = 0; t < d->ntraces; t++) {
        int in = 0;
        for (int i = 0; i < d->npoints; i++)
            in += d->points[i].task == d->traces[t].task && d->points[i].code == code;
        exposure += d->traces[t].reasoning_tokens - dead * in;
        k += in;
    }
    if (k < 20) {
        reject(f, name, k, 20, code ? "code blocks" : "cues");
        return;
    }
    double m = exposure / k, r = 1.96 / sqrt(k);
    accept(f, name, k, m, m / (1 + r), m / (1 - r > 0.05 ? 1 - r : 0.05));
    *out = m;
}

static void fit_decode(const sg_calib_data *d, sg_fit *f) {
    int n = 0;
    for (int i = 0; i < d->nrates && n < 8; i++) {
        const sg_calib_rate_row *r = &d->rates[i];
        if (!r->decode || r->tok_s <= 0) continue;
        char name[24];
        snprintf(name, sizeof name, "decode_rate@%d", r->streams);
        /* the streams' spread, and a floor for the chunks' granularity in the window */
        double se = (r->tok_s_sd > 0 ? r->tok_s_sd / sqrt(r->streams) : 0) + 0.01 * r->tok_s;
        accept(f, name, r->streams, r->tok_s, r->tok_s - 1.96 * se, r->tok_s + 1.96 * se);
        f->w.rate_batch[n] = r->streams, f->w.rate_tok_s[n] = r->tok_s;
        n++;
    }
    if (n)
        f->w.rate_points = n;
    else
        reject(f, "decode_rate", 0, 1, "ramp steps");
}

/* First-token latency against uncached prompt tokens (probes): the slope is the prefill
 * rate; the reasoning streams' first token less their prompt's prefill is first_token_s. */
static void fit_prefill(const sg_calib_data *d, sg_fit *f) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int i = 0; i < d->nrates; i++) {
        const sg_calib_rate_row *r = &d->rates[i];
        if (r->decode || r->cached_tokens != 0 || r->first_token_ms <= 0) continue;
        double x = r->prompt_tokens, y = r->first_token_ms / 1000;
        sx += x, sy += y, sxx += x * x, sxy += x * y, n++;
    }
    double den = n * sxx - sx * sx;
    if (n < 3 || den <= 0) {
        reject(f, "prefill_tok_s", n, 3, "uncached prefill probes of two sizes or more");
    } else {
        double b = (n * sxy - sx * sy) / den, a = (sy - b * sx) / n, rss = 0;
        for (int i = 0; i < d->nrates; i++) {
            const sg_calib_rate_row *r = &d->rates[i];
            if (r->decode || r->cached_tokens != 0 || r->first_token_ms <= 0) continue;
            double e = r->first_token_ms / 1000 - a - b * r->prompt_tokens;
            rss += e * e;
        }
        double sb = n > 2 ? sqrt(rss / (n - 2) / (sxx - sx * sx / n)) : 0;
        sb += 1e-3 * fabs(b); /* the probes' own timing granularity */
        if (b <= 0 || b - 1.96 * sb <= 0) {
            sg_fit_param *p = param(f, "prefill_tok_s", n);
            snprintf(p->why, sizeof p->why,
                     "the probes' latency does not grow with the prompt "
                     "clearly enough: more or longer probes are needed");
        } else {
            accept(f, "prefill_tok_s", n, 1 / b, 1 / (b + 1.96 * sb), 1 / (b - 1.96 * sb));
            f->w.prefill_tok_s = 1 / b;
        }
    }
    double s = 0, s2 = 0;
    int k = 0;
    for (int i = 0; i < d->ntraces; i++) {
        const sg_calib_trace_row *t = &d->traces[i];
        if (t->first_token_ms < 0) continue;
        double v = t->first_token_ms / 1000 - t->prompt_tokens / f->w.prefill_tok_s;
        s += v, s2 += v * v, k++;
    }
    if (k < 10) {
        reject(f, "first_token_s", k, 10, "reasoning streams with a first-token time");
        return;
    }
    double m = s / k, sd = k > 1 && s2 - k * m * m > 0 ? sqrt((s2 - k * m * m) / (k - 1)) : 0;
    double h = 1.96 * sd / sqrt(k) + 0.005; /* 5 ms: the first chunk's extrapolation */
    accept(f, "first_token_s", k, m, m - h, m + h);
    f->w.first_token_s = m;
}

static void fit_service(const sg_calib_data *d, sg_fit *f) {
    static const char *const names[2] = {"validate_s", "profile_s"};
    double cvs[2], cis[2][2];
    int ks[2] = {0, 0};
    for (int r = 0; r < 2; r++) {
        double mean, mi[2];
        int k = d->nservice[r] >= 10
                    ? lognormal(d->service[r], d->nservice[r], &mean, mi, &cvs[r], cis[r])
                    : -1;
        if (k < 10) {
            reject(f, names[r], d->nservice[r], 10, "jobs");
            continue;
        }
        ks[r] = k;
        accept(f, names[r], k, mean, mi[0], mi[1]);
        f->w.slots.service_s[r] = mean;
    }
    int r = ks[0] >= ks[1] ? 0 : 1; /* one cv in the model: the kind with more jobs */
    if (ks[r] >= 10) {
        accept(f, "service_cv", ks[r], cvs[r], cis[r][0], cis[r][1]);
        f->w.slots.cv = cvs[r];
    } else {
        reject(f, "service_cv", ks[r], 10, "jobs");
    }
}

/* The quality model's values into the workload. */
static void apply_quality(sg_fit *f) {
    for (int i = 0; i < f->np; i++) {
        const sg_fit_param *p = &f->p[i];
        if (!p->fitted) continue;
        double v = p->value;
        sg_sim_workload *w = &f->w;
        if (!strcmp(p->name, "q0")) w->q0 = v;
        if (!strcmp(p->name, "q1")) w->q1 = v;
        if (!strcmp(p->name, "q_gamma")) w->q_gamma = v;
        if (!strcmp(p->name, "q_sd")) w->q_sd = v;
        if (!strcmp(p->name, "q_final")) w->q_final = v;
        if (!strcmp(p->name, "p_compile_error")) w->slots.p_compile_error = v;
        if (!strcmp(p->name, "p_wrong")) w->slots.p_wrong = v;
        if (!strcmp(p->name, "max_speedup")) w->slots.max_speedup = v;
        if (!strcmp(p->name, "speedup_cv")) w->slots.speedup_cv = v;
    }
}

int sg_sim_fit(const sg_calib_data *d, const sg_sim_workload *base, sg_fit *out, sg_err *err) {
    memset(out, 0, sizeof *out);
    out->w = *base;
    snprintf(out->w.name, sizeof out->w.name, "measured");
    if (d->ntraces == 0 && d->nobs == 0 && d->nrates == 0)
        return sg_errf(err, "no calibration data: run `specgen calibrate` (or `specgen sim "
                            "--calibration-run`) into this database first");
    fit_reasoning(d, out);
    fit_spacing(d, out, 1, "code_every_tokens", SG_SIM_CODE_TOKENS, &out->w.code_every_tokens);
    fit_spacing(d, out, 0, "cue_every_tokens", 1, &out->w.cue_every_tokens);
    fit_decode(d, out);
    fit_prefill(d, out);
    fit_service(d, out);
    sg_sim_fit_quality(d, out);
    apply_quality(out);
    return 0;
}
