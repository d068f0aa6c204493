"""kb_import.py PROBLEM.py --out DIR [--precision fp32|fp16|bf16] [--baseline eager|compile]
[--force] - a specgen task folder from a KernelBench-format problem (docs/kernelbench.md).

Writes DIR/model.py (a byte copy of the problem) and DIR/task.json. Prints what it decided,
one line each. Exit 0: written; 3: the problem cannot be imported (the last line says which
construct and what to do); 2: usage. Shapes come from torch's meta device: nothing is
allocated at the problem's own sizes; the CPU runs happen at small sizes only.
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Size constants never changed for check shapes: they select an axis or set a layer's
# structure, and changing them changes the problem, not its size.
STRUCTURAL = {
    "dim", "axis", "reduce_dim", "reduction_dim", "kernel_size", "stride", "padding",
    "dilation", "groups", "num_groups", "output_padding", "k", "num_heads", "nhead",
    "kernel_size_h", "kernel_size_w", "kernel_size_d", "stride_h", "stride_w", "stride_d",
    "padding_h", "padding_w", "padding_d", "dilation_h", "dilation_w", "dilation_d",
    "pool_kernel_size", "pool_size", "scale_factor", "num_layers", "top_k",
}
TINY = [3, 5, 7, 9, 11, 13, 6, 12, 16, 24, 32, 48, 64]
MEDIUM = [33, 65, 17, 49, 97, 48, 96, 24, 128]
CPU_SECONDS = 1.0
MEDIUM_SECONDS = 0.25  # a check shape whose forward is quicker is never halved: timing noise
                       # must not change what an import writes
CPU_BYTES = 32 << 20
MAX_SIZES = 32
TOL = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2}


def varies(name, value):
    base = name.rsplit("_", 1)[0] if name[-1].isdigit() else name
    return value >= 8 and name not in STRUCTURAL and base not in STRUCTURAL


class Importer:
    def __init__(self, kb, torch, prob, dtype, say):
        self.kb, self.torch, self.prob, self.dtype, self.say = kb, torch, prob, dtype, say
        self.cache = {}

    def shapes(self, cfg):
        """meta shapes at cfg, or the exception that stops it."""
        key = tuple(sorted(cfg.items()))
        if key not in self.cache:
            try:
                rows = self.kb.meta_shapes(self.prob, cfg, self.dtype)[0]
                empty = [r[0] for r in rows if math.prod(r[3]) == 0]
                self.cache[key] = ValueError("buffer %s has no elements" % empty[0]) if empty else rows
            except self.kb.Unsupported:
                raise
            except Exception as e:  # noqa: BLE001 - any error means: not at this shape
                self.cache[key] = e
        return self.cache[key]

    def valid(self, cfg):
        return not isinstance(self.shapes(cfg), Exception)

    def nbytes(self, cfg):
        rows = self.shapes(cfg)
        return sum(math.prod(s) * self.torch.empty((), dtype=d).element_size() for _, _, d, s, _ in rows)

    def shrink(self, main, cands, why):
        """Each varying constant in turn to the first of cands (below its value) at which the
        model still builds and runs on the meta device; values another constant took are
        tried last, so that two sizes equal at the main shape differ here (and a buffer's
        count names the right one)."""
        cfg, used = dict(main), set()
        for name, v in self.prob.consts:
            below = [c for c in cands if c < v]
            if not varies(name, v) or not below:
                continue
            # alone, else with the sizes equal to it at the main shape (a batch that is also
            # an input's first entry must move with it)
            group = [n for n, w in self.prob.consts if w == v and varies(n, w) and cfg[n] == v]
            tries = [{name: c} for c in below if c not in used] + [{name: c} for c in below if c in used]
            tries += [{n: c for n in group} for c in below] if len(group) > 1 else []
            for change in tries:
                trial = dict(cfg, **change)
                if self.valid(trial):
                    cfg = trial
                    used.update(change.values())
                    break
            else:
                err = self.shapes(dict(cfg, **{name: min(below)}))
                self.say("%s: kept %s=%d (no smaller value works: %s)" % (why, name, v,
                         (str(err).splitlines() or [type(err).__name__])[0][:160]
                         if isinstance(err, Exception) else "-"))
        return cfg

    def time_cpu(self, cfg):
        torch = self.torch
        mod = self.prob.load(cfg)
        _, model, inputs = self.kb.build(mod, 1, "cpu", self.dtype)
        with torch.no_grad():
            model(*inputs)
            t0 = time.perf_counter()
            model(*inputs)
            return time.perf_counter() - t0

    def cpu_sizes(self, main, tiny):
        """Each varying constant halved k times (not below its tiny value). From the
        smallest such shape up, one CPU forward is timed at each, and the largest whose
        forward takes at most a second (predicted from the last time and the growth of
        the bytes, so that no single timing runs long) and whose buffers fit in
        CPU_BYTES is kept."""
        names = [n for n, v in self.prob.consts if varies(n, v)]
        shapes = []
        for k in range(0, 24):
            cfg = dict(main)
            for n in names:
                cfg[n] = max(tiny[n], -(-main[n] // (1 << k)))
            if not self.valid(cfg):
                cfg = {n: (min(main[n], -(-v // 16) * 16) if n in names else v) for n, v in cfg.items()}
                if not self.valid(cfg):
                    continue
            if self.nbytes(cfg) <= CPU_BYTES and cfg not in shapes:
                shapes.append(cfg)
            if cfg == tiny:
                break
        best, t = tiny, None
        for cfg in reversed(shapes):  # smallest first
            if t is not None and t * self.nbytes(cfg) / max(1, self.nbytes(best)) > CPU_SECONDS:
                break
            t_new = self.time_cpu(cfg)
            if t_new > CPU_SECONDS and t is not None:
                break
            best, t = cfg, t_new
        self.say("cpu_sizes: one forward on this CPU takes %.2f s" % (t or 0))
        return best, t

    def within(self, cfg, cpu, t_cpu):
        """cfg with its sizes above cpu's halved (rounded up: 33 -> 17 -> 9, still odd) until
        its buffers are no larger than cpu's and one forward takes no longer, so that a
        check shape never costs a CPU validation more than the cpu_sizes shape does (a
        validation runs every shape for each input distribution, the baseline and the
        reference). None when no such shape builds."""
        while True:
            if self.nbytes(cfg) <= self.nbytes(cpu) and (
                    t_cpu is None or self.time_cpu(cfg) <= max(t_cpu, MEDIUM_SECONDS)):
                return cfg
            big = [n for n in cfg if cfg[n] > cpu[n]]
            tries = [dict(cfg, **{n: -(-cfg[n] // 2) for n in big})]
            tries += [dict(cfg, **{n: -(-cfg[n] // 2)}) for n in big] if len(big) > 1 else []
            cfg = next((c for c in tries if self.valid(c)), None) if big else None
            if cfg is None:
                return None

    def probe(self, cfg, rows):
        """Our extra distribution for the floating get_inputs tensors: the first of
        normal(0,1), uniform(0,1) whose output is finite at cfg (else none)."""
        torch = self.torch
        mod = self.prob.load(cfg)
        _, model, inputs = self.kb.build(mod, 7, "cpu", self.dtype)
        for dist, gen in (("normal(0,1)", torch.randn_like), ("uniform(0,1)", torch.rand_like)):
            x = [gen(a) if torch.is_tensor(a) and a.is_floating_point() else a for a in inputs]
            with torch.no_grad():
                y = model(*x)
            if not y.is_floating_point() or torch.isfinite(y).all():
                return dist
        self.say("inputs: only the problem's own distribution (normal and uniform inputs give "
                 "a non-finite output)")
        return None

    def deterministic(self, cfg):
        torch = self.torch
        outs = []
        for _ in range(2):
            mod = self.prob.load(cfg)
            _, model, inputs = self.kb.build(mod, 3, "cpu", self.dtype)
            with torch.no_grad():
                outs.append(model(*inputs))
        same = torch.equal(outs[0], outs[1]) or (
            outs[0].is_floating_point() and torch.allclose(outs[0], outs[1], atol=1e-6, rtol=1e-6,
                                                           equal_nan=True))
        if not same:
            raise self.kb.Unsupported(
                "the forward's output differs between two runs on the same inputs and weights "
                "(random numbers inside forward?): a random output cannot be checked")


def count_exprs(imp, configs, consts):
    """Each buffer's count as a product of size names, literals and extra names whose
    values the importer computed per shape (docs/kernelbench.md)."""
    rows_at = [imp.shapes(c) for c in configs]
    vec = {n: tuple(c[n] for c in configs) for n, _ in consts}
    extra, exprs = {}, []
    for bi, (name, role, dtype, shape, key) in enumerate(rows_at[0]):
        terms = []
        for ax in range(len(shape)):
            d = tuple(r[bi][3][ax] for r in rows_at)
            vary = [n for n in vec if vec[n] == d and len(set(d)) > 1]
            fixed = [n for n in vec if vec[n] == d and len(set(d)) == 1 and d[0] > 1]
            if vary:
                terms.append(vary[0])
            elif len(set(d)) == 1:
                terms.append(fixed[0] if len(fixed) == 1 else str(d[0]))
            else:
                if d not in extra:
                    extra[d] = ("%s_%d" % (name[:28], ax)).lower()
                terms.append(extra[d])
        terms = [t for t in terms if t != "1"]
        exprs.append((name, role, dtype, "*".join(terms) or "1", key))
    return exprs, {v: k for k, v in extra.items()}


def jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return repr(v)[:80]


def constants(kb, prob, torch):
    import inspect
    mod = prob.load({})
    with torch.device("meta"):
        init = mod.get_init_inputs()
    try:
        params = [p for p in inspect.signature(mod.Model.__init__).parameters][1:]
    except (TypeError, ValueError):
        params = []
    return {(params[i] if i < len(params) else "arg%d" % i): jsonable(v) for i, v in enumerate(init)}


def run(args, say):
    import torch
    import kbmodel as kb

    prob = kb.Problem(args.problem)
    dtype = kb.PRECISIONS[args.precision]
    imp = Importer(kb, torch, prob, dtype, say)
    main = dict(prob.consts)
    rows = imp.shapes(main)
    if isinstance(rows, Exception):
        raise kb.Unsupported("the model does not run on torch's meta device at its own sizes "
                             "(%s: %s); shapes cannot be worked out without allocating"
                             % (type(rows).__name__, str(rows).splitlines()[0][:200]))
    kb.check_dropout(kb.meta_shapes(prob, main, dtype)[3])
    tiny = imp.shrink(main, TINY, "check_sizes")
    medium = imp.shrink(main, MEDIUM, "check_sizes")
    if imp.nbytes(tiny) > 4 * CPU_BYTES:
        raise kb.Unsupported("no shape smaller than the problem's own was found (its sizes "
                             "could not be changed: see the lines above), and it is too large "
                             "to run on the CPU")
    imp.deterministic(tiny)
    cpu, t_cpu = imp.cpu_sizes(main, tiny)
    if medium != main:
        bounded = imp.within(medium, cpu, t_cpu)
        if bounded != medium:
            say("check_sizes: %s (halved from %s: no check shape costs more on the CPU than "
                "cpu_sizes)" % (" ".join("%s=%s" % (k, v) for k, v in (bounded or {}).items()
                                         if v != main[k]) or "dropped",
                                " ".join("%s=%s" % (k, v) for k, v in medium.items() if v != main[k])))
        medium = bounded or tiny
    checks = [c for i, c in enumerate([tiny, medium]) if c != main and c != cpu and c not in [tiny, medium][:i]]

    def layout_of(cfg):
        return [(r[0], len(r[3])) for r in imp.shapes(cfg)]
    for c in [cpu] + checks:  # a shape whose buffers differ from the main shape's is dropped
        if layout_of(c) != layout_of(main):
            say("a smaller shape changes the buffers (%s): not used" % " ".join(
                "%s=%s" % (k, v) for k, v in c.items() if v != main[k]))
    checks = [c for c in checks if layout_of(c) == layout_of(main)]
    if layout_of(cpu) != layout_of(main):
        cpu = checks[0] if checks else main
    extra_dist = imp.probe(tiny, rows)
    exprs, extra = count_exprs(imp, [main, cpu] + checks, prob.consts)
    names = [n for n, _ in prob.consts]
    used = {t for e in exprs for t in e[3].split("*")}
    if len(names) + len(extra) > MAX_SIZES:
        names = [n for n in names if n in used or any(c[n] != main[n] for c in [cpu] + checks)]
    if len(names) + len(extra) > MAX_SIZES:
        raise kb.Unsupported("the problem needs %d size names (a task holds at most %d)"
                             % (len(names) + len(extra), MAX_SIZES))

    def sizes_at(i, cfg):
        s = {n: cfg[n] for n in names}
        s.update({n: v[i] for n, v in extra.items()})
        return s

    allc = [main, cpu] + checks
    full = [sizes_at(i, c) for i, c in enumerate(allc)]
    buffers = []
    tol = TOL[args.precision]
    for name, role, dt, count, key in exprs:
        b = {"name": name, "type": kb.DTYPES[dt], "count": count, "role": role}
        if role == "in":
            # get_inputs' floating tensors also get our distribution; weights and integer
            # inputs keep the problem's own (index ranges, positive variances)
            b["init"] = ["model", extra_dist] if isinstance(key, int) and dt.is_floating_point \
                and extra_dist else "model"
        elif dt.is_floating_point:
            b["atol"] = tol
            b["rtol"] = tol
        buffers.append(b)
    scal = [n for n in list(names) + list(extra) if n in used]
    scalars = [{"name": n, "type": "i64" if max(f[n] for f in full) > 2**31 - 1 else "i32", "value": n}
               for n in scal]
    mod0 = prob.load({})
    with torch.device("meta"):
        nums = kb.forward_numbers(mod0, mod0.get_inputs())
    for n, x in nums:  # a number forward takes (get_inputs' value): a literal scalar
        scalars.append({"name": n, "type": "f32" if isinstance(x, float) else "i32", "value": x})
        scal.append(n)
    stem = os.path.splitext(os.path.basename(args.problem))[0]
    doc = (prob.load({}).Model.__doc__ or "").strip().splitlines()
    task = {
        "name": stem,
        "description": (doc[0].strip() if doc else "KernelBench problem %s" % stem),
        "baseline": {"torch": args.baseline},
        "reference": {"torch": "model.py"},
        "origin": {"format": "kernelbench", "file": args.problem, "sha256": prob.sha256},
        "precision": args.precision,
        "constants": constants(kb, prob, torch),
        "sizes": full[0],
        "cpu_sizes": {k: v for k, v in full[1].items() if v != full[0][k]},
        "check_sizes": [{k: v for k, v in f.items() if v != full[0][k]} for f in full[2:]],
        "buffers": buffers,
        "scalars": scalars,
        "args": [b["name"] for b in buffers] + scal,
        "bytes": "auto",
    }
    if not task["cpu_sizes"]:
        del task["cpu_sizes"]
    return task


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problem")
    ap.add_argument("--out", required=True)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"])
    ap.add_argument("--baseline", default="eager", choices=["eager", "compile"])
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()

    def say(line):
        print(line, file=sys.__stdout__, flush=True)

    try:
        import torch  # noqa: F401
    except ImportError:
        print("cannot import %s: PyTorch is not installed for %s; run `make deps` (installs "
              "deps/pip.txt into .venv) or `pip install torch`" % (args.problem, sys.executable))
        return 3
    import kbmodel as kb

    if os.path.exists(os.path.join(args.out, "task.json")) and not args.force:
        print("%s/task.json exists; use --force to overwrite it" % args.out)
        return 2
    sys.stdout = sys.stderr  # the problem's own prints
    try:
        task = run(args, say)
    except (kb.Unsupported, SyntaxError) as e:
        sys.stdout = sys.__stdout__
        print("cannot import %s: %s" % (args.problem, e))
        return 3
    except Exception as e:  # noqa: BLE001
        sys.stdout = sys.__stdout__
        print("cannot import %s: the problem failed while being examined (%s: %s)"
              % (args.problem, type(e).__name__, str(e).splitlines()[0][:300] if str(e) else ""))
        return 3
    sys.stdout = sys.__stdout__
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(args.problem, os.path.join(args.out, "model.py"))
    with open(os.path.join(args.out, "task.json"), "w") as f:
        json.dump(task, f, indent=2)
        f.write("\n")
    print("sizes %s" % " ".join("%s=%s" % kv for kv in task["sizes"].items()))
    print("buffers %s" % " ".join("%s:%s[%s]" % (b["name"], b["type"], b["count"]) for b in task["buffers"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
