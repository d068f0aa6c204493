#include "orchestrator/optimize_ui.h"

#include "common/redact.h"
#include "common/units.h"
#include "orchestrator/progress.h"

#include <string.h>
#include <unistd.h>

void sg_ui_init(sg_ui *ui, FILE *out) {
    memset(ui, 0, sizeof *ui);
    ui->out = out;
    ui->tty = isatty(fileno(out));
}

static void clear_status(sg_ui *ui) {
    if (ui->tty && ui->status_shown) fprintf(ui->out, "\r\033[K");
    ui->status_shown = 0;
}

static const char *str(const json_t *ev, const char *k) {
    const char *s = json_string_value(json_object_get(ev, k));
    return s ? s : "";
}

static double num(const json_t *ev, const char *k) {
    return json_number_value(json_object_get(ev, k));
}

void sg_ui_event(sg_ui *ui, const json_t *ev) {
    const char *name = str(ev, "ev");
    char line[1400] = "";
    double t = num(ev, "t_ms") / 1e3;
    if (!strcmp(name, "baseline"))
        snprintf(line, sizeof line, "baseline: %s (%s)", str(ev, "verdict"), str(ev, "message"));
    else if (!strcmp(name, "iteration_start"))
        snprintf(line, sizeof line, "iteration %d: reasoning starts (best so far %.2fx)",
                 (int)num(ev, "iteration"), num(ev, "best_speedup"));
    else if (!strcmp(name, "fork"))
        snprintf(line, sizeof line, "fork %d at reasoning token %d (%s%s%s)", (int)num(ev, "fork"),
                 (int)num(ev, "at_tokens"), str(ev, "rule"), *str(ev, "cue") ? ": " : "",
                 str(ev, "cue"));
    else if (!strcmp(name, "candidate") && strcmp(str(ev, "status"), "submitted"))
        snprintf(line, sizeof line, "candidate %d from %s: %s%s%s", (int)num(ev, "candidate"),
                 str(ev, "origin"), str(ev, "status"), *str(ev, "reason") ? " — " : "",
                 str(ev, "reason"));
    else if (!strcmp(name, "job_done"))
        snprintf(line, sizeof line, "candidate %d: %s%s", (int)num(ev, "candidate"),
                 str(ev, "verdict"), json_is_true(json_object_get(ev, "correct")) ? "" : "");
    else if (!strcmp(name, "new_best"))
        snprintf(line, sizeof line, "new best: candidate %d, %.2fx", (int)num(ev, "candidate"),
                 num(ev, "speedup"));
    else if (!strcmp(name, "early_stop") && !strcmp(str(ev, "why"), "target"))
        snprintf(line, sizeof line,
                 "early stop: target met at %.2fx, reasoning aborted after %d tokens",
                 num(ev, "speedup"), (int)num(ev, "reasoning_tokens"));
    else if (!strcmp(name, "early_stop"))
        snprintf(
            line, sizeof line,
            "early stop: candidate %d beat the best (%.2fx), reasoning aborted after %d tokens",
            (int)num(ev, "candidate"), num(ev, "speedup"), (int)num(ev, "reasoning_tokens"));
    else if (!strcmp(name, "fork_failed"))
        snprintf(line, sizeof line, "fork %d failed: %.600s", (int)num(ev, "fork"),
                 str(ev, "error"));
    else if (!strcmp(name, "fork_error"))
        snprintf(line, sizeof line, "a fork could not start: %.600s", str(ev, "error"));
    else if (!strcmp(name, "forks_stopped"))
        snprintf(line, sizeof line,
                 "forks stopped: the endpoint refuses them (HTTP %d); the reasoning goes on "
                 "without forks",
                 (int)num(ev, "http_status"));
    else if (!strcmp(name, "stopping"))
        snprintf(line, sizeof line, "stopping: %s%s%s", str(ev, "reason"),
                 *str(ev, "error") ? " — " : "", str(ev, "error"));
    if (!strcmp(name, "job_done") && json_is_true(json_object_get(ev, "correct")) &&
        num(ev, "speedup") > 0)
        snprintf(line, sizeof line, "candidate %d: correct, %.2fx (±%.1f%%)",
                 (int)num(ev, "candidate"), num(ev, "speedup"), 100 * num(ev, "noise"));
    else if (!strcmp(name, "job_done") && !json_is_true(json_object_get(ev, "correct")))
        snprintf(line, sizeof line, "candidate %d: %s — %.200s", (int)num(ev, "candidate"),
                 str(ev, "verdict"), str(ev, "message"));
    if (!line[0]) return;
    clear_status(ui);
    fprintf(ui->out, "[%7.2fs] %s\n", t, line);
    fflush(ui->out);
}

const char *sg_ui_eta(int64_t eta_ns, char *buf, size_t n) {
    char d[32];
    if (eta_ns < 0)
        snprintf(buf, n, "ETA ?");
    else
        snprintf(buf, n, "ETA %s", sg_fmt_duration(eta_ns, d, sizeof d));
    return buf;
}

/* On a terminal the status line (at most ten times a second); elsewhere the same text as
 * a plain line every interval_ns, so that a batch log shows the run is alive. */
void sg_ui_progress(sg_ui *ui, const sg_task_stats *s, int64_t now_ns) {
    if (ui->tty ? now_ns - ui->last_status_ns < 100000000LL : ui->interval_ns <= 0) return;
    if (!ui->tty && !ui->last_plain_ns) ui->last_plain_ns = now_ns; /* the first call: start */
    if (!ui->tty && now_ns - ui->last_plain_ns < ui->interval_ns) return;
    sg_progress p = {.elapsed_ns = now_ns - s->started_ns,
                     .budget_ns = ui->budget_ns,
                     .tokens = s->tokens_total,
                     .budget_tokens = ui->budget_tokens};
    char eta[48];
    sg_ui_eta(sg_progress_eta(&p), eta, sizeof eta);
    char line[400];
    snprintf(line, sizeof line,
             "iteration %d | reasoning %llu tok | forks %d/%d | candidates %d: %d ok, %d dup | "
             "best %.2fx | %s",
             s->iteration, (unsigned long long)s->reasoning_tokens, s->forks_done, s->forks_started,
             s->candidates, s->correct, s->duplicates, s->best_speedup, eta);
    if (ui->tty) {
        ui->last_status_ns = now_ns;
        fprintf(ui->out, "\r\033[K%s", line);
        ui->status_shown = 1;
    } else {
        ui->last_plain_ns = now_ns;
        fprintf(ui->out, "[%7.2fs] progress: %s\n", (double)p.elapsed_ns / 1e9, line);
    }
    fflush(ui->out);
}

void sg_ui_table(FILE *o, const sg_ui_row *rows, int n) {
    size_t w = 4; /* a name with control characters is shown escaped: it cannot fake a line */
    char name[1024];
    for (int i = 0; i < n; i++)
        if (strlen(sg_redact_ctrl(name, sizeof name, rows[i].task)) > w) w = strlen(name);
    if (w > 48) w = 48;
    fprintf(o, "%-*s  %12s  %7s  %-3s  %10s  %10s  %s\n", (int)w, "task", "best speedup", "target",
            "met", "time", "tokens", "end");
    for (int i = 0; i < n; i++) {
        const sg_ui_row *r = &rows[i];
        char best[32] = "-", target[32] = "-", t[32] = "-";
        if (r->best > 0) snprintf(best, sizeof best, "%.2fx", r->best);
        if (r->target > 0) snprintf(target, sizeof target, "%.2fx", r->target);
        if (r->time_ns > 0) sg_fmt_duration(r->time_ns, t, sizeof t);
        fprintf(o, "%-*.*s  %12s  %7s  %-3s  %10s  %10llu  %s\n", (int)w, (int)w,
                sg_redact_ctrl(name, sizeof name, r->task), best, target, r->met ? "yes" : "no", t,
                (unsigned long long)r->tokens, r->end);
    }
    fflush(o);
}

json_t *sg_ui_row_json(const sg_ui_row *r) {
    return json_pack("{s:s,s:f,s:f,s:b,s:f,s:I,s:s}", "task", r->task, "best_speedup", r->best,
                     "target", r->target, "met", r->met, "time_s", (double)r->time_ns / 1e9,
                     "tokens", (json_int_t)r->tokens, "end", r->end);
}

/* The evidence that a fork did not recompute its prefix: the server's own count. */
void sg_ui_prefix_reuse(FILE *o, const sg_task_stats *s) {
    double share = sg_task_prefix_reuse(s);
    if (share >= 0)
        fprintf(o,
                "prefix reuse: %.0f%% of the forks' prompt tokens came from the server's prefix "
                "cache (%llu of %llu; %d of %d forks reported)\n",
                100 * share, (unsigned long long)s->fork_cached_tokens,
                (unsigned long long)s->fork_prompt_tokens, s->forks_cache_reported, s->forks_done);
    else if (s->fork_prompt_tokens)
        fprintf(o, "prefix reuse: not reported by the server (vLLM reports it with "
                   "--enable-prompt-tokens-details, SGLang with --enable-cache-report)\n");
    else
        fprintf(o, "prefix reuse: not reported (the server sent no usage for the forks)\n");
}

void sg_ui_summary(sg_ui *ui, const sg_task_stats *s, const char *best_path, const char *policy,
                   uint64_t full_reasoning_tokens) {
    clear_status(ui);
    char dur[32], first[32];
    sg_fmt_duration(s->ended_ns, dur, sizeof dur);
    sg_fmt_duration(s->first_candidate_ns, first, sizeof first);
    FILE *o = ui->out;
    fprintf(o, "\n== specgen optimize: %s\n",
            s->error[0]    ? "stopped on an error"
            : s->cancelled ? "stopped on request"
                           : "done");
    if (s->error[0]) fprintf(o, "error:        %s\n", s->error);
    fprintf(o, "end:          %s after %s, %d iteration%s (policy %s)\n",
            s->error[0]    ? "error"
            : s->cancelled ? "cancelled"
                           : sg_crit_name(s->end_reason),
            dur, s->iteration, s->iteration == 1 ? "" : "s", policy);
    if (s->best_candidate)
        fprintf(o, "best kernel:  %s — %.2fx faster than the baseline (candidate %d)\n", best_path,
                s->best_speedup, s->best_candidate);
    else if (s->baseline_ns_median <= 0) /* nothing was timed: nothing was compared */
        fprintf(o,
                "best kernel:  none: the baseline never ran, so no kernel was compared; %s "
                "holds the baseline\n",
                best_path);
    else
        fprintf(o, "best kernel:  nothing beat the baseline; %s holds the baseline\n", best_path);
    fprintf(o,
            "candidates:   %d (%d compiled, %d correct, %d duplicates, %d without a kernel); first "
            "after %s\n",
            s->candidates, s->compiled, s->correct, s->duplicates, s->no_kernel,
            s->candidates ? first : "-");
    fprintf(o, "forks:        %d started, %d finished, %d failed\n", s->forks_started,
            s->forks_done - s->forks_failed, s->forks_failed);
    if (s->forks_failed)
        fprintf(o, "fork error:   %.600s%s\n", s->fork_error,
                s->forks_refused ? " (the endpoint refuses forks: no more were started)" : "");
    if (s->first_token_timeouts)
        fprintf(o, "llm stalls:   %d generation%s got no first token in time: %.600s\n",
                s->first_token_timeouts, s->first_token_timeouts == 1 ? "" : "s",
                s->first_token_error);
    fprintf(o, "tokens:       %llu reasoning, %llu in forks, %llu in all\n",
            (unsigned long long)s->reasoning_tokens, (unsigned long long)s->fork_tokens,
            (unsigned long long)s->tokens_total);
    if (s->forks_done) sg_ui_prefix_reuse(o, s);
    if (s->early_stops) {
        if (full_reasoning_tokens > s->tokens_at_early_stop)
            fprintf(o,
                    "early stop:   the reasoning was cut at %llu of its %llu tokens (%.0f%% not "
                    "generated)\n",
                    (unsigned long long)s->tokens_at_early_stop,
                    (unsigned long long)full_reasoning_tokens,
                    100.0 * (double)(full_reasoning_tokens - s->tokens_at_early_stop) /
                        (double)full_reasoning_tokens);
        else
            fprintf(o, "early stop:   %d time%s; the reasoning was cut after %llu tokens\n",
                    s->early_stops, s->early_stops == 1 ? "" : "s",
                    (unsigned long long)s->tokens_at_early_stop);
    } else if (s->end_reason == SG_CRIT_TARGET && full_reasoning_tokens > s->reasoning_tokens) {
        fprintf(o, "early stop:   target met after %llu of %llu reasoning tokens\n",
                (unsigned long long)s->reasoning_tokens, (unsigned long long)full_reasoning_tokens);
    }
    fflush(o);
}

void sg_ui_pools(sg_ui *ui, const sg_pool_stats *st, const sg_port_dev_stats *ds) {
    FILE *o = ui->out;
    fprintf(o, "pools:        %d slot%s, now %d validate / %d profile, %d split%s; %.0f%% busy\n",
            st->role[0].slots + st->role[1].slots,
            st->role[0].slots + st->role[1].slots == 1 ? "" : "s", st->role[SG_POOL_VALIDATE].slots,
            st->role[SG_POOL_PROFILE].slots, st->splits, st->splits == 1 ? "" : "s",
            100 * st->utilisation);
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        const sg_pool_role_stats *rs = &st->role[r];
        fprintf(o,
                "  %-9s   %llu job%s (%llu dropped, %llu killed), %.0f%% busy, wait mean %.2fs "
                "p95 %.2fs\n",
                sg_pool_role_name((sg_pool_role)r), (unsigned long long)rs->jobs,
                rs->jobs == 1 ? "" : "s", (unsigned long long)rs->dropped,
                (unsigned long long)rs->killed, 100 * rs->utilisation, rs->wait_mean_s,
                rs->wait_p95_s);
    }
    if (ds->feedback)
        fprintf(o, "feedback:     %d timed candidate%s, latency mean %.2fs p95 %.2fs\n",
                ds->feedback, ds->feedback == 1 ? "" : "s", ds->latency_mean_s, ds->latency_p95_s);
}
