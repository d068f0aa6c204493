#!/usr/bin/env python3
"""How often does re-tokenising generated text differ from the ids that generated it, and
what share of a fork's prefix does the prefix cache lose at the first difference?
(issue 29; docs/speculation.md, "Forks as token ids").

A fork sent as text is the rendered prompt + the reasoning's text + the fork's suffix; the
server tokenizes it again. Where that re-tokenisation differs from the ids the server
generated (and cached), its prefix cache misses from that point on. This script measures it
with a real tokenizer: SmolLM2-135M-Instruct's, through a running llama-cpp-python server's
/extras/tokenize and /extras/detokenize (the server itself takes only text prompts).

Method: the model (llama_cpp.Llama on the same GGUF, which yields token ids) generates
--n answers of up to --tokens tokens to chat-templated prompts at --temperature. For each,
with ref = prompt ids + generated ids[:k] at every --every generated tokens (the fork points)
and at the end:
  text  = prompt text + detokenize(generated ids[:k]) + suffix
  retok = tokenize(text)
  m     = the first index where retok differs from ref (len(ref) when none does)
  lost  = (len(ref) - m) / len(ref): the share of the fork's shared prefix the cache misses
and the same without the suffix (the boundary with the suffix set apart). Whole-answer
round trip: tokenize(detokenize(generated)) == generated.
Prints one summary line (and --json FILE writes every fork point).

Usage: retokenize.py --url http://127.0.0.1:PORT --gguf PATH [--n 10] [--tokens 200]
"""
import argparse
import json
import sys
import urllib.request

PROMPTS = [
    "Write a CUDA kernel that scales a vector by a constant. Think step by step first.",
    "Explain how to make a softmax over rows of a matrix fast on a GPU.",
    "How would you tile a matrix multiplication for shared memory? Reason about it.",
    "What limits the speed of a reduction kernel, and how do you fix it?",
    "Describe, with code, a parallel prefix sum in CUDA.",
    "Why are coalesced memory accesses faster? Give an example kernel.",
    "Plan an optimized transpose kernel, then write it.",
    "How do you avoid bank conflicts in shared memory? Show code.",
    "Write an OpenCL kernel that adds two arrays, handling the tail.",
    "Think about the occupancy of a kernel that uses 96 registers per thread.",
    "Compare float4 loads with scalar loads for a bandwidth-bound kernel.",
    "Outline a fused layernorm kernel: what goes in registers, what in shared memory?",
]
SYSTEM = "You are an expert GPU programmer."
SUFFIX = "\n</think>\n\nHere is the complete kernel source, launch lines included, in one ```cuda code block:\n\n"


def post(url, path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def tokenize(url, text):
    return post(url, "/extras/tokenize", {"input": text})["tokens"]


def detokenize(url, ids):
    return post(url, "/extras/detokenize", {"tokens": ids})["text"]


def first_diff(a, ref):
    n = min(len(a), len(ref))
    for i in range(n):
        if a[i] != ref[i]:
            return i
    return n  # ref is a prefix of a (or a of ref: then the cache holds all of a)


def chatml(user):
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--every", type=int, default=16)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    import llama_cpp  # from .venv, as the server

    llm = llama_cpp.Llama(model_path=a.gguf, n_ctx=2048, n_threads=1, seed=a.seed, verbose=False)
    eos = {llm.token_eos(), 0, 2}  # <|endoftext|> 0, <|im_end|> 2
    rows, gens, gens_bad, examples = [], 0, 0, []
    for g in range(a.n):
        prompt_text = chatml(PROMPTS[g % len(PROMPTS)])
        prompt_ids = tokenize(a.url, prompt_text)
        llm.reset()
        llm.set_seed(a.seed + g)
        gen = []
        for tok in llm.generate(prompt_ids, temp=a.temperature, top_p=0.95, top_k=40,
                                reset=True):
            if tok in eos or len(gen) >= a.tokens:
                break
            gen.append(tok)
        gens += 1
        whole = tokenize(a.url, detokenize(a.url, gen))
        if whole != gen:
            gens_bad += 1
            i = first_diff(whole, gen)
            if len(examples) < 6:
                examples.append({"gen": g, "at": i, "ids": gen[max(0, i - 1):i + 2],
                                 "retok": whole[max(0, i - 1):i + 2],
                                 "text": detokenize(a.url, gen[max(0, i - 1):i + 2])})
        points = sorted(set(list(range(a.every, len(gen), a.every)) + [len(gen)]))
        for k in points:
            ref = prompt_ids + gen[:k]
            body = prompt_text + detokenize(a.url, gen[:k])
            m = first_diff(tokenize(a.url, body + SUFFIX), ref)
            m0 = first_diff(tokenize(a.url, body), ref)
            rows.append({"gen": g, "k": k, "prefix": len(ref), "prompt": len(prompt_ids),
                         "first_diff": m, "first_diff_no_suffix": m0})
        print(f"# generation {g}: {len(gen)} tokens, round trip "
              f"{'same' if whole == gen else 'DIFFERS'}", file=sys.stderr)
    n = len(rows)
    miss = [r for r in rows if r["first_diff"] < r["prefix"]]
    miss0 = [r for r in rows if r["first_diff_no_suffix"] < r["prefix"]]
    lost = [(r["prefix"] - r["first_diff"]) / r["prefix"] for r in rows]
    lost_r = [(r["prefix"] - r["first_diff"]) / max(1, r["prefix"] - r["prompt"]) for r in rows]
    in_reasoning = [r for r in miss if r["first_diff"] < r["prefix"] - 1]
    # Differences per generated token: a generation's first difference (at most one counted
    # each: after it the prefix is lost anyway), over the tokens seen before it (or all).
    first, exposure = {}, {}
    for r in rows:
        g = r["gen"]
        exposure[g] = max(exposure.get(g, 0), r["k"])
        if r["first_diff"] < r["prefix"]:
            first[g] = min(first.get(g, 1 << 30), r["first_diff"] - r["prompt"])
    seen = sum(first.get(g, exposure[g]) for g in exposure)
    rate = len(first) / max(1, seen)
    summary = {
        "differences": len(first), "tokens_seen": seen, "per_1000_tokens": 1000 * rate,
        "generations": gens, "generations_round_trip_differs": gens_bad,
        "fork_points": n, "forks_differ": len(miss), "forks_differ_no_suffix": len(miss0),
        "forks_differ_before_last_token": len(in_reasoning),
        "lost_share_mean": sum(lost) / max(1, n),
        "lost_share_of_reasoning_mean": sum(lost_r) / max(1, n),
        "lost_share_max": max(lost) if lost else 0, "examples": examples,
    }
    if a.json:
        json.dump({"summary": summary, "rows": rows}, open(a.json, "w"), indent=1)
    print(f"retokenize: {gens} generations ({a.tokens} tokens max, temperature "
          f"{a.temperature}): the round trip differs in {gens_bad}; {n} fork points: "
          f"{len(miss)} differ from the generated ids ({len(miss0)} without the suffix; "
          f"{len(in_reasoning)} before the last prefix token); prefix lost at the first "
          f"difference: mean {100 * summary['lost_share_mean']:.1f}% of the fork's prefix "
          f"({100 * summary['lost_share_of_reasoning_mean']:.1f}% of its reasoning), max "
          f"{100 * summary['lost_share_max']:.1f}%; {len(first)} first differences in {seen} "
          f"generated tokens = {1000 * rate:.2f} per 1000")
    for e in examples:
        print(f"  e.g. generation {e['gen']} at id {e['at']}: generated {e['ids']} "
              f"re-tokenized {e['retok']} ({e['text']!r})")


if __name__ == "__main__":
    main()
