/* fit_num.c — the numerics of sim fit (sim.h): Nelder-Mead minimisation and the inverse of a
 * numerical Hessian (the covariance of a maximum-likelihood estimate). */
#include "sim/sim.h"

#include "common/buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nelder-Mead from x (n <= SG_FIT_MAXP), initial steps step[]; x gets the minimum. */
double sg_fit_minimize(sg_fit_fn f, void *arg, double *x, const double *step, int n, int iters) {
    double p[SG_FIT_MAXP + 1][SG_FIT_MAXP], v[SG_FIT_MAXP + 1];
    for (int i = 0; i <= n; i++) {
        memcpy(p[i], x, (size_t)n * sizeof *x);
        if (i) p[i][i - 1] += step[i - 1];
        v[i] = f(arg, p[i]);
    }
    double c[SG_FIT_MAXP], r[SG_FIT_MAXP], e[SG_FIT_MAXP];
    for (int it = 0; it < iters; it++) {
        int hi = 0, lo = 0, nh = 0;
        for (int i = 1; i <= n; i++) {
            if (v[i] > v[hi]) hi = i;
            if (v[i] < v[lo]) lo = i;
        }
        nh = hi == 0 ? 1 : 0;
        for (int i = 0; i <= n; i++)
            if (i != hi && v[i] > v[nh]) nh = i;
        if (fabs(v[hi] - v[lo]) < 1e-10 * (fabs(v[lo]) + 1e-10)) break;
        for (int j = 0; j < n; j++) {
            c[j] = 0;
            for (int i = 0; i <= n; i++)
                if (i != hi) c[j] += p[i][j] / n;
            r[j] = c[j] + (c[j] - p[hi][j]);
        }
        double vr = f(arg, r);
        if (vr < v[lo]) {
            for (int j = 0; j < n; j++) e[j] = c[j] + 2 * (c[j] - p[hi][j]);
            double ve = f(arg, e);
            if (ve < vr)
                memcpy(p[hi], e, sizeof e), v[hi] = ve;
            else
                memcpy(p[hi], r, sizeof r), v[hi] = vr;
        } else if (vr < v[nh]) {
            memcpy(p[hi], r, sizeof r), v[hi] = vr;
        } else {
            for (int j = 0; j < n; j++) e[j] = c[j] + 0.5 * (p[hi][j] - c[j]);
            double ve = f(arg, e);
            if (ve < v[hi]) {
                memcpy(p[hi], e, sizeof e), v[hi] = ve;
            } else { /* shrink towards the best */
                for (int i = 0; i <= n; i++) {
                    if (i == lo) continue;
                    for (int j = 0; j < n; j++) p[i][j] = p[lo][j] + 0.5 * (p[i][j] - p[lo][j]);
                    v[i] = f(arg, p[i]);
                }
            }
        }
    }
    int lo = 0;
    for (int i = 1; i <= n; i++)
        if (v[i] < v[lo]) lo = i;
    memcpy(x, p[lo], (size_t)n * sizeof *x);
    return v[lo];
}

/* Invert a (n x n, row-major) in place by Gauss-Jordan with pivoting; -1 when singular. */
static int invert(double *a, int n) {
    double inv[SG_FIT_MAXP * SG_FIT_MAXP];
    memset(inv, 0, sizeof inv);
    for (int i = 0; i < n; i++) inv[i * n + i] = 1;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c])) piv = r;
        if (fabs(a[piv * n + c]) < 1e-300) return -1;
        for (int k = 0; k < n; k++) {
            double t = a[c * n + k];
            a[c * n + k] = a[piv * n + k], a[piv * n + k] = t;
            t = inv[c * n + k];
            inv[c * n + k] = inv[piv * n + k], inv[piv * n + k] = t;
        }
        double d = a[c * n + c];
        for (int k = 0; k < n; k++) a[c * n + k] /= d, inv[c * n + k] /= d;
        for (int r = 0; r < n; r++) {
            if (r == c) continue;
            double m = a[r * n + c];
            for (int k = 0; k < n; k++)
                a[r * n + k] -= m * a[c * n + k], inv[r * n + k] -= m * inv[c * n + k];
        }
    }
    memcpy(a, inv, (size_t)(n * n) * sizeof *a);
    return 0;
}

/* f's numerical Hessian at x into h (n x n). */
static void hessian(sg_fit_fn f, void *arg, const double *x, int n, double *h) {
    double y[SG_FIT_MAXP], f0 = f(arg, x);
    double e[SG_FIT_MAXP];
    for (int i = 0; i < n; i++) e[i] = 1e-2 * (fabs(x[i]) > 1 ? fabs(x[i]) : 1);
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            memcpy(y, x, (size_t)n * sizeof *x);
            double v;
            if (i == j) {
                y[i] += e[i];
                double fp = f(arg, y);
                y[i] -= 2 * e[i];
                double fm = f(arg, y);
                v = (fp - 2 * f0 + fm) / (e[i] * e[i]);
            } else {
                double s[4];
                int k = 0;
                for (int a = -1; a <= 1; a += 2)
                    for (int b = -1; b <= 1; b += 2) {
                        memcpy(y, x, (size_t)n * sizeof *x);
                        y[i] += a * e[i];
                        y[j] += b * e[j];
                        s[k++] = f(arg, y);
                    }
                v = (s[3] - s[2] - s[1] + s[0]) / (4 * e[i] * e[j]);
            }
            h[i * n + j] = h[j * n + i] = v;
        }
}

int sg_fit_newton(sg_fit_fn f, void *arg, double *x, int n, int steps) {
    double h[SG_FIT_MAXP * SG_FIT_MAXP], g[SG_FIT_MAXP], y[SG_FIT_MAXP], fx = f(arg, x);
    for (int it = 0; it < steps; it++) {
        for (int i = 0; i < n; i++) {
            double e = 1e-4 * (fabs(x[i]) > 1 ? fabs(x[i]) : 1);
            memcpy(y, x, (size_t)n * sizeof *x);
            y[i] += e;
            double fp = f(arg, y);
            y[i] -= 2 * e;
            g[i] = (fp - f(arg, y)) / (2 * e);
        }
        hessian(f, arg, x, n, h);
        if (invert(h, n) < 0) return -1;
        double step = 1;
        for (int tries = 0; tries < 8; tries++, step /= 2) { /* backtracking */
            for (int i = 0; i < n; i++) {
                y[i] = x[i];
                for (int j = 0; j < n; j++) y[i] -= step * h[i * n + j] * g[j];
            }
            double fy = f(arg, y);
            if (fy < fx) {
                memcpy(x, y, (size_t)n * sizeof *x);
                if (fx - fy < 1e-7) return 0;
                fx = fy;
                break;
            }
        }
    }
    return 0;
}

int sg_fit_covariance(sg_fit_fn f, void *arg, const double *x, int n, double *sd) {
    double h[SG_FIT_MAXP * SG_FIT_MAXP];
    hessian(f, arg, x, n, h);
    if (invert(h, n) < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (!(h[i * n + i] > 0) || !isfinite(h[i * n + i])) return -1;
        sd[i] = sqrt(h[i * n + i]);
    }
    return 0;
}
