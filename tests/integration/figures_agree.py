#!/usr/bin/env python3
"""figures_agree.py GROUP DIR — one group of figures_agree.sh's cross-checks.

DIR holds what one `specgen campaign` left: console.txt (its terminal, status lines
included), r.db, out/TASK/{summary.json,events.jsonl}, and the JSON of `specgen results`
(tasks.json, best.json, show-ID.json) and report.html. Each group checks that the same
figure reads the same everywhere and that ids join; a disagreement exits 1 naming both
places and both values."""
import glob
import html
import json
import os
import re
import sqlite3
import sys

GROUP, D = sys.argv[1], sys.argv[2]
bad = []


def same(what, a, b, tol=0.0):
    ok = a == b if tol == 0 else (a is not None and b is not None and abs(a - b) <= tol)
    if not ok:
        bad.append(f"{what}: {a!r} vs {b!r}")


def fmt_duration(ns):  # common/units.c's sg_fmt_duration
    ns = int(ns)
    a = abs(ns)
    if a >= 60e9:
        return f"{ns / 60e9:.1f} min"
    if a >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if a >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns} ns"


db = sqlite3.connect(os.path.join(D, "r.db"))
db.row_factory = sqlite3.Row
tasks = {r["name"]: dict(r) for r in db.execute("SELECT * FROM task")}
summary = {n: json.load(open(os.path.join(D, "out", n, "summary.json"))) for n in tasks}
events = {n: [json.loads(l) for l in open(os.path.join(D, "out", n, "events.jsonl"))]
          for n in tasks}
console = open(os.path.join(D, "console.txt"), errors="replace").read().replace("\r", "\n")
results_tasks = {t["name"]: t for t in json.load(open(os.path.join(D, "tasks.json")))}
results_best = {b["task"]: b for b in json.load(open(os.path.join(D, "best.json")))}
report = open(os.path.join(D, "report.html")).read()
# the report's task table: name, status, best, target, iterations, reasoning, tokens, time
report_rows = {}
for row in re.findall(r"<tr>(<td>.*?)</tr>", report):
    cells = [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
    if len(cells) == 8:
        report_rows[cells[0]] = cells
# the console's end line of each task
ends = {m[0]: m for m in re.findall(
    r"\] (\S+): \S+ after ([0-9.]+ [a-z]+), best ([0-9.]+)x \(candidate ([0-9]+)\)", console)}

if GROUP == "tokens":
    status = [int(x) for x in re.findall(r"; ([0-9]+) tokens;", console)]
    if not status:
        bad.append("console: no status line with tokens (not run on a terminal?)")
    else:
        drops = [(a, b) for a, b in zip(status, status[1:]) if b < a]
        if drops:
            bad.append(f"console: the tokens went down: {drops}")
        same("console's last status line vs the database's total", status[-1],
             sum(t["tokens"] for t in tasks.values()))
    for n, t in tasks.items():
        gens = db.execute("SELECT sum(reasoning_tokens + content_tokens), sum(reasoning_tokens) "
                          "FROM generation WHERE task = ?", (t["id"],)).fetchone()
        ev = [e for e in events[n] if e["ev"] in ("generation_done", "generation_aborted")]
        same(f"{n}: summary.json tokens_total vs task.tokens", summary[n]["tokens_total"],
             t["tokens"])
        same(f"{n}: results tasks tokens vs task.tokens", results_tasks[n]["tokens"], t["tokens"])
        same(f"{n}: task.tokens vs its generations' rows", t["tokens"], gens[0])
        same(f"{n}: task.tokens vs events.jsonl's generations", t["tokens"],
             sum(e["reasoning_tokens"] + e["content_tokens"] for e in ev))
        same(f"{n}: summary.json reasoning_tokens vs task.reasoning_tokens",
             summary[n]["reasoning_tokens"], t["reasoning_tokens"])
        same(f"{n}: report's tokens vs task.tokens", report_rows[n][6], str(t["tokens"]))

elif GROUP == "candidates":
    for n, t in tasks.items():
        best_n = t["best_n"]
        new_best = [e["candidate"] for e in events[n] if e["ev"] == "new_best"]
        task_end = [e for e in events[n] if e["ev"] == "task_end"][0]
        same(f"{n}: console's (candidate N) vs task.best_n", int(ends[n][3]), best_n)
        same(f"{n}: summary.json best_candidate vs task.best_n", summary[n]["best_candidate"],
             best_n)
        same(f"{n}: results tasks best_n vs task.best_n", results_tasks[n]["best_n"], best_n)
        same(f"{n}: events.jsonl's last new_best vs task.best_n", new_best[-1], best_n)
        same(f"{n}: task_end best_candidate vs task.best_n", task_end["best_candidate"], best_n)
        row = db.execute("SELECT * FROM candidate WHERE id = ?",
                         (t["best_candidate_id"],)).fetchone()
        same(f"{n}: task.best_candidate_id joins its task's candidate best_n",
             (row["task"], row["n"], row["speedup"]), (t["id"], best_n, t["best_speedup"]))
        same(f"{n}: results best candidate_id vs task.best_candidate_id",
             results_best[n]["candidate_id"], t["best_candidate_id"])
        same(f"{n}: results best n vs task.best_n", results_best[n]["n"], best_n)
        same(f"{n}: report's best names candidate best_n",
             report_rows[n][2].endswith(f"(candidate {best_n})"), True)
    for j in db.execute("SELECT j.*, c.task AS ctask, c.n AS cn, c.iteration AS cit FROM job j "
                        "LEFT JOIN candidate c ON c.id = j.candidate_id"):
        if j["candidate_n"] is None:  # the baseline
            same(f"job {j['id']}: a baseline job has no candidate_id", j["candidate_id"], None)
            continue
        same(f"job {j['id']}: candidate_id joins (task, candidate_n, iteration)",
             (j["ctask"], j["cn"], j["cit"]), (j["task"], j["candidate_n"], j["iteration"]))
    for n in tasks:
        for e in events[n]:
            if e["ev"] in ("job_start", "job_end") and e["iteration"] >= 1 << 32:
                bad.append(f"{n}: events.jsonl {e['ev']} iteration {e['iteration']}")
            if e["ev"] == "job_start" and e["name"] != "baseline":
                same(f"{n}: job_start {e['name']} is of a candidate of its iteration",
                     db.execute("SELECT iteration FROM candidate WHERE task = ? AND n = ?",
                                (tasks[n]["id"], int(e["name"].split()[1]))).fetchone()[0],
                     e["iteration"])

elif GROUP == "times":
    for n, t in tasks.items():
        el = fmt_duration(t["elapsed_s"] * 1e9)
        same(f"{n}: summary.json elapsed_s vs task.elapsed_s", summary[n]["elapsed_s"],
             t["elapsed_s"], 1e-9)
        same(f"{n}: console's 'after' vs task.elapsed_s", ends[n][1], el)
        same(f"{n}: report's time vs task.elapsed_s", report_rows[n][7], el)
        started = re.findall(r"\[ *([0-9.]+)s\] " + re.escape(n) + ": started", console)
        same(f"{n}: console's start vs task.start_ms (s)", float(started[0]),
             t["start_ms"] / 1000, 0.1)
        rows = db.execute("SELECT t_ms, task_t_ms FROM event WHERE task = ? ORDER BY id",
                          (t["id"],)).fetchall()
        same(f"{n}: events.jsonl t_ms vs event.task_t_ms",
             [round(e["t_ms"], 6) for e in events[n]], [round(r[1], 6) for r in rows])
        for r in rows:
            same(f"{n}: event.t_ms = task.start_ms + task_t_ms", r[0], t["start_ms"] + r[1], 1e-6)
        end_ms = t["start_ms"] + t["elapsed_s"] * 1000
        for j in db.execute("SELECT * FROM job WHERE task = ?", (t["id"],)):
            if not t["start_ms"] - 1 <= j["started_ms"] <= end_ms + 1:
                bad.append(f"{n}: job {j['id']} started at {j['started_ms']} ms, outside "
                           f"the task's [{t['start_ms']}, {end_ms}] (campaign ms)")
    last = max(tasks.values(), key=lambda t: t["start_ms"])
    first_end = min(t["start_ms"] + t["elapsed_s"] * 1000 for t in tasks.values())
    if last["start_ms"] < first_end - 50:  # concurrency 2: the third waits for a free place
        bad.append(f"{last['name']} starts at {last['start_ms']} ms, before any task ended "
                   f"({first_end} ms): not the campaign's clock")
    for (d,) in db.execute("SELECT detail FROM pool_split"):
        d = json.loads(d)
        for k in ("wait_before_s", "wait_after_s"):
            if d[k] is not None and not 0 <= d[k] < 1e6:
                bad.append(f"pool_split {k} = {d[k]}")

elif GROUP == "speedups":
    for n, t in tasks.items():
        same(f"{n}: console's best vs task.best_speedup", ends[n][2], f"{t['best_speedup']:.2f}")
        same(f"{n}: summary.json best_speedup vs task.best_speedup", summary[n]["best_speedup"],
             t["best_speedup"], 1e-12)
        same(f"{n}: results tasks best_speedup", results_tasks[n]["best_speedup"],
             t["best_speedup"], 1e-12)
        same(f"{n}: results best speedup", results_best[n]["speedup"], t["best_speedup"], 1e-12)
        same(f"{n}: report's best", report_rows[n][2].split()[0], f"{t['best_speedup']:.2f}x")
    timed = 0
    for c in db.execute("SELECT * FROM candidate WHERE feedback LIKE '%Time %'"):
        m = re.search(r"Time (.+?) vs baseline (.+?) \(.*speedup ([0-9.]+)x", c["feedback"])
        timed += 1
        same(f"candidate {c['id']}: feedback's time vs time_ns", m[1], fmt_duration(c["time_ns"]))
        same(f"candidate {c['id']}: feedback's baseline vs baseline_ns", m[2],
             fmt_duration(c["baseline_ns"]))
        same(f"candidate {c['id']}: feedback's speedup", m[3], f"{c['speedup']:.2f}")
        same(f"candidate {c['id']}: baseline_ns / time_ns = speedup",
             c["baseline_ns"] / c["time_ns"], c["speedup"], 1e-9 * c["speedup"])
    for f in glob.glob(os.path.join(D, "show-*.json")):
        s = json.load(open(f))
        c = db.execute("SELECT time_ns, baseline_ns FROM candidate WHERE id = ?",
                       (s["id"],)).fetchone()
        same(f"results show {s['id']}: time_ns, baseline_ns", (s["time_ns"], s["baseline_ns"]),
             (c[0], c[1]))
    if timed == 0:
        bad.append("no timed candidate to check")

else:
    sys.exit(f"unknown group {GROUP}")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
