/* trigger.h — when to fork, decided as reasoning deltas arrive.
 *
 * Contract: pure policy. It sees only the reasoning text (in deltas, split anywhere)
 * and the reasoning token count the caller reports; it keeps no clock and does no I/O,
 * so the same code runs in the simulation. Rules, each named in the fork it causes:
 *   code_block  a fenced code block closed inside the reasoning (a kernel was just
 *               written down) — the strongest cue;
 *   transition  a cue phrase ("Wait", "Alternatively", "Let me write", ...) at the start
 *               of a line or sentence, after at least transition_min_new_tokens since
 *               the last fork;
 *   interval    a fallback every interval_tokens (as Dynasor's fixed-interval probes).
 * Every rule also needs min_spacing_tokens since the last fork, fewer than
 * max_in_flight forks running and, when max_backlog > 0, fewer than max_backlog of the
 * task's forks running plus candidates waiting for their verdict or timing (the caller
 * reports that count: sg_trigger_set_backlog). A rule whose last dup_skip_after forks all produced
 * duplicate kernels skips its next cue; an aborted (or failed) fork says nothing about
 * its rule and is not counted. A code block that closes when there is no room (forks at
 * max_in_flight, or too soon after the last fork) stays pending, the latest one only,
 * and fires as soon as there is room (a later delta, or sg_trigger_poll when a fork
 * ends) unless it went stale: a new code block opened since (its close is the fresher
 * cue), or more than pending_stale_tokens of reasoning arrived after it. The configuration is JSON
 * (prompts/trigger.json; docs/speculation.md documents it); unknown fields are errors. */
#ifndef SG_TRIGGER_H
#define SG_TRIGGER_H

#include "common/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SG_RULE_NONE = 0,
    SG_RULE_CODE_BLOCK,
    SG_RULE_TRANSITION,
    SG_RULE_INTERVAL,
    SG_RULE_COUNT
} sg_rule;

const char *sg_rule_name(sg_rule r);

#define SG_TRIGGER_MAX_CUES 32

typedef struct sg_trigger_config {
    int code_block;           /* rule on/off */
    int transition;           /* rule on/off */
    uint64_t interval_tokens; /* 0: interval rule off */
    uint64_t min_spacing_tokens;
    uint64_t transition_min_new_tokens;
    int max_in_flight;
    int max_backlog; /* 0: off; else forks in flight + candidates not yet judged */
    /* 0: off; else the cap on forks in flight while no job waits for a slot (the pool's
     * queue is empty; needs max_queue_per_slot > 0 to be read), max_in_flight otherwise */
    int max_in_flight_idle;
    double max_queue_per_slot; /* 0: off; else fork only while the pool's queue per slot is below */
    int dup_skip_after;        /* 0: never skip */
    uint64_t pending_stale_tokens; /* a pending code-block cue older than this is dropped */
    size_t ncues;
    char cues[SG_TRIGGER_MAX_CUES][48];
} sg_trigger_config;

void sg_trigger_config_default(sg_trigger_config *cfg);
/* Overlay the fields present in obj on cfg. `where` names the file in errors. */
int sg_trigger_config_from_json(const json_t *obj, sg_trigger_config *cfg, const char *where,
                                sg_err *err);
int sg_trigger_config_load(const char *path, sg_trigger_config *cfg, sg_err *err);

typedef struct sg_trigger_fire {
    sg_rule rule;
    uint64_t tokens;     /* reasoning tokens when it fired */
    size_t offset;       /* reasoning bytes when it fired (the fork's prefix length) */
    char cue[48];        /* the phrase, for transition */
    int deferred;        /* a pending code-block cue that fired later, when room came */
    uint64_t cue_tokens; /* reasoning tokens when its cue arrived (== tokens unless deferred) */
} sg_trigger_fire;

typedef struct sg_trigger sg_trigger;

sg_trigger *sg_trigger_new(const sg_trigger_config *cfg);
void sg_trigger_free(sg_trigger *t);
/* A new reasoning stream (next iteration): forget text, counts and in-flight forks,
 * keep the duplicate history (it is about this task's model). */
void sg_trigger_reset(sg_trigger *t);

/* Feed a delta; tokens_total is the reasoning token count after it. Returns 1 and
 * fills *fire when a fork should start now (the caller then calls fork_started), else 0.
 * At most one fire per call: the rest of a long delta is looked at on the next call. */
int sg_trigger_feed(sg_trigger *t, const char *delta, size_t len, uint64_t tokens_total,
                    sg_trigger_fire *fire);
void sg_trigger_fork_started(sg_trigger *t, const sg_trigger_fire *fire);
/* A fork ended; duplicate: its kernel was one seen before (or no kernel at all). */
void sg_trigger_fork_finished(sg_trigger *t, sg_rule rule, int duplicate);
/* A fork was aborted or failed: its slot is free, its rule's record unchanged. */
void sg_trigger_fork_aborted(sg_trigger *t);
/* A slot may have freed (a fork ended): returns 1 and fills *fire when the pending
 * code-block cue should fork now; tokens_total is the reasoning token count now. */
int sg_trigger_poll(sg_trigger *t, uint64_t tokens_total, sg_trigger_fire *fire);
int sg_trigger_in_flight(const sg_trigger *t);
/* The task's candidates submitted and not yet judged (validated, and timed when correct):
 * with max_backlog, what the forks in flight add up with. Call before feed and poll. */
void sg_trigger_set_backlog(sg_trigger *t, int candidates);
/* Jobs of every task waiting for a validation/profiling slot, per slot (0 when unknown). */
void sg_trigger_set_pool_queue(sg_trigger *t, double queued_per_slot);
/* Campaign admission's cap on this task's forks in flight (specgen/admit.h): n >= 0 holds
 * the task to at most n (0: no new fork) below max_in_flight; n < 0: max_in_flight alone. */
void sg_trigger_set_fork_cap(sg_trigger *t, int n);

#endif
