/* The agent's /metrics (Prometheus text format 0.0.4) and /v1/status. */
#include "pool/agent.h"

#include "common/prom.h"

#include <inttypes.h>
#include <stdio.h>

void sg_agent_metrics(sg_agent *a, sg_buf *b) {
    const sg_agent_slot *s;
    const sg_agent_stats *st;
    int queued, running, cached;
    int n = sg_agent_view(a, &s, &st, &queued, &running, &cached);
    int64_t now = sg_agent_now(a);
    sg_prom_build_info(b, "pool");
    sg_prom_head(b, "specgen_agent_slot_role", "gauge", "1 for the slot's current role");
    for (int i = 0; i < n; i++)
        for (int r = 0; r < SG_POOL_NROLES; r++) {
            sg_buf_append_str(b, "specgen_agent_slot_role{slot=\"");
            sg_prom_label(b, s[i].desc.name);
            sg_buf_printf(b, "\",role=\"%s\"} %d\n", sg_pool_role_name((sg_pool_role)r),
                          s[i].role == (sg_pool_role)r);
        }
    sg_prom_head(b, "specgen_agent_slot_busy_seconds_total", "counter",
                 "time the slot ran jobs (the running one up to now)");
    for (int i = 0; i < n; i++) {
        int64_t busy = s[i].busy_ns;
        if (s[i].job) busy += now - sg_agent_job_started(s[i].job);
        sg_buf_append_str(b, "specgen_agent_slot_busy_seconds_total{slot=\"");
        sg_prom_label(b, s[i].desc.name);
        sg_buf_printf(b, "\"} %.6f\n", (double)busy / SG_SEC);
    }
    sg_prom_head(b, "specgen_agent_slot_jobs_total", "counter",
                 "jobs ended on the slot, by verdict");
    for (int i = 0; i < n; i++) {
        const char *v;
        json_t *c;
        json_object_foreach(s[i].verdicts, v, c) {
            sg_buf_append_str(b, "specgen_agent_slot_jobs_total{slot=\"");
            sg_prom_label(b, s[i].desc.name);
            sg_buf_append_str(b, "\",verdict=\"");
            sg_prom_label(b, v);
            sg_buf_printf(b, "\"} %" JSON_INTEGER_FORMAT "\n", json_integer_value(c));
        }
    }
    sg_prom_head(b, "specgen_agent_queue_wait_seconds", "histogram",
                 "time from a job's arrival to its start, by the role of the slot it started on");
    for (int r = 0; r < SG_POOL_NROLES; r++) {
        const char *rn = sg_pool_role_name((sg_pool_role)r);
        for (int k = 0; k < SG_AGENT_NBUCKETS; k++)
            sg_buf_printf(
                b, "specgen_agent_queue_wait_seconds_bucket{role=\"%s\",le=\"%g\"} %" PRIu64 "\n",
                rn, sg_agent_buckets[k], st->wait_bucket[r][k]);
        sg_buf_printf(b,
                      "specgen_agent_queue_wait_seconds_bucket{role=\"%s\",le=\"+Inf\"} %" PRIu64
                      "\nspecgen_agent_queue_wait_seconds_sum{role=\"%s\"} %.6f\n"
                      "specgen_agent_queue_wait_seconds_count{role=\"%s\"} %" PRIu64 "\n",
                      rn, st->wait_count[r], rn, st->wait_sum[r], rn, st->wait_count[r]);
    }
    sg_prom_head(b, "specgen_agent_jobs", "gauge", "jobs now, by state");
    sg_buf_printf(
        b, "specgen_agent_jobs{state=\"queued\"} %d\nspecgen_agent_jobs{state=\"running\"} %d\n",
        queued, running);
    sg_prom_head(b, "specgen_agent_jobs_submitted_total", "counter", "jobs accepted");
    sg_buf_printf(b, "specgen_agent_jobs_submitted_total %" PRIu64 "\n", st->submitted);
    sg_prom_head(b, "specgen_agent_jobs_refused_total", "counter",
                 "jobs refused because too many were in flight (429)");
    sg_buf_printf(b, "specgen_agent_jobs_refused_total %" PRIu64 "\n", st->rejected_full);
    sg_prom_head(b, "specgen_agent_tasks_received_total", "counter",
                 "task bundles received and stored");
    sg_buf_printf(b, "specgen_agent_tasks_received_total %" PRIu64 "\n", st->tasks_received);
    const sg_agent_hooks *h = sg_agent_hooks_of(a);
    if (h->metrics) h->metrics(h->arg, b); /* the kvstore's, when the agent embeds one */
}

json_t *sg_agent_status(sg_agent *a) {
    const sg_agent_slot *s;
    const sg_agent_stats *st;
    int queued, running, cached;
    int n = sg_agent_view(a, &s, &st, &queued, &running, &cached);
    json_t *slots = json_array();
    for (int i = 0; i < n; i++) {
        json_t *o = json_pack("{s:i,s:s,s:i,s:s,s:b}", "slot", i, "name", s[i].desc.name, "device",
                              s[i].desc.device, "role", sg_pool_role_name(s[i].role), "busy",
                              s[i].job != NULL);
        if (s[i].job) json_object_set_new(o, "job", json_string(sg_agent_job_id(s[i].job)));
        json_array_append_new(slots, o);
    }
    char inst[17];
    snprintf(inst, sizeof inst, "%016" PRIx64, sg_agent_instance(a));
    return json_pack("{s:s,s:s,s:I,s:o,s:i,s:i,s:i}", "instance", inst, "lang",
                     sg_dev_lang_name(sg_agent_lang(a)), "event_seq",
                     (json_int_t)sg_agent_event_seq(a), "slots", slots, "queued", queued, "running",
                     running, "max_jobs", sg_agent_max_jobs(a));
}
