/* worker.h — the worker process's entry point (internal to device/: procpool.c forks it). */
#ifndef SG_DEV_WORKER_H
#define SG_DEV_WORKER_H

/* Serve jobs from sock until it closes; arg is the pool's const sg_dev_opts*. */
int sg_dev_worker_main(int sock, void *arg);

#endif
