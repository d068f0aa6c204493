/* Local slots under the scheduler on the real loop, with real OpenCL workers (PoCL): the
 * baseline validates and is timed as two jobs; a candidate that never ends is killed when
 * its iteration ends, and the same slot then runs the next job in a fresh worker; two
 * slots on one device never let a profile job share it. Preemption: a running validation
 * marked stale (sg_pool_preempt) runs on while nothing waits, and yields its slot (its
 * worker killed) when a job arrives; the job runs there in a fresh worker, and once the
 * pool is freed no worker process or descriptor is left. */
#include <dirent.h>
#include <unistd.h>

#include "common/buf.h"
#include "pool/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char root[512], task[600];

typedef struct seen {
    int n;
    struct {
        uint64_t id;
        sg_pool_end end;
        int pass;
        char verdict[32];
        double speedup, base_ns;
        int slot;
    } job[16];
    int running, profiling, shared_profile;
    sg_loop *loop;
    int want;
} seen;

static void on_done(void *arg, const sg_pool_job *job, const sg_pool_result *r) {
    seen *s = arg;
    s->job[s->n].id = job->id;
    s->job[s->n].end = r->end;
    s->job[s->n].pass = r->pass;
    s->job[s->n].speedup = r->speedup;
    s->job[s->n].base_ns = r->base_ns;
    s->job[s->n].slot = job->slot;
    snprintf(s->job[s->n].verdict, sizeof s->job[s->n].verdict, "%s", r->verdict);
    s->n++;
    if (s->n == s->want) sg_loop_stop(s->loop);
}

static void on_event(void *arg, json_t *ev) {
    seen *s = arg;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    int prof = !strcmp(json_string_value(json_object_get(ev, "kind")) ?: "", "profile");
    if (!strcmp(name, "job_start")) {
        if (s->profiling || (prof && s->running)) s->shared_profile++;
        s->running++;
        s->profiling |= prof;
    } else if (!strcmp(name, "job_end")) {
        s->running--;
        if (prof) s->profiling = 0;
    }
    json_decref(ev);
}

static char *load(const char *rel, size_t *len) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    sg_buf b = {0};
    if (sg_buf_read_file(&b, p) < 0) fail_msg("cannot read %s", p);
    *len = b.len;
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

typedef struct ender {
    sg_pool *pool;
    uint64_t iteration;
} ender;

static void end_iteration(sg_loop *loop, void *arg) {
    (void)loop;
    ender *e = arg;
    sg_pool_end_iteration(e->pool, e->iteration);
}

typedef struct later {
    sg_pool *pool;
    const sg_pool_work *v, *p;
    seen *s;
    uint64_t vid, pid;
} later;

static void submit_later(sg_loop *loop, void *arg) {
    (void)loop;
    later *l = arg;
    l->vid = sg_pool_submit(l->pool, 0, 2, SG_POOL_FINAL, l->v, on_done, l->s);
    l->pid = sg_pool_submit(l->pool, 0, 2, SG_POOL_FINAL, l->p, on_done, l->s);
}

/* A real pool over two local OpenCL slots, one validate and one profile (static:1/1), its
 * events into s. The run deadline is 60 s: a test's hang is ended by the test (a cancel, a
 * preemption), never by the deadline. Skips without an OpenCL device. */
typedef struct rig {
    sg_loop *loop;
    sg_pool_local *local;
    sg_pool *pool;
    const sg_pool_slot_desc *d;
    int n;
} rig;

static void local_opencl_pool(rig *r, seen *s) {
    sg_err err;
    r->loop = sg_loop_new_real(&err);
    sg_dev_opts o;
    sg_dev_opts_default(&o);
    o.device = SG_DEV_OPENCL;
    o.run_timeout_ms = 60000;
    if (sg_dev_count(&o, &err) < 1) skip();
    assert_int_equal(sg_pool_local_new(r->loop, &o, NULL, 1, 2, &r->local, &err), 0);
    r->d = sg_pool_local_slots(r->local, &r->n);
    sg_pool_config cfg;
    sg_pool_config_default(&cfg);
    sg_pool_config_parse("static:1/1", &cfg, &err);
    assert_int_equal(
        sg_pool_new(r->loop, &cfg, r->d, r->n, &sg_pool_local_ops, r->local, &r->pool, &err), 0);
    sg_pool_local_bind(r->local, r->pool);
    *s = (seen){.loop = r->loop};
    sg_pool_on_event(r->pool, on_event, s);
}

static void rig_free(rig *r) {
    sg_pool_free(r->pool);
    sg_pool_local_free(r->local);
    sg_loop_free(r->loop);
}

static void test_local_slots(void **state) {
    (void)state;
    sg_err err;
    rig r;
    seen s;
    local_opencl_pool(&r, &s); /* the hang is ended by the cancel, not by the deadline */
    sg_loop *loop = r.loop;
    sg_pool *pool = r.pool;
    assert_int_equal(r.n, 2);
    assert_string_equal(r.d[1].name, "opencl:0/1");

    size_t hlen;
    char *hang = load("tests/hostile/opencl/infinite_loop.cl", &hlen);
    sg_prof_opts po;
    sg_prof_opts_default(&po);
    po.stab.max_runs = 10;
    sg_pool_work base_v = {.kind = SG_POOL_VALIDATE, .task_dir = task, .name = "baseline"};
    sg_pool_work base_p = {
        .kind = SG_POOL_PROFILE, .task_dir = task, .name = "baseline", .prof = &po};
    sg_pool_work hung = {.kind = SG_POOL_VALIDATE,
                         .task_dir = task,
                         .candidate = hang,
                         .candidate_len = hlen,
                         .name = "hang"};
    /* iteration 1: the hang, started alone (so that no other job holds the device when it
     * should run, however slow the machine) and ended after 3 s; iteration 2: the baseline,
     * both kinds, submitted while the hang runs */
    uint64_t h = sg_pool_submit(pool, 0, 1, SG_POOL_FORK, &hung, on_done, &s);
    ender e = {pool, 1};
    sg_loop_timer(loop, 3 * SG_SEC, end_iteration, &e);
    later l = {pool, &base_v, &base_p, &s, 0, 0};
    sg_loop_timer(loop, SG_SEC / 2, submit_later, &l);
    s.want = 3;
    assert_int_equal(sg_loop_run(loop, &err), 0);
    uint64_t v = l.vid, p = l.pid;
    assert_int_equal(s.n, 3);
    for (int i = 0; i < s.n; i++) {
        if (s.job[i].id == h) assert_int_equal(s.job[i].end, SG_POOL_KILLED);
        if (s.job[i].id == v) {
            assert_int_equal(s.job[i].end, SG_POOL_DONE);
            assert_string_equal(s.job[i].verdict, "pass");
        }
        if (s.job[i].id == p) {
            assert_int_equal(s.job[i].end, SG_POOL_DONE);
            assert_true(s.job[i].pass);
            assert_true(s.job[i].base_ns > 0); /* the baseline alone: no speedup */
        }
    }
    /* The validate slot that held the hang runs the next job in a fresh worker. */
    s.want = 4;
    v = sg_pool_submit(pool, 0, 3, SG_POOL_FINAL, &base_v, on_done, &s);
    assert_int_equal(sg_loop_run(loop, &err), 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.job[3].end, SG_POOL_DONE);
    assert_string_equal(s.job[3].verdict, "pass");
    assert_int_equal(s.shared_profile, 0);
    sg_pool_stats st;
    sg_pool_stats_get(pool, &st);
    assert_int_equal(st.role[SG_POOL_VALIDATE].killed, 1);
    assert_true(st.role[SG_POOL_PROFILE].jobs == 1);
    rig_free(&r);
    free(hang);
}

/* Descriptors open in this process, and child processes still there (zombies too). */
static int count_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the DIR's own */
}

static int count_children(void) {
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
        if (!f) continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *close = strrchr(buf, ')'); /* "pid (comm) state ppid ..." */
        char state;
        int ppid;
        if (close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid()) n++;
    }
    closedir(d);
    return n;
}

typedef struct preempter {
    sg_pool *pool;
    const sg_pool_work *next;
    seen *s;
    uint64_t stale, next_id;
    int marked, ended_before; /* sg_pool_preempt's answer; jobs ended before the next came */
} preempter;

static void mark_stale(sg_loop *loop, void *arg) {
    (void)loop;
    preempter *p = arg;
    p->marked = sg_pool_preempt(p->pool, p->stale);
}

static void submit_next(sg_loop *loop, void *arg) {
    (void)loop;
    preempter *p = arg;
    p->ended_before = p->s->n;
    p->next_id = sg_pool_submit(p->pool, 1, 2, SG_POOL_FORK, p->next, on_done, p->s);
}

static void test_stale_validation_yields(void **state) {
    (void)state;
    sg_err err;
    int fds0 = count_fds();
    rig r;
    seen s;
    local_opencl_pool(&r, &s); /* one validate slot; the preemption ends the hang */
    sg_loop *loop = r.loop;
    sg_pool *pool = r.pool;
    size_t hlen;
    char *hang = load("tests/hostile/opencl/infinite_loop.cl", &hlen);
    sg_pool_work hung = {.kind = SG_POOL_VALIDATE,
                         .task_dir = task,
                         .candidate = hang,
                         .candidate_len = hlen,
                         .name = "stale hang"};
    sg_pool_work base_v = {.kind = SG_POOL_VALIDATE, .task_dir = task, .name = "baseline"};
    /* the hang runs alone; stale at 1 s (nothing waits: it runs on); a job at 2.5 s */
    preempter pr = {.pool = pool, .next = &base_v, .s = &s};
    pr.stale = sg_pool_submit(pool, 0, 1, SG_POOL_FORK, &hung, on_done, &s);
    sg_loop_timer(loop, SG_SEC, mark_stale, &pr);
    sg_loop_timer(loop, 5 * SG_SEC / 2, submit_next, &pr);
    s.want = 2;
    assert_int_equal(sg_loop_run(loop, &err), 0);
    assert_int_equal(pr.marked, 2);       /* running: it yields later */
    assert_int_equal(pr.ended_before, 0); /* it ran on while nothing waited */
    assert_int_equal(s.n, 2);
    assert_true(s.job[0].id == pr.stale && s.job[0].end == SG_POOL_KILLED);
    assert_true(s.job[1].id == pr.next_id && s.job[1].end == SG_POOL_DONE);
    assert_string_equal(s.job[1].verdict, "pass");  /* in a fresh worker */
    assert_int_equal(s.job[1].slot, s.job[0].slot); /* on the slot it yielded */
    sg_pool_stats st;
    sg_pool_stats_get(pool, &st);
    assert_int_equal(st.role[SG_POOL_VALIDATE].preempted, 1);
    assert_int_equal(st.role[SG_POOL_VALIDATE].killed, 1);
    rig_free(&r);
    free(hang);
    assert_int_equal(count_children(), 0); /* every worker reaped */
    assert_int_equal(count_fds(), fds0);   /* and its sockets closed */
}

int main(void) {
    const char *r = getenv("SPECGEN_ROOT");
    snprintf(root, sizeof root, "%s", r ? r : ".");
    snprintf(task, sizeof task, "%s/suites/demo/vector_scale", root);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_local_slots),
                                       cmocka_unit_test(test_stale_validation_yields)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
