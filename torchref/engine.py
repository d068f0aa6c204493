"""engine.py TASK_DIR DEVICE - the reference engine of a task whose reference is PyTorch
(task.json "reference": {"torch": "model.py"}); docs/kernelbench.md.

One process per device slot, started by the validation worker before it sandboxes itself,
fed over a socket (fd 3) and never given a candidate: it runs only
the task's problem file, which is the user's own code. Frames both ways: a 4-byte
big-endian length, that many bytes of JSON, then the binary blobs the JSON lists as
[[name, bytes], ...] in order.

Requests:
  {"op": "run", "sizes": {...}, "seed": N, "mode": "ref"|"eager"|"compile",
   "given": [[buffer, bytes], ...], "draw": [buffer, ...]}
      Builds the problem at `sizes` under `seed` as KernelBench's harness does (seed,
      Model(*get_init_inputs()), seed, get_inputs()); the input buffers named in `draw`
      are sent back as drawn (before the forward, which may update running statistics);
      those in `given` replace the drawn values. The forward then runs on tensors made
      from exactly those bytes. Reply {"ok": true, "drawn": [...], "out": [["out", n]]}.
  {"op": "time", "sizes", "seed", "mode", "warmup": N, "reps": N, "flush": BYTES}
      Times the forward (mode eager or compile) and answers {"ok": true, "ns": [...]}.
The first frame the engine writes is {"ok": true, "torch": VERSION} once it is ready, or
{"ok": false, "error": ...} (torch missing, the problem file does not load) and it exits.
"""
import ctypes
import json
import os
import struct
import sys
import time


def send(out, obj, blobs=()):
    data = json.dumps(obj).encode()
    for b in [struct.pack(">I", len(data)) + data] + list(blobs):
        view = memoryview(b)
        while len(view):
            n = out.write(view)
            view = view[n:]


def read_exact(inp, n):
    parts, got = [], 0
    while got < n:
        b = inp.read(n - got)
        if not b:
            return None
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def recv(inp):
    head = read_exact(inp, 4)
    if head is None:
        return None, {}
    (n,) = struct.unpack(">I", head)
    req = json.loads(read_exact(inp, n))
    blobs = {}
    for name, size in req.get("given", []):
        blobs[name] = read_exact(inp, size)
    return req, blobs


def main():
    sock = os.fdopen(3, "r+b", buffering=0)  # the worker's end of a socketpair
    out = inp = sock
    sys.stdout = sys.stderr  # prints in the problem file go to stderr
    try:
        import torch
    except ImportError as e:
        send(out, {"ok": False, "error": "PyTorch is not installed for %s (%s)" % (sys.executable, e)})
        return 1
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kbmodel

    task_dir, device = sys.argv[1], sys.argv[2]
    try:
        task = json.load(open(os.path.join(task_dir, "task.json")))
        prob = kbmodel.Problem(os.path.join(task_dir, task["reference"]["torch"]))
        dtype = kbmodel.PRECISIONS[task.get("precision", "fp32")]
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as e:
        send(out, {"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
        return 1
    send(out, {"ok": True, "torch": torch.__version__})
    eng = Engine(torch, kbmodel, prob, device, dtype)
    while True:
        req, blobs = recv(inp)
        if req is None:
            return 0
        try:
            reply, rblobs = eng.handle(req, blobs)
        except Exception as e:  # the problem's own error: said, and the engine lives on
            reply, rblobs = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}, []
        send(out, reply, rblobs)


def tensor_bytes(torch, t):
    t = t.detach().contiguous().cpu()
    if t.dim() == 0:
        t = t.reshape(1)
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())


class Engine:
    def __init__(self, torch, kbmodel, prob, device, dtype):
        self.torch, self.kb, self.prob, self.device, self.dtype = torch, kbmodel, prob, device, dtype
        self.compiled = {}

    def prepare(self, req, blobs):
        """The model and its inputs as the candidate gets them, and the drawn bytes."""
        torch, kb = self.torch, self.kb
        sizes = {k: v for k, v in req.get("sizes", {}).items() if k in self.prob.defaults}
        mod = self.prob.load(sizes)
        _, model, inputs = kb.build(mod, int(req.get("seed", 1)), self.device, self.dtype)
        kb.check_dropout(model)
        rows = kb.layout(mod, model, inputs, torch.zeros(()))[:-1]
        sd = model.state_dict()
        data, drawn = {}, []
        for name, _, key, t in rows:
            data[name] = tensor_bytes(torch, t)
        for name in req.get("draw", []):
            if name not in data:
                raise KeyError("no input buffer %s in this problem" % name)
            drawn.append((name, data[name]))
        for name, b in blobs.items():
            if name not in data:
                raise KeyError("no input buffer %s in this problem" % name)
            if len(b) != len(data[name]):
                raise ValueError("buffer %s: %d bytes given, the problem's tensor has %d"
                                 % (name, len(b), len(data[name])))
            data[name] = b
        args = list(inputs)
        with torch.no_grad():
            for name, _, key, t in rows:  # every tensor from exactly the candidate's bytes
                x = torch.frombuffer(bytearray(data[name]), dtype=torch.uint8) if data[name] else \
                    torch.empty(0, dtype=torch.uint8)
                x = x.view(t.dtype).reshape(t.shape).to(self.device)
                if isinstance(key, int):
                    args[key] = x
                else:
                    sd[key].copy_(x)
        return model, args, drawn

    def forward(self, req, model):
        """The forward to run: the model, or for mode compile torch.compile of the first
        model built at these sizes, given this request's state (its weights and buffers, as
        the candidate gets them): one compile per shape, never a stale weight."""
        if req.get("mode") != "compile":
            return model
        key = json.dumps(req.get("sizes", {}), sort_keys=True)
        if key not in self.compiled:
            self.compiled[key] = (model, self.torch.compile(model))
        else:
            with self.torch.no_grad():
                self.compiled[key][0].load_state_dict(model.state_dict())
        return self.compiled[key][1]

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def handle(self, req, blobs):
        torch = self.torch
        model, args, drawn = self.prepare(req, blobs)
        fwd = self.forward(req, model)
        if req.get("op") == "time":
            return self.time(req, fwd, args), []
        with torch.no_grad():
            y = fwd(*args)
        self.sync()
        if not torch.is_tensor(y):
            raise TypeError("forward returned a %s, not a tensor" % type(y).__name__)
        ob = tensor_bytes(torch, y)
        reply = {"ok": True, "drawn": [[n, len(b)] for n, b in drawn], "out": [["out", len(ob)]],
                 "shape": list(y.shape)}
        return reply, [b for _, b in drawn] + [ob]

    def time(self, req, fwd, args):
        """Forward times in ns: warm-up, then reps runs, each after a cache flush (a write
        of `flush` bytes) outside the timed region; CUDA events on a GPU."""
        torch = self.torch
        flush = torch.empty(int(req.get("flush", 0)) // 4 + 1, dtype=torch.float32, device=self.device)
        ns = []
        with torch.no_grad():
            for _ in range(int(req.get("warmup", 3))):
                fwd(*args)
            self.sync()
            for _ in range(int(req.get("reps", 10))):
                flush.zero_()
                self.sync()
                if self.device == "cuda":
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    fwd(*args)
                    b.record()
                    b.synchronize()
                    ns.append(int(a.elapsed_time(b) * 1e6))
                else:
                    t0 = time.perf_counter_ns()
                    fwd(*args)
                    ns.append(time.perf_counter_ns() - t0)
        return {"ok": True, "ns": ns}


if __name__ == "__main__":
    sys.exit(main())
