/* Counting devices in a child process: initialising CUDA (or an OpenCL runtime with its
 * threads) in a process that later forks workers would leave the workers with a runtime
 * they cannot use. The child sends back the count, or the reason there is none. */
#include "device/device.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
    while (got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
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
