#include "common/cli.h"

#include "common/buf.h"
#include "common/cli_impl.h"
#include "common/units.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the space-separated list names name[0..len). */
static int in_list(const char *list, const char *name, size_t len) {
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n == len && strncmp(p, name, len) == 0) return 1;
        p += n;
        p += strspn(p, " ");
    }
    return 0;
}

/* The option called name[0..len), by its name, an alias or (*old set) a deprecated name. */
const sg_opt *sg_cli_find(const sg_opt *opts, const char *name, size_t len, int *old) {
    *old = 0;
    for (const sg_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    for (const sg_opt *o = opts; o && o->name; o++)
        if (in_list(o->aliases, name, len)) return o;
    for (const sg_opt *o = opts; o && o->name; o++)
        if (in_list(o->deprecated, name, len)) return *old = 1, o;
    return NULL;
}

static const sg_opt *find_short(const sg_opt *opts, char c) {
    for (const sg_opt *o = opts; o && o->name; o++)
        if (o->short_name && o->short_name == c) return o;
    return NULL;
}

static int store(const sg_opt *o, const char *value, sg_err *err) {
    switch (o->kind) {
    case SG_OPT_FLAG: *(int *)o->out = 1; return 0;
    case SG_OPT_STR: *(const char **)o->out = value; return 0;
    case SG_OPT_INT: return sg_parse_int(value, o->out, err);
    case SG_OPT_DOUBLE: return sg_parse_double(value, o->out, err);
    case SG_OPT_DURATION: return sg_parse_duration_ns(value, o->out, err);
    case SG_OPT_SIZE: return sg_parse_size_bytes(value, o->out, err);
    case SG_OPT_COUNT: return sg_parse_count(value, o->out, err);
    case SG_OPT_FN: return o->fn(value, o->out, err);
    }
    return sg_errf(err, "internal: bad option kind");
}

/* The option's help (or default) says what 0 means, spelled "0: MEANING" ("(0: no limit)",
 * "; 0: 16 per slot"): then 0 is one of its values. */
static int zero_documented(const sg_opt *o) {
    const char *texts[2] = {o->help, o->def};
    for (int i = 0; i < 2; i++)
        for (const char *p = texts[i]; p && (p = strstr(p, "0: ")); p++)
            if (p == texts[i] || (!isalnum((unsigned char)p[-1]) && p[-1] != '.')) return 1;
    return 0;
}

/* What a numeric option takes when 0 is not one of its values; NULL: not numeric, or 0 was
 * not given. */
static const char *zero_refused(const sg_opt *o) {
    switch (o->kind) {
    case SG_OPT_INT: return *(int64_t *)o->out ? NULL : "a whole number above 0";
    case SG_OPT_DURATION:
        return *(int64_t *)o->out ? NULL : "a duration above 0 (90, 250ms, 30s, 30m, 2h)";
    case SG_OPT_DOUBLE: return *(double *)o->out != 0 ? NULL : "a number above 0";
    case SG_OPT_SIZE: return *(uint64_t *)o->out ? NULL : "a size above 0 (4096, 64k, 512M, 4G)";
    case SG_OPT_COUNT: return *(uint64_t *)o->out ? NULL : "a count above 0 (500, 500k, 2M)";
    default: return NULL;
    }
}

static sg_cli_describe_fn describe_fn;
static void *describe_arg;

void sg_cli_describe(sg_cli_describe_fn fn, void *arg) {
    describe_fn = fn;
    describe_arg = arg;
}

const char *sg_cli_kind_name(sg_opt_kind kind) {
    static const char *const names[] = {"flag",     "string", "int",   "number",
                                        "duration", "size",   "count", "string"};
    return kind >= 0 && kind <= SG_OPT_FN ? names[kind] : "?";
}

/* v as a user types it: 30s, 10m, 2h for durations; 4k, 1G for sizes; 500k for counts. */
void sg_cli_fmt_value(sg_opt_kind kind, double v, char *out, size_t n) {
    static const struct {
        sg_opt_kind kind;
        double scale;
        const char *suffix;
    } units[] = {{SG_OPT_DURATION, 3600e9, "h"},
                 {SG_OPT_DURATION, 60e9, "m"},
                 {SG_OPT_DURATION, 1e9, "s"},
                 {SG_OPT_DURATION, 1e6, "ms"},
                 {SG_OPT_SIZE, 1099511627776.0, "T"},
                 {SG_OPT_SIZE, 1073741824.0, "G"},
                 {SG_OPT_SIZE, 1048576.0, "M"},
                 {SG_OPT_SIZE, 1024.0, "k"},
                 {SG_OPT_COUNT, 1e6, "M"},
                 {SG_OPT_COUNT, 1e3, "k"}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (units[i].kind == kind && v >= units[i].scale && v / units[i].scale <= 1e4 &&
            v / units[i].scale == (double)(int64_t)(v / units[i].scale)) {
            snprintf(out, n, "%g%s", v / units[i].scale, units[i].suffix);
            return;
        }
    snprintf(out, n, v == (double)(int64_t)v && fabs(v) < 1e16 ? "%.0f" : "%g", v);
}

const char *sg_cli_range(const sg_opt *o, char *out, size_t n) {
    out[0] = '\0';
    if (!(o->min < o->max)) return out;
    char lo[32], hi[32];
    sg_cli_fmt_value(o->kind, o->min, lo, sizeof lo);
    sg_cli_fmt_value(o->kind, o->max, hi, sizeof hi);
    snprintf(out, n, "%s..%s", lo, hi);
    return out;
}

/* The parsed value of a numeric option, or NAN. */
static double value_of(const sg_opt *o) {
    switch (o->kind) {
    case SG_OPT_INT:
    case SG_OPT_DURATION: return (double)*(int64_t *)o->out;
    case SG_OPT_DOUBLE: return *(double *)o->out;
    case SG_OPT_SIZE:
    case SG_OPT_COUNT: return (double)*(uint64_t *)o->out;
    default: return NAN;
    }
}

/* Out of the option's range (0 documented as a meaning is let through: the zero rule). */
static int out_of_range(const sg_opt *o) {
    double v = value_of(o);
    if (!(o->min < o->max) || v != v) return 0;
    if (v == 0 && zero_documented(o)) return 0;
    return v < o->min || v > o->max;
}

int sg_cli_fail(const sg_cmd_spec *spec, int code, const char *fmt, ...) {
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(msg, sizeof msg, fmt, ap); /* keeps the reason at the end */
    va_end(ap);
    fprintf(stderr, "specgen %s: %s\n", spec->name, msg);
    if (code == SG_CLI_USAGE) fprintf(stderr, "Try 'specgen %s --help'.\n", spec->name);
    return code;
}

int sg_cli_take(const sg_cmd_spec *spec, const sg_opt *o, const char *value, const char *where) {
    sg_err err = {{0}};
    if (store(o, value, &err) < 0) return sg_cli_fail(spec, SG_CLI_USAGE, "%s: %s", where, err.msg);
    const char *takes = zero_refused(o);
    if (takes && !zero_documented(o))
        return sg_cli_fail(spec, SG_CLI_USAGE,
                           "%s %s: 0 is not accepted here (no 0 in its --help); give %s", where,
                           value, takes);
    char range[80];
    if (out_of_range(o))
        return sg_cli_fail(spec, SG_CLI_USAGE, "%s: '%s' must be %s", where, value,
                           sg_cli_range(o, range, sizeof range));
    return SG_CLI_OK;
}

/* The option argv[*i] names (its value: *value, NULL for a flag), *i moved past it. */
static int one_option(const sg_cmd_spec *spec, int argc, char **argv, int *i, const sg_opt **out,
                      const char **value) {
    char *a = argv[*i];
    const sg_opt *o;
    const char *eq;
    int old = 0;
    if (a[1] != '-') { /* -o VALUE, -oVALUE, -o=VALUE */
        o = find_short(spec->opts, a[1]);
        if (!o)
            return sg_cli_fail(spec, SG_CLI_USAGE,
                               "unknown option '%s' (long options are spelled --name)", a);
        eq = a[2] == '\0' ? NULL : a[2] == '=' ? a + 2 : a + 1;
        if (eq && o->kind == SG_OPT_FLAG)
            return sg_cli_fail(spec, SG_CLI_USAGE, "option '-%c' takes no value (got '%s')", a[1],
                               a);
    } else {
        const char *name = a + 2;
        eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        o = sg_cli_find(spec->opts, name, len, &old);
        if (!o) return sg_cli_fail(spec, SG_CLI_USAGE, "unknown option '--%.*s'", (int)len, name);
        if (old)
            fprintf(stderr, "specgen %s: --%.*s is deprecated; use --%s\n", spec->name, (int)len,
                    name, o->name);
    }
    *out = o;
    *value = NULL;
    if (o->kind == SG_OPT_FLAG) {
        if (eq)
            return sg_cli_fail(spec, SG_CLI_USAGE, "option '--%s' takes no value (got '%s')",
                               o->name, eq + 1);
    } else if (eq) {
        *value = eq + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        return sg_cli_fail(spec, SG_CLI_USAGE, "option '--%s' needs a value (%s)", o->name,
                           o->metavar ? o->metavar : "VALUE");
    }
    return SG_CLI_OK;
}

/* --config FILE / --config=FILE / --show-config (a command with options): 1 when a[*i] was
 * one (*i past it), -1 on a missing value, 0 when it is not. */
static int config_builtin(const sg_cmd_spec *spec, int argc, char **argv, int *i, const char **path,
                          int *show) {
    const char *a = argv[*i];
    if (!spec->opts || !spec->opts->name) return 0;
    if (!strcmp(a, "--show-config")) return *show = 1, 1;
    if (!strncmp(a, "--config=", 9)) return *path = a + 9, 1;
    if (strcmp(a, "--config")) return 0;
    if (*i + 1 >= argc) {
        sg_cli_fail(spec, SG_CLI_USAGE, "option '--config' needs a value (FILE, or none)");
        return -1;
    }
    *path = argv[++*i];
    return 1;
}

static int count_opts(const sg_opt *opts) {
    int n = 0;
    while (opts && opts[n].name) n++;
    return n;
}

int sg_cli_parse(const sg_cmd_spec *spec, int argc, char **argv, char ***pos, int *npos) {
    if (describe_fn) {
        describe_fn(spec, describe_arg);
        return SG_CLI_HELP;
    }
    int np = 0, only_pos = 0, show = 0, rc = SG_CLI_OK;
    const char *config = NULL;
    sg_cli_seen *seen = sg_xcalloc((size_t)count_opts(spec->opts) + 1, sizeof *seen);
    for (int i = 1; i < argc && rc == SG_CLI_OK; i++) {
        char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0') {
            argv[1 + np++] = a; /* compact positionals at the front; never overtakes i */
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            sg_cli_print_help(spec);
            rc = SG_CLI_HELP;
            break;
        }
        int b = config_builtin(spec, argc, argv, &i, &config, &show);
        if (b) {
            rc = b < 0 ? SG_CLI_USAGE : SG_CLI_OK;
            continue;
        }
        const sg_opt *o = NULL;
        const char *value = NULL;
        char where[80];
        if ((rc = one_option(spec, argc, argv, &i, &o, &value)) != SG_CLI_OK) break;
        snprintf(where, sizeof where, "--%s", o->name);
        seen[o - spec->opts] = (sg_cli_seen){.src = SG_SRC_FLAG, .raw = value};
        rc = sg_cli_take(spec, o, value, where);
    }
    if (rc == SG_CLI_OK) rc = sg_cli_sources(spec, seen, config, show);
    free(seen);
    if (rc != SG_CLI_OK) return rc;
    if (np < spec->min_pos)
        return sg_cli_fail(spec, SG_CLI_USAGE, "missing argument: expected %s", spec->args);
    if (spec->max_pos >= 0 && np > spec->max_pos)
        return sg_cli_fail(spec, SG_CLI_USAGE, "unexpected argument '%s'", argv[1 + spec->max_pos]);
    if (pos) *pos = argv + 1;
    if (npos) *npos = np;
    return SG_CLI_OK;
}

void sg_cli_print_help(const sg_cmd_spec *spec) {
    printf("Usage: specgen %s%s%s%s\n\n%s\n", spec->name, spec->args && *spec->args ? " " : "",
           spec->args ? spec->args : "", spec->opts && spec->opts->name ? " [options]" : "",
           spec->summary);
    if (spec->opts && spec->opts->name) {
        printf("\nOptions:\n");
        for (const sg_opt *o = spec->opts; o->name; o++) {
            char left[64], shrt[8] = "";
            if (o->short_name) snprintf(shrt, sizeof shrt, "-%c, ", o->short_name);
            if (o->kind == SG_OPT_FLAG)
                snprintf(left, sizeof left, "%s--%s", shrt, o->name);
            else
                snprintf(left, sizeof left, "%s--%s %s", shrt, o->name,
                         o->metavar ? o->metavar : "VALUE");
            char range[80];
            printf("  %-26s %s", left, o->help);
            if (*sg_cli_range(o, range, sizeof range)) printf(" (%s)", range);
            if (o->def) printf(" (default: %s)", o->def);
            for (const char *p = o->aliases; p && *p; p += strspn(p, " ")) {
                size_t n = strcspn(p, " ");
                printf("%s--%.*s", p == o->aliases ? " (also " : ", ", (int)n, p);
                p += n;
                if (!*p) printf(")");
            }
            printf("\n");
        }
    }
    if (spec->opts && spec->opts->name) {
        printf("  %-26s %s\n", "--config FILE",
               "options from a JSON file (none: no file; default: ./specgen.json, else "
               "$XDG_CONFIG_HOME/specgen/config.json)");
        printf("  %-26s %s\n", "--show-config", "print each option's value and its source");
    }
    printf("  %-26s %s\n", "-h, --help", "show this help");
    if (spec->details) printf("\n%s\n", spec->details);
}

int sg_cli_not_built(const sg_cmd_spec *spec, int argc, char **argv, const char *tracking) {
    int rc = sg_cli_parse(spec, argc, argv, NULL, NULL);
    if (rc == SG_CLI_HELP) {
        printf("\nNote: 'specgen %s' is not built yet (%s).\n", spec->name, tracking);
        return 0;
    }
    if (rc == SG_CLI_USAGE) return 2;
    fprintf(stderr, "specgen %s: not built yet (%s); nothing was done.\n", spec->name, tracking);
    return 2;
}
