"""Checks a KernelBench ModelNew file written by `specgen results export --kernelbench`.

python3 kb_export_check.py FILE          parse only: py_compile, then the AST: get_inputs,
                                         get_init_inputs, Model and ModelNew(Model) with a
                                         forward that takes get_inputs()'s items, load_inline
python3 kb_export_check.py FILE --torch  also import it with torch (no compile, no GPU):
                                         ModelNew(*get_init_inputs()) has Model's parameters
                                         under the same seed, the buffers bind to forward's
                                         arguments and the state in the task's order with the
                                         counts the export evaluated, the output's shape from
                                         the meta device is Model's, forward off a GPU says
                                         it needs CUDA, and nothing was compiled.
python3 kb_export_check.py FILE --cuda   on a GPU with a host compiler and nvcc (torchref/gpu-check.sh):
                                         Model and ModelNew under the same seed on CUDA, the same
                                         get_inputs(): ModelNew's forward (load_inline compiles the
                                         kernel) equals Model's within KernelBench's fp32 tolerance
                                         (atol = rtol = 1e-4).
Prints one line per check; exits 1 at the first that fails.
"""

import ast
import importlib.util
import py_compile
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_ast(path):
    py_compile.compile(path, doraise=True)
    print("ok: py_compile")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for need in ("get_inputs", "get_init_inputs"):
        if need not in funcs:
            fail("no module-level %s()" % need)
    if "Model" not in classes or "ModelNew" not in classes:
        fail("Model and ModelNew must both be classes of the module")
    new = classes["ModelNew"]
    if not any(isinstance(b, ast.Name) and b.id == "Model" for b in new.bases):
        fail("ModelNew does not derive from Model (it must hold Model's parameters)")
    fwd = [f for f in new.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
    if not fwd or not (fwd[0].args.vararg or len(fwd[0].args.args) > 1):
        fail("ModelNew.forward does not take forward's arguments")
    if "load_inline" not in {n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)
                             for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute))}:
        fail("the file never calls load_inline")
    print("ok: ast: get_inputs, get_init_inputs, Model, ModelNew(Model).forward, load_inline")


def check_torch(path):
    import torch

    spec = importlib.util.spec_from_file_location("model_new", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print("ok: imported with torch %s" % torch.__version__)
    init = mod.get_init_inputs()
    torch.manual_seed(7)
    ref = mod.Model(*init)
    torch.manual_seed(7)
    new = mod.ModelNew(*init)
    a, b = ref.state_dict(), new.state_dict()
    if list(a) != list(b) or any(not torch.equal(a[k], b[k]) for k in a):
        fail("ModelNew's state under the same seed is not Model's")
    print("ok: ModelNew(*get_init_inputs()) has Model's state: %s" % ", ".join(a))
    inputs = mod.get_inputs()
    want = ref(*inputs)
    shape, dtype = new._sg_out(inputs)
    if tuple(want.shape) != shape or want.dtype != dtype:
        fail("output shape %s %s from the meta device, Model gives %s %s"
             % (shape, dtype, tuple(want.shape), want.dtype))
    print("ok: output %s %s (meta device, as Model)" % (shape, dtype))
    bound = new._sg_bind(inputs)
    for name, role, dt, count in mod._SG_BUFFERS:
        n = want.numel() if role == "out" else bound[name].numel()
        if n != count:
            fail("buffer %s: %d elements, the export evaluated %d" % (name, n, count))
    print("ok: buffers bind in the task's order: %s" % ", ".join(b[0] for b in mod._SG_BUFFERS))
    try:
        new(*inputs)
        fail("forward on the CPU did not refuse")
    except RuntimeError as e:
        if "CUDA" not in str(e):
            fail("forward on the CPU: %s" % e)
    if mod._SG_BUILT:
        fail("the extension was compiled")
    print("ok: forward off a GPU asks for CUDA; nothing was compiled")


def check_cuda(path):
    import torch

    spec = importlib.util.spec_from_file_location("model_new", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    init = mod.get_init_inputs()
    torch.manual_seed(7)
    ref = mod.Model(*init).cuda()
    torch.manual_seed(7)
    new = mod.ModelNew(*init).cuda()
    torch.manual_seed(8)
    inputs = [x.cuda() if torch.is_tensor(x) else x for x in mod.get_inputs()]
    with torch.no_grad():
        want, got = ref(*inputs), new(*inputs)
    torch.cuda.synchronize()
    if not torch.allclose(want, got, atol=1e-4, rtol=1e-4):
        fail("ModelNew's output on CUDA differs from Model's: max abs error %g"
             % (want - got).abs().max().item())
    print("ok: ModelNew on CUDA (load_inline) equals Model within 1e-4, max abs error %g"
          % (want - got).abs().max().item())


def main():
    check_ast(sys.argv[1])
    if "--torch" in sys.argv[2:]:
        check_torch(sys.argv[1])
    if "--cuda" in sys.argv[2:]:
        check_cuda(sys.argv[1])


if __name__ == "__main__":
    main()
