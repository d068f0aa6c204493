/* The kvstore embedded as the pool agent embeds it, with the budget policy around a real
 * job: the kvstore serves from this test's sg_loop (password from a file), real
 * redis-cli clients fill it and stay connected throughout (-r -1: one connection each,
 * repeating CONFIG GET maxmemory and EXISTS), a real validation job (PoCL) that needs
 * more memory than is free shrinks the budget by its deficit while it runs (LRU keys
 * evicted) and gives it back when done; the clients see the budget move and never an
 * error; redis-cli -x and redis-py (when .venv has it) store and read afterwards. */
#include "common/buf.h"
#include "common/loop.h"
#include "kvstore/kvstore.h"
#include "pool/pool.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MiB ((uint64_t)1 << 20)

static char tmp[256];

static pid_t sh(const char *cmd) {
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void stop_loop(sg_loop *loop, void *arg) {
    (void)arg;
    sg_loop_stop(loop);
}

/* Serve from the loop for ms milliseconds (the acceptor lives there). */
static void serve(sg_loop *loop, int ms) {
    sg_err err;
    sg_loop_timer(loop, (int64_t)ms * SG_MS, stop_loop, NULL);
    assert_int_equal(sg_loop_run(loop, &err), 0);
}

/* Serve until the child exits; its exit status. */
static int serve_until_exit(sg_loop *loop, pid_t pid) {
    int status;
    for (int i = 0; i < 600; i++) {
        serve(loop, 50);
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("a client did not finish");
    return -1;
}

static char *slurp(const char *path) {
    sg_buf b = {0};
    if (sg_buf_read_file(&b, path) < 0) fail_msg("cannot read %s", path);
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

/* The password: the file's first line. */
static char *read_password(void) {
    char path[512];
    sg_err err;
    snprintf(path, sizeof path, "%s/kv.pass", tmp);
    FILE *f = fopen(path, "w");
    fputs("s3cret\n# the second line is not part of it\n", f);
    fclose(f);
    chmod(path, 0600);
    char *password;
    assert_int_equal(sg_kv_password_file("--kv-requirepass-file", path, &password, &err), 0);
    assert_string_equal(password, "s3cret");
    return password;
}

/* Fill: 80 values of 1 MiB through redis-cli --pipe. */
static void fill(sg_loop *loop, const char *cli) {
    char cmd[2048];
    snprintf(
        cmd, sizeof cmd,
        "python3 -c 'import sys,os\n"
        "for i in range(80):\n"
        "    v=os.urandom(1<<20)\n"
        "    sys.stdout.buffer.write(b\"*3\\r\\n$3\\r\\nSET\\r\\n$%%d\\r\\nk%%d\\r\\n$%%d\\r\\n\" "
        "%% (len(str(i))+1, i, len(v)) + v + b\"\\r\\n\")' | %s --pipe > %s/fill.out 2>&1",
        cli, tmp);
    int status = serve_until_exit(loop, sh(cmd));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* After the job: redis-cli -x stores 40 MiB again (room that was given back). */
static void room_given_back(sg_loop *loop, const char *cli, const char *root, int port) {
    char path[512], cmd[2048];
    snprintf(cmd, sizeof cmd, "head -c 41943040 /dev/urandom | %s -x SET big > %s/big.out 2>&1",
             cli, tmp);
    assert_int_equal(WEXITSTATUS(serve_until_exit(loop, sh(cmd))), 0);
    snprintf(path, sizeof path, "%s/big.out", tmp);
    char *big = slurp(path);
    assert_string_equal(big, "OK\n");
    free(big);
    snprintf(path, sizeof path, "%s/.venv/bin/python", root);
    if (access(path, X_OK) == 0) {
        snprintf(
            cmd, sizeof cmd,
            "%s -c 'import redis,sys\n"
            "r=redis.Redis(port=%d,password=\"s3cret\")\n"
            "r.set(\"py\", b\"v\"*300000)\n"
            "sys.exit(0 if r.get(\"py\")==b\"v\"*300000 and r.strlen(\"big\")==41943040 else 3)'"
            " > %s/py.out 2>&1 || { grep -q No.module %s/py.out && exit 0; exit 1; }",
            path, port, tmp, tmp);
        assert_int_equal(WEXITSTATUS(serve_until_exit(loop, sh(cmd))), 0);
    }
}

/* A client on one connection repeating a command every 50 ms, its replies in tmp/out. */
static pid_t repeat(const char *cli, const char *command, const char *out) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "exec %s -r -1 -i 0.05 %s > %s/%s 2>&1", cli, command, tmp, out);
    return sh(cmd);
}

/* The job itself, on a validator pool of one slot, while the clients keep asking. */
static void run_the_job(sg_loop *loop, char *task) {
    sg_err err;
    sg_dev_opts dopts;
    sg_dev_opts_default(&dopts);
    dopts.slots = 1;
    sg_val_pool *pool;
    assert_int_equal(sg_val_pool_new(&dopts, &pool, &err), 0);
    sg_val_job job = {.task_dir = task, .candidate = NULL, .seed = 5};
    sg_val_result res;
    assert_int_equal(sg_val_pool_validate(pool, 0, &job, &res, &err), 0);
    assert_int_equal(res.verdict, SG_VAL_PASS);
    serve(loop, 300); /* the clients see the shrunk budget */
    sg_val_pool_free(pool);
}

/* What the two clients saw while a job of `need` bytes ran. */
static void clients_saw_the_budget(uint64_t need) {
    char path[512];
    snprintf(path, sizeof path, "%s/w1.out", tmp);
    char *seen = slurp(path);
    /* The budget the clients saw, in order: the whole, the shrunk, the whole again. */
    char shrunk[32];
    snprintf(shrunk, sizeof shrunk, "\n%llu\n",
             (unsigned long long)((96 * MiB - need) & ~(MiB - 1)));
    const char *a = strstr(seen, "\n100663296\n"), *s = a ? strstr(a, shrunk) : NULL;
    const char *back = s ? strstr(s, "\n100663296\n") : NULL;
    if (!a || !s || !back)
        fail_msg("redis-cli did not see 96M, %s, 96M in turn:\n%.2000s", shrunk, seen);
    assert_null(strstr(seen, "rror"));
    free(seen);
    snprintf(path, sizeof path, "%s/w2.out", tmp);
    seen = slurp(path);
    assert_null(strstr(seen, "rror"));
    assert_non_null(strstr(seen, "1\n"));
    assert_null(strstr(seen, "0\n")); /* read often, it survived the evictions (LRU) */
    free(seen);
}

static void budget_follows_a_real_job(void **st) {
    (void)st;
    const char *root = getenv("SPECGEN_ROOT") ? getenv("SPECGEN_ROOT") : ".";
    if (system("command -v redis-cli >/dev/null") != 0) skip();
    snprintf(tmp, sizeof tmp, "/tmp/kvlive.XXXXXX");
    assert_non_null(mkdtemp(tmp));
    char cmd[2048];
    sg_err err;

    char *password = read_password();

    /* PoCL: --kv-memory 96M is the memory the kvstore and the jobs share. */
    sg_pool_kv_budget b;
    sg_pool_kv_opts o = {.size = 96 * MiB, .mem = SG_POOL_KV_HOST};
    assert_int_equal(sg_pool_kv_budget_init(&b, &o, &err), 0);
    sg_loop *loop = sg_loop_new_real(&err);
    assert_non_null(loop);
    sg_kv_config cfg = {.listen = "127.0.0.1:0",
                        .memory = b.capacity,
                        .backend = "host",
                        .password = password,
                        .io_threads = 2,
                        .maxclients = 64,
                        .hash_seed = 7};
    sg_kv_server *srv;
    assert_int_equal(sg_kv_server_start(&cfg, &srv, &err), 0);
    assert_int_equal(sg_kv_server_attach(srv, loop, &err), 0);
    assert_int_equal(sg_kv_server_attach(srv, loop, &err), -1);
    sg_kv_memory m;
    sg_kv_server_memory(srv, &m);
    assert_true(m.free_at_start > 0); /* what a GPU agent's policy shares with jobs */
    sg_pool_kv_budget_set_capacity(&b, m.capacity);
    assert_int_equal(b.budget, 96 * MiB);
    int port = sg_kv_server_port(srv);
    char cli[256];
    snprintf(cli, sizeof cli, "redis-cli -p %d -a s3cret --no-auth-warning", port);

    fill(loop, cli);
    int status;
    sg_kv_server_memory(srv, &m);
    assert_int_equal(m.keys, 80);

    /* Two clients connected throughout, each one connection repeating a command. */
    pid_t w1 = repeat(cli, "CONFIG GET maxmemory", "w1.out");
    pid_t w2 = repeat(cli, "EXISTS k79", "w2.out");
    serve(loop, 600);
    sg_kv_server_memory(srv, &m);
    assert_int_equal(m.connected, 2);

    /* A real job that needs more than is free: the budget gives its deficit. */
    char task[600];
    snprintf(task, sizeof task, "%s/suites/demo/vector_scale", root);
    sg_val_task t;
    assert_int_equal(sg_val_task_load(task, &t, &err), 0);
    uint64_t need;
    assert_int_equal(sg_pool_job_memory(&t, SG_POOL_VALIDATE, NULL, NULL, 1, 0, &need, &err), 0);
    sg_val_task_free(&t);
    sg_pool_kv_change ch;
    assert_int_equal(sg_pool_kv_job_start(&b, need, &ch), 1);
    assert_int_equal(ch.from, 96 * MiB);
    assert_int_equal(ch.to, 96 * MiB - need);
    assert_int_equal(ch.deficit, need);
    assert_int_equal(sg_kv_server_set_maxmemory(srv, ch.to, &err), 0);
    sg_kv_server_memory(srv, &m);
    print_message("# job needs %llu bytes: kvstore budget %llu -> %llu, %llu keys, %llu evicted\n",
                  (unsigned long long)need, (unsigned long long)ch.from,
                  (unsigned long long)m.limit, (unsigned long long)m.keys,
                  (unsigned long long)m.evicted);
    assert_true(m.limit <= ch.to && m.limit > ch.to - MiB); /* whole pages */
    assert_true(m.used <= m.limit);
    assert_true(m.evicted >= 80 - m.limit / MiB);
    assert_int_equal(m.connected, 2);

    run_the_job(loop, task);

    assert_int_equal(sg_pool_kv_job_end(&b, need, &ch), 1);
    assert_int_equal(ch.to, 96 * MiB);
    assert_int_equal(sg_kv_server_set_maxmemory(srv, ch.to, &err), 0);
    serve(loop, 300);
    sg_kv_server_memory(srv, &m);
    assert_int_equal(m.limit, 96 * MiB);
    assert_int_equal(m.connected, 2);

    room_given_back(loop, cli, root, port);

    kill(w1, SIGTERM);
    kill(w2, SIGTERM);
    waitpid(w1, &status, 0);
    waitpid(w2, &status, 0);
    clients_saw_the_budget(need);

    sg_kv_server_memory(srv, &m);
    assert_true(m.hits >= 1 && m.evicted >= 1);
    sg_kv_server_free(srv);
    sg_loop_free(loop);
    free(password);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0) {}
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(budget_follows_a_real_job)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
