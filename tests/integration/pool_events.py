#!/usr/bin/env python3
"""Checks the pool's events in an events.jsonl (specgen optimize): every job that started
ended, no profile job shared its device with another job while it ran, and no slot ran two
jobs at once. Prints what it saw; exit 1 on a violation.

usage: pool_events.py EVENTS.jsonl [--min-jobs N]"""
import json
import sys


def main():
    path = sys.argv[1]
    min_jobs = int(sys.argv[sys.argv.index("--min-jobs") + 1]) if "--min-jobs" in sys.argv else 1
    starts, spans = {}, []
    splits = 0
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            name = ev.get("ev")
            if name == "pool_split":
                splits += 1
            elif name == "job_start":
                starts[ev["job"]] = ev
            elif name == "job_end":
                s = starts.pop(ev["job"], None)
                if s is None:
                    print("job %s ended without a start" % ev["job"])
                    return 1
                # slot names read "opencl:0/1": the device is what comes before the slash
                spans.append((s["t_ms"], ev["t_ms"], s["slot_name"].rsplit("/", 1)[0],
                              s["slot"], ev["kind"], ev["end"]))
    if starts:
        print("jobs started and never ended: %s" % sorted(starts))
        return 1
    bad = 0
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            overlap = a[0] < b[1] and b[0] < a[1]
            if not overlap:
                continue
            if a[3] == b[3]:
                print("slot %d ran two jobs at once: %s %s" % (a[3], a, b))
                bad += 1
            elif a[2] == b[2] and "profile" in (a[4], b[4]):
                print("a profile job shared device %s: %s %s" % (a[2], a, b))
                bad += 1
    kinds = {}
    for s in spans:
        kinds[s[4]] = kinds.get(s[4], 0) + 1
    print("jobs: %d (%s), splits: %d, violations: %d" %
          (len(spans), ", ".join("%s %d" % kv for kv in sorted(kinds.items())), splits, bad))
    if len(spans) < min_jobs:
        print("fewer jobs than %d" % min_jobs)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
