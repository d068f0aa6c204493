/* The kvstore's budget beside the jobs (pool/kv_budget.c, pool/job_memory.c): pure
 * policy. GPU auto and SIZE, PoCL's host memory, a job beyond the free memory shrinks the
 * budget by exactly its deficit and gives it back when done, jobs at once add up, the
 * floor, and the memory a real task's job needs at its shapes. */
#include "pool/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

static void gpu_auto_keeps_a_reserve(void **st) {
    (void)st;
    sg_pool_kv_budget b;
    sg_err err;
    sg_pool_kv_opts o = {.is_auto = 1, .mem = SG_POOL_KV_GPU, .free_bytes = 80 * GiB};
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    assert_int_equal(b.capacity, 72 * GiB); /* 10% kept for jobs */
    assert_int_equal(b.budget, 72 * GiB);
    assert_int_equal(sg_pool_kv_budget_free(&b), 8 * GiB);
    o.free_bytes = 4 * GiB; /* small GPU: at least 1 GiB kept */
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    assert_int_equal(b.capacity, 3 * GiB);
    o.reserve = 5 * GiB; /* more than there is */
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), -1);
    assert_non_null(strstr(err.msg, "--kv-memory auto"));
    sg_pool_kv_opts s = {.size = 90 * GiB, .mem = SG_POOL_KV_GPU, .free_bytes = 80 * GiB};
    assert_int_equal(sg_pool_kv_budget_init(&b, &s, &err), -1);
    assert_non_null(strstr(err.msg, "above the"));
}

static void a_job_beyond_free_memory_shrinks_by_its_deficit(void **st) {
    (void)st;
    sg_pool_kv_budget b;
    sg_err err;
    sg_pool_kv_opts o = {.size = 60 * GiB, .mem = SG_POOL_KV_GPU, .free_bytes = 80 * GiB};
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    sg_pool_kv_change ch;
    /* 12 GiB needed, 20 free: nothing moves. */
    assert_int_equal(sg_pool_kv_job_start(&b, 12 * GiB, &ch), 0);
    assert_int_equal(b.budget, 60 * GiB);
    assert_int_equal(sg_pool_kv_budget_free(&b), 8 * GiB);
    /* 30 GiB more, 8 free: the kvstore gives the 22 GiB deficit. */
    assert_int_equal(sg_pool_kv_job_start(&b, 30 * GiB, &ch), 1);
    assert_int_equal(ch.from, 60 * GiB);
    assert_int_equal(ch.to, 38 * GiB);
    assert_int_equal(ch.free_before, 8 * GiB);
    assert_int_equal(ch.deficit, 22 * GiB);
    assert_int_equal(ch.uncovered, 0);
    assert_int_equal(b.jobs, 2);
    /* The small job ends: its 12 GiB go back to the kvstore (up to its region). */
    assert_int_equal(sg_pool_kv_job_end(&b, 12 * GiB, &ch), 1);
    assert_int_equal(ch.to, 50 * GiB);
    /* The big one ends: the whole region again. */
    assert_int_equal(sg_pool_kv_job_end(&b, 30 * GiB, &ch), 1);
    assert_int_equal(b.budget, 60 * GiB);
    assert_int_equal(b.need, 0);
    assert_int_equal(b.jobs, 0);
}

static void pocl_counts_jobs_against_kv_memory_down_to_the_floor(void **st) {
    (void)st;
    sg_pool_kv_budget b;
    sg_err err;
    sg_pool_kv_opts o = {.size = 96 * MiB, .mem = SG_POOL_KV_HOST, .free_bytes = 8 * GiB};
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    assert_int_equal(b.capacity, 96 * MiB);
    assert_int_equal(sg_pool_kv_budget_free(&b), 0); /* every job's need is counted */
    sg_pool_kv_change ch;
    assert_int_equal(sg_pool_kv_job_start(&b, 64 * MiB, &ch), 1);
    assert_int_equal(ch.to, 32 * MiB);
    assert_int_equal(sg_pool_kv_job_start(&b, 64 * MiB, &ch), 1);
    assert_int_equal(ch.to, MiB); /* the floor */
    assert_int_equal(ch.deficit, 64 * MiB);
    assert_int_equal(ch.uncovered, 33 * MiB);
    assert_int_equal(sg_pool_kv_job_end(&b, 64 * MiB, &ch), 1);
    assert_int_equal(ch.to, 32 * MiB);
    /* The region the kvstore got is smaller (whole chunks): the budget follows. */
    sg_pool_kv_budget_set_capacity(&b, 30 * MiB);
    assert_int_equal(b.budget, 30 * MiB);
    o.is_auto = 1;
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    assert_int_equal(b.capacity, 4 * GiB); /* auto: half the available memory */
    o.is_auto = 0;
    o.size = MiB;
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), -1);
    assert_non_null(strstr(err.msg, "--kv-memory"));
}

static void job_memory_from_the_tasks_buffers(void **st) {
    (void)st;
    const char *r = getenv("SPECGEN_ROOT");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/suites/demo/vector_scale", r ? r : ".");
    sg_val_task t;
    sg_err err;
    assert_int_equal(sg_val_task_load(dir, &t, &err), 0);
    uint64_t need, guards = 2 * 4096;
    /* N = 4194304 floats: x and y are 16 MiB each; reference and candidate sets. */
    assert_int_equal(sg_pool_job_memory(&t, SG_POOL_VALIDATE, NULL, NULL, 1, 0, &need, &err), 0);
    assert_int_equal(need, 2 * (2 * (16 * MiB + guards)));
    sg_val_plan plan;
    const char *src = "//@launch vector_scale grid=ceil_div(N,256) block=256\n"
                      "//@scratch part f32 N/2\n__kernel void vector_scale() {}\n";
    assert_int_equal(sg_val_plan_parse(src, &t, "cand", &plan, &err), 0);
    assert_int_equal(sg_pool_job_memory(&t, SG_POOL_VALIDATE, &plan, NULL, 1, 0, &need, &err), 0);
    assert_int_equal(need, 2 * (2 * (16 * MiB + guards)) + 8 * MiB + guards);
    /* Profile: 3 input sets, both sides' outputs, the candidate's scratch, a flush buffer. */
    assert_int_equal(
        sg_pool_job_memory(&t, SG_POOL_PROFILE, &plan, NULL, 3, 100 * MiB, &need, &err), 0);
    assert_int_equal(need, 3 * (16 * MiB + guards) + 2 * (16 * MiB + guards) + 8 * MiB + guards +
                               100 * MiB);
    sg_val_plan_free(&plan);
    sg_val_task_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_auto_keeps_a_reserve),
        cmocka_unit_test(a_job_beyond_free_memory_shrinks_by_its_deficit),
        cmocka_unit_test(pocl_counts_jobs_against_kv_memory_down_to_the_floor),
        cmocka_unit_test(job_memory_from_the_tasks_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
