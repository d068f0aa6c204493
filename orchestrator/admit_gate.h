/* admit_gate.h — campaign admission on the event loop: the admission policy
 * (specgen/admit.h) applied to a campaign's tasks through their LLM ports.
 *
 * Contract: one gate per campaign (real or simulated), on the campaign's loop. The runner
 * asks sg_admit_gate_try_start before starting a task (it then counts as active) and tells
 * the gate how many tasks have not started yet (demand). Each started task's LLM port is
 * wrapped by sg_admit_gate_join: the wrapper passes generations through, counts the tokens
 * and failed streams it sees, and at an iteration boundary (a reasoning stream started while
 * the task has no generation left) holds the task's new iteration back when more tasks are
 * active than the limit allows: that task waits (paused, not active) and resumes, oldest
 * first and before any new task starts, when there is room. A started iteration is never
 * aborted. Forks: the wrapper's fork_room is the policy's fork cap. Every interval_ns the
 * gate samples the signals (hooks.sample fills the servers' part: kv_usage, preemptions,
 * waiting; < 0 when unknown), asks the policy, and hands the decision to hooks.record as an
 * event {"ev":"admission","limit","previous","reason","active","paused","demand","fork_cap",
 * "tok_s","kv_usage","preempted","waiting"}; hooks.room is called (from the loop, never
 * inside a port call) whenever a new task may start. The gate does no I/O and reads no clock
 * but the loop's. */
#ifndef SG_ADMIT_GATE_H
#define SG_ADMIT_GATE_H

#include "common/loop.h"
#include "orchestrator/ports.h"
#include "specgen/admit.h"

#include <jansson.h>

typedef struct sg_admit_gate_hooks {
    void (*sample)(void *arg, sg_admit_signals *s); /* kv_usage, preemptions, waiting */
    void (*record)(void *arg, json_t *ev);          /* borrowed */
    void (*room)(void *arg);
    void *arg;
} sg_admit_gate_hooks;

typedef struct sg_admit_gate sg_admit_gate;
typedef struct sg_admit_member sg_admit_member;

/* Counters over the whole campaign, for the report. */
typedef struct sg_admit_stats {
    int decisions, grows, backoffs, pauses;
    int max_limit, last_limit;
    double limit_time; /* integral of the limit over time, limit-seconds (mean = / span) */
    double tokens;
    int failed_streams;
} sg_admit_stats;

sg_admit_gate *sg_admit_gate_new(sg_loop *loop, const sg_admit_config *c,
                                 const sg_admit_gate_hooks *hooks);
void sg_admit_gate_free(sg_admit_gate *g);
/* Tasks not started yet (part of the demand). */
void sg_admit_gate_set_unstarted(sg_admit_gate *g, int n);
/* 1: a new task may start now (it counts as active from here on); 0: not now. */
int sg_admit_gate_try_start(sg_admit_gate *g);
/* Wrap a started task's port (inner is borrowed and must outlive the member). */
sg_admit_member *sg_admit_gate_join(sg_admit_gate *g, const sg_llm_port *inner, sg_llm_port *out);
/* The task has finished (no generation of it is left): its place frees. */
void sg_admit_member_free(sg_admit_member *m);
void sg_admit_gate_stats(const sg_admit_gate *g, sg_admit_stats *s);
int sg_admit_gate_limit(const sg_admit_gate *g);

#endif
