/* admit_signals.h — the LLM servers' cache signals for campaign admission: each endpoint's
 * /metrics (llm/llm_metrics.h: KV cache usage, preemptions, waiting requests) read every
 * interval by a thread of its own, so that the event loop never waits on a scrape.
 *
 * Contract: sg_admit_scrape_new starts the thread over the comma-separated endpoints (NULL
 * or empty: none, and every signal stays unknown, -1); sg_admit_scrape_get copies the last
 * complete reading into the signals (kv_usage: the fullest endpoint's; preemptions and
 * waiting: summed; -1 where no endpoint reports one). A server without /metrics or without
 * these names leaves them unknown; one that cannot be reached keeps its last reading. Free
 * stops the thread (it waits at most one scrape's timeout, 2 s). */
#ifndef SG_ADMIT_SIGNALS_H
#define SG_ADMIT_SIGNALS_H

#include "common/err.h"
#include "specgen/admit.h"

#include <stdint.h>

typedef struct sg_admit_scrape sg_admit_scrape;

sg_admit_scrape *sg_admit_scrape_new(const char *urls, int64_t interval_ns, sg_err *err);
void sg_admit_scrape_get(sg_admit_scrape *s, sg_admit_signals *out);
void sg_admit_scrape_free(sg_admit_scrape *s);

#endif
