/* The sources of an option beyond the command line (cli.h): its environment variables and
 * the JSON config file, and --show-config. */
#include "common/buf.h"
#include "common/cli_impl.h"
#include "common/json.h"
#include "common/opts.h"
#include "common/redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const sg_command *config_cmds;

void sg_cli_config_commands(const sg_command *cmds) { config_cmds = cmds; }

/* The documents read (their strings are the slots' values): kept to the end. */
static json_t **kept;
static size_t nkept;

/* The first variable of the space-separated list that is set and not empty. */
static const char *env_of(const char *list, char *name, size_t n) {
    for (const char *p = list; p && *p; p += strspn(p, " ")) {
        size_t len = strcspn(p, " ");
        snprintf(name, n, "%.*s", (int)len, p);
        const char *v = getenv(name);
        if (v && *v) return v;
        p += len;
    }
    return NULL;
}

/* The file to read into path[n]: --config's, else the first of the default places that
 * exists; 0: none (looked: where it looked). */
static int find_file(const char *given, char *path, size_t n, char *looked, size_t ln) {
    if (given) return strcmp(given, "none") ? (snprintf(path, n, "%s", given), 1) : 0;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char user[4096] = "";
    if (xdg && *xdg)
        snprintf(user, sizeof user, "%s/specgen/config.json", xdg);
    else if (home && *home)
        snprintf(user, sizeof user, "%s/.config/specgen/config.json", home);
    snprintf(looked, ln, "./specgen.json%s%s", *user ? ", " : "", user);
    struct stat st;
    if (stat("specgen.json", &st) == 0) return snprintf(path, n, "./specgen.json"), 1;
    if (*user && stat(user, &st) == 0) return snprintf(path, n, "%s", user), 1;
    return 0;
}

static int is_command(const char *k, const json_t *v) {
    if (!config_cmds) return json_is_object(v);
    for (const sg_command *c = config_cmds; c->name; c++)
        if (!strcmp(c->name, k)) return 1;
    return 0;
}

/* Names a key may take, NULL-terminated, in a new array: this command's options (a
 * section), or the shared options and the commands (the top level). */
static const char **known_keys(const sg_cmd_spec *spec, int top) {
    size_t n = 0;
    const char **k = sg_xcalloc(SG_OD_COUNT_ + 256, sizeof *k);
    for (int i = 0; top && sg_opt_entry(i); i++) k[n++] = sg_opt_entry(i)->name;
    for (const sg_command *c = config_cmds; top && c && c->name && n < SG_OD_COUNT_ + 200; c++)
        k[n++] = c->name;
    for (const sg_opt *o = spec->opts; !top && o->name && n < SG_OD_COUNT_ + 200; o++)
        k[n++] = o->name;
    return k;
}

/* Every key of the document names something: a section's keys this command's options. */
static int check_keys(const sg_cmd_spec *spec, json_t *doc, const char *path) {
    char where[4200];
    sg_err err;
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v) {
        int old;
        if (is_command(key, v)) continue;
        const sg_opt *own = sg_cli_find(spec->opts, key, strlen(key), &old);
        int shared = 0;
        for (int i = 0; sg_opt_entry(i); i++) shared |= !strcmp(sg_opt_entry(i)->name, key);
        if (own && !shared)
            return sg_cli_fail(spec, SG_CLI_USAGE,
                               "%s: \"%s\" is an option of some commands only: put it in the "
                               "command's section, {\"%s\": {\"%s\": ...}}",
                               path, key, spec->name, key);
    }
    const char **known = known_keys(spec, 1);
    int rc = sg_json_check_keys(doc, known, path, &err);
    free(known);
    json_t *sec = json_object_get(doc, spec->name);
    if (!rc && sec && !json_is_object(sec))
        rc = sg_errf(&err, "%s: \"%s\": expected an object of its options, got %s", path,
                     spec->name, sg_json_type_name(sec));
    if (!rc && sec) {
        snprintf(where, sizeof where, "%s: section \"%s\"", path, spec->name);
        known = known_keys(spec, 0);
        rc = sg_json_check_keys(sec, known, where, &err);
        free(known);
    }
    return rc ? sg_cli_fail(spec, SG_CLI_USAGE, "%s", err.msg) : SG_CLI_OK;
}

/* A value of the file (a string, a number, a boolean, an array of strings) into o. */
static int apply_value(const sg_cmd_spec *spec, const sg_opt *o, json_t *v, const char *where,
                       sg_cli_seen *seen) {
    int numeric = o->kind != SG_OPT_FLAG && o->kind != SG_OPT_STR && o->kind != SG_OPT_FN;
    if (o->kind == SG_OPT_FLAG && json_is_boolean(v)) {
        seen->raw = json_is_true(v) ? "on" : "off";
        return json_is_true(v) ? sg_cli_take(spec, o, NULL, where) : SG_CLI_OK;
    }
    if (o->kind != SG_OPT_FLAG && json_is_string(v))
        return sg_cli_take(spec, o, seen->raw = json_string_value(v), where);
    if (numeric && json_is_number(v)) {
        if (json_is_integer(v))
            snprintf(seen->num, sizeof seen->num, "%lld", (long long)json_integer_value(v));
        else
            snprintf(seen->num, sizeof seen->num, "%.17g", json_real_value(v));
        return sg_cli_take(spec, o, seen->raw = seen->num, where);
    }
    size_t i;
    json_t *e;
    if (o->kind == SG_OPT_FN && json_is_array(v)) {
        json_array_foreach(v, i, e) {
            if (!json_is_string(e)) break;
            int rc = sg_cli_take(spec, o, seen->raw = json_string_value(e), where);
            if (rc != SG_CLI_OK) return rc;
        }
        if (i == json_array_size(v)) return SG_CLI_OK;
    }
    const char *want = o->kind == SG_OPT_FLAG ? "true or false"
                       : numeric              ? "a number or a string"
                       : o->kind == SG_OPT_FN ? "a string or an array of strings"
                                              : "a string";
    return sg_cli_fail(spec, SG_CLI_USAGE, "%s: expected %s, got %s", where, want,
                       sg_json_type_name(v));
}

/* The config file at path (already checked to exist, or given) into the options not set. */
static int apply_file(const sg_cmd_spec *spec, sg_cli_seen *seen, const char *path) {
    sg_err err;
    json_t *doc = sg_json_load_file(path, &err);
    if (!doc) return sg_cli_fail(spec, SG_CLI_USAGE, "--config: %s", err.msg);
    kept = sg_xrealloc(kept, (nkept + 1) * sizeof *kept);
    kept[nkept++] = doc;
    if (!json_is_object(doc))
        return sg_cli_fail(spec, SG_CLI_USAGE, "%s: expected a JSON object of options, got %s",
                           path, sg_json_type_name(doc));
    int rc = check_keys(spec, doc, path);
    json_t *sec = json_object_get(doc, spec->name);
    for (int i = 0; rc == SG_CLI_OK && spec->opts[i].name; i++) {
        const sg_opt *o = &spec->opts[i];
        if (seen[i].src != SG_SRC_DEFAULT) continue;
        json_t *v = sec ? json_object_get(sec, o->name) : NULL;
        json_t *top = json_object_get(doc, o->name);
        if (!v && top && !is_command(o->name, top)) v = top;
        if (!v) continue;
        char where[4200];
        snprintf(where, sizeof where, "%s: \"%s%s%s\"", path, v == top ? "" : spec->name,
                 v == top ? "" : ".", o->name);
        seen[i] = (sg_cli_seen){.src = SG_SRC_FILE, .from = path};
        rc = apply_value(spec, o, v, where, &seen[i]);
    }
    return rc;
}

/* One option's line of --show-config. */
static void show_one(const sg_opt *o, const sg_cli_seen *s) {
    char val[512], shown[1024], src[600] = "default";
    const char *raw = s->raw;
    if (s->src == SG_SRC_DEFAULT) {
        raw = o->def;
        if (!raw && o->kind == SG_OPT_FLAG) raw = *(int *)o->out ? "on" : "off";
        if (!raw && o->kind == SG_OPT_STR) raw = *(const char **)o->out;
        if (!raw && o->kind != SG_OPT_FN && o->kind != SG_OPT_STR && o->kind != SG_OPT_FLAG) {
            double v = o->kind == SG_OPT_DOUBLE ? *(double *)o->out
                       : o->kind == SG_OPT_INT || o->kind == SG_OPT_DURATION
                           ? (double)*(int64_t *)o->out
                           : (double)*(uint64_t *)o->out;
            sg_cli_fmt_value(o->kind, v, val, sizeof val);
            raw = val;
        }
    } else if (s->src == SG_SRC_FLAG && o->kind == SG_OPT_FLAG) {
        raw = "on";
    }
    if (o->env_secret) raw = s->src == SG_SRC_ENV ? "(set; not shown)" : s->raw ? s->raw : "(none)";
    if (s->src == SG_SRC_FLAG) snprintf(src, sizeof src, "flag");
    if (s->src == SG_SRC_ENV) snprintf(src, sizeof src, "env $%s", s->from);
    if (s->src == SG_SRC_FILE) snprintf(src, sizeof src, "file %s", s->from);
    char *red = sg_redact_url(raw ? raw : "(none)");
    sg_redact_ctrl(shown, sizeof shown, red);
    free(red);
    char name[64];
    snprintf(name, sizeof name, "--%s", o->name);
    printf("%-26s %-40s %s\n", name, shown, src);
}

/* The option's variables, into seen (a secret: only where it is). */
static int apply_env(const sg_cmd_spec *spec, const sg_opt *o, sg_cli_seen *seen, char *name,
                     size_t n) {
    const char *v = env_of(o->env, name, n);
    if (!v) return SG_CLI_OK;
    *seen = (sg_cli_seen){.src = SG_SRC_ENV, .from = name};
    if (o->env_secret) return SG_CLI_OK;
    char where[200];
    snprintf(where, sizeof where, "$%s (for --%s)", name, o->name);
    return sg_cli_take(spec, o, seen->raw = v, where);
}

int sg_cli_sources(const sg_cmd_spec *spec, sg_cli_seen *seen, const char *given, int show) {
    if (!spec->opts || !spec->opts->name) return SG_CLI_OK;
    int n = 0;
    while (spec->opts[n].name) n++;
    char(*names)[64] = sg_xcalloc((size_t)n, sizeof *names);
    int rc = SG_CLI_OK;
    for (int i = 0; i < n && rc == SG_CLI_OK; i++)
        if (seen[i].src == SG_SRC_DEFAULT && spec->opts[i].env)
            rc = apply_env(spec, &spec->opts[i], &seen[i], names[i], sizeof names[i]);
    char path[4096], looked[8300] = "";
    int have = rc == SG_CLI_OK && find_file(given, path, sizeof path, looked, sizeof looked);
    if (have) rc = apply_file(spec, seen, path);
    if (rc == SG_CLI_OK && show) {
        char shown[4200];
        if (have)
            printf("config file: %s\n", sg_redact_ctrl(shown, sizeof shown, path));
        else
            printf("config file: none (%s%s)\n", given ? "--config none" : "looked for ",
                   given ? "" : sg_redact_ctrl(shown, sizeof shown, looked));
        for (int i = 0; i < n; i++) show_one(&spec->opts[i], &seen[i]);
        rc = SG_CLI_HELP;
    }
    free(names);
    return rc;
}
