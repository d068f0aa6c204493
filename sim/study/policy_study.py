#!/usr/bin/env python3
"""The policy study of docs/eval.md: configurations on the same seeds, per workload and load,
paired per seed against the first configuration (ratio > 1: the first is faster).

    python3 sim/study/policy_study.py sim/study/final.json [--carry]

--carry runs every workload with q_carry = 1 (an iteration starts from the best kernel's
quality), the sensitivity check of the study. Needs bin/specgen; about a minute."""
import json, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SPECGEN", os.path.join(ROOT, "bin", "specgen"))


def run(args, workload, tasks, seed):
    out = subprocess.run([BIN, "sim", "--workload", workload, "--tasks", str(tasks), "--seeds",
                          str(seed)] + args, capture_output=True, text=True, check=True)
    f = out.stdout.strip().splitlines()[-1].split()
    i = next(k for k, x in enumerate(f) if x.replace('.', '', 1).isdigit())
    return float(f[i]), float(f[i + 3])  # e2e s, feedback


def main():
    spec = json.load(open(sys.argv[1]))
    carry = "--carry" in sys.argv
    tmp = tempfile.mkdtemp()
    seeds = range(1, spec.get("seeds", 10) + 1)
    for workload, tasks in spec["settings"]:
        path = workload
        if carry:
            w = json.load(open(os.path.join(ROOT, "sim", "workloads", workload + ".json")))
            w["q_carry"], w["name"] = 1.0, workload + "+carry"
            path = os.path.join(tmp, workload + ".json")
            json.dump(w, open(path, "w"))
        print(f"\n{workload}{' q_carry 1' if carry else ''}, {tasks} tasks, seeds 1-{len(seeds)}")
        base = None
        for name, args in spec["configs"]:
            r = [run([a.replace("@", ROOT + "/") for a in args], path, tasks, s) for s in seeds]
            e2e = [x[0] for x in r]
            base = base or e2e
            ratio = [b / a for a, b in zip(e2e, base)]
            print(f"  {name:28s} e2e {statistics.mean(e2e):6.1f} sd {statistics.stdev(e2e):5.1f}"
                  f"  feedback {statistics.mean(x[1] for x in r):6.1f}  first/this "
                  f"{statistics.mean(ratio):.3f} ({min(ratio):.2f}-{max(ratio):.2f})")


if __name__ == "__main__":
    main()
