#include "profiler/feedback.h"
#include "common/buf.h"

#include "common/json.h"
#include "common/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_feedback_load(const char *prompts_dir, sg_feedback_templates *t, sg_err *err) {
    memset(t, 0, sizeof *t);
    char path[1024];
    snprintf(path, sizeof path, "%s/feedback.json", prompts_dir);
    json_t *j = sg_json_load_file(path, err);
    if (!j) return -1;
    struct {
        const char *key;
        char **out;
    } f[] = {{"compile_error", &t->compile_error},
             {"mismatch", &t->mismatch},
             {"timing", &t->timing},
             {"diagnosis", &t->diagnosis}};
    int rc = 0;
    for (size_t i = 0; i < 4 && rc == 0; i++) {
        const char *v;
        rc = sg_json_get_str(j, f[i].key, 1, &v, path, err);
        if (rc == 0) *f[i].out = sg_xstrdup(v);
    }
    json_decref(j);
    if (rc < 0) sg_feedback_free(t);
    return rc;
}

void sg_feedback_free(sg_feedback_templates *t) {
    free(t->compile_error);
    free(t->mismatch);
    free(t->timing);
    free(t->diagnosis);
    memset(t, 0, sizeof *t);
}

/* Find "LINE" in a compiler message prefix: NVRTC "name(12): error", clang/PoCL
 * "name:12:5: error". Returns the byte range of the number, or 0. */
static int find_line_number(const char *line, size_t len, size_t *num_start, size_t *num_end) {
    for (size_t i = 0; i < len; i++) {
        if ((line[i] == '(' || line[i] == ':') && i + 1 < len &&
            isdigit((unsigned char)line[i + 1])) {
            size_t j = i + 1;
            while (j < len && isdigit((unsigned char)line[j])) j++;
            if (j < len &&
                ((line[i] == '(' && line[j] == ')') || (line[i] == ':' && line[j] == ':'))) {
                *num_start = i + 1;
                *num_end = j;
                return 1;
            }
        }
        if (line[i] == ' ') return 0; /* the location comes before the first space */
    }
    return 0;
}

static int contains(const char *s, size_t n, const char *word) {
    return memmem(s, n, word, strlen(word)) != NULL;
}

/* Copy one log line with its line number mapped to the candidate's numbering. */
static void map_line(const char *line, size_t len, int offset, sg_buf *out) {
    size_t a, b;
    if (offset && find_line_number(line, len, &a, &b)) {
        long n = strtol(line + a, NULL, 10) - offset;
        sg_buf_append(out, line, a);
        if (n >= 1)
            sg_buf_printf(out, "%ld", n);
        else
            sg_buf_append_str(out, "harness");
        sg_buf_append(out, line + b, len - b);
    } else {
        sg_buf_append(out, line, len);
    }
    sg_buf_append(out, "\n", 1);
}

/* PoCL prints "error: /root/.cache/pocl/kcache/tempfile_X.cl:4:37: message": put the
 * location first like other compilers ("kernel.cl:4:37: error: message"), without the
 * cache path nobody can open. Other lines are copied as they are. */
static void normalize_log(const char *log, sg_buf *out) {
    for (const char *p = log; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *kind = !strncmp(p, "error: ", 7)     ? "error"
                           : !strncmp(p, "warning: ", 9) ? "warning"
                                                         : NULL;
        const char *loc = kind ? p + strlen(kind) + 2 : NULL;
        const char *sp = loc ? memchr(loc, ' ', len - (size_t)(loc - p)) : NULL;
        size_t a, b;
        if (sp && sp[-1] == ':' && find_line_number(loc, (size_t)(sp - loc), &a, &b)) {
            const char *base = loc;
            for (const char *q = loc; q < loc + a; q++)
                if (*q == '/') base = q + 1;
            if (!strncmp(base, "tempfile_", 9))
                sg_buf_append_str(out, "kernel.cl");
            else
                sg_buf_append(out, base, (size_t)(loc + a - 1 - base));
            sg_buf_append(out, loc + a - 1, (size_t)(sp - 1 - (loc + a - 1)));
            sg_buf_printf(out, ": %s:", kind);
            sg_buf_append(out, sp, len - (size_t)(sp - p));
        } else {
            sg_buf_append(out, p, len);
        }
        sg_buf_append(out, "\n", 1);
        p += len + (e ? 1 : 0);
    }
}

void sg_feedback_compile(const sg_feedback_templates *t, const sg_fb_compile *c, sg_buf *out) {
    int max = c->max_errors > 0 ? c->max_errors : 8;
    sg_buf norm = {0};
    normalize_log(c->log ? c->log : "", &norm);
    const char *log = norm.data ? norm.data : "";
    int errors = 0, shown = 0, context = 0;
    for (const char *p = log; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (contains(p, len, ": error")) errors++;
        p += len + (e ? 1 : 0);
    }
    sg_buf body = {0};
    for (const char *p = log; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int is_error = contains(p, len, ": error");
        int is_warning = contains(p, len, ": warning");
        if (is_error) {
            if (shown < max) {
                map_line(p, len, c->line_offset, &body);
                context = 2; /* the source line and the caret that compilers print next */
            } else {
                context = 0;
            }
            shown++;
        } else if (is_warning && errors > 0) {
            context = 0; /* warnings only matter when nothing failed */
        } else if (context > 0 || (errors == 0 && len)) {
            map_line(p, len, c->line_offset, &body);
            if (context > 0) context--;
        }
        p += len + (e ? 1 : 0);
    }
    if (shown > max) sg_buf_printf(&body, "... and %d more errors\n", shown - max);
    if (body.len > 3000) {
        body.len = 3000;
        body.data[body.len] = '\0';
        sg_buf_append_str(&body, "\n... (log cut)\n");
    }
    char nerr[32];
    snprintf(nerr, sizeof nerr, errors == 1 ? "%d error" : "%d errors", errors);
    const char *keys[] = {"candidate", "errors", "log"};
    const char *vals[] = {c->candidate, nerr,
                          body.data ? body.data : "(the compiler printed nothing)\n"};
    sg_buf_fill(out, t->compile_error, keys, vals, 3);
    sg_buf_free(&body);
    sg_buf_free(&norm);
}

void sg_feedback_mismatch(const sg_feedback_templates *t, const sg_fb_mismatch *m, sg_buf *out) {
    char idx[32], mabs[32], mrel[32], reason[256] = "";
    const char *got = m->got ? m->got : "?", *exp = m->expected ? m->expected : "?";
    snprintf(idx, sizeof idx, "%lld", m->index);
    snprintf(mabs, sizeof mabs, "%.3g", m->max_abs);
    snprintf(mrel, sizeof mrel, "%.3g", m->max_rel);
    if (m->reason && *m->reason) snprintf(reason, sizeof reason, " Also: %s.", m->reason);
    const char *keys[] = {"candidate", "output",  "shape",   "index", "got",
                          "expected",  "max_abs", "max_rel", "reason"};
    const char *vals[] = {m->candidate, m->output, m->shape, idx, got, exp, mabs, mrel, reason};
    sg_buf_fill(out, t->mismatch, keys, vals, 9);
    sg_buf_append(out, "\n", 1);
}

void sg_feedback_diagnose(const sg_fb_timing *tm, sg_buf *out) {
    size_t start = out->len;
    double secs = tm->cand.median_ns / 1e9;
    if (tm->roof.have && secs > 0 && tm->roof.peak_gbs > 0 && tm->roof.peak_gflops > 0) {
        double gbs = tm->roof.bytes / secs / 1e9, gflops = tm->roof.flops / secs / 1e9;
        double bw_pct = 100 * gbs / tm->roof.peak_gbs, fl_pct = 100 * gflops / tm->roof.peak_gflops;
        double intensity = tm->roof.bytes > 0 ? tm->roof.flops / tm->roof.bytes : 0;
        double ridge = tm->roof.peak_gflops / tm->roof.peak_gbs;
        char bw_from[128] = "", against[400] = "";
        if (tm->roof.bw_source[0]) snprintf(bw_from, sizeof bw_from, ", %s", tm->roof.bw_source);
        if (tm->roof.peak[0]) snprintf(against, sizeof against, " (%s)", tm->roof.peak);
        if (intensity < ridge && bw_pct >= 50)
            sg_buf_printf(out,
                          "memory-bound at %.0f%% of peak bandwidth (%.0f of %.0f GB/s%s): move "
                          "fewer bytes (fuse, reuse in shared/local memory, narrower types). ",
                          bw_pct, gbs, tm->roof.peak_gbs, bw_from);
        else if (intensity >= ridge && fl_pct >= 50)
            sg_buf_printf(out,
                          "compute-bound at %.0f%% of peak arithmetic (%.0f %s against %s): "
                          "use fewer or cheaper operations (vector types, tensor cores where "
                          "they apply). ",
                          fl_pct, gflops >= 1e4 ? gflops / 1000 : gflops,
                          gflops >= 1e4 ? "TFLOP/s" : "GFLOP/s",
                          tm->roof.peak[0] ? tm->roof.peak : "the device's peak");
        else
            sg_buf_printf(
                out,
                "latency-bound: only %.0f%% of peak bandwidth and %.0f%% of peak arithmetic%s; "
                "expose more parallelism (more blocks or work per thread, fewer barriers). ",
                bw_pct, fl_pct, against);
    }
    if (tm->facts.have) {
        if (tm->facts.local_bytes > 0)
            sg_buf_printf(out,
                          "Registers spill %d bytes to local memory: reduce register pressure. ",
                          tm->facts.local_bytes);
        if (tm->facts.occupancy > 0 && tm->facts.occupancy < 0.5)
            sg_buf_printf(out, "Theoretical occupancy is %.0f%%, limited by %s. ",
                          100 * tm->facts.occupancy,
                          tm->facts.occupancy_limiter ? tm->facts.occupancy_limiter : "resources");
    }
    if (out->len == start)
        sg_buf_append_str(out, tm->facts.have
                                   ? "no register spills or occupancy limit reported for its "
                                     "kernels; without the task's bytes and flops there is no "
                                     "roofline estimate. "
                                   : "no hardware facts available for this device. ");
    /* Drop the trailing space. */
    if (out->len > start && out->data[out->len - 1] == ' ') out->data[--out->len] = '\0';
}

void sg_feedback_timing(const sg_feedback_templates *t, const sg_fb_timing *tm, sg_buf *out) {
    sg_speedup s = sg_speedup_compare(&tm->baseline, &tm->cand);
    char cand[32], base[32], runs[16], band[16], speed[16];
    sg_fmt_duration((int64_t)tm->cand.median_ns, cand, sizeof cand);
    sg_fmt_duration((int64_t)tm->baseline.median_ns, base, sizeof base);
    snprintf(runs, sizeof runs, "%d", tm->cand.runs);
    snprintf(band, sizeof band, "%.1f%%", 100 * s.band);
    snprintf(speed, sizeof speed, "%.2f", s.speedup);
    const char *verdict = s.verdict == SG_CMP_FASTER   ? "faster than the baseline"
                          : s.verdict == SG_CMP_SLOWER ? "slower than the baseline"
                                                       : "no change beyond the noise";
    const char *keys[] = {"candidate", "cand", "base", "runs", "band", "speedup", "verdict"};
    const char *vals[] = {tm->candidate, cand, base, runs, band, speed, verdict};
    sg_buf_fill(out, t->timing, keys, vals, 7);
    sg_buf_append(out, "\n", 1);
    sg_buf diag = {0};
    sg_feedback_diagnose(tm, &diag);
    const char *dk[] = {"text"};
    const char *dv[] = {diag.data};
    sg_buf_fill(out, t->diagnosis, dk, dv, 1);
    sg_buf_append(out, "\n", 1);
    sg_buf_free(&diag);
}
