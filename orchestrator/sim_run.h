/* sim_run.h — `specgen sim`: the real task state machine, trigger policy, criterion, device
 * port and pool scheduler, with sim/'s models behind the ports, on the virtual clock.
 *
 * Contract: sg_sim_run runs c->tasks tasks for one seed, c->concurrency at a time (a new
 * one starts when one ends), and fills the metrics.
 * Everything is drawn from generators seeded by the seed: the same configuration and seed
 * give the same metrics, bit for bit, on any machine. Nothing here reads the real clock
 * (the caller may time the call). The LLM port over the model is port_llm_sim.c: one per
 * task, so the model knows whose iteration a stream belongs to.
 *
 * Recording (c->db set): the run is one campaign of kind "sim" in the results database
 * (suite "sim:WORKLOAD CONFIGURATION seed N", config: the configuration's name, the seed and its
 * parameters), its tasks "sim-N" in folder "sim", every task event and pool event recorded as a
 * real campaign records them, with virtual times; the same seed writes the same rows, apart from
 * the wall-clock columns (campaign and task started/ended). */
#ifndef SG_SIM_RUN_H
#define SG_SIM_RUN_H

#include "orchestrator/admit_gate.h"
#include "orchestrator/run.h"
#include "results/results.h"
#include "sim/sim.h"

#include <stdio.h>

typedef struct sg_sim_config {
    /* The task configuration optimize and campaign use (run.h), built into each task's
     * by sg_run_task_config as theirs is: policy, pools (.fifo: no priorities), target (0:
     * the workload's), per-task budgets (budget_ns in virtual time), iterations, early stop,
     * the overrides of the trigger rules (probe_tokens: probe:K; --sweep's knobs), and the
     * pool's shape: devices GPUs (8) of slots_per_device slots. Its endpoints, folders and
     * database path are not used: sim plugs in its own ports. */
    sg_run_config run;
    sg_sim_workload w; /* the model's own options */
    char name[64];     /* the configuration's name in tables */
    int tasks;
    int concurrency; /* tasks running at once; 0: all */
    /* campaign admission (admit_gate.h) instead of concurrency: 0 off (as before) */
    int admission;
    sg_admit_config admit;
    FILE *events;   /* when set: every task's events as JSON lines, with "task" added */
    sg_results *db; /* when set: the run is recorded (see above) */
    const sg_replay_traces *traces; /* sim --traces: recorded reasoning (sim.h), or NULL */
} sg_sim_config;

/* What one run can hand back beyond its means (sg_sim_run's trace argument, may be NULL). */
typedef struct sg_sim_trace {
    double *reach_s; /* [tasks] (caller's): each task's time to its target, < 0: not met */
    double bin_s;    /* the width of a utilisation bin, virtual seconds (> 0) */
    double *busy;    /* busy slot-seconds per bin (allocated here; the caller frees it) */
    int nbins;
} sg_sim_trace;

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
    int slots;                /* validation/profiling slots */
    int64_t campaign;         /* its campaign id when recorded, else 0 */
    /* admission (c->admission): the limit's mean over the run and its peak, decisions that
     * changed it, tasks paused between iterations; the model's preemptions */
    double admit_mean;
    int admit_max, admit_changes, admit_pauses;
    double preemptions;
} sg_sim_metrics;

int sg_sim_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t seed, sg_sim_metrics *m,
               sg_sim_trace *trace, sg_err *err);

/* `specgen sim --calibration-run` (sim_calib.c): c->tasks tasks calibrated one after another
 * as `specgen calibrate` does (calib.h) on the models of c->w, forks every interval_tokens as
 * the control, then the decode ramp and prefill probes on one instance; recorded into c->db
 * (a campaign of kind sim-calibration), the traces as replay JSONL
 * in traces_dir/TASK.jsonl (NULL: none). */
int sg_sim_calibration_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t seed,
                           uint64_t interval_tokens, const char *traces_dir, sg_err *err);

/* ---- what `specgen sim` prints and draws (sim_out.c) ----
 * A configuration's means over its seeds, their spread, and (for plots) every task's time
 * to target over all seeds and the first seed's busy slot-seconds per bin. */
typedef struct sg_sim_row {
    char name[64];
    sg_sim_metrics mean;
    double e2e_min, e2e_max, fb_min, fb_max;
    double *reach; /* nreach times, < 0: not met (owned) */
    int nreach;
    double *busy; /* nbins bins of bin_s seconds, slots slots (owned) */
    int nbins, slots;
    double bin_s;
    int64_t last_campaign;      /* recorded: campaigns mean.campaign..last_campaign */
    double *e2e_seed, *fb_seed; /* each seed's e2e_s and feedback, nseeds of them (owned) */
    int nseeds;
} sg_sim_row;

/* The configuration on seeds from..to: its means, spread and each seed's figures; with
 * trace, what the plots draw (cmd_sim.c). */
int sg_sim_run_seeds(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                     int trace, sg_sim_row *r, sg_err *err);

void sg_sim_row_free(sg_sim_row *r);
/* md: Markdown (docs/eval.md) instead of an aligned table. */
void sg_sim_print_header(int md);
void sg_sim_print_row(const sg_sim_row *r, int md);
/* rows[0] is specgen, rows[1..3] the baselines, rows[4..8] the ablations (static pools, no
 * priorities, no kvstore, no early stop, no forks): ratios; with md also the published
 * figures beside ours, and what each ablation's effect rests on in the model. */
void sg_sim_print_compare(const sg_sim_row *rows, int md);
/* --compare's second part (sim_fair.c): every baseline on a work-conserving pool (elastic,
 * FIFO) at its best setting (the lowest mean e2e among the settings tried that meet the
 * target as often as specgen), beside its paper's setting (rows[1..3]: static split, FIFO);
 * workers:N and probe-exit:K too (probe-exit and a specgen row beside it on the same-kernel
 * model: kernel_step = q_sd when the workload leaves it 0); ratios against specgen with 95%
 * confidence intervals from the per-seed pairs (geometric mean, Student t). rows[0] is
 * specgen on c. */
int sg_sim_fair(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to, int md,
                const sg_sim_row *rows, sg_err *err);

/* --admission-study (sim_admit.c): all at once, auto and fixed:N on the same seeds, campaign
 * throughput (tasks meeting their target per hour), and the verdict against issue 30's goal. */
int sg_sim_admission_study(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from,
                           uint64_t to, int md, sg_err *err);
/* DIR/time_to_target.svg and DIR/utilisation.svg for rows[0..n-1] (the folder is made). */
int sg_sim_plots(const char *dir, const sg_sim_row *rows, int n, sg_err *err);
/* Before the run: SG_WFILE_REFUSED when a plot's path names a device, a FIFO, a link... */
int sg_sim_plots_check(const char *dir, sg_err *err);

/* ---- the LLM port over the model (port_llm_sim.c) ---- */
typedef struct sg_port_llm_sim {
    sg_sim_llm *model;
    sg_loop *loop;
    int task;
    int iteration;             /* counted here: a reasoning started at a new instant */
    int64_t iteration_started; /* its virtual time */
    int streams;               /* started in this iteration */
    uint64_t tokens;           /* stream 0's reasoning tokens so far (a fork's prefix) */
    /* workers:N: a stream's iteration is the round its prompt names ("(iteration N)"), and
     * its stream the count of streams started for that round, instead of one iteration per
     * start instant (each worker restarts on its own) */
    int by_round;
    int *round_streams, nrounds; /* streams started per round (owned; free: _fini) */
} sg_port_llm_sim;

void sg_port_llm_sim_init(sg_port_llm_sim *pl, sg_llm_port *port);
void sg_port_llm_sim_fini(sg_port_llm_sim *pl);

#endif
