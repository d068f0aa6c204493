#include "common/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sg_parse_double(const char *s, double *out, sg_err *err) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return sg_errf(err, "'%s' is not a number", s);
    *out = v;
    return 0;
}

int sg_parse_int(const char *s, int64_t *out, sg_err *err) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) return sg_errf(err, "'%s' is not an integer", s);
    *out = v;
    return 0;
}

/* Split "12.5ms" into 12.5 and "ms". */
static int number_and_suffix(const char *s, double *v, const char **suffix) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno || !isfinite(*v) || *v < 0) return -1;
    *suffix = end;
    return 0;
}

int sg_parse_duration_ns(const char *s, int64_t *out, sg_err *err) {
    static const struct {
        const char *name;
        double ns;
    } units[] = {
        {"", 1e9},  {"ns", 1},   {"us", 1e3},   {"ms", 1e6},
        {"s", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
    };
    double v;
    const char *suf;
    if (number_and_suffix(s, &v, &suf) == 0) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(suf, units[i].name) == 0 && v * units[i].ns < 9.2e18) {
                *out = (int64_t)llround(v * units[i].ns);
                return 0;
            }
        }
    }
    return sg_errf(err, "'%s' is not a duration (examples: 90, 250ms, 30s, 30m, 2h)", s);
}

static int parse_scaled(const char *s, double base, uint64_t *out) {
    double v;
    const char *suf;
    if (number_and_suffix(s, &v, &suf) < 0) return -1;
    const char *letters = "kmgt";
    double scale = 1;
    if (*suf) {
        const char *p = strchr(letters, suf[0] | 0x20);
        if (!p) return -1;
        scale = pow(base, (double)(p - letters + 1));
        /* allow "4G", "4GB", "4GiB" for sizes */
        const char *rest = suf + 1;
        if (*rest && strcasecmp(rest, "b") != 0 && strcasecmp(rest, "ib") != 0) return -1;
    }
    double r = v * scale;
    if (r >= 1.8e19) return -1;
    *out = (uint64_t)llround(r);
    return 0;
}

int sg_parse_size_bytes(const char *s, uint64_t *out, sg_err *err) {
    if (parse_scaled(s, 1024, out) < 0)
        return sg_errf(err, "'%s' is not a size (examples: 4096, 64k, 512M, 4G)", s);
    return 0;
}

int sg_parse_count(const char *s, uint64_t *out, sg_err *err) {
    if (parse_scaled(s, 1000, out) < 0)
        return sg_errf(err, "'%s' is not a count (examples: 500, 500k, 2M)", s);
    return 0;
}

const char *sg_fmt_duration(int64_t ns, char *out, size_t n) {
    double a = fabs((double)ns);
    if (a >= 60e9)
        snprintf(out, n, "%.1f min", (double)ns / 60e9);
    else if (a >= 1e9)
        snprintf(out, n, "%.2f s", (double)ns / 1e9);
    else if (a >= 1e6)
        snprintf(out, n, "%.2f ms", (double)ns / 1e6);
    else if (a >= 1e3)
        snprintf(out, n, "%.2f us", (double)ns / 1e3);
    else
        snprintf(out, n, "%lld ns", (long long)ns);
    return out;
}

const char *sg_fmt_bytes(uint64_t bytes, char *out, size_t n) {
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(out, n, "%llu B", (unsigned long long)bytes);
    else
        snprintf(out, n, "%.1f %s", v, u[i]);
    return out;
}
