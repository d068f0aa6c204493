#!/usr/bin/env python3
"""An ESTIMATE (not a measurement) of each builtin task's GPU time on an NVIDIA H200, and of
what `make gpu-check` spends on it, printed as the markdown table in docs/gpu-checks.md.

Model, per kernel launch: the longest of
  - bytes / (0.5 x 4800 GB/s)               (memory: half the datasheet bandwidth; 15% for
                                             one thread per row, and for every reference),
  - flops / (0.5 x 67 TFLOP/s)              (FP32 units; references: FP64, 34 TFLOP/s;
                                             untiled GEMMs: 3 TFLOP/s),
  - serial steps per thread x 30 cycles / 1.98 GHz x waves, where a wave is as many
    threads as are resident (132 SMs x 2048, or 132 x 32 for one-thread blocks) -
    the latency of plain kernels that give each thread a long loop.
The serial steps and thread counts per task are read off its baseline and reference (the
table below). gpu-check runs, per task (validator/gpu-check.sh, profiler/gpu-check.sh):
validation (each input distribution: reference + baseline), each wrong candidate (the
same, worst case: caught only at the main shape), and the A/A profile (2 warm-up + ~15
timed runs per side, 3 input sets checked: reference + candidate, ~10 metric replays).
Run from the repository root: python3 suites/builtin/estimate.py
"""
import json
import math
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
WRONG = os.path.join(HERE, "..", "..", "tests", "fixtures", "builtin_wrong")
BW, FP32, FP64, CLK = 4800e9, 67e12, 34e12, 1.98e9
RESIDENT, RESIDENT_1 = 132 * 2048, 132 * 32

# task: (baseline threads, baseline steps per thread, reference threads, reference steps,
#        reference uses one-thread blocks)
SHAPE = {
    "adamw_f32": ("N", "1", "N", "1", 1),
    "add_rmsnorm_bf16": ("B", "3*N", "B", "3*N", 1),
    "argmax": ("B", "N", "B", "N", 1),
    "attention_causal_f16": ("BH*S", "S*D*2", "BH*S", "S*D*2", 1),
    "batched_dot": ("B", "N", "B", "N", 1),
    "bias_grad_bf16": ("H", "T", "H", "T", 1),
    "cast_f32_bf16": ("N", "1", "N", "1", 1),
    "cast_f32_f16": ("N", "1", "N", "1", 1),
    "conv1d": ("N", "K", "N", "K", 0),
    "conv2d": ("H*W", "K*K", "H", "W*K*K", 1),
    "cross_entropy_bf16": ("B", "3*V", "B", "3*V", 1),
    "dequant_fp8_e5m2": ("N", "1", "N", "1", 1),
    "embedding_bf16": ("T", "D", "T", "D", 1),
    "gather": ("N*D", "1", "N", "D", 1),
    "gelu": ("N", "1", "N", "1", 0),
    "gelu_erf_f16": ("N", "1", "N", "1", 1),
    "gemm_bf16_nt": ("M*N", "K", "M*N", "K", 1),
    "gemm_bias_gelu_f16": ("M*N", "K", "M*N", "K", 1),
    "histogram": ("N", "1", "N/65536", "65536", 1),
    "layernorm": ("B", "3*N", "B", "3*N", 1),
    "layernorm_bf16": ("B", "3*N", "B", "3*N", 1),
    "matmul": ("M*N", "K", "M*N", "K", 1),
    "matvec": ("M", "N", "M", "N", 1),
    "prefix_scan": ("N", "N/2", "1", "N", 1),
    "quant_fp8_rowwise": ("T", "2*H", "T", "2*H", 1),
    "reduce_sum": ("256", "N/256", "N/4096", "4096", 1),
    "rmsnorm": ("B", "2*N", "B", "2*N", 1),
    "rmsnorm_bf16": ("B", "2*N", "B", "2*N", 1),
    "rope_neox_f16": ("T*(HQ+HK)", "D", "T", "(HQ+HK)*D", 1),
    "silu_mul_bf16": ("T*H", "1", "T", "H", 1),
    "softmax": ("B", "3*N", "B", "3*N", 1),
    "softmax_bf16": ("B", "3*N", "B", "3*N", 1),
    "stencil2d": ("H*W", "1", "H", "W", 1),
    "topk_f32": ("B", "N*K", "B", "N*K", 1),
    "transpose": ("R*C", "1", "R", "C", 1),
}


def ev(expr, sizes):
    e = re.sub(r"ceil_div\(([^,]+),([^)]+)\)", r"(-(-(\1)//(\2)))", str(expr)).replace("/", "//")
    e = e.replace("////", "//")
    return eval(e, {"min": min, "max": max}, dict(sizes))


def task_bytes(t, s):
    if t.get("bytes", "auto") != "auto":
        return ev(t["bytes"], s)
    size = {"f32": 4, "f64": 8, "i32": 4, "u32": 4, "i64": 8, "f16": 2, "bf16": 2,
            "fp8_e4m3": 1, "fp8_e5m2": 1}
    return sum(ev(b["count"], s) * size[b["type"]] * (2 if b["role"] == "inout" else 1)
               for b in t["buffers"])


# Baselines far from the roofs: a GEMM without tiling re-reads its operands through L1/L2
# (taken as 3 TFLOP/s, about what untiled SGEMMs reach on A100/H100-class parts), and
# one thread per row reads with a row-length stride (uncoalesced: 15% of bandwidth).
NAIVE_FLOPS = {"matmul": 3e12, "gemm_bf16_nt": 3e12, "gemm_bias_gelu_f16": 3e12,
               "attention_causal_f16": 3e12}
ROW_PER_THREAD = {"add_rmsnorm_bf16", "argmax", "batched_dot", "cross_entropy_bf16", "layernorm",
                  "layernorm_bf16", "matvec", "quant_fp8_rowwise", "rmsnorm", "rmsnorm_bf16",
                  "softmax", "softmax_bf16", "topk_f32", "embedding_bf16"}


def launch_time(byts, flops, peak, threads, steps, one_thread_blocks, bw_frac=0.5):
    res = RESIDENT_1 if one_thread_blocks else RESIDENT
    serial = steps * 30 / CLK * math.ceil(max(threads, 1) / res)
    return max(byts / (bw_frac * BW), flops / (0.5 * peak), serial)


def ndist(t):
    n = 1
    for b in t["buffers"]:
        if b["role"] == "out":
            continue
        init = b.get("init")
        if init is None:
            k = 1 if b["type"] in ("i32", "u32", "i64") else 3
        else:
            k = len(init) if isinstance(init, list) else 1
        n = max(n, k)
    return n


def main():
    rows, total = [], 0.0
    for name in sorted(SHAPE):
        t = json.load(open(os.path.join(HERE, name, "task.json")))
        s = t["sizes"]
        byts, flops = task_bytes(t, s), ev(t["flops"], s)
        bt, bs, rt, rs, r1 = SHAPE[name]
        base = launch_time(byts, flops, 2 * NAIVE_FLOPS.get(name, FP32 / 2), ev(bt, s), ev(bs, s),
                           0, 0.15 if name in ROW_PER_THREAD else 0.5)
        ref = launch_time(byts, flops, FP64, ev(rt, s), ev(rs, s), r1, 0.15)
        nd = ndist(t)
        nwrong = len([f for f in os.listdir(os.path.join(WRONG, name)) if f.endswith(".cu")])
        validate = nd * (base + ref)
        wrong = nwrong * nd * (base + ref)
        profile = (2 + 15) * 2 * base + 3 * (base + ref) + 10 * base
        check = validate + wrong + profile
        total += check
        shape = " ".join(f"{k}={v}" for k, v in s.items())
        rows.append(f"| `{name}` | {shape} | {byts / 1e6:.0f} | {flops / 1e9:.2f} | "
                    f"{1e6 * max(byts / BW, flops / FP32):.0f} | {1e3 * base:.2f} | "
                    f"{1e3 * ref:.2f} | {nd} | {check:.2f} |")
    print("| task | GPU `sizes` | MB moved | GFLOP | roofline µs (H200) | baseline ms (est.) "
          "| reference ms (est.) | input sets | gpu-check s (est.) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nEstimated GPU time of the validator and profiler checks of all {len(rows)} tasks: "
          f"{total:.0f} s (kernels only; host input generation and transfers come on top).")


if __name__ == "__main__":
    main()
