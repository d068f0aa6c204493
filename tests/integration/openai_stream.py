"""Streams from `specgen replay-llm` with the official openai package (a real peer) and
checks that reasoning, content and usage arrive exactly as the trace says.

usage: openai_stream.py PORT TRACE DIALECT   (prints TAP lines, exits 1 on a failure)
"""
import json
import sys

from openai import OpenAI

port, trace_path, dialect = sys.argv[1], sys.argv[2], sys.argv[3]
reasoning = answer = ""
for line in open(trace_path):
    o = json.loads(line)
    reasoning += o.get("reasoning", "")
    answer += o.get("answer", "") if "fork_at" not in o and "fork_after" not in o else ""

client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test-not-a-real-key", max_retries=0)
n, failed = 0, False


def tap(ok, desc, detail=""):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - openai {dialect}: {desc}")
    if not ok:
        failed = True
        for d in str(detail).splitlines()[:20]:
            print("#   " + d)


models = [m.id for m in client.models.list()]
tap(models == ["replay"], "models.list() reads /v1/models", models)

# Chat: reasoning in delta.reasoning (vLLM >= 0.11) or delta.reasoning_content (others),
# both extra fields that the package keeps on the delta object.
got_r = got_c = ""
usage = finish = None
chunks = 0
stream = client.chat.completions.create(
    model="replay", messages=[{"role": "user", "content": "Make vector_scale faster."}],
    stream=True, stream_options={"include_usage": True})
for chunk in stream:
    chunks += 1
    if chunk.usage is not None:
        usage = chunk.usage
    if not chunk.choices:
        continue
    ch = chunk.choices[0]
    d = ch.delta
    extra = d.model_extra or {}
    got_r += extra.get("reasoning") or extra.get("reasoning_content") or ""
    got_c += d.content or ""
    finish = ch.finish_reason or finish
if dialect == "raw":  # no reasoning parser: the tags stay in content
    want_c, want_r = "<think>\n" + reasoning + "\n</think>\n\n" + answer, ""
else:
    want_c, want_r = answer, reasoning
tap(got_r == want_r, "chat reasoning arrives whole and in order", f"got {got_r[:200]!r}\nwant {want_r[:200]!r}")
tap(got_c == want_c, "chat content arrives whole and in order", f"got {got_c[:200]!r}\nwant {want_c[:200]!r}")
tap(finish == "stop", "chat finish_reason is stop", finish)
tap(usage is not None and usage.completion_tokens > 100 and usage.prompt_tokens > 0,
    "chat usage is read", usage)
if dialect in ("sglang", "deepseek") and usage is not None:
    rt = (usage.model_extra or {}).get("reasoning_tokens")
    if rt is None and usage.completion_tokens_details is not None:
        rt = usage.completion_tokens_details.reasoning_tokens
    tap(rt is not None and 0 < rt < usage.completion_tokens, "chat usage carries reasoning_tokens", usage)

# Completions: raw text, reasoning inside <think> tags.
text = ""
usage = finish = None
stream = client.completions.create(model="replay", prompt="Make vector_scale faster.", stream=True,
                                   stream_options={"include_usage": True}, max_tokens=4000)
for chunk in stream:
    if chunk.usage is not None:
        usage = chunk.usage
    if chunk.choices:
        text += chunk.choices[0].text or ""
        finish = chunk.choices[0].finish_reason or finish
want = "<think>\n" + reasoning + "\n</think>\n\n" + answer
tap(text == want, "completions text arrives whole and in order", f"got {text[:200]!r}\nwant {want[:200]!r}")
tap(finish == "stop" and usage is not None and usage.completion_tokens > 100, "completions finish and usage",
    f"{finish} {usage}")

# A fork: completions prompt that closes the reasoning gets the fork answer.
prefix = reasoning[: reasoning.index("stops at n.") + len("stops at n.")]
stream = client.completions.create(model="replay", stream=True,
                                   prompt="vector_scale\n<think>\n" + prefix + "\n</think>\n\n")
text = "".join(c.choices[0].text for c in stream if c.choices)
tap("vload4" in text and "```opencl" in text, "a fork gets the float4 answer", text[:300])

# max_tokens cuts the stream with finish_reason length.
stream = client.chat.completions.create(model="replay", messages=[{"role": "user", "content": "x"}],
                                        stream=True, max_tokens=7)
fin = [c.choices[0].finish_reason for c in stream if c.choices and c.choices[0].finish_reason]
tap(fin == ["length"], "max_tokens ends with finish_reason length", fin)
sys.exit(1 if failed else 0)
