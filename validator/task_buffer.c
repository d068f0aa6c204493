/* task.json's buffers and scalars: element types, roles, input distributions and the
 * default tolerances per type (docs/task-format.md says where each default comes from). */
#include "validator/elem.h"
#include "validator/internal.h"

#include "common/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Floating buffers without "init" run these three, so a kernel that is right only on
 * uniform(-1,1) (an approximation valid on a small range, a clamp) fails. */
static const char *const float_defaults[] = {"uniform(-1,1)", "normal(0,1)",
                                             "outliers(-1,1,0.01,100)"};

/* Default |got - ref| <= atol + rtol*|ref| per type. f16 and bf16: PyTorch's
 * torch.testing.assert_close defaults. fp8 (which PyTorch gives none): one ulp at 1.0
 * as rtol, as those defaults roughly are (1e-3 ~ 2^-10, 1.6e-2 ~ 2*2^-7), and the
 * smallest subnormal as atol. f32 / f64: this format's earlier default. */
static void default_tol(sg_val_type t, double *atol, double *rtol) {
    switch (t) {
    case SG_VAL_F32:
    case SG_VAL_F64: *atol = 1e-5, *rtol = 1e-5; break;
    case SG_VAL_F16: *atol = 1e-5, *rtol = 1e-3; break;
    case SG_VAL_BF16: *atol = 1e-5, *rtol = 1.6e-2; break;
    case SG_VAL_FP8_E4M3: *atol = 0x1p-9, *rtol = 0x1p-3; break;
    case SG_VAL_FP8_E5M2: *atol = 0x1p-16, *rtol = 0x1p-2; break;
    default: *atol = 0, *rtol = 0; /* integers: exact */
    }
}

/* randint(lo,hi) with size expressions: "randint(0,V-1)". 1 when it is one. */
static int randint_exprs(const char *s, sg_val_dist *d) {
    if (strncmp(s, "randint(", 8)) return 0;
    const char *a = s + 8, *comma = NULL, *end = NULL;
    int depth = 0;
    for (const char *p = a; *p && !end; p++) {
        if (*p == '(') depth++;
        if (*p == ')' && depth-- == 0) end = p;
        if (*p == ',' && depth == 0 && !comma) comma = p;
    }
    if (!comma || !end || end[1] || comma == a || end == comma + 1 ||
        (size_t)(comma - a) >= sizeof d->lo || (size_t)(end - comma - 1) >= sizeof d->hi)
        return 0;
    snprintf(d->lo, sizeof d->lo, "%.*s", (int)(comma - a), a);
    snprintf(d->hi, sizeof d->hi, "%.*s", (int)(end - comma - 1), comma + 1);
    d->kind = SG_VAL_INIT_RANDINT;
    return 1;
}

int sg_val_dist_at(const sg_val_dist *d, const sg_val_sizes *s, sg_val_dist *out, sg_err *err) {
    *out = *d;
    if (!d->lo[0]) return 0;
    int64_t lo, hi;
    if (sg_val_expr_eval(d->lo, s, &lo, err) < 0 || sg_val_expr_eval(d->hi, s, &hi, err) < 0)
        return sg_err_prefix(err, "init \"%s\"", d->text);
    if (lo > hi)
        return sg_errf(err, "init \"%s\": lo %lld is above hi %lld", d->text, (long long)lo,
                       (long long)hi);
    out->a = (double)lo, out->b = (double)hi;
    return 0;
}

/* "uniform(-4,4)", "normal(0,1)", "randint(0,255)", "const(1)", "outliers(-1,1,0.01,100)",
 * "special"; randint's bounds may be size expressions (randint_exprs) */
static int parse_dist(const char *s, sg_val_dist *d, const char *where, sg_err *err) {
    static const struct {
        const char *name;
        sg_val_init_kind kind;
        int nargs;
    } kinds[] = {{"uniform", SG_VAL_INIT_UNIFORM, 2},   {"normal", SG_VAL_INIT_NORMAL, 2},
                 {"randint", SG_VAL_INIT_RANDINT, 2},   {"const", SG_VAL_INIT_CONST, 1},
                 {"outliers", SG_VAL_INIT_OUTLIERS, 4}, {"special", SG_VAL_INIT_SPECIAL, 0},
                 {"model", SG_VAL_INIT_MODEL, 0}};
    memset(d, 0, sizeof *d);
    snprintf(d->text, sizeof d->text, "%s", s);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].name);
        if (strncmp(s, kinds[i].name, n)) continue;
        d->kind = kinds[i].kind;
        if (kinds[i].nargs == 0) {
            if (s[n]) break;
            return 0;
        }
        if (s[n] != '(') break;
        int end = -1, got = 0;
        double *v[4] = {&d->a, &d->b, &d->frac, &d->scale};
        if (kinds[i].nargs == 1) got = sscanf(s + n, "(%lf )%n", v[0], &end);
        if (kinds[i].nargs == 2) got = sscanf(s + n, "(%lf ,%lf )%n", v[0], v[1], &end);
        if (kinds[i].nargs == 4)
            got = sscanf(s + n, "(%lf ,%lf ,%lf ,%lf )%n", v[0], v[1], v[2], v[3], &end);
        if (got != kinds[i].nargs || end < 0 || s[n + (size_t)end]) {
            if (randint_exprs(s, d)) return 0;
            break;
        }
        int ok = isfinite(d->a) && isfinite(d->b) && isfinite(d->frac) && isfinite(d->scale);
        if (d->kind != SG_VAL_INIT_CONST && d->kind != SG_VAL_INIT_NORMAL && d->a > d->b) ok = 0;
        if (d->kind == SG_VAL_INIT_NORMAL && d->b < 0) ok = 0;
        if (d->kind == SG_VAL_INIT_OUTLIERS && (d->frac < 0 || d->frac > 1)) ok = 0;
        if (!ok) break;
        return 0;
    }
    return sg_errf(
        err,
        "%s: field \"init\": bad value \"%s\" (expected uniform(lo,hi), normal(mean,sd), "
        "randint(lo,hi) (numbers or size expressions), const(v), outliers(lo,hi,frac,scale), "
        "special, or model for a torch task)",
        where, s);
}

/* "init": one distribution, or an array of them (each check shape runs once per entry). */
static int load_init(json_t *o, sg_val_buffer *b, const char *where, sg_err *err) {
    json_t *v = json_object_get(o, "init");
    int is_float = sg_val_type_is_float(b->type);
    if (!v) {
        const char *const *names =
            is_float ? float_defaults : (const char *const[]){"randint(0,100)"};
        b->ndist = is_float ? 3 : 1;
        for (int i = 0; i < b->ndist; i++) parse_dist(names[i], &b->dist[i], where, err);
        return 0;
    }
    if (json_is_string(v)) {
        b->ndist = 1;
        return parse_dist(json_string_value(v), &b->dist[0], where, err);
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > SG_VAL_MAX_DISTS)
        return sg_errf(err,
                       "%s: field \"init\": expected a distribution or an array of 1 to %d of "
                       "them, got %s",
                       where, SG_VAL_MAX_DISTS, sg_json_type_name(v));
    b->ndist = (int)json_array_size(v);
    for (int i = 0; i < b->ndist; i++) {
        json_t *e = json_array_get(v, (size_t)i);
        if (!json_is_string(e))
            return sg_errf(err, "%s: field \"init[%d]\": expected a string, got %s", where, i,
                           sg_json_type_name(e));
        if (parse_dist(json_string_value(e), &b->dist[i], where, err) < 0) return -1;
    }
    return 0;
}

int sg_val_load_buffer(json_t *o, sg_val_buffer *b, const char *where, sg_err *err) {
    static const char *const keys[] = {"name", "type", "count",           "role", "init",
                                       "atol", "rtol", "allow_nonfinite", NULL};
    const char *name = NULL, *type = NULL, *count = NULL, *role = NULL;
    if (!json_is_object(o))
        return sg_errf(err, "%s: expected an object, got %s", where, sg_json_type_name(o));
    if (sg_json_check_keys(o, keys, where, err) < 0 ||
        sg_json_get_str(o, "name", 1, &name, where, err) < 0 ||
        sg_json_get_str(o, "type", 1, &type, where, err) < 0 ||
        sg_json_get_str(o, "count", 1, &count, where, err) < 0 ||
        sg_json_get_str(o, "role", 1, &role, where, err) < 0)
        return -1;
    b->name = sg_xstrdup(name);
    b->count = sg_xstrdup(count);
    if (sg_val_type_parse(type, &b->type) < 0)
        return sg_errf(err, "%s: field \"type\": unknown type \"%s\" (%s)", where, type,
                       SG_VAL_TYPE_NAMES);
    if (!strcmp(role, "in"))
        b->role = SG_VAL_IN;
    else if (!strcmp(role, "out"))
        b->role = SG_VAL_OUT;
    else if (!strcmp(role, "inout"))
        b->role = SG_VAL_INOUT;
    else
        return sg_errf(err, "%s: field \"role\": bad value \"%s\" (expected in, out or inout)",
                       where, role);
    if (load_init(o, b, where, err) < 0) return -1;
    if (b->role == SG_VAL_OUT && json_object_get(o, "init"))
        return sg_errf(err,
                       "%s: field \"init\": an output starts poisoned, not initialised; a buffer "
                       "the kernel reads and updates has role \"inout\"",
                       where);
    default_tol(b->type, &b->atol, &b->rtol);
    if (sg_json_get_num(o, "atol", 0, &b->atol, where, err) < 0 ||
        sg_json_get_num(o, "rtol", 0, &b->rtol, where, err) < 0 ||
        sg_json_get_bool(o, "allow_nonfinite", 0, &b->allow_nonfinite, where, err) < 0)
        return -1;
    if (b->atol < 0 || b->rtol < 0 || !isfinite(b->atol) || !isfinite(b->rtol))
        return sg_errf(err, "%s: tolerances must be finite and not negative", where);
    if (b->allow_nonfinite && (b->role == SG_VAL_IN || !sg_val_type_is_float(b->type)))
        return sg_errf(
            err, "%s: field \"allow_nonfinite\" applies to floating out and inout buffers", where);
    return 0;
}

int sg_val_load_scalar(json_t *o, sg_val_scalar *s, const char *where, sg_err *err) {
    static const char *const keys[] = {"name", "type", "value", NULL};
    const char *name = NULL, *type = NULL;
    if (!json_is_object(o))
        return sg_errf(err, "%s: expected an object, got %s", where, sg_json_type_name(o));
    if (sg_json_check_keys(o, keys, where, err) < 0 ||
        sg_json_get_str(o, "name", 1, &name, where, err) < 0 ||
        sg_json_get_str(o, "type", 1, &type, where, err) < 0)
        return -1;
    s->name = sg_xstrdup(name);
    if (sg_val_type_parse(type, &s->type) < 0)
        return sg_errf(err, "%s: field \"type\": unknown type \"%s\" (%s)", where, type,
                       SG_VAL_TYPE_NAMES);
    json_t *v = json_object_get(o, "value");
    if (json_is_string(v))
        s->expr = sg_xstrdup(json_string_value(v));
    else if (json_is_number(v))
        s->literal = json_number_value(v);
    else
        return sg_errf(err, "%s: field \"value\" must be a size expression or a number, got %s",
                       where, v ? sg_json_type_name(v) : "nothing");
    return 0;
}
