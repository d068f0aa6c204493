/* fit_quality.c — the quality curve and the outcome model fitted jointly (sim.h's sg_sim_fit):
 * a kernel forked at fraction f has quality q = clamp(q0 + (q1 - q0) f^gamma + q_sd z), the
 * final answer q_final + q_sd z (z standard normal); it fails to compile with probability
 * p_ce (1 - q), is wrong with p_w (1 - q), else is correct at speedup S^q times lognormal
 * noise (mean 1, cv speedup_cv): the likelihood of every verdict and speedup, z integrated
 * out on a grid, maximised by Nelder-Mead; intervals from the Hessian. */
#include "sim/sim.h"

#include "common/buf.h"
#include "results/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NZ 33
#define NQ 9 /* q0 q1 log(gamma) log(q_sd) q_final logit(p_ce) logit(p_w) log(log S) log(s_e) */

typedef struct qobs {
    double f;    /* fraction; < 0: the final answer */
    int outcome; /* 0 compile error, 1 wrong, 2 correct */
    double lns;  /* correct: log speedup */
} qobs;

typedef struct qdata {
    qobs *o;
    int n;
    double z[NZ], wz[NZ];
} qdata;

static double logistic(double x) { return 1 / (1 + exp(-x)); }

static double nll(void *arg, const double *x) {
    const qdata *d = arg;
    double q0 = x[0], q1 = x[1], g = exp(x[2]), sd = exp(x[3]), qf = x[4];
    double pce = logistic(x[5]), pw = logistic(x[6]), L = exp(x[7]), se = exp(x[8]);
    if (g > 20 || sd > 2 || L > 10 || se > 5) return 1e30;
    double ll = 0;
    for (int i = 0; i < d->n; i++) {
        const qobs *o = &d->o[i];
        double m = o->f < 0 ? qf : q0 + (q1 - q0) * pow(o->f, g), p = 0;
        for (int k = 0; k < NZ; k++) {
            double q = m + sd * d->z[k];
            q = q < 0 ? 0 : q > 1 ? 1 : q;
            double ce = pce * (1 - q), wr = pw * (1 - q), lk;
            if (o->outcome == 0) {
                lk = ce;
            } else if (o->outcome == 1) {
                lk = (1 - ce) * wr;
            } else {
                double u = (o->lns - (L * q - se * se / 2)) / se;
                lk = (1 - ce) * (1 - wr) * exp(-u * u / 2) / (se * 2.5066282746310002);
            }
            p += d->wz[k] * lk;
        }
        ll += log(p > 1e-300 ? p : 1e-300);
    }
    return -ll;
}

/* The natural value of transformed parameter i. */
static double natural(int i, double x) {
    switch (i) {
    case 2:
    case 3:
    case 8: return exp(x);
    case 5:
    case 6: return logistic(x);
    case 7: return exp(exp(x)); /* max_speedup = S */
    default: return x;
    }
}

static const char *const qnames[NQ] = {"q0",      "q1",          "q_gamma",
                                       "q_sd",    "q_final",     "p_compile_error",
                                       "p_wrong", "max_speedup", "speedup_cv"};

static void put(sg_fit *f, int i, double x, double sd, int n, int ok, const char *why) {
    sg_fit_param *p = &f->p[f->np++];
    snprintf(p->name, sizeof p->name, "%s", qnames[i]);
    double a = natural(i, x - 1.96 * sd), b = natural(i, x + 1.96 * sd);
    p->value = natural(i, x);
    if (i == 8) { /* the lognormal's sigma -> its cv */
        p->value = sqrt(exp(p->value * p->value) - 1);
        a = sqrt(exp(a * a) - 1), b = sqrt(exp(b * b) - 1);
    }
    p->lo = a < b ? a : b;
    p->hi = a < b ? b : a;
    p->n = n;
    p->fitted = ok;
    snprintf(p->why, sizeof p->why, "%s", why ? why : "");
}

/* The base workload's values, as a starting point in transformed space. */
static void start(const sg_sim_workload *w, double *x) {
    x[0] = w->q0, x[1] = w->q1, x[2] = log(w->q_gamma > 0 ? w->q_gamma : 1);
    x[3] = log(w->q_sd > 0.01 ? w->q_sd : 0.1), x[4] = w->q_final;
    double pc = w->slots.p_compile_error, pw = w->slots.p_wrong;
    x[5] = log((pc > 0.01 ? pc : 0.2) / (1 - (pc < 0.99 ? pc : 0.5)));
    x[6] = log((pw > 0.01 ? pw : 0.3) / (1 - (pw < 0.99 ? pw : 0.5)));
    x[7] = log(log(w->slots.max_speedup > 1.05 ? w->slots.max_speedup : 2));
    double cv = w->slots.speedup_cv > 0.01 ? w->slots.speedup_cv : 0.1;
    x[8] = log(sqrt(log(1 + cv * cv)));
}

int sg_sim_fit_quality(const sg_calib_data *d, sg_fit *f) {
    qdata q = {0};
    q.o = sg_xcalloc((size_t)d->nobs + 1, sizeof *q.o);
    int correct = 0, finals = 0;
    for (int i = 0; i < d->nobs; i++) {
        const sg_calib_obs *o = &d->obs[i];
        if (!o->kernel) continue;
        int fin = !strcmp(o->kind, "final");
        if (!fin && !(o->fraction >= 0)) continue;
        qobs *x = &q.o[q.n++];
        x->f = fin ? -1 : o->fraction > 1 ? 1 : o->fraction;
        x->outcome = !o->compiled ? 0 : !o->correct ? 1 : 2;
        if (x->outcome == 2 && o->speedup > 0)
            x->lns = log(o->speedup);
        else if (x->outcome == 2)
            x->outcome = 1; /* correct but untimed: no speedup to fit */
        correct += x->outcome == 2;
        finals += fin;
    }
    double tot = 0;
    for (int k = 0; k < NZ; k++) {
        q.z[k] = -4 + 8.0 * k / (NZ - 1);
        q.wz[k] = exp(-q.z[k] * q.z[k] / 2);
        tot += q.wz[k];
    }
    for (int k = 0; k < NZ; k++) q.wz[k] /= tot;
    double x[NQ], sd[NQ], step[NQ] = {0.1, 0.1, 0.3, 0.3, 0.1, 0.5, 0.5, 0.2, 0.3};
    start(&f->w, x);
    char why[200] = "";
    int ok = q.n >= 100 && correct >= 30 && finals >= 10;
    if (!ok)
        snprintf(why, sizeof why,
                 "too few data: %d kernels (%d correct, %d final answers); the joint fit needs "
                 "100 (30, 10)",
                 q.n, correct, finals);
    if (ok) {
        for (int round = 0; round < 3; round++) sg_fit_minimize(nll, &q, x, step, NQ, 2000);
        sg_fit_newton(nll, &q, x, NQ, 6);
        if (sg_fit_covariance(nll, &q, x, NQ, sd) < 0) {
            ok = 0;
            snprintf(why, sizeof why,
                     "the data do not pin the quality model down (its likelihood is flat at the "
                     "optimum): more kernels are needed");
        }
    }
    for (int i = 0; i < NQ; i++) {
        int one = ok, n = i == 4 ? finals : i == 7 || i == 8 ? correct : q.n;
        char w2[200];
        snprintf(w2, sizeof w2, "%s", why);
        if (ok && sd[i] > 3) { /* an interval of e^±6 in its own scale: not pinned down */
            one = 0;
            snprintf(w2, sizeof w2,
                     "too few data: its 95%% interval is wider than the data can "
                     "use (sd %.2f on its fitted scale)",
                     sd[i]);
        }
        put(f, i, x[i], ok ? sd[i] : 0, n, one, one ? NULL : w2);
    }
    free(q.o);
    return ok ? 0 : -1;
}
