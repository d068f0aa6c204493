/* sim.h — the models that stand behind the seams in virtual time: simulated pool slots
 * now; the LLM model and workload files come with the simulator.
 *
 * Contract
 *  - Simulated slots (sg_sim_slots) implement pool.h's slot seam on an sg_loop (meant for
 *    the virtual clock): a job takes a service time and ends with an outcome, both either
 *    given by the job (sg_pool_work.model pointing to an sg_sim_job) or drawn from the
 *    model with a seeded generator, so a run is reproducible from its seed. kill() cancels
 *    the job's timer: a killed job is never reported. Nothing here reads a real clock. */
#ifndef SG_SIM_H
#define SG_SIM_H

#include "common/loop.h"
#include "pool/pool.h"

#include <stdint.h>

typedef struct sg_sim_slot_model {
    double service_s[SG_POOL_NROLES]; /* mean service time per job kind */
    double cv;                        /* its coefficient of variation (lognormal); 0: fixed */
    double pass_rate;                 /* validate jobs: chance of a correct candidate */
    double speedup_mean;              /* profile jobs: mean speedup (lognormal, cv 0.3) */
    uint64_t seed;
} sg_sim_slot_model;

/* A job's own outcome (sg_pool_work.model): used instead of drawing one. */
typedef struct sg_sim_job {
    double service_s; /* <= 0: drawn */
    int pass;
    double speedup;
} sg_sim_job;

typedef struct sg_sim_slots sg_sim_slots;
sg_sim_slots *sg_sim_slots_new(sg_loop *loop, const sg_sim_slot_model *m, int nslots);
/* The pool the slots report to (set before the first job). */
void sg_sim_slots_bind(sg_sim_slots *s, sg_pool *p);
void sg_sim_slots_free(sg_sim_slots *s);
extern const sg_pool_slot_ops sg_sim_slot_ops;

#endif
