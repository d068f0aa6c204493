/* The dialect list's table, names and parsing (dialect.h). */
#include "common/dialect.h"

#include <stdio.h>
#include <string.h>

const sg_dialect_info sg_dialects[SG_DIALECT_N] = {
#define SG_DIALECT_INFO(id, name, replayed, labelled, running, generated)                          \
    [SG_DIALECT_##id] = {name, replayed, labelled, running, generated},
    SG_DIALECTS(SG_DIALECT_INFO)
#undef SG_DIALECT_INFO
};

const char *sg_dialect_name(sg_dialect d) {
    return (unsigned)d < SG_DIALECT_N ? sg_dialects[d].name : "?";
}

int sg_dialect_parse(const char *name, sg_dialect *out) {
    for (int i = 0; i < SG_DIALECT_N; i++)
        if (!strcmp(name, sg_dialects[i].name)) return *out = (sg_dialect)i, 0;
    return -1;
}

void sg_dialect_names(int replayed_only, const char *sep, char *out, size_t n) {
    size_t len = 0;
    if (n) out[0] = '\0';
    for (int i = 0; i < SG_DIALECT_N && len < n; i++) {
        if (replayed_only && !sg_dialects[i].replayed) continue;
        int k = snprintf(out + len, n - len, "%s%s", len ? sep : "", sg_dialects[i].name);
        if (k < 0) break;
        len += (size_t)k;
    }
}
