#!/usr/bin/env python3
"""Compare `specgen validate --json` lines (stdin) with each candidate's `// expect:` line.

With --compile-only, verdicts that need a run (pass, mismatch, ...) are expected to be
"compiled". Prints a table; exits 1 when any verdict differs or a candidate is missing.
"""
import json
import sys

RUN_ONLY = {"pass", "mismatch", "out_of_bounds", "input_modified", "timeout", "crash", "launch_error"}


def expected(path, compile_only):
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    if not first.startswith("// expect:"):
        return {"rejected"}  # an empty answer has no header line
    want = set(first.split(":", 1)[1].strip().split("|"))
    if compile_only:
        compile_phase = want - RUN_ONLY
        want = compile_phase if compile_phase else {"compiled"}
    return want


def main():
    compile_only = "--compile-only" in sys.argv
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    got = {}
    for line in sys.stdin:
        line = line.strip()
        if line.startswith("{"):
            j = json.loads(line)
            got.setdefault(j.get("candidate"), []).append(j)
    bad = 0
    print(f"{'candidate':44} {'expected':34} {'got':16} message")
    for path in files:
        want = expected(path, compile_only)
        for j in got.get(path, [None]):
            verdict = j["verdict"] if j else "(no result)"
            ok = verdict in want
            bad += not ok
            msg = (j or {}).get("message", "")[:90]
            print(f"{path:44} {'|'.join(sorted(want)):34} {verdict:16} {'' if ok else 'WRONG: '}{msg}")
    print(f"{len(files) - bad if bad <= len(files) else 0} of {len(files)} verdicts as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
