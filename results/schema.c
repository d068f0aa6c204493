/* The results schema and its migrations: migration i takes a database from user_version i
 * to i + 1. A new column or table is a new migration appended here, never an edit of an
 * old one (databases in the field have run it). docs/results.md describes the tables. */
#include "results/internal.h"

static const char *const migrations[] = {
    /* 1: the first schema */
    "CREATE TABLE campaign ("
    "  id INTEGER PRIMARY KEY,"
    "  kind TEXT NOT NULL,"    /* optimize | campaign */
    "  suite TEXT NOT NULL,"   /* the suite folder, or the task for optimize */
    "  config TEXT NOT NULL,"  /* the options, as JSON */
    "  started TEXT NOT NULL," /* UTC, ISO 8601 */
    "  ended TEXT,"
    "  status TEXT NOT NULL" /* running | done | budget | stopped | error */
    ");"
    "CREATE TABLE task ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  name TEXT NOT NULL,"
    "  dir TEXT NOT NULL,"
    "  lang TEXT,"
    "  policy TEXT,"
    "  target REAL,"
    "  started TEXT NOT NULL,"
    "  ended TEXT,"
    "  status TEXT NOT NULL," /* running | target | budget_* | error | cancelled | skipped */
    "  best_speedup REAL,"
    "  best_candidate INTEGER," /* candidate.n; 0: the baseline */
    "  baseline_ns REAL,"
    "  iterations INTEGER,"
    "  reasoning_tokens INTEGER,"
    "  tokens INTEGER,"
    "  elapsed_s REAL,"
    "  error TEXT,"
    "  UNIQUE (campaign, name)"
    ");"
    "CREATE TABLE iteration ("
    "  task INTEGER NOT NULL REFERENCES task(id),"
    "  n INTEGER NOT NULL,"
    "  started_ms REAL,"
    "  early_stop_ms REAL,"        /* when a candidate cut it, else NULL */
    "  early_stop_tokens INTEGER," /* reasoning tokens when cut */
    "  PRIMARY KEY (task, n)"
    ");"
    "CREATE TABLE generation ("
    "  id INTEGER PRIMARY KEY,"
    "  task INTEGER NOT NULL REFERENCES task(id),"
    "  iteration INTEGER NOT NULL,"
    "  kind TEXT NOT NULL," /* reasoning | fork */
    "  n INTEGER NOT NULL," /* the task's fork number (reasoning: its iteration) */
    "  rule TEXT, cue TEXT, at_tokens INTEGER, at_bytes INTEGER,"
    "  started_ms REAL, ended_ms REAL,"
    "  finish TEXT," /* stop | length | aborted | error ... */
    "  reasoning_tokens INTEGER, content_tokens INTEGER,"
    "  prompt_tokens INTEGER, cached_tokens INTEGER,"
    "  estimated INTEGER, error TEXT,"
    "  UNIQUE (task, kind, n, iteration)"
    ");"
    "CREATE TABLE candidate ("
    "  id INTEGER PRIMARY KEY,"
    "  task INTEGER NOT NULL REFERENCES task(id),"
    "  n INTEGER NOT NULL," /* the task's candidate number */
    "  iteration INTEGER NOT NULL,"
    "  origin TEXT NOT NULL," /* fork | final */
    "  fork INTEGER,"         /* generation.n of its fork: the lineage */
    "  rule TEXT, at_tokens INTEGER,"
    "  status TEXT NOT NULL," /* submitted | duplicate | no_kernel */
    "  hash TEXT, source TEXT, reason TEXT,"
    "  verdict TEXT, correct INTEGER, speedup REAL, noise REAL, compile_ms REAL,"
    "  message TEXT, feedback TEXT,"
    "  created_ms REAL, done_ms REAL,"
    "  UNIQUE (task, n)"
    ");"
    "CREATE TABLE job ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  task INTEGER REFERENCES task(id),"
    "  pool_job INTEGER NOT NULL," /* the scheduler's id */
    "  candidate INTEGER,"         /* candidate.n (NULL: the baseline) */
    "  kind TEXT NOT NULL, slot INTEGER, slot_name TEXT, role TEXT, lent INTEGER,"
    "  iteration INTEGER, origin TEXT,"
    "  started_ms REAL, ended_ms REAL, wait_s REAL, service_s REAL,"
    "  end TEXT, verdict TEXT,"
    "  UNIQUE (campaign, task, pool_job)" /* a resumed campaign's scheduler counts anew */
    ");"
    "CREATE TABLE pool_split ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  t_ms REAL, validate INTEGER, profile INTEGER, reason TEXT, detail TEXT"
    ");"
    "CREATE TABLE event (" /* every event as it came: the complete record */
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  task INTEGER REFERENCES task(id),"
    "  t_ms REAL, ev TEXT NOT NULL, iteration INTEGER, data TEXT NOT NULL"
    ");"
    "CREATE INDEX task_best ON task(campaign, best_speedup);"
    "CREATE INDEX candidate_speed ON candidate(task, correct, speedup);"
    "CREATE INDEX job_task ON job(task);"
    "CREATE INDEX event_task ON event(task, iteration);",
    /* 2: prefix reuse per task: the forks' prompt tokens and those the LLM server served
     * from its prefix cache (NULL: the server did not report cached tokens) */
    "ALTER TABLE task ADD COLUMN fork_prompt_tokens INTEGER;"
    "ALTER TABLE task ADD COLUMN fork_cached_tokens INTEGER;",
    /* 3: one time base and one id space. Every _ms column counts from the campaign's start
     * (task.start_ms: when the task started on that clock; event.task_t_ms keeps the task's
     * own clock, as in events.jsonl); references are primary keys (job.candidate_id,
     * task.best_candidate_id), the task's numbers are named so (job.candidate_n,
     * task.best_n), NULL for the baseline; a candidate keeps the medians its speedup came
     * from (time_ns, baseline_ns: the ones its feedback quotes). Older rows: the task's
     * offset from the ISO start times (to the second), NULL medians. */
    "ALTER TABLE task ADD COLUMN start_ms REAL;"
    "ALTER TABLE task RENAME COLUMN best_candidate TO best_n;"
    "ALTER TABLE task ADD COLUMN best_candidate_id INTEGER REFERENCES candidate(id);"
    "ALTER TABLE job RENAME COLUMN candidate TO candidate_n;"
    "ALTER TABLE job ADD COLUMN candidate_id INTEGER REFERENCES candidate(id);"
    "ALTER TABLE candidate ADD COLUMN time_ns REAL;"
    "ALTER TABLE candidate ADD COLUMN baseline_ns REAL;"
    "ALTER TABLE event ADD COLUMN task_t_ms REAL;"
    "UPDATE task SET start_ms = max(0, round((julianday(started) - julianday((SELECT started "
    "  FROM campaign c WHERE c.id = task.campaign))) * 86400000.0));"
    "UPDATE task SET best_n = NULL WHERE best_n = 0;"
    "UPDATE task SET best_candidate_id = (SELECT c.id FROM candidate c WHERE c.task = task.id "
    "  AND c.n = task.best_n);"
    "UPDATE job SET candidate_n = NULL WHERE candidate_n = 0;"
    "UPDATE job SET candidate_id = (SELECT c.id FROM candidate c WHERE c.task = job.task AND "
    "  c.n = job.candidate_n);"
    "UPDATE event SET task_t_ms = t_ms, t_ms = t_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = event.task) WHERE task IS NOT NULL;"
    "UPDATE iteration SET started_ms = started_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = iteration.task), early_stop_ms = early_stop_ms + (SELECT start_ms FROM task "
    "  WHERE task.id = iteration.task);"
    "UPDATE generation SET started_ms = started_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = generation.task), ended_ms = ended_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = generation.task);"
    "UPDATE candidate SET created_ms = created_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = candidate.task), done_ms = done_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = candidate.task);"
    "UPDATE job SET started_ms = started_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = job.task), ended_ms = ended_ms + (SELECT start_ms FROM task WHERE "
    "  task.id = job.task) WHERE task IS NOT NULL;"
    "CREATE INDEX job_candidate ON job(candidate_id);",
    /* 4: calibration (`specgen calibrate`, `specgen sim --calibration-run`; docs/calibration.md):
     * each task's reasoning trace run to its end (calib_trace), every trigger point in it
     * (calib_point), a kernel forked at each and at fixed intervals and the final answer, each
     * validated and timed (calib_fork), the server's decode and prefill rates (calib_rate),
     * and the pool's service times per job kind (calib_service). The run is a campaign of
     * kind calibrate (or sim) and each traced task a task row, so it resumes as one. */
    "CREATE TABLE calib_trace ("
    "  task INTEGER PRIMARY KEY REFERENCES task(id),"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  reasoning_tokens INTEGER, answer_tokens INTEGER, prompt_tokens INTEGER,"
    "  first_token_ms REAL, reasoning_ms REAL, code_blocks INTEGER, cues INTEGER,"
    "  finish TEXT, estimated INTEGER"
    ");"
    "CREATE TABLE calib_point ("
    "  id INTEGER PRIMARY KEY,"
    "  task INTEGER NOT NULL REFERENCES task(id),"
    "  kind TEXT NOT NULL," /* code_block | transition */
    "  at_tokens INTEGER, at_bytes INTEGER, cue TEXT"
    ");"
    "CREATE TABLE calib_fork ("
    "  id INTEGER PRIMARY KEY,"
    "  task INTEGER NOT NULL REFERENCES task(id),"
    "  kind TEXT NOT NULL," /* code_block | transition | interval | final */
    "  at_tokens INTEGER, at_bytes INTEGER, fraction REAL,"
    "  status TEXT NOT NULL," /* kernel | no_kernel | error */
    "  verdict TEXT, compiled INTEGER, correct INTEGER, speedup REAL,"
    "  fork_tokens INTEGER, prompt_tokens INTEGER, cached_tokens INTEGER,"
    "  first_token_ms REAL, gen_ms REAL, validate_ms REAL, profile_ms REAL, message TEXT"
    ");"
    "CREATE TABLE calib_rate ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  kind TEXT NOT NULL," /* decode | prefill */
    "  streams INTEGER, prompt_tokens INTEGER, cached_tokens INTEGER, tokens INTEGER,"
    "  seconds REAL, tok_s REAL, tok_s_sd REAL, first_token_ms REAL"
    ");"
    "CREATE TABLE calib_service ("
    "  id INTEGER PRIMARY KEY,"
    "  campaign INTEGER NOT NULL REFERENCES campaign(id),"
    "  kind TEXT NOT NULL," /* validate | profile */
    "  service_s REAL NOT NULL"
    ");"
    "CREATE INDEX calib_fork_task ON calib_fork(task);"
    "CREATE INDEX calib_point_task ON calib_point(task);",
    /* 5: problems brought from other suites (KernelBench, issue 26). A task says where it came
     * from (origin_format "kernelbench", origin_file, origin_sha256: the problem file and its
     * content hash; NULL for a kernel task) — also a problem that did not import, which is a
     * skipped task row, so fast_p's denominator is every problem —, what its speedups are
     * over (baseline_kind: torch-eager | torch-compile; NULL: the task's baseline kernel) and
     * its precision (fp32 | fp16 | bf16). A candidate keeps KernelBench's own check beside
     * ours: kb_correct (0 or 1) and kb_check (its JSON: trials, tolerances, max error);
     * NULL where it was not computed. Older rows: all NULL. */
    "ALTER TABLE task ADD COLUMN origin_format TEXT;"
    "ALTER TABLE task ADD COLUMN origin_file TEXT;"
    "ALTER TABLE task ADD COLUMN origin_sha256 TEXT;"
    "ALTER TABLE task ADD COLUMN baseline_kind TEXT;"
    "ALTER TABLE task ADD COLUMN precision TEXT;"
    "ALTER TABLE candidate ADD COLUMN kb_correct INTEGER;"
    "ALTER TABLE candidate ADD COLUMN kb_check TEXT;",
};

int sg_results_schema_version(void) { return (int)(sizeof migrations / sizeof *migrations); }

const char *sg_results_migration(int from) {
    return from >= 0 && from < sg_results_schema_version() ? migrations[from] : NULL;
}
