/* `specgen sim fit`: a workload fitted to the calibration data in a results database
 * (sim.h's sg_sim_fit; docs/calibration.md). */
#include "common/cli.h"
#include "common/wfile.h"
#include "orchestrator/commands.h"
#include "orchestrator/sim_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char details[] =
    "Reads the calibration rows of --db (every calibration campaign, or --campaign ID) and\n"
    "fits every workload parameter they can give, each by maximum likelihood with its sample\n"
    "count and a 95% interval: reasoning length, code-block and cue spacing, decode rate by\n"
    "batch, prefill rate, first-token latency, validation and profiling times, and jointly the\n"
    "quality curve (q0, q1, q_gamma, q_sd, q_final) with the compile-error and wrong rates\n"
    "and the speedup scale. The rest, and any parameter whose data are too few (a line says\n"
    "which and why), keep --base's values, marked ASSUMPTION in the file's sources. Writes a\n"
    "workload file that `specgen sim --workload FILE` runs.\n"
    "\n"
    "--check W compares each fitted parameter with workload W (the truth of a `sim\n"
    "--calibration-run`) and exits 1 when one lies outside its interval.\n"
    "\n"
    "Examples:\n"
    "  specgen sim fit --db calib.db -o measured.json\n"
    "  specgen sim --calibration-run --db t.db --tasks 300 && specgen sim fit --db t.db "
    "--check reference -o /dev/null\n";

int sg_sim_load_workload(const char *w, sg_sim_workload *out, sg_err *err);

/* The truth's value of a fitted parameter (NAN when the name is not one of its fields). */
static double truth_of(const sg_sim_workload *w, const char *name) {
    if (!strncmp(name, "decode_rate@", 12)) return sg_sim_decode_rate(w, atoi(name + 12));
    const struct {
        const char *n;
        double v;
    } t[] = {{"reasoning_tokens", w->reasoning_tokens},
             {"reasoning_cv", w->reasoning_cv},
             {"code_every_tokens", w->code_every_tokens},
             {"cue_every_tokens", w->cue_every_tokens},
             {"prefill_tok_s", w->prefill_tok_s},
             {"first_token_s", w->first_token_s},
             {"validate_s", w->slots.service_s[0]},
             {"profile_s", w->slots.service_s[1]},
             {"service_cv", w->slots.cv},
             {"q0", w->q0},
             {"q1", w->q1},
             {"q_gamma", w->q_gamma},
             {"q_sd", w->q_sd},
             {"q_final", w->q_final},
             {"p_compile_error", w->slots.p_compile_error},
             {"p_wrong", w->slots.p_wrong},
             {"max_speedup", w->slots.max_speedup},
             {"speedup_cv", w->slots.speedup_cv}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(t[i].n, name)) return t[i].v;
    return 0.0 / 0.0;
}

/* One line per parameter; with truth, whether it lies in the interval. Returns misses. */
static int print_fit(const sg_fit *f, const sg_sim_workload *truth) {
    int miss = 0;
    fprintf(stderr, "%-18s %12s  %-27s %7s%s\n", "parameter", "fitted", "95% interval", "samples",
            truth ? "       truth" : "");
    for (int i = 0; i < f->np; i++) {
        const sg_fit_param *p = &f->p[i];
        if (!p->fitted) {
            fprintf(stderr, "%-18s %12s  not fitted: %s\n", p->name, "-", p->why);
            continue;
        }
        char iv[64];
        snprintf(iv, sizeof iv, "%.4g - %.4g", p->lo, p->hi);
        fprintf(stderr, "%-18s %12.4g  %-27s %7d", p->name, p->value, iv, p->n);
        if (truth) {
            double t = truth_of(truth, p->name);
            int in = t >= p->lo && t <= p->hi;
            miss += !in;
            fprintf(stderr, "  %10.4g %s", t, in ? "inside" : "OUTSIDE");
        }
        fputc('\n', stderr);
    }
    return miss;
}

int sg_cmd_sim_fit(int argc, char **argv) {
    const char *db = NULL, *out = NULL, *base = NULL, *check = NULL;
    int64_t campaign = 0;
    const sg_opt opts[] = {
        {.name = "db",
         .kind = SG_OPT_STR,
         .out = &db,
         .metavar = "FILE",
         .help = "the results database holding the calibration (required)"},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &out,
         .metavar = "FILE",
         .help = "write the fitted workload here",
         .def = "stdout",
         .short_name = 'o'},
        {.name = "campaign",
         .kind = SG_OPT_INT,
         .out = &campaign,
         .metavar = "ID",
         .help = "only this calibration campaign",
         .def = "all of them",
         .min = 1,
         .max = 1e15},
        {.name = "base",
         .kind = SG_OPT_STR,
         .out = &base,
         .metavar = "W",
         .help = "the workload whose values the parameters that are not fitted keep",
         .def = "reference"},
        {.name = "check",
         .kind = SG_OPT_STR,
         .out = &check,
         .metavar = "W",
         .help = "compare with workload W; exit 1 when a parameter's truth is outside its "
                 "interval"},
        {0},
    };
    const sg_cmd_spec spec = {"sim fit", "", "Fit a workload to calibration data.", details, opts,
                              0,         0};
    int rc = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rc == SG_CLI_HELP) return 0;
    if (rc) return 2;
    if (!db) return sg_cli_fail(&spec, 2, "--db FILE is needed: the database with the calibration");
    sg_err err;
    sg_sim_workload w, truth;
    sg_sim_workload_default(&w);
    sg_sim_workload_default(&truth);
    if ((base && sg_sim_load_workload(base, &w, &err) < 0) ||
        (check && sg_sim_load_workload(check, &truth, &err) < 0))
        return sg_cli_fail(&spec, 2, "%s", err.msg);
    int orc;
    if (out && (orc = sg_wfile_check(out, "-o", &err)) < 0)
        return sg_cli_fail(&spec, orc == SG_WFILE_REFUSED ? 2 : 1, "%s", err.msg);
    sg_results *r;
    if (sg_results_open(db, 1, &r, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    sg_calib_data d;
    int lrc = sg_results_calib_load(r, &campaign, campaign > 0, &d, &err);
    sg_results_close(r, NULL);
    if (lrc < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    sg_fit *f = sg_xcalloc(1, sizeof *f);
    int frc = sg_sim_fit(&d, &w, f, &err);
    fprintf(stderr, "sim fit: %d traces, %d kernels, %d rate rows, %d + %d jobs\n", d.ntraces,
            d.nobs, d.nrates, d.nservice[0], d.nservice[1]);
    sg_calib_data_free(&d);
    if (frc < 0) {
        free(f);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    int miss = print_fit(f, check ? &truth : NULL);
    json_t *j = sg_sim_fit_json(f);
    free(f);
    FILE *o = stdout;
    if (out && (orc = sg_wfile_fopen(out, 0, &o, &err)) < 0) {
        json_decref(j);
        return sg_cli_fail(&spec, 1, "%s", err.msg);
    }
    int wrc = json_dumpf(j, o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', o);
    json_decref(j);
    if ((o != stdout && fclose(o) != 0) || wrc != 0)
        return sg_cli_fail(&spec, 1, "cannot write %s: %s", out ? out : "stdout", strerror(errno));
    if (check && miss)
        return sg_cli_fail(&spec, 1, "%d fitted parameter%s outside %s 95%% interval", miss,
                           miss == 1 ? " lies" : "s lie", miss == 1 ? "its" : "their");
    return 0;
}
