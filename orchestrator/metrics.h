/* metrics.h — the Prometheus /metrics of `specgen optimize` and `specgen campaign`
 * (--metrics-listen): tasks, iterations, candidates by verdict, forks, tokens, the feedback
 * latency and the LLM's first-token latency (histograms), the pools' use.
 *
 * Contract: the figures come from the events the tasks record (sg_metrics_event, called
 * with every event a task records, in order) and, at each scrape, from the pool's own
 * stats (sg_metrics_set_pool); they are counters from the run's start, so Prometheus'
 * rate() works on them. The server is the pool agent's HTTP layer (pool/agent.h) on the
 * run's loop: the same bearer-token rule (a token is required to listen beyond loopback;
 * with one, every request needs it), request deadline and per-address connection limit.
 * Only GET /metrics is served; the text passes `promtool check metrics`
 * (tests/integration/metrics.sh). Everything runs on the loop thread. */
#ifndef SG_METRICS_H
#define SG_METRICS_H

#include "common/buf.h"
#include "common/err.h"
#include "common/loop.h"
#include "pool/pool.h"

#include <jansson.h>

typedef struct sg_metrics sg_metrics;

/* command: "optimize" or "campaign" (build_info's component label). */
sg_metrics *sg_metrics_new(const char *command);
void sg_metrics_free(sg_metrics *m); /* stops its server first; NULL is fine */
/* The run's tasks (a campaign's suite after its filter): those not started are queued. */
void sg_metrics_set_tasks(sg_metrics *m, int tasks);
/* The pool whose use /metrics shows (borrowed; NULL: none). */
void sg_metrics_set_pool(sg_metrics *m, const sg_pool *pool);
/* One event (borrowed) of the run's task number task (0-based). NULL m: nothing. */
void sg_metrics_event(sg_metrics *m, int task, const json_t *ev);
/* The whole text, appended to out. */
void sg_metrics_write(const sg_metrics *m, sg_buf *out);
/* Serve GET /metrics at addr (HOST:PORT; port 0: any free one) on loop. token: the bearer
 * token (NULL: none; then addr must be loopback). token_opt names its option in messages. */
int sg_metrics_listen(sg_metrics *m, sg_loop *loop, const char *addr, const char *token,
                      const char *token_opt, sg_err *err);
int sg_metrics_port(const sg_metrics *m); /* the port it listens on (0: not listening) */

#endif
