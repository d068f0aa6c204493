/* Prometheus text format helpers (prom.h). */
#include "common/prom.h"

#include "common/assert.h"
#include "common/version.h"

#include <inttypes.h>
#include <string.h>

void sg_prom_head(sg_buf *b, const char *name, const char *type, const char *help) {
    sg_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void sg_prom_label(sg_buf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            sg_buf_printf(b, "\\%c", *s);
        else if (*s == '\n')
            sg_buf_append_str(b, "\\n");
        else
            sg_buf_append(b, s, 1);
    }
}

void sg_prom_build_info(sg_buf *b, const char *component) {
    sg_prom_head(b, "specgen_build_info", "gauge",
                 "1, with the version, the commit it was built from and the component as labels");
    sg_buf_append_str(b, "specgen_build_info{version=\"");
    sg_prom_label(b, SG_VERSION);
    const char *commit = sg_version_commit();
    if (commit && *commit) {
        sg_buf_append_str(b, "\",commit=\"");
        sg_prom_label(b, commit);
    }
    sg_buf_append_str(b, "\",component=\"");
    sg_prom_label(b, component);
    sg_buf_append_str(b, "\"} 1\n");
}

void sg_prom_hist_init(sg_prom_hist *h, const double *le, int n) {
    SG_ASSERT(n > 0 && n <= SG_PROM_MAX_BUCKETS);
    memset(h, 0, sizeof *h);
    h->n = n;
    for (int i = 0; i < n; i++) {
        SG_ASSERT(i == 0 || le[i] > le[i - 1]);
        h->le[i] = le[i];
    }
}

void sg_prom_hist_observe(sg_prom_hist *h, double v) {
    for (int i = 0; i < h->n; i++)
        if (v <= h->le[i]) h->count[i]++;
    h->total++;
    h->sum += v;
}

void sg_prom_hist_write(sg_buf *b, const char *name, const char *labels, const sg_prom_hist *h) {
    const char *sep = labels && *labels ? "," : "";
    if (!labels) labels = "";
    for (int i = 0; i < h->n; i++)
        sg_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels, sep, h->le[i],
                      h->count[i]);
    sg_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, sep, h->total);
    if (*labels)
        sg_buf_printf(b, "%s_sum{%s} %.6f\n%s_count{%s} %" PRIu64 "\n", name, labels, h->sum, name,
                      labels, h->total);
    else
        sg_buf_printf(b, "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->sum, name, h->total);
}
