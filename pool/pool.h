/* pool.h — validation and profiling pools: slots on devices, the scheduler that feeds
 * them, and `specgen pool`, the node agent that serves its slots to other machines.
 *
 * Contract (so far): sg_cmd_pool is the `specgen pool` command; it is not built yet and
 * says so (exit 2). The slot seam, the loop-driven scheduler and the local, remote and
 * simulated slots come with the pools issue; this folder is their home. */
#ifndef SG_POOL_H
#define SG_POOL_H

int sg_cmd_pool(int argc, char **argv);

#endif
