/* A KernelBench problem's import, watched on the campaign's loop (campaign_import.h). */
#include "orchestrator/campaign_import.h"

#include "common/assert.h"
#include "common/proc.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMPORT_OUT_MAX (4u << 20) /* the importer's report: a few kB; more is dropped */

struct sg_camp_import {
    sg_loop *loop;
    sg_proc p;
    int watching; /* p.out_fd is watched */
    int ended;    /* read to the end and reaped */
    int status;   /* its wait status, once ended */
    uint64_t timer;
    sg_buf out;
    void (*done)(void *arg);
    void *arg;
};

/* The output ended: reap the child (it is exiting; a few tries on a timer if not yet). */
static void reap(sg_loop *loop, void *arg) {
    sg_camp_import *im = arg;
    im->timer = 0;
    int st = 0, r = sg_proc_wait(&im->p, 0, &st);
    if (r == 1) {
        im->timer = sg_loop_timer(loop, 20 * SG_MS, reap, im);
        return;
    }
    im->status = r == 0 ? st : 127 << 8; /* waitpid failed: as a child that could not run */
    sg_proc_close_fds(&im->p);
    im->ended = 1;
    im->done(im->arg);
}

static void on_output(sg_loop *loop, int fd, unsigned events, void *arg) {
    (void)events;
    sg_camp_import *im = arg;
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n > 0) {
        if (im->out.len + (size_t)n <= IMPORT_OUT_MAX) sg_buf_append(&im->out, chunk, (size_t)n);
        return;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    sg_loop_fd_unwatch(loop, fd);
    im->watching = 0;
    reap(loop, im);
}

sg_camp_import *sg_camp_import_start(sg_loop *loop, const char *problem, const char *task_dir,
                                     const sg_val_init_opts *opts, void (*done)(void *arg),
                                     void *arg, sg_err *err) {
    sg_camp_import *im = sg_xcalloc(1, sizeof *im);
    im->loop = loop;
    im->done = done;
    im->arg = arg;
    if (sg_val_task_init_torch_start(problem, task_dir, opts, &im->p, err) < 0) {
        free(im);
        return NULL;
    }
    if (sg_loop_fd_watch(loop, im->p.out_fd, SG_EV_READ, on_output, im, err) < 0) {
        sg_camp_import_free(im);
        return NULL;
    }
    im->watching = 1;
    return im;
}

int sg_camp_import_ended(const sg_camp_import *im) { return im && im->ended; }

int sg_camp_import_result(sg_camp_import *im, sg_buf *report, sg_err *err) {
    SG_ASSERT(im->ended);
    return sg_val_task_init_torch_end(&im->out, im->status, report, err);
}

void sg_camp_import_free(sg_camp_import *im) {
    if (!im) return;
    if (im->watching) sg_loop_fd_unwatch(im->loop, im->p.out_fd);
    if (im->timer) sg_loop_timer_cancel(im->loop, im->timer);
    if (!im->ended && im->p.pid > 0) sg_proc_stop(&im->p, 500);
    sg_proc_close_fds(&im->p);
    sg_buf_free(&im->out);
    free(im);
}
