/* `specgen profile TASK_DIR CANDIDATE`: validate a kernel, time it against the task's
 * baseline in the same sandboxed worker, and print the timings, the speedup with its
 * noise band, the kernels' static facts and the feedback paragraph the model would get. */
#include "common/buf.h"
#include "common/paths.h"
#include "common/units.h"
#include "common/cli.h"
#include "common/opts.h"
#include "profiler/profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char details[] =
    "CANDIDATE is a kernel file (.cu or .cl); without its own //@launch lines\n"
    "it keeps the baseline's launch plan. It is validated first (as `specgen validate`\n"
    "does); only a correct kernel is timed. Pass the task's own baseline file to measure\n"
    "the noise of the method (speedup 1 within the band).\n"
    "\n"
    "Method (docs/profiler.md): baseline and candidate run in the same worker, interleaved;\n"
    "--warmup untimed runs each, then timed runs rotating over --input-sets freshly\n"
    "generated input sets, the last-level cache flushed before every run (a write over a\n"
    "buffer twice its size), until both medians are stable (the median of all runs and of\n"
    "all but the last 5 agree within --tol, after --min-runs) or --max-runs. One run's time\n"
    "is device time: OpenCL event timestamps, CUDA CUPTI kernel records on every stream,\n"
    "from the first kernel's start to the last kernel's end. Speedup = baseline median /\n"
    "candidate median; its band is the sum of both relative IQR half-widths, and a speedup\n"
    "within [1/(1+band), 1+band] is \"no change\". After timing, the candidate's outputs for "
    "every\n"
    "input set are checked again, so a kernel that remembers results is caught.\n"
    "\n"
    "Exit status: 0 timed, 1 the candidate is wrong or could not be timed, 2 usage error or\n"
    "an invalid task (task.json or its files are wrong).\n"
    "\n"
    "Examples:\n"
    "  specgen profile suites/builtin/softmax my_softmax.cl\n"
    "  specgen profile suites/builtin/gelu suites/builtin/gelu/baseline.cl --json\n"
    "  specgen profile suites/builtin/matmul mm.cu --device cuda --max-runs 500\n";

static void timing_json(sg_buf *b, const char *key, const sg_timing *t) {
    sg_buf_printf(b,
                  "\"%s\":{\"median_ns\":%.0f,\"p25_ns\":%.0f,\"p75_ns\":%.0f,\"min_ns\":%.0f,"
                  "\"max_ns\":%.0f,\"noise\":%.4f,\"runs\":%d}",
                  key, t->median_ns, t->p25_ns, t->p75_ns, t->min_ns, t->max_ns, t->noise, t->runs);
}

static void print_json(const char *cand, const sg_val_result *vr, const sg_prof_result *pr,
                       const char *feedback) {
    sg_buf b = {0};
    sg_buf_append_str(&b, "{\"candidate\":");
    sg_buf_append_json_string(&b, cand);
    sg_buf_append_str(&b, ",\"verdict\":");
    sg_buf_append_json_string(&b, sg_val_verdict_name(vr->verdict));
    sg_buf_append_str(&b, ",\"message\":");
    sg_buf_append_json_string(&b, vr->message);
    if (pr) {
        sg_buf_append_str(&b, ",");
        timing_json(&b, "baseline", &pr->baseline);
        sg_buf_append_str(&b, ",");
        timing_json(&b, "candidate", &pr->candidate);
        sg_buf_printf(&b, ",\"speedup\":%.4f,\"band\":%.4f,\"change\":\"%s\"", pr->speedup.speedup,
                      pr->speedup.band, sg_cmp_name(pr->speedup.verdict));
        sg_buf_printf(&b, ",\"input_sets\":%d,\"flush_bytes\":%.0f", pr->input_sets,
                      pr->flush_bytes);
        sg_buf_printf(&b, ",\"wall_ms\":%.1f,\"device_ms\":%.3f", pr->wall_ms, pr->device_ms);
        if (pr->race_stop[0])
            sg_buf_printf(&b,
                          ",\"race\":{\"stop\":\"%s\",\"lo\":%.4f,\"hi\":%.4f,\"bar\":%.4f,"
                          "\"saved_runs\":%d,\"saved_ms\":%.3f}",
                          pr->race_stop, pr->race_lo, pr->race_hi, pr->race_bar,
                          pr->race_saved_runs, pr->race_saved_ms);
        sg_buf_append_str(&b, ",\"facts\":");
        sg_buf_append_json_string(&b, pr->facts_text);
        sg_buf_append_str(&b, ",\"metrics\":");
        sg_buf_append_json_string(&b, pr->metrics);
        if (pr->roof.have) {
            sg_buf_printf(&b,
                          ",\"roofline\":{\"bytes\":%.0f,\"flops\":%.0f,\"peak_gbs\":%.1f,"
                          "\"peak_gflops\":%.1f,\"peak\":",
                          pr->roof.bytes, pr->roof.flops, pr->roof.peak_gbs, pr->roof.peak_gflops);
            sg_buf_append_json_string(&b, pr->roof.peak);
            sg_buf_append_str(&b, ",\"bw_source\":");
            sg_buf_append_json_string(&b, pr->roof.bw_source);
            sg_buf_append_str(&b, "}");
        }
    }
    sg_buf_append_str(&b, ",\"feedback\":");
    sg_buf_append_json_string(&b, feedback);
    sg_buf_append_str(&b, "}\n");
    fputs(b.data, stdout);
    sg_buf_free(&b);
}

static void print_timing(const char *label, const sg_timing *t) {
    char med[32], lo[32], hi[32];
    sg_fmt_duration((int64_t)t->median_ns, med, sizeof med);
    sg_fmt_duration((int64_t)t->p25_ns, lo, sizeof lo);
    sg_fmt_duration((int64_t)t->p75_ns, hi, sizeof hi);
    printf("%-10s %s  (median of %d runs; middle half %s .. %s, noise +-%.1f%%)\n", label, med,
           t->runs, lo, hi, 100 * t->noise);
}

static void print_text(const sg_val_result *vr, const sg_prof_result *pr, const char *feedback) {
    if (pr) {
        print_timing("baseline", &pr->baseline);
        print_timing("candidate", &pr->candidate);
        printf("%-10s %.3fx +-%.1f%%: %s\n", "speedup", pr->speedup.speedup, 100 * pr->speedup.band,
               sg_cmp_name(pr->speedup.verdict));
        char fl[32] = "no cache flush";
        if (pr->flush_bytes > 0)
            snprintf(fl, sizeof fl, "%.0f MiB flush", pr->flush_bytes / 1048576);
        printf("%-10s interleaved in one worker, %d input sets rotated, %s before each run\n",
               "method", pr->input_sets, fl);
        printf("%-10s %s\n", "facts", pr->facts_text[0] ? pr->facts_text : "(none reported)");
        printf("%-10s %s\n", "metrics", pr->metrics);
        if (pr->roof.have && pr->candidate.median_ns > 0) {
            double s = pr->candidate.median_ns / 1e9;
            printf("%-10s %.1f GB/s of %.0f peak, %.1f GFLOP/s of %.0f peak (task: %.3g bytes, "
                   "%.3g flops per run)\n",
                   "roofline", pr->roof.bytes / s / 1e9, pr->roof.peak_gbs,
                   pr->roof.flops / s / 1e9, pr->roof.peak_gflops, pr->roof.bytes, pr->roof.flops);
            if (pr->roof.peak[0]) printf("%-10s %s\n", "peak", pr->roof.peak);
        }
        printf("%-10s %.0f ms wall, %.1f ms of it timed kernel runs\n", "profiler", pr->wall_ms,
               pr->device_ms);
        if (pr->race_stop[0])
            printf("%-10s stopped after %d runs: %.3fx .. %.3fx (99%%), %s (%.2fx); saved "
                   "at least %d runs per side, %.1f ms of device time\n",
                   "racing", pr->candidate.runs, pr->race_lo, pr->race_hi,
                   sg_race_stop_why(pr->race_stop), pr->race_bar, pr->race_saved_runs,
                   pr->race_saved_ms);
        printf("\n");
    } else {
        printf("%s: %s\n\n", sg_val_verdict_name(vr->verdict), vr->message);
    }
    printf("feedback for the model:\n%s", feedback);
}

/* The feedback templates of the prompt folder (--prompts, else specgen's prompts/). */
static int load_feedback(const char *dir, sg_feedback_templates *fb, sg_err *err) {
    char prompts[4096];
    if (dir)
        snprintf(prompts, sizeof prompts, "%s", dir);
    else if (sg_data_dir("prompts", prompts, sizeof prompts, err) < 0)
        return -1;
    return sg_feedback_load(prompts, fb, err);
}

int sg_cmd_profile(int argc, char **argv) {
    const char *device = NULL, *prompts_opt = NULL, *pch = NULL;
    int json = 0, no_flush = 0, no_race = 0;
    sg_prof_opts o;
    sg_prof_opts_default(&o);
    int64_t seed = 0, warmup = 2, sets = 3, min_runs = 10, max_runs = 200;
    int64_t timeout = 20000000000LL, ctimeout = 30000000000LL;
    const sg_opt opts[] = {
        {.name = "device",
         .kind = SG_OPT_STR,
         .out = &device,
         .metavar = "cuda|opencl",
         .help = "device backend",
         .def = "the candidate's extension, else opencl"},
        sg_opt_shared(SG_OD_JSON, &json),
        {.name = "warmup",
         .kind = SG_OPT_INT,
         .out = &warmup,
         .metavar = "N",
         .help = "untimed runs of each kernel first (0: none)",
         .def = "2",
         .min = 0,
         .max = 1000},
        {.name = "input-sets",
         .kind = SG_OPT_INT,
         .out = &sets,
         .metavar = "N",
         .help = "input sets rotated over",
         .def = "3",
         .min = 1,
         .max = 64},
        {.name = "min-runs",
         .kind = SG_OPT_INT,
         .out = &min_runs,
         .metavar = "N",
         .help = "timed runs before the stability rule applies",
         .def = "10",
         .min = 1,
         .max = 100000},
        {.name = "max-runs",
         .kind = SG_OPT_INT,
         .out = &max_runs,
         .metavar = "N",
         .help = "most timed runs of each kernel",
         .def = "200",
         .min = 1,
         .max = 100000},
        {.name = "tol",
         .kind = SG_OPT_DOUBLE,
         .out = &o.stab.tol,
         .metavar = "X",
         .help = "relative tolerance of a stable median",
         .def = "0.01",
         .min = 1e-6,
         .max = 0.999},
        {.name = "no-flush",
         .kind = SG_OPT_FLAG,
         .out = &no_flush,
         .help = "do not flush the cache before each run"},
        sg_opt_shared(SG_OD_NO_RACE, &no_race),
        {.name = "race-best",
         .kind = SG_OPT_DOUBLE,
         .out = &o.race.best,
         .metavar = "X",
         .help = "the best speedup so far: racing stops once the candidate is clearly below "
                 "it, or not above it beyond the noise band (from the stability rule's "
                 "min_runs on)",
         .def = "none (racing then stops only past the task's target)",
         .min = 1e-6,
         .max = 1e9},
        sg_opt_shared(SG_OD_SEED, &seed),
        sg_opt_shared(SG_OD_RUN_TIMEOUT, &timeout),
        sg_opt_shared(SG_OD_COMPILE_TIMEOUT, &ctimeout),
        sg_opt_shared(SG_OD_NVRTC_PCH, &pch),
        {.name = "prompts",
         .kind = SG_OPT_STR,
         .out = &prompts_opt,
         .metavar = "DIR",
         .help = "folder with feedback.json",
         .def = "specgen's prompts/"},
        {0},
    };
    const sg_cmd_spec spec = {"profile",
                              "TASK_DIR CANDIDATE",
                              "Time a kernel against the baseline and explain the result.",
                              details,
                              opts,
                              2,
                              2};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return 2;
    sg_err err;
    sg_dev_opts po;
    sg_dev_opts_default(&po);
    po.kinds = sg_prof_kinds; /* validate and profile */
    po.nkinds = 2;
    if (device) {
        if (sg_dev_lang_parse(device, &po.device, &err) < 0)
            return sg_cli_fail(&spec, 2, "--device: %s", err.msg);
    } else {
        sg_dev_lang_of_path(pos[1], &po.device);
    }
    if (max_runs < min_runs) /* each one's range is the table's */
        return sg_cli_fail(&spec, 2, "--max-runs %lld: below --min-runs %lld", (long long)max_runs,
                           (long long)min_runs);
    sg_feedback_templates fb;
    if (load_feedback(prompts_opt, &fb, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    sg_val_task task; /* a task's own fault is no candidate's verdict */
    if (sg_val_task_load_cli(pos[0], &task, &err) < 0) {
        sg_feedback_free(&fb);
        return sg_cli_fail(&spec, 2, "%s", err.msg);
    }
    o.race.target = task.target_speedup;
    sg_val_task_free(&task);
    sg_buf cand = {0};
    if (sg_val_read_source(pos[1], &cand, &err) < 0) {
        sg_feedback_free(&fb);
        sg_buf_free(&cand);
        return sg_cli_fail(&spec, 1, "candidate %s", err.msg);
    }
    po.run_timeout_ms = timeout / 1000000;
    po.compile_timeout_ms = ctimeout / 1000000;
    po.nvrtc_pch = pch;
    o.warmup = (int)warmup;
    o.input_sets = (int)sets;
    o.flush_cache = !no_flush;
    o.stab.min_runs = (int)min_runs;
    o.stab.max_runs = (int)max_runs;
    o.race.on = !no_race;
    sg_val_pool *pool = NULL;
    int status = 1;
    if (sg_val_pool_new(&po, &pool, &err) < 0) {
        fprintf(stderr, "specgen profile: %s\n", err.msg);
        goto out;
    }
    sg_buf_append(&cand, "", 0); /* NUL-terminated; len stays the file's */
    sg_val_job job = {.task_dir = pos[0],
                      .candidate = cand.data,
                      .candidate_len = cand.len,
                      .candidate_name = pos[1],
                      .seed = (uint64_t)seed};
    sg_val_result vr;
    sg_prof_result pr;
    int timed;
    rc = sg_prof_check(pool, 0, &job, &o, &vr, &pr, &timed, &err);
    if (rc < 0) {
        fprintf(stderr, "specgen profile: %s\n", err.msg);
        goto out;
    }
    if (rc == 1) {
        fprintf(stderr, "specgen profile: %s passed validation but could not be timed: %s\n",
                pos[1], err.msg);
        goto out;
    }
    sg_buf feedback = {0};
    sg_prof_feedback(&fb, pos[1], &vr, timed ? &pr : NULL, &feedback);
    sg_buf_append(&feedback, "", 0);
    if (json)
        print_json(pos[1], &vr, timed ? &pr : NULL, feedback.data);
    else
        print_text(&vr, timed ? &pr : NULL, feedback.data);
    if (!json && vr.verdict == SG_VAL_NO_DEVICE && po.device == SG_DEV_CUDA)
        sg_val_say_alternatives(pos[0], 0);
    sg_buf_free(&feedback);
    status = timed ? 0 : 1;
out:
    sg_val_pool_free(pool);
    sg_feedback_free(&fb);
    sg_buf_free(&cand);
    return status;
}
