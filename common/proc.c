#include "common/proc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_pair(int fds[2]) {
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0) close(fds[i]);
}

/* Shared by spawn and fork: create the pipes, fork, wire the child's fds. In the child
 * it returns 0 with *child_sock set; in the parent it returns the pid (> 0). */
static pid_t start_child(sg_proc *p, int flags, int *child_sock, sg_err *err) {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, sv[2] = {-1, -1};
    memset(p, 0, sizeof *p);
    p->in_fd = p->out_fd = p->err_fd = p->sock_fd = -1;
    p->flags = flags;
    if (((flags & SG_PROC_PIPE_IN) && pipe2(in, O_CLOEXEC) < 0) ||
        ((flags & SG_PROC_PIPE_OUT) && pipe2(out, O_CLOEXEC) < 0) ||
        ((flags & SG_PROC_PIPE_ERR) && pipe2(er, O_CLOEXEC) < 0) ||
        ((flags & SG_PROC_SOCKET) && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)) {
        sg_errf(err, "cannot create pipes for a child process: %s", strerror(errno));
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        sg_errf(err, "fork failed: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* The parent may block signals it reads through a signalfd; a child starts clean. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (flags & SG_PROC_NEW_PGRP) setpgid(0, 0);
        int devnull = (flags & SG_PROC_NULL_IO) ? open("/dev/null", O_RDWR) : -1;
        if (flags & SG_PROC_PIPE_IN)
            dup2(in[0], 0);
        else if (devnull >= 0)
            dup2(devnull, 0);
        if (flags & SG_PROC_PIPE_OUT)
            dup2(out[1], 1);
        else if (devnull >= 0)
            dup2(devnull, 1);
        if (flags & SG_PROC_PIPE_ERR)
            dup2(er[1], 2);
        else if (devnull >= 0)
            dup2(devnull, 2);
        if (flags & SG_PROC_ERR_TO_OUT) dup2(1, 2);
        *child_sock = -1;
        if (flags & SG_PROC_SOCKET) {
            close(sv[0]);
            *child_sock = sv[1];
        }
        return 0;
    }
    if (flags & SG_PROC_NEW_PGRP) setpgid(pid, pid); /* also in the parent: no race */
    p->pid = pid;
    if (flags & SG_PROC_PIPE_IN) {
        close(in[0]);
        p->in_fd = in[1];
    }
    if (flags & SG_PROC_PIPE_OUT) {
        close(out[1]);
        p->out_fd = out[0];
    }
    if (flags & SG_PROC_PIPE_ERR) {
        close(er[1]);
        p->err_fd = er[0];
    }
    if (flags & SG_PROC_SOCKET) {
        close(sv[1]);
        p->sock_fd = sv[0];
    }
    return pid;
fail:
    close_pair(in);
    close_pair(out);
    close_pair(er);
    close_pair(sv);
    return -1;
}

int sg_proc_spawn(sg_proc *p, char *const argv[], int flags, sg_err *err) {
    return sg_proc_spawn_env(p, argv, NULL, flags, err);
}

int sg_proc_spawn_env(sg_proc *p, char *const argv[], char *const envp[], int flags, sg_err *err) {
    int child_sock;
    /* A pipe that reports exec failure: it closes on a successful exec (CLOEXEC). */
    int ex[2];
    if (pipe2(ex, O_CLOEXEC) < 0) return sg_errf(err, "pipe: %s", strerror(errno));
    pid_t pid = start_child(p, flags, &child_sock, err);
    if (pid < 0) {
        close_pair(ex);
        return -1;
    }
    if (pid == 0) {
        close(ex[0]);
        if (child_sock >= 0) {
            if (child_sock != 3) {
                dup2(child_sock, 3);
                close(child_sock);
            } else {
                fcntl(3, F_SETFD, 0);
            }
        }
        execvpe(argv[0], argv, envp ? envp : environ);
        int e = errno;
        ssize_t n = write(ex[1], &e, sizeof e);
        (void)n;
        _exit(127);
    }
    close(ex[1]);
    int e = 0;
    ssize_t n;
    do n = read(ex[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(ex[0]);
    if (n == (ssize_t)sizeof e) {
        int st;
        waitpid(pid, &st, 0);
        sg_proc_close_fds(p);
        return sg_errf(err, "cannot run %s: %s", argv[0], strerror(e));
    }
    return 0;
}

static int env_kept(const char *var, size_t name_len, const char *const *keep) {
    static const char *const secret[] = {"KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL"};
    char name[256];
    if (name_len >= sizeof name) return 0;
    for (size_t i = 0; i < name_len; i++) name[i] = (char)toupper((unsigned char)var[i]);
    name[name_len] = 0;
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        if (strstr(name, secret[i])) return 0;
    for (int i = 0; keep && keep[i]; i++) {
        size_t n = strlen(keep[i]);
        if (n && keep[i][n - 1] == '*' ? name_len >= n - 1 && !memcmp(var, keep[i], n - 1)
                                       : name_len == n && !memcmp(var, keep[i], n))
            return 1;
    }
    return 0;
}

char **sg_proc_env_kept(const char *const *keep) {
    size_t n = 0;
    for (char **e = environ; e && *e; e++) n++;
    char **out = sg_xcalloc(n + 1, sizeof *out), **o = out;
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (eq && env_kept(*e, (size_t)(eq - *e), keep)) *o++ = *e;
    }
    return out;
}

void sg_proc_env_keep(const char *const *keep) {
    if (!environ) return;
    char **out = environ;
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (eq && env_kept(*e, (size_t)(eq - *e), keep))
            *out++ = *e;
        else
            explicit_bzero(*e, strlen(*e));
    }
    *out = NULL;
}

int sg_proc_fork(sg_proc *p, int (*fn)(int sock_fd, void *arg), void *arg, int flags, sg_err *err) {
    int child_sock;
    pid_t pid = start_child(p, flags, &child_sock, err);
    if (pid < 0) return -1;
    if (pid == 0) _exit(fn(child_sock, arg) & 0xff);
    return 0;
}

int sg_proc_wait(sg_proc *p, int timeout_ms, int *status) {
    if (p->pid <= 0) return -1;
    int st = 0;
    if (timeout_ms < 0) {
        pid_t r;
        do r = waitpid(p->pid, &st, 0);
        while (r < 0 && errno == EINTR);
        if (r < 0) return -1;
        p->pid = 0;
        if (status) *status = st;
        return 0;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    int64_t deadline = mono_ms() + timeout_ms;
    for (;;) {
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            if (pidfd >= 0) close(pidfd);
            p->pid = 0;
            if (status) *status = st;
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            if (pidfd >= 0) close(pidfd);
            return -1;
        }
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            if (pidfd >= 0) close(pidfd);
            return 1;
        }
        if (pidfd >= 0) {
            struct pollfd pf = {.fd = pidfd, .events = POLLIN};
            poll(&pf, 1, (int)left);
        } else {
            struct timespec ts = {0, 1000000}; /* old kernels: poll every millisecond */
            nanosleep(&ts, NULL);
        }
    }
}

int sg_proc_kill(sg_proc *p, int sig) {
    if (p->pid <= 0) return -1;
    if (p->flags & SG_PROC_NEW_PGRP) return kill(-p->pid, sig);
    return kill(p->pid, sig);
}

int sg_proc_stop(sg_proc *p, int grace_ms) {
    int st = 0;
    if (p->pid <= 0) return 0;
    sg_proc_kill(p, SIGTERM);
    if (sg_proc_wait(p, grace_ms, &st) == 0) return st;
    sg_proc_kill(p, SIGKILL);
    sg_proc_wait(p, -1, &st);
    return st;
}

void sg_proc_close_fds(sg_proc *p) {
    int *fds[] = {&p->in_fd, &p->out_fd, &p->err_fd, &p->sock_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        if (*fds[i] >= 0) close(*fds[i]);
        *fds[i] = -1;
    }
}

void sg_proc_describe_status(int status, char *out, size_t n) {
    if (WIFEXITED(status))
        snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, n, "stopped (status 0x%x)", status);
}

int sg_proc_run(char *const argv[], int timeout_ms, sg_buf *out, int *status, sg_err *err) {
    sg_proc p;
    int flags = SG_PROC_PIPE_OUT | SG_PROC_ERR_TO_OUT | SG_PROC_NEW_PGRP | SG_PROC_NULL_IO;
    if (sg_proc_spawn(&p, argv, flags, err) < 0) return -1;
    int64_t deadline = mono_ms() + timeout_ms;
    int timed_out = 0;
    for (;;) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {.fd = p.out_fd, .events = POLLIN};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char chunk[8192];
        ssize_t n = read(p.out_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (out) sg_buf_append(out, chunk, (size_t)n);
    }
    int st;
    if (timed_out)
        st = sg_proc_stop(&p, 200);
    else
        sg_proc_wait(&p, -1, &st);
    sg_proc_close_fds(&p);
    if (status) *status = st;
    return timed_out ? 1 : 0;
}

void sg_proc_block_stop_signals(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}
