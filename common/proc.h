/* proc.h — child processes: spawn with pipes or a socketpair, deadlines, reaping.
 *
 * Contract: sg_proc_spawn (exec a program) and sg_proc_fork (run a function in a
 * child) fill an sg_proc whose parent-side fds are close-on-exec and owned by the
 * sg_proc (sg_proc_close_fds closes them). With SG_PROC_SOCKET the child gets its end
 * of a socketpair as fd 3 (spawn) or as the fn argument (fork). With SG_PROC_NEW_PGRP
 * the child leads a new process group and kills reach its descendants too. Every child
 * must be reaped with sg_proc_wait or sg_proc_stop; nothing reaps behind the caller. */
#ifndef SG_PROC_H
#define SG_PROC_H

#include "common/buf.h"
#include "common/err.h"

#include <signal.h>
#include <sys/types.h>

enum {
    SG_PROC_PIPE_IN = 1,     /* parent writes the child's stdin through in_fd */
    SG_PROC_PIPE_OUT = 2,    /* parent reads the child's stdout through out_fd */
    SG_PROC_PIPE_ERR = 4,    /* parent reads the child's stderr through err_fd */
    SG_PROC_SOCKET = 8,      /* a socketpair: parent's end in sock_fd */
    SG_PROC_NEW_PGRP = 16,   /* the child leads its own process group */
    SG_PROC_NULL_IO = 32,    /* stdin/stdout/stderr not piped go to /dev/null */
    SG_PROC_ERR_TO_OUT = 64, /* the child's stderr goes where its stdout goes */
};

typedef struct sg_proc {
    pid_t pid;
    int flags;
    int in_fd, out_fd, err_fd, sock_fd; /* -1 when not requested */
} sg_proc;

int sg_proc_spawn(sg_proc *p, char *const argv[], int flags, sg_err *err);
/* The same with the environment envp (NULL: this process's). */
int sg_proc_spawn_env(sg_proc *p, char *const argv[], char *const envp[], int flags, sg_err *err);
int sg_proc_fork(sg_proc *p, int (*fn)(int sock_fd, void *arg), void *arg, int flags, sg_err *err);

/* Keep only the environment variables that `keep` names (NULL-terminated; "CUDA_*" names
 * a prefix), never one whose name holds KEY, TOKEN, SECRET, PASSW or CREDENTIAL whatever
 * the list says. Each dropped variable's text is zeroed where it lies, so that neither
 * this process's memory nor /proc/PID/environ (the block the process started with) keeps
 * it. For a forked child about to run untrusted code; the parent's heap is not touched. */
void sg_proc_env_keep(const char *const *keep);
/* What sg_proc_env_keep would keep, as a new NULL-terminated array pointing into this
 * process's environment (which is not changed): an envp for sg_proc_spawn_env, so that
 * what is dropped never reaches the program at all. free() the array alone. */
char **sg_proc_env_kept(const char *const *keep);

/* Wait up to timeout_ms (-1: forever). Returns 0 when reaped (status filled, as
 * waitpid's), 1 when still running at the deadline, -1 on error. */
int sg_proc_wait(sg_proc *p, int timeout_ms, int *status);
/* Send sig to the child (or its group with SG_PROC_NEW_PGRP). */
int sg_proc_kill(sg_proc *p, int sig);
/* SIGTERM, wait grace_ms, then SIGKILL; always reaps. Returns the wait status. */
int sg_proc_stop(sg_proc *p, int grace_ms);
void sg_proc_close_fds(sg_proc *p);

/* "exited with status 3", "killed by signal 9 (Killed)". */
void sg_proc_describe_status(int status, char *out, size_t n);

/* Run argv to completion with stdout+stderr captured into out, killing it (and its
 * group) at timeout_ms. Returns 0 when it ran (status filled), 1 on timeout, -1 when
 * it could not start. */
int sg_proc_run(char *const argv[], int timeout_ms, sg_buf *out, int *status, sg_err *err);

/* The stop signals (SIGINT, SIGTERM) into *set, blocked in the calling thread. Called
 * before any thread starts, every thread inherits the mask, so that the signals reach
 * only the sigwait or signalfd that the caller sets up with *set. */
void sg_proc_block_stop_signals(sigset_t *set);

#endif
