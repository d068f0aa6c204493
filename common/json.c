#include "common/json.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

json_t *sg_json_load_file(const char *path, sg_err *err) {
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line <= 0)
            sg_errf(err, "%s: %s", path, je.text);
        else
            sg_errf(err, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    return root;
}

json_t *sg_json_parse(const char *text, size_t len, const char *where, sg_err *err) {
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) sg_errf(err, "%s:%d:%d: %s", where, je.line, je.column, je.text);
    return root;
}

const char *sg_json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

/* Describe a value briefly for an error message: `string "abc"`, `integer 3`, `object`. */
static void describe(const json_t *v, char *out, size_t n) {
    if (json_is_string(v))
        snprintf(out, n, "string \"%.60s\"", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(out, n, "integer %lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, n, "number %g", json_real_value(v));
    else
        snprintf(out, n, "%s", sg_json_type_name(v));
}

static json_t *field(const json_t *obj, const char *key, int required, const char *where,
                     sg_err *err, int *rc) {
    *rc = 0;
    if (!json_is_object(obj)) {
        *rc = sg_errf(err, "%s: expected an object holding \"%s\", got %s", where, key,
                      obj ? sg_json_type_name(obj) : "nothing");
        return NULL;
    }
    json_t *v = json_object_get(obj, key);
    if (!v && required) *rc = sg_errf(err, "%s: missing required field \"%s\"", where, key);
    return v;
}

static int wrong_type(const json_t *v, const char *key, const char *want, const char *where,
                      sg_err *err) {
    char got[96];
    describe(v, got, sizeof got);
    return sg_errf(err, "%s: field \"%s\": expected %s, got %s", where, key, want, got);
}

int sg_json_get_str(const json_t *obj, const char *key, int required, const char **out,
                    const char *where, sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_string(v)) return wrong_type(v, key, "a string", where, err);
    *out = json_string_value(v);
    return 0;
}

int sg_json_get_int(const json_t *obj, const char *key, int required, int64_t *out,
                    const char *where, sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_integer(v)) return wrong_type(v, key, "an integer", where, err);
    *out = json_integer_value(v);
    return 0;
}

int sg_json_get_num(const json_t *obj, const char *key, int required, double *out,
                    const char *where, sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_number(v)) return wrong_type(v, key, "a number", where, err);
    *out = json_number_value(v);
    return 0;
}

int sg_json_get_bool(const json_t *obj, const char *key, int required, int *out, const char *where,
                     sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_boolean(v)) return wrong_type(v, key, "true or false", where, err);
    *out = json_is_true(v);
    return 0;
}

int sg_json_get_obj(const json_t *obj, const char *key, int required, json_t **out,
                    const char *where, sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_object(v)) return wrong_type(v, key, "an object", where, err);
    *out = v;
    return 0;
}

int sg_json_get_arr(const json_t *obj, const char *key, int required, json_t **out,
                    const char *where, sg_err *err) {
    int rc;
    json_t *v = field(obj, key, required, where, err, &rc);
    if (!v) return rc;
    if (!json_is_array(v)) return wrong_type(v, key, "an array", where, err);
    *out = v;
    return 0;
}

/* Levenshtein distance of two short keys (longer keys count as far apart). */
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), row[65];
    if (la > 64 || lb > 64) return (size_t)-1;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

int sg_json_check_keys(const json_t *obj, const char *const *known, const char *where,
                       sg_err *err) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        int found = 0;
        const char *near = NULL;
        size_t best = (size_t)-1;
        for (const char *const *q = known; *q && !found; q++) {
            found = !strcmp(k, *q);
            size_t d = edit_distance(k, *q);
            if (d < best) best = d, near = *q;
        }
        if (found) continue;
        /* A likely typo: at most a third of the key's letters wrong (and at least 1). */
        size_t limit = strlen(k) / 3 ? strlen(k) / 3 : 1;
        sg_buf list = {0};
        for (const char *const *q = known; *q; q++)
            sg_buf_printf(&list, "%s%s", list.len ? " " : "", *q);
        if (near && best <= limit)
            sg_errf(err, "%s: unknown field \"%s\" (did you mean \"%s\"?)", where, k, near);
        else
            sg_errf(err, "%s: unknown field \"%s\" (known: %s)", where, k, list.data);
        sg_buf_free(&list);
        return -1;
    }
    return 0;
}

char *sg_json_dump(const json_t *v) {
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    return s ? s : sg_xstrdup("null");
}

long sg_utf8_bad_at(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n) return (long)i;
        unsigned cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; k++) {
            if ((u[i + k] & 0xc0) != 0x80) return (long)i;
            cp = cp << 6 | (u[i + k] & 0x3f);
        }
        /* overlong forms, surrogates, beyond U+10FFFF: jansson refuses them too */
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return (long)i;
        i += len;
    }
    return -1;
}
