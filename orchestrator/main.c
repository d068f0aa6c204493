/* main.c — `specgen <command> [options]`: global options, then the command table. */
#include "common/log.h"
#include "device/device.h"
#include "orchestrator/commands.h"
#include "common/version.h"
#include "profiler/profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f, "Usage: specgen [--log-level L] [--log-json] <command> [options]\n"
               "\n"
               "specgen makes GPU kernels faster with a reasoning LLM. While the model thinks,\n"
               "it forks short generations from the reasoning so far; their kernels are\n"
               "compiled, validated and profiled in parallel, and the reasoning stops early\n"
               "once a kernel meets the target.\n"
               "\nCommands:\n");
    for (const sg_command *c = sg_commands; c->name; c++)
        fprintf(f, "  %-12s %s\n", c->name, c->summary);
    fprintf(f, "\nGlobal options:\n"
               "  --log-level L   debug|info|warn|error|off (default: info)\n"
               "  --log-json      log as JSON lines\n"
               "  --version       print the version\n"
               "  -h, --help      show this help\n"
               "\n'specgen <command> --help' explains each command.\n");
}

int main(int argc, char **argv) {
    /* A device worker this program started (device/worker_exec.c): not a command. */
    if (argc == 3 && !strcmp(argv[1], "__dev-worker"))
        return sg_dev_worker_exec_main(argv[2], sg_prof_kinds,
                                       (int)(sizeof sg_prof_kinds / sizeof *sg_prof_kinds));
    /* SPECGEN_WORKER_FORK=1: fork them as before (tests/integration/worker_exec.sh compares) */
    const char *fork_only = getenv("SPECGEN_WORKER_FORK");
    if (!fork_only || strcmp(fork_only, "1")) sg_dev_worker_exec_set("/proc/self/exe");
    sg_log_level level = SG_LOG_INFO;
    int json = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version")) {
            printf("specgen %s\n", SG_VERSION);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--log-json")) {
            json = 1;
        } else if (!strncmp(a, "--log-level", 11) && (a[11] == '=' || a[11] == '\0')) {
            const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : "");
            if (sg_log_level_parse(v, &level) < 0) {
                fprintf(stderr,
                        "specgen: --log-level: '%s' is not one of debug, info, warn, error, off\n",
                        v);
                return 2;
            }
        } else {
            fprintf(stderr, "specgen: unknown option '%s'\nTry 'specgen --help'.\n", a);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    sg_log_configure(level, json, 2);
    sg_cli_config_commands(sg_commands);
    const char *name = argv[i];
    if (!strcmp(name, "help")) {
        if (i + 1 >= argc) {
            usage(stdout);
            return 0;
        }
        name = argv[i + 1];
        for (const sg_command *c = sg_commands; c->name; c++) {
            if (!strcmp(c->name, name)) {
                char *hargv[] = {(char *)c->name, "--help", NULL};
                return c->run(2, hargv);
            }
        }
    }
    for (const sg_command *c = sg_commands; c->name; c++)
        if (!strcmp(c->name, name)) return c->run(argc - i, argv + i);
    fprintf(stderr, "specgen: '%s' is not a command\nTry 'specgen --help'.\n", name);
    return 2;
}
