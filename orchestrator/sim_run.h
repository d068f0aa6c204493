/* sim_run.h — `specgen sim`: the real task state machine, trigger policy, criterion, device
 * port and pool scheduler, with sim/'s models behind the ports, on the virtual clock.
 *
 * Contract: sg_sim_run runs c->tasks tasks for one seed, c->concurrency at a time (a new
 * one starts when one ends), and fills the metrics.
 * Everything is drawn from generators seeded by the seed: the same configuration and seed
 * give the same metrics, bit for bit, on any machine. Nothing here reads the real clock
 * (the caller may time the call). The LLM port over the model is port_llm_sim.c: one per
 * task, so the model knows whose iteration a stream belongs to. */
#ifndef SG_SIM_RUN_H
#define SG_SIM_RUN_H

#include "orchestrator/run.h"
#include "sim/sim.h"

#include <stdio.h>

typedef struct sg_sim_config {
    sg_sim_workload w;
    char name[64]; /* the configuration's name in tables */
    sg_policy policy;
    uint64_t probe_tokens; /* > 0: forks every N tokens and no trigger rule (probe:K) */
    int gpus, slots_per_gpu;
    sg_pool_config pools; /* .fifo: no priorities */
    int tasks;
    int concurrency;        /* tasks running at once; 0: all */
    double target;          /* target speedup; 0: the workload's */
    int64_t budget_ns;      /* per task */
    uint64_t budget_tokens; /* per task */
    int iterations;
    int early_stop;
    /* the policy's knobs (0: the defaults of prompts/trigger.json and the criterion) */
    uint64_t spacing_tokens; /* trigger min_spacing_tokens */
    int in_flight;           /* trigger max_in_flight */
    double delta;            /* early-stop margin */
    FILE *events;            /* when set: every task's events as JSON lines, with "task" added */
} sg_sim_config;

void sg_sim_config_default(sg_sim_config *c);

typedef struct sg_sim_metrics {
    int tasks, reached;     /* tasks, and those that met the target */
    double e2e_s;           /* mean per task: its time to the target, or to its end */
    double first_correct_s; /* mean over the tasks that found a correct kernel */
    int first_correct_n;
    double feedback;          /* candidates timed, all tasks */
    double util, util_queued; /* pool utilisation, and while work waited */
    double tokens;            /* generated, all tasks */
    double best;              /* mean best speedup */
    double virtual_s;         /* how long the run lasted in virtual time */
    double prefill_saved;     /* share of fork prefill served by the prefix cache */
} sg_sim_metrics;

int sg_sim_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t seed, sg_sim_metrics *m,
               sg_err *err);

/* ---- the LLM port over the model (port_llm_sim.c) ---- */
typedef struct sg_port_llm_sim {
    sg_sim_llm *model;
    sg_loop *loop;
    int task;
    int iteration;             /* counted here: a reasoning started at a new instant */
    int64_t iteration_started; /* its virtual time */
    int streams;               /* started in this iteration */
    uint64_t tokens;           /* stream 0's reasoning tokens so far (a fork's prefix) */
} sg_port_llm_sim;

void sg_port_llm_sim_init(sg_port_llm_sim *pl, sg_llm_port *port);

#endif
