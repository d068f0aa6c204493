/* `specgen task init PROBLEM.py`: a task folder from a KernelBench-format problem, written by
 * torchref/kb_import.py (it must run torch). The importer runs in the environment a worker
 * gets (no LLM key or token: the problem file is the user's code, but an import needs no
 * secrets); its stdout is the report, and its last line the reason when it stops. A caller
 * with an event loop (the campaign) starts it and watches its stdout there; task init and
 * optimize wait for it. */
#include "validator/internal.h"

#include "common/buf.h"
#include "common/opts.h"
#include "common/proc.h"
#include "common/wfile.h"
#include "device/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *last_line(sg_buf *b) {
    if (!b->data || !b->len) return "";
    while (b->len && b->data[b->len - 1] == '\n') b->data[--b->len] = 0;
    char *nl = strrchr(b->data, '\n');
    return nl ? nl + 1 : b->data;
}

int sg_val_task_init_torch_start(const char *problem, const char *out_dir,
                                 const sg_val_init_opts *o, sg_proc *p, sg_err *err) {
    char py[4200], dir[4096], script[4200];
    if (sg_val_torch_paths(py, sizeof py, dir, sizeof dir, err) < 0) return -1;
    snprintf(script, sizeof script, "%s/kb_import.py", dir);
    const char *base = "torch-eager", *prec = "fp32";
    if (o && o->baseline && sg_opt_torch_baseline(o->baseline, &base, err) < 0)
        return sg_err_prefix(err, "--baseline");
    if (o && o->precision && sg_opt_precision(o->precision, &prec, err) < 0)
        return sg_err_prefix(err, "--precision");
    char *argv[] = {py,
                    script,
                    (char *)problem,
                    "--out",
                    (char *)out_dir,
                    "--precision",
                    (char *)prec,
                    "--baseline",
                    (char *)base + 6,
                    o && o->force ? "--force" : NULL,
                    NULL};
    char **envp = sg_dev_sandbox_env_list();
    int rc = sg_proc_spawn_env(p, argv, envp, SG_PROC_PIPE_OUT | SG_PROC_NULL_IO, err);
    free(envp);
    return rc < 0 ? sg_err_prefix(err, "cannot run the importer (%s)", py) : 0;
}

int sg_val_task_init_torch_end(sg_buf *out, int status, sg_buf *report, sg_err *err) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (out->data) sg_buf_append(report, out->data, out->len);
        return 0;
    }
    char why[128];
    sg_proc_describe_status(status, why, sizeof why);
    const char *msg = last_line(out);
    if (msg[0])
        sg_errf(err, "%s", msg);
    else
        sg_errf(err, "the importer (torchref/kb_import.py) %s without a word", why);
    if (out->data && msg > out->data) sg_buf_append(report, out->data, (size_t)(msg - out->data));
    return WIFEXITED(status) && WEXITSTATUS(status) == 2 ? SG_WFILE_REFUSED : -1;
}

int sg_val_task_init_torch(const char *problem, const char *out_dir, const sg_val_init_opts *o,
                           sg_buf *report, sg_err *err) {
    sg_proc p;
    if (sg_val_task_init_torch_start(problem, out_dir, o, &p, err) < 0) return -1;
    sg_buf out = {0};
    char chunk[4096];
    ssize_t n;
    while ((n = read(p.out_fd, chunk, sizeof chunk)) > 0) sg_buf_append(&out, chunk, (size_t)n);
    int st = 0;
    sg_proc_wait(&p, -1, &st);
    sg_proc_close_fds(&p);
    int rc = sg_val_task_init_torch_end(&out, st, report, err);
    sg_buf_free(&out);
    return rc;
}
