"""kbmodel.py - a KernelBench-format problem file as specgen sees it (shared by the
importer, kb_import.py, and the reference engine, engine.py).

A problem file holds `class Model(nn.Module)`, module-level constants, `get_inputs()` and
`get_init_inputs()`. Here:
  - its *size constants* are the module-level names bound to a non-negative integer
    literal (`batch_size = 16`), to a tuple of them (`input_shape = (128, 4096)` gives
    `input_shape_0`, `input_shape_1`), or unpacked from one (`h, w = 24, 48`). The file is
    executed with any of them replaced (an AST rewrite of those literals only), so
    constants derived from them (`out = 2 * features`) follow, and so do get_inputs,
    get_init_inputs and a forward that reads module globals;
  - its buffers: get_inputs()'s tensors, named after forward's parameters (in0, in1, ...
    where forward takes *args), then the floating-point entries of the module's
    state_dict (`conv.weight` -> `conv_weight`), then the output (`out`);
  - draw(seed) mirrors KernelBench's harness: seed, Model(*get_init_inputs()), seed,
    get_inputs(); the module stays in training mode, as the harness leaves it.
Nothing here allocates at the problem's own sizes: shapes come from torch's meta device.
"""
import ast
import hashlib
import inspect
import re
import sys
import types

import torch

DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.uint8: "u8",
    torch.int8: "i8",
    torch.bool: "u8",
}
PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class Unsupported(Exception):
    """The problem uses a construct the importer does not support: the message names it
    and says what to do."""


def _const_int(node):
    """An integer written with literals only (`4096`, `16384 * 4`, `2**20`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp):
        a, b = _const_int(node.left), _const_int(node.right)
        if a is None or b is None:
            return None
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.FloorDiv: lambda: a // b if b else None,
               ast.Pow: lambda: a ** b if 0 <= b <= 64 else None}
        f = ops.get(type(node.op))
        return f() if f else None
    return None


def _int_literal(node):
    v = _const_int(node)
    return v if v is not None and v >= 0 else None


def size_constants(tree):
    """[(size name, value, ast node to replace)] in file order."""
    out = []
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        tgt, val = node.targets[0], node.value
        if isinstance(tgt, ast.Name):
            v = _int_literal(val)
            if v is not None:
                out.append((tgt.id, v, val))
            elif isinstance(val, ast.Tuple) and val.elts and all(
                _int_literal(e) is not None for e in val.elts
            ):
                for i, e in enumerate(val.elts):
                    out.append(("%s_%d" % (tgt.id, i), _int_literal(e), e))
        elif isinstance(tgt, ast.Tuple) and isinstance(val, ast.Tuple):
            if len(tgt.elts) != len(val.elts):
                continue
            for t, e in zip(tgt.elts, val.elts):
                if isinstance(t, ast.Name) and _int_literal(e) is not None:
                    out.append((t.id, _int_literal(e), e))
    return out


def _loads(tree):
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class _Replace(ast.NodeTransformer):
    """Each listed size literal (or literal expression) by its new value."""

    def __init__(self, repl):
        self.repl = repl

    def visit(self, node):
        if id(node) in self.repl:
            return ast.copy_location(ast.Constant(self.repl[id(node)]), node)
        return super().visit(node)


class Problem:
    """One problem file; load(sizes) executes it with some size constants replaced."""

    def __init__(self, path, text=None):
        self.path = path
        self.text = text if text is not None else open(path, encoding="utf-8").read()
        self.sha256 = hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        tree = ast.parse(self.text, filename=path)
        used = _loads(tree)
        self.consts = []  # (name, value) of the size constants the file reads
        for name, v, _ in size_constants(tree):
            base = re.sub(r"_\d+$", "", name)
            if name in used or base in used:
                if len(name) > 31:
                    raise Unsupported(
                        "size constant %s: names are at most 31 characters; rename it" % name
                    )
                self.consts.append((name, v))
        self.defaults = dict(self.consts)
        self._counter = 0

    def load(self, sizes=None):
        """A fresh module object of the file with `sizes` (a subset of its size
        constants) in place of the literals."""
        sizes = sizes or {}
        tree = ast.parse(self.text, filename=self.path)
        repl = {id(node): int(sizes[name]) for name, _, node in size_constants(tree) if name in sizes}
        tree = _Replace(repl).visit(tree)
        ast.fix_missing_locations(tree)
        self._counter += 1
        modname = "kb_problem_%d" % self._counter
        mod = types.ModuleType(modname)
        mod.__file__ = self.path
        sys.modules[modname] = mod
        try:
            exec(compile(tree, self.path, "exec"), mod.__dict__)
        finally:
            sys.modules.pop(modname, None)
        for need in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(mod, need):
                raise Unsupported("the file defines no %s (KernelBench's format needs it)" % need)
        return mod


def buffer_name(key):
    return re.sub(r"[^A-Za-z0-9_]", "_", key)


def input_names(mod, n):
    """forward's parameter names for n inputs, else in0, in1, ..."""
    try:
        params = list(inspect.signature(mod.Model.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        p = params[i] if i < len(params) else None
        ok = p is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        names.append(p.name if ok else "in%d" % i)
    return names


def state_entries(model):
    """(buffer name, state_dict key) of the floating-point state the forward may read."""
    return [
        (buffer_name(k), k)
        for k, v in model.state_dict().items()
        if torch.is_tensor(v) and v.is_floating_point()
    ]


def check_dropout(model):
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0:
            raise Unsupported(
                "%s is Dropout with p=%g: KernelBench's harness runs the model in training "
                "mode, where its output is random; set p=0 (or remove it) to import it"
                % (name or "the model", m.p)
            )


def cast_inputs(inputs, dtype):
    return [x.to(dtype) if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]


def layout(mod, model, inputs, out):
    """[(buffer name, role, key, tensor)]: key is an input's index, a state_dict key, or
    None for the output. Raises Unsupported for what a task cannot hold."""
    for i, x in enumerate(inputs):
        if isinstance(x, (int, float)) and not torch.is_tensor(x):
            continue  # a number: a scalar of the task (forward_numbers), not a buffer
        if not torch.is_tensor(x):
            raise Unsupported(
                "get_inputs() item %d is a %s, not a tensor: a forward argument that is not a "
                "tensor is not supported; make it a module constant" % (i, type(x).__name__)
            )
        if x.dtype not in DTYPES:
            raise Unsupported("get_inputs() item %d has dtype %s" % (i, x.dtype))
    if isinstance(out, (tuple, list)):
        raise Unsupported(
            "forward returns %d values (a %s): a task holds one output tensor; return one "
            "tensor (torch.cat the outputs) to import it" % (len(out), type(out).__name__))
    if not torch.is_tensor(out):
        raise Unsupported(
            "forward returns a %s: only a single tensor output is supported" % type(out).__name__
        )
    if out.dtype not in DTYPES:
        raise Unsupported("forward's output has dtype %s" % out.dtype)
    rows, seen = [], {"out"}  # the output is always "out"

    def add(name, role, key, t):
        base, k = name, 1
        while name in seen:
            name = "%s_%d" % (base, k)
            k += 1
        if len(name) > 63:
            raise Unsupported("buffer name %s is over 63 characters" % name)
        seen.add(name)
        rows.append((name, role, key, t))

    for i, (n, x) in enumerate(zip(input_names(mod, len(inputs)), inputs)):
        if torch.is_tensor(x):
            add(n, "in", i, x)
    sd = model.state_dict()
    for n, k in state_entries(model):
        add(n, "in", k, sd[k])
    rows.append(("out", "out", None, out))
    return rows


def seeded(seed, fn, *a):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
    return fn(*a)


def build(mod, seed, device, dtype):
    """KernelBench's order: seed, init inputs, Model(...), seed, get_inputs()."""
    with torch.device(device):
        init = seeded(seed, mod.get_init_inputs)
        model = seeded(seed, lambda: mod.Model(*init))
        inputs = seeded(seed, mod.get_inputs)
    model = model.to(device=device, dtype=dtype) if dtype != torch.float32 else model.to(device)
    inputs = cast_inputs([x.to(device) if torch.is_tensor(x) else x for x in inputs], dtype)
    return init, model, inputs


class _SmallOnCpu(torch.overrides.TorchFunctionMode):
    """Factory calls without a device make their tensor on the CPU when it is small (at
    most SMALL_ON_CPU elements) and on the meta device otherwise: for a constructor that
    reads a value back (Swin's `[x.item() for x in torch.linspace(...)]`), which a meta
    tensor cannot give, while weights stay unallocated. The module is moved to the meta
    device after."""
    FACTORIES = (torch.empty, torch.zeros, torch.ones, torch.full, torch.rand, torch.randn,
                 torch.randint, torch.arange, torch.linspace, torch.logspace, torch.eye,
                 torch.empty_strided, torch.randperm)
    SMALL_ON_CPU = 1 << 16

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self.FACTORIES and kwargs.get("device") is None:
            meta = func(*args, **dict(kwargs, device="meta"))
            if meta.numel() > self.SMALL_ON_CPU:
                return meta
            return func(*args, **dict(kwargs, device="cpu"))
        return func(*args, **kwargs)


def _meta_model(mod, init):
    """Model(*init) on the meta device; a constructor that reads a tensor's value (.item(),
    which the meta device cannot answer) is built again with small tensors on the CPU."""
    try:
        with torch.device("meta"):
            return mod.Model(*init)
    except (RuntimeError, NotImplementedError) as e:
        if "meta" not in str(e):
            raise
    with _SmallOnCpu():
        model = mod.Model(*init)
    return model.to("meta")


def meta_shapes(prob, sizes, dtype=torch.float32):
    """The buffers at `sizes` on the meta device: [(name, role, dtype, shape, key)], key
    a get_inputs index, a state_dict key, or None for the output."""
    mod = prob.load(sizes)
    with torch.device("meta"):
        init = mod.get_init_inputs()
    model = _meta_model(mod, init)
    with torch.device("meta"):
        inputs = cast_inputs(mod.get_inputs(), dtype)
    if dtype != torch.float32:
        model = model.to(dtype)
    inputs = [x.to("meta") if torch.is_tensor(x) else x for x in inputs]
    with torch.no_grad():
        out = model(*inputs)
    rows = layout(mod, model, inputs, out)
    return [(n, r, t.dtype, tuple(t.shape), k) for n, r, k, t in rows], mod, init, model


def derived_constants(prob):
    """Module-level names computed from the size constants (`out = 2 * features`)."""
    tree = ast.parse(prob.text)
    bases = {re.sub(r"_\d+$", "", n) for n, _ in prob.consts} | {n for n, _ in prob.consts}
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and _loads(node.value) & bases:
            out += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return out


def forward_numbers(mod, inputs):
    """get_inputs() items that are numbers, not tensors: [(name, value)]; they stay as the
    problem draws them and become scalars of the task."""
    names = input_names(mod, len(inputs))
    return [(n, x) for n, x in zip(names, inputs)
            if isinstance(x, (int, float)) and not torch.is_tensor(x)]
