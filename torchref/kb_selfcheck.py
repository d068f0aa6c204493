"""kb_selfcheck.py TASK_DIR PROBLEM.py [TASK_DIR PROBLEM.py ...] [--seed N] [--at main|cpu|auto]
- the buffer mapping check
of an imported problem (docs/kernelbench.md "Checking an import").

Two outputs under the same seed, compared byte for byte:
  - the original file, imported as Python imports it (no rewriting), run as KernelBench's
    harness runs it: seed, Model(*get_init_inputs()), seed, get_inputs(), forward;
  - the reference engine's: every input buffer drawn as the task's "model" distribution,
    turned into the bytes a candidate gets, and the forward run on tensors made from those
    bytes (weights loaded into the module by their buffer names).
--at cpu runs both at the task's cpu_sizes (--at auto: the file's own sizes when its buffers
fit in 32 MB, else cpu_sizes): the original's size constants are then set as module
attributes (which get_inputs and get_init_inputs read at call time) and the file's own
module-level statements that derive constants from them are run again.
Prints "match ..." and exits 0, or "DIFFER ..." / "cannot compare ..." and exits 1.
"""
import argparse
import importlib.util
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def plain(path, sizes, seed, torch, kb, dtype):
    spec = importlib.util.spec_from_file_location("kb_plain_problem", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kb_plain_problem"] = mod
    spec.loader.exec_module(mod)
    tuples = {}
    for name, v in sizes.items():
        base, _, idx = name.rpartition("_")
        if hasattr(mod, name) and isinstance(getattr(mod, name), int):
            setattr(mod, name, v)
        elif idx.isdigit() and isinstance(getattr(mod, base, None), tuple):
            tuples.setdefault(base, list(getattr(mod, base)))[int(idx)] = v
    for base, vals in tuples.items():
        setattr(mod, base, tuple(vals))
    if sizes:  # the file's own statements that derive constants from the sizes, run again
        import ast
        tree = ast.parse(open(path).read())
        derived = set(kb.derived_constants(kb.Problem(path)))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in derived for t in node.targets):
                exec(compile(ast.Module([node], type_ignores=[]), path, "exec"), mod.__dict__)
    _, model, inputs = kb.build(mod, seed, "cpu", dtype)
    with torch.no_grad():
        return model(*inputs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task")
    ap.add_argument("problem")
    ap.add_argument("more", nargs="*", help="more TASK_DIR PROBLEM.py pairs")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--at", choices=["main", "cpu", "auto"], default="main")
    a = ap.parse_args()
    pairs = [(a.task, a.problem)] + list(zip(a.more[::2], a.more[1::2]))
    rc = 0
    for a.task, a.problem in pairs:  # one process for many: torch is imported once
        rc |= check(a)
    return rc


def check(a):
    import torch
    import kbmodel as kb
    from engine import Engine

    task = json.load(open(os.path.join(a.task, "task.json")))
    prob = kb.Problem(os.path.join(a.task, task["reference"]["torch"]))
    dtype = kb.PRECISIONS[task.get("precision", "fp32")]
    sizes = dict(task["sizes"])
    if a.at == "auto":  # the file's own sizes when they fit in 32 MB, else cpu_sizes
        rows = kb.meta_shapes(prob, {}, dtype)[0]
        nbytes = sum(math.prod(r[3]) * torch.empty((), dtype=r[2]).element_size() for r in rows)
        a.at = "main" if nbytes <= (32 << 20) or not task.get("cpu_sizes") else "cpu"
    if a.at == "cpu":
        sizes.update(task.get("cpu_sizes", {}))
    consts = {k: v for k, v in sizes.items() if k in prob.defaults}
    want = plain(a.problem, consts if a.at == "cpu" else {}, a.seed, torch, kb, dtype)
    eng = Engine(torch, kb, prob, "cpu", dtype)
    draw = [b["name"] for b in task["buffers"] if b["role"] == "in"]
    reply, blobs = eng.handle({"op": "run", "sizes": sizes, "seed": a.seed, "mode": "ref",
                               "draw": draw}, {})
    got = blobs[-1]
    from engine import tensor_bytes
    ref = tensor_bytes(torch, want)
    if got == ref:
        print("match: %s at %s, seed %d: %d output bytes identical" % (a.problem, a.at, a.seed, len(ref)))
        return 0
    print("DIFFER: %s at %s, seed %d: the engine's output (%d bytes) is not the file's own (%d bytes)"
          % (a.problem, a.at, a.seed, len(got), len(ref)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
