"""Reads the per-slot series of `specgen pool` agents' /metrics (pool/agent_metrics.c) after a
run whose jobs ran on them, and checks them (used by agent.sh):
  specgen_agent_slot_role{slot,role}            one role at 1 per slot, the others 0
  specgen_agent_slot_busy_seconds_total{slot}    > 0 on every slot that ended a job
  specgen_agent_slot_jobs_total{slot,verdict}    at least one pass over the agents' slots
Usage: agent_metrics.py TOKEN_FILE URL...  Prints "per-slot series as expected: ..." or
what was wrong, with the series it read."""
import re
import sys
import urllib.request

ROLES = ("validate", "profile")
LINE = re.compile(r'^(specgen_agent_slot_\w+)\{([^}]*)\} (\S+)$')


def labels(s):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', s))


def scrape(url, token):
    req = urllib.request.Request(url.rstrip("/") + "/metrics",
                                 headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        text = r.read().decode()
    roles, busy, jobs = {}, {}, {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        name, lab, value = m.group(1), labels(m.group(2)), float(m.group(3))
        slot = lab.get("slot")
        if name == "specgen_agent_slot_role":
            roles.setdefault(slot, {})[lab.get("role")] = value
        elif name == "specgen_agent_slot_busy_seconds_total":
            busy[slot] = value
        elif name == "specgen_agent_slot_jobs_total":
            jobs.setdefault(slot, {})[lab.get("verdict")] = value
    return roles, busy, jobs


def check(url, token):
    roles, busy, jobs = scrape(url, token)
    problems = []
    if not roles:
        problems.append("no specgen_agent_slot_role series")
    for slot, by_role in roles.items():
        if set(by_role) < set(ROLES):
            problems.append(f"slot {slot}: role series for {sorted(by_role)}, not {list(ROLES)}")
        if sorted(by_role.values()) != [0.0] * (len(by_role) - 1) + [1.0]:
            problems.append(f"slot {slot}: not exactly one role at 1: {by_role}")
        if slot not in busy:
            problems.append(f"slot {slot}: no busy-seconds series")
    ran = [s for s, v in jobs.items() if sum(v.values()) >= 1]
    for slot in ran:
        if busy.get(slot, 0) <= 0:
            problems.append(f"slot {slot} ended {jobs[slot]} but its busy seconds are "
                            f"{busy.get(slot)}")
    passes = sum(v.get("pass", 0) for v in jobs.values())
    summary = (f"{url}: {len(roles)} slots, {len(ran)} ran jobs, {int(passes)} pass, "
               f"busy {sum(busy.values()):.3f}s")
    return problems, summary, passes, (roles, busy, jobs)


def main():
    token = open(sys.argv[1]).read().strip()
    problems, summaries, passes, read = [], [], 0, []
    for url in sys.argv[2:]:
        p, s, n, series = check(url, token)
        summaries.append(s)
        passes += n
        read.append(f"{url}: read {series}")
        problems += [f"{url}: {x}" for x in p]
    if passes < 1:
        problems.append("no slot of these agents counts a pass (specgen_agent_slot_jobs_total)")
    if problems:
        print("\n".join(problems + read))
        return 1
    print("per-slot series as expected: " + "; ".join(summaries))
    return 0


sys.exit(main())
