/* outcome.c — one candidate from validation to the paragraph the model reads. */
#include "profiler/profiler.h"

#include <stdio.h>
#include <string.h>

int sg_prof_check(sg_val_pool *pool, int slot, const sg_val_job *job, const sg_prof_opts *o,
                  sg_val_result *vr, sg_prof_result *pr, int *timed, sg_err *err) {
    *timed = 0;
    if (sg_val_pool_validate(pool, slot, job, vr, err) < 0) return -1;
    if (vr->verdict != SG_VAL_PASS) return 0;
    if (sg_prof_time(pool, slot, job, o, pr, err) < 0) return 1;
    if (pr->verdict != SG_VAL_PASS) { /* wrong once the inputs rotate: not correct */
        vr->verdict = pr->verdict;
        snprintf(vr->message, sizeof vr->message, "%s", pr->message);
        return 0;
    }
    *timed = 1;
    return 0;
}

void sg_prof_feedback(const sg_feedback_templates *fb, const char *name, const sg_val_result *vr,
                      const sg_prof_result *pr, sg_buf *out) {
    if (vr->verdict == SG_VAL_COMPILE_ERROR) {
        sg_fb_compile c = {.candidate = name, .log = vr->detail[0] ? vr->detail : vr->message};
        sg_feedback_compile(fb, &c, out);
    } else if (vr->verdict == SG_VAL_MISMATCH && vr->first_bad >= 0 && vr->got[0]) {
        sg_fb_mismatch m = {.candidate = name,
                            .output = vr->output,
                            .shape = vr->shape,
                            .index = (long long)vr->first_bad,
                            .got = vr->got,
                            .expected = vr->expected,
                            .max_abs = vr->max_abs,
                            .max_rel = vr->max_rel,
                            .reason = vr->detail}; /* the validator's hint, if any */
        sg_feedback_mismatch(fb, &m, out);
    } else if (vr->verdict == SG_VAL_MISMATCH || vr->verdict == SG_VAL_OUT_OF_BOUNDS ||
               vr->verdict == SG_VAL_INPUT_MODIFIED) {
        /* No values to quote: the validator's message names the buffer, shape and index. */
        sg_buf_printf(out, "%s is WRONG: %s\n", name, vr->message);
    } else if (vr->verdict != SG_VAL_PASS) {
        sg_buf_printf(out, "%s failed (%s): %s\n", name, sg_val_verdict_name(vr->verdict),
                      vr->message);
    } else if (pr && pr->candidate.runs > 0) {
        sg_fb_timing tm = {.candidate = name,
                           .baseline = pr->baseline,
                           .cand = pr->candidate,
                           .facts = pr->facts,
                           .roof = pr->roof};
        sg_feedback_timing(fb, &tm, out);
        if (pr->race_stop[0])
            sg_buf_printf(out,
                          "Timing stopped early after %d runs: its speedup lies between %.2fx "
                          "and %.2fx (99%% interval), %s (%.2fx).\n",
                          pr->candidate.runs, pr->race_lo, pr->race_hi,
                          sg_race_stop_why(pr->race_stop), pr->race_bar);
    }
}
