/* admit_signals.c — the endpoints' /metrics on a thread, for campaign admission. */
#include "orchestrator/admit_signals.h"

#include "common/buf.h"
#include "llm/llm_metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_URLS 64

struct sg_admit_scrape {
    char *urls[MAX_URLS];
    int n;
    int64_t interval_ns;
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    sg_llm_metrics last[MAX_URLS]; /* under mu */
    int have[MAX_URLS];
};

static void scrape_all(sg_admit_scrape *s) {
    for (int i = 0; i < s->n; i++) {
        sg_llm_metrics m;
        sg_err err;
        if (sg_llm_metrics_fetch(s->urls[i], 2000, &m, &err) < 0) continue; /* keep the last */
        pthread_mutex_lock(&s->mu);
        s->last[i] = m;
        s->have[i] = 1;
        pthread_mutex_unlock(&s->mu);
    }
}

static void *run(void *arg) {
    sg_admit_scrape *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        pthread_mutex_unlock(&s->mu);
        scrape_all(s);
        pthread_mutex_lock(&s->mu);
        struct timespec at;
        clock_gettime(CLOCK_REALTIME, &at); /* the scraper's pace only: no policy reads it */
        int64_t ns = at.tv_nsec + s->interval_ns;
        at.tv_sec += ns / 1000000000LL;
        at.tv_nsec = ns % 1000000000LL;
        while (!s->stop && pthread_cond_timedwait(&s->cv, &s->mu, &at) == 0) {}
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

sg_admit_scrape *sg_admit_scrape_new(const char *urls, int64_t interval_ns, sg_err *err) {
    sg_admit_scrape *s = sg_xcalloc(1, sizeof *s);
    s->interval_ns = interval_ns > 0 ? interval_ns : 10LL * 1000000000LL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    for (const char *p = urls; p && *p && s->n < MAX_URLS;) {
        size_t k = strcspn(p, ",");
        if (k) {
            s->urls[s->n] = sg_xcalloc(k + 1, 1);
            memcpy(s->urls[s->n++], p, k);
        }
        p += k + (p[k] == ',');
    }
    if (s->n && pthread_create(&s->th, NULL, run, s) != 0) {
        sg_admit_scrape_free(s);
        sg_errf(err, "admission: cannot start the thread that reads the endpoints' /metrics");
        return NULL;
    }
    s->started = s->n > 0;
    return s;
}

void sg_admit_scrape_get(sg_admit_scrape *s, sg_admit_signals *out) {
    out->kv_usage = out->preemptions = out->waiting = -1;
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n; i++) {
        const sg_llm_metrics *m = &s->last[i];
        if (!s->have[i]) continue;
        if (m->kv_usage > out->kv_usage) out->kv_usage = m->kv_usage;
        if (m->preemptions >= 0)
            out->preemptions = (out->preemptions < 0 ? 0 : out->preemptions) + m->preemptions;
        if (m->waiting >= 0) out->waiting = (out->waiting < 0 ? 0 : out->waiting) + m->waiting;
    }
    pthread_mutex_unlock(&s->mu);
}

void sg_admit_scrape_free(sg_admit_scrape *s) {
    if (!s) return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
    }
    for (int i = 0; i < s->n; i++) free(s->urls[i]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
