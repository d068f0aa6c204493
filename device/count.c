/* Counting devices in a child process: initialising CUDA (or an OpenCL runtime with its
 * threads) in a process that later forks workers would leave the workers with a runtime
 * they cannot use. The child sends back the count, or the reason there is none. */
#include "device/device.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT_TIMEOUT_MS 30000

int sg_dev_count(const sg_dev_opts *o, sg_err *err) {
    int fds[2];
    if (pipe(fds) < 0) return sg_errf(err, "cannot count devices: pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return sg_errf(err, "cannot count devices: fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        sg_err e = {{0}};
        int n = 0, rc = sg_be_ops_for(o->device)->count(o, &n, &e);
        char msg[sizeof e.msg + 32];
        int len = snprintf(msg, sizeof msg, "%d %d %s", rc, n, e.msg);
        if (write(fds[1], msg, (size_t)len) < 0) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    char buf[sizeof err->msg + 32];
    size_t got = 0;
    ssize_t r;
    int timed_out = 0;
    for (;;) { /* a runtime that hangs while it starts must not hang us: 30 s at most */
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pf, 1, COUNT_TIMEOUT_MS);
        if (pr == 0) {
            timed_out = 1;
            break;
        }
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0 || got >= sizeof buf - 1 ||
            (r = read(fds[0], buf + got, sizeof buf - 1 - got)) <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (timed_out)
        return sg_errf(err, "counting %s devices did not finish within %d s (the child was killed)",
                       sg_dev_lang_name(o->device), COUNT_TIMEOUT_MS / 1000);
    int rc = -1, n = 0, off = 0;
    if (sscanf(buf, "%d %d %n", &rc, &n, &off) < 2)
        return sg_errf(err, "cannot count %s devices: the child said nothing",
                       sg_dev_lang_name(o->device));
    if (rc < 0) {
        sg_errf(err, "%s", buf + off);
        return rc;
    }
    return n;
}
