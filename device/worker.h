/* worker.h — the worker process's entry point (internal to device/: procpool.c forks it,
 * or execs the program that sg_dev_worker_exec_set named, with the options as JSON). */
#ifndef SG_DEV_WORKER_H
#define SG_DEV_WORKER_H

#include "device/device.h"

/* Serve jobs from sock until it closes; arg is the pool's const sg_dev_opts*. */
int sg_dev_worker_main(int sock, void *arg);

/* The program sg_dev_worker_exec_set named (NULL: fork), and the options it is given
 * (malloc'd JSON; NULL when a field cannot be written, e.g. a folder name not UTF-8). */
const char *sg_dev_worker_exec_path(void);
char *sg_dev_opts_to_json(const sg_dev_opts *o);
/* Back from that JSON, the kinds looked up by name in `all` (unknown names are left out;
 * an exec'd worker keeps what this allocates until it exits). */
int sg_dev_opts_from_json(const char *text, const sg_dev_kind *const *all, int nall, sg_dev_opts *o,
                          sg_err *err);
/* What sg_dev_opts_from_json allocated (for a caller that does not exit after it). */
void sg_dev_opts_from_json_free(sg_dev_opts *o);

#endif
