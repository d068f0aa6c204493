/* `specgen completion bash|zsh` and `specgen options`: shell completion and the option
 * tables, generated from the command table (commands.c) and each command's options
 * (common/cli.h's describe mode: each command is run with no arguments while a describe
 * hook takes its spec, so nothing runs). docs/options.md is `specgen options --format
 * markdown` (make docs-options), and tests/integration/options.sh checks it is current. */
#include "common/buf.h"
#include "common/cli.h"
#include "orchestrator/commands.h"

#include <stdio.h>
#include <string.h>

typedef struct walk {
    sg_buf *out;
    const char *format; /* "bash", "zsh", "markdown", "tsv", "table" */
    const char *cmd;    /* the command being described */
} walk;

/* The names a user may type for o: its name and aliases (not the deprecated ones). */
static void each_name(const sg_opt *o, void (*fn)(const char *name, size_t len, void *arg),
                      void *arg) {
    fn(o->name, strlen(o->name), arg);
    for (const char *p = o->aliases; p && *p; p += strspn(p, " ")) {
        size_t n = strcspn(p, " ");
        fn(p, n, arg);
        p += n;
    }
}

static void add_word(const char *name, size_t len, void *arg) {
    sg_buf_printf(arg, " --%.*s", (int)len, name);
}

/* Text for a zsh _arguments description: no brackets, colons, quotes or backslashes. */
static void zsh_text(sg_buf *b, const char *s, size_t max) {
    for (size_t i = 0; s && s[i] && i < max; i++)
        sg_buf_printf(b, "%c", strchr("[]:'\\`$", s[i]) ? ' ' : s[i]);
}

typedef struct zsh_arg {
    sg_buf *b;
    const sg_opt *o;
} zsh_arg;

static void zsh_word(const char *name, size_t len, void *arg) {
    zsh_arg *z = arg;
    sg_buf_printf(z->b, " \\\n        '--%.*s[", (int)len, name);
    zsh_text(z->b, z->o->help, 70);
    sg_buf_append_str(z->b, "]");
    if (z->o->kind != SG_OPT_FLAG) {
        sg_buf_append_str(z->b, ":");
        zsh_text(z->b, z->o->metavar ? z->o->metavar : "VALUE", 40);
        sg_buf_append_str(z->b, ":");
        if (z->o->metavar && (strstr(z->o->metavar, "FILE") || strstr(z->o->metavar, "DIR") ||
                              !strcmp(z->o->metavar, "F")))
            sg_buf_append_str(z->b, "_files");
    }
    sg_buf_append_str(z->b, "'");
}

/* A Markdown table cell: pipes escaped, on one line. */
static void md_cell(sg_buf *b, const char *s) {
    for (; s && *s; s++)
        sg_buf_append_str(b, *s == '|' ? "\\|" : *s == '\n' ? " " : (char[]){*s, 0});
}

static void md_names(sg_buf *b, const char *prefix, const char *list) {
    for (const char *p = list; p && *p; p += strspn(p, " ")) {
        size_t n = strcspn(p, " ");
        sg_buf_printf(b, "%s`--%.*s`", p == list ? prefix : ", ", (int)n, p);
        p += n;
    }
}

static void describe_markdown(sg_buf *b, const sg_cmd_spec *spec) {
    sg_buf_printf(b, "\n## specgen %s\n\n%s\n\n", spec->name, spec->summary);
    sg_buf_append_str(b, "| option | value | default | range | help |\n|---|---|---|---|---|\n");
    for (const sg_opt *o = spec->opts; o && o->name; o++) {
        char range[80];
        sg_buf_append_str(b, "| ");
        if (o->short_name) sg_buf_printf(b, "`-%c`, ", o->short_name);
        sg_buf_printf(b, "`--%s`", o->name);
        md_names(b, ", ", o->aliases);
        md_names(b, "; deprecated: ", o->deprecated);
        sg_buf_printf(b, " | %s", sg_cli_kind_name(o->kind));
        if (o->metavar) {
            sg_buf_append_str(b, " `");
            md_cell(b, o->metavar);
            sg_buf_append_str(b, "`");
        }
        if (o->units) sg_buf_printf(b, " (%s)", o->units);
        sg_buf_append_str(b, " | ");
        md_cell(b, o->def ? o->def : "");
        sg_buf_printf(b, " | %s | ", sg_cli_range(o, range, sizeof range));
        md_cell(b, o->help);
        sg_buf_append_str(b, " |\n");
    }
}

static void describe(const sg_cmd_spec *spec, void *arg) {
    walk *w = arg;
    sg_buf *b = w->out;
    if (!strcmp(w->format, "bash")) {
        sg_buf_printf(b, "        %s) opts=\"", w->cmd);
        for (const sg_opt *o = spec->opts; o && o->name; o++) {
            if (o->short_name) sg_buf_printf(b, " -%c", o->short_name);
            each_name(o, add_word, b);
        }
        if (spec->opts && spec->opts->name) sg_buf_append_str(b, " --config --show-config");
        sg_buf_append_str(b, " --help\" ;;\n");
    } else if (!strcmp(w->format, "zsh")) {
        sg_buf_printf(b, "    %s) _arguments", w->cmd);
        for (const sg_opt *o = spec->opts; o && o->name; o++)
            each_name(o, zsh_word, &(zsh_arg){b, o});
        if (spec->opts && spec->opts->name)
            sg_buf_append_str(b, " \\\n        '--config[options from a JSON file]:FILE:_files'"
                                 " '--show-config[print each option and its source]'");
        sg_buf_append_str(b, " \\\n        '--help[show the help]' '*:argument:_files' ;;\n");
    } else if (!strcmp(w->format, "markdown")) {
        describe_markdown(b, spec);
    } else { /* tsv: command, name, short, kind, metavar, range, aliases, deprecated */
        for (const sg_opt *o = spec->opts; o && o->name; o++) {
            char range[80];
            sg_buf_printf(b, "%s\t%s\t%s%c\t%s\t%s\t%s\t%s\t%s\n", spec->name, o->name,
                          o->short_name ? "-" : "", o->short_name ? o->short_name : '-',
                          sg_cli_kind_name(o->kind), o->metavar ? o->metavar : "-",
                          *sg_cli_range(o, range, sizeof range) ? range : "-",
                          o->aliases ? o->aliases : "-", o->deprecated ? o->deprecated : "-");
        }
    }
}

/* Describes every command (or only `only`) into b in format. */
static void walk_commands(sg_buf *b, const char *format, const char *only) {
    walk w = {.out = b, .format = format};
    sg_cli_describe(describe, &w);
    for (const sg_command *c = sg_commands; c->name; c++) {
        if (c->run == sg_cmd_completion || c->run == sg_cmd_options) continue;
        if (only && strcmp(only, c->name)) continue;
        char *argv[] = {(char *)c->name, NULL};
        w.cmd = c->name;
        c->run(1, argv);
    }
    sg_cli_describe(NULL, NULL);
}

static void command_words(sg_buf *b, const char *sep) {
    for (const sg_command *c = sg_commands; c->name; c++) sg_buf_printf(b, "%s%s", sep, c->name);
}

static void bash_script(sg_buf *b) {
    sg_buf_append_str(
        b, "# bash completion for specgen: generated by `specgen completion bash`\n"
           "# (source it, or put it in ~/.local/share/bash-completion/completions/"
           "specgen)\n_specgen() {\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} cmd='' i opts=''\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
           "        case ${COMP_WORDS[i]} in --log-level) ((i++)) ;; -*) ;; "
           "*) cmd=${COMP_WORDS[i]}; break ;; esac\n    done\n    if [ -z \"$cmd\" ]; then\n"
           "        COMPREPLY=($(compgen -W \"");
    command_words(b, " ");
    sg_buf_append_str(b, " help --help --version --log-level --log-json\" -- \"$cur\"))\n"
                         "        return\n    fi\n    case $cmd in\n");
    walk_commands(b, "bash", NULL);
    sg_buf_append_str(b, "        help) opts=\"");
    command_words(b, " ");
    sg_buf_append_str(b, "\" ;;\n    esac\n"
                         "    if [[ $cur == -* || $cmd == help ]]; then\n"
                         "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
                         "    else\n        COMPREPLY=($(compgen -f -- \"$cur\"))\n    fi\n}\n"
                         "complete -o default -F _specgen specgen\n");
}

static void zsh_script(sg_buf *b) {
    sg_buf_append_str(b, "#compdef specgen\n# zsh completion for specgen: generated by `specgen "
                         "completion zsh`\n# (put it in a folder of $fpath as _specgen, or "
                         "source it after compinit)\n_specgen() {\n    local -a cmds\n"
                         "    cmds=(\n");
    for (const sg_command *c = sg_commands; c->name; c++) {
        sg_buf_printf(b, "        '%s:", c->name);
        zsh_text(b, c->summary, 100);
        sg_buf_append_str(b, "'\n");
    }
    sg_buf_append_str(b, "    )\n    if (( CURRENT == 2 )); then\n"
                         "        _describe 'command' cmds\n        return\n    fi\n"
                         "    local cmd=$words[2]\n    shift words\n    (( CURRENT-- ))\n"
                         "    case $cmd in\n");
    walk_commands(b, "zsh", NULL);
    sg_buf_append_str(b, "    esac\n}\nif [ \"$funcstack[1]\" = _specgen ]; then\n"
                         "    _specgen \"$@\"\nelse\n    compdef _specgen specgen\nfi\n");
}

int sg_cmd_completion(int argc, char **argv) {
    const sg_cmd_spec spec = {
        .name = "completion",
        .args = "bash|zsh",
        .summary = "Print a shell completion script for specgen's commands and options.",
        .details = "Generated from the command table and each command's options, so it "
                   "completes what\nthe parser takes (deprecated spellings are left out).\n\n"
                   "Examples:\n  source <(specgen completion bash)\n"
                   "  specgen completion zsh > ~/.zfunc/_specgen   # with fpath+=~/.zfunc",
        .opts = (const sg_opt[]){{0}},
        .min_pos = 1,
        .max_pos = 1};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc) return rc == SG_CLI_HELP ? 0 : rc;
    sg_buf b = {0};
    if (!strcmp(pos[0], "bash"))
        bash_script(&b);
    else if (!strcmp(pos[0], "zsh"))
        zsh_script(&b);
    else
        return sg_cli_fail(&spec, SG_CLI_USAGE, "'%s': expected bash or zsh", pos[0]);
    fputs(b.data, stdout);
    sg_buf_free(&b);
    return 0;
}

int sg_cmd_options(int argc, char **argv) {
    const char *format = "markdown";
    const sg_opt opts[] = {
        {.name = "format",
         .kind = SG_OPT_STR,
         .out = &format,
         .metavar = "markdown|tsv",
         .help = "a Markdown table per command (docs/options.md), or tab-separated lines: "
                 "command, option, short, kind, metavar, range, aliases, deprecated",
         .def = "markdown"},
        {0},
    };
    const sg_cmd_spec spec = {
        .name = "options",
        .args = "[COMMAND]",
        .summary = "List every command's options: names, aliases, kinds, defaults, ranges.",
        .details = "The tables --help, the parser and `specgen completion` read. "
                   "docs/options.md is\nthis command's Markdown (make docs-options).",
        .opts = opts,
        .min_pos = 0,
        .max_pos = 1};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc) return rc == SG_CLI_HELP ? 0 : rc;
    if (strcmp(format, "markdown") && strcmp(format, "tsv"))
        return sg_cli_fail(&spec, SG_CLI_USAGE, "--format '%s': expected markdown or tsv", format);
    const char *only = npos ? pos[0] : NULL;
    int known = 0;
    for (const sg_command *c = sg_commands; only && c->name; c++) known |= !strcmp(c->name, only);
    if (only && !known) return sg_cli_fail(&spec, SG_CLI_USAGE, "'%s' is not a command", only);
    sg_buf b = {0};
    if (!strcmp(format, "markdown"))
        sg_buf_append_str(&b, "# Options of every command\n\nGenerated by `specgen options` "
                              "(`make docs-options`) from the option tables that\n--help, the "
                              "parser and `specgen completion` read (common/opts.c holds the "
                              "options\nseveral commands share); do not edit by hand. "
                              "Deprecated spellings are accepted with a\nwarning on stderr. "
                              "A range is checked by the parser; 0 is refused unless the help "
                              "says\nwhat it means (`0: ...`).\n\nEvery command with "
                              "options also takes `--config FILE|none` (a JSON file of\nlong "
                              "options; default ./specgen.json, else "
                              "$XDG_CONFIG_HOME/specgen/config.json) and\n`--show-config` "
                              "(each option's value and source: flag > env > file > default);\n"
                              "see docs/config.md.\n");
    walk_commands(&b, format, only);
    fputs(b.data ? b.data : "", stdout);
    sg_buf_free(&b);
    return 0;
}
