"""`specgen pool --kv-listen --kv-memory --kv-requirepass-file` (issue #18): the agent's
kvstore gives its memory to a job that needs it and takes it back after. On PoCL the
host backend stands in: --kv-memory 96M is shared with the jobs. redis-cli fills the
store and two redis-cli clients stay connected throughout (-r -1: one connection each);
a validation job of suites/demo/vector_scale (64 MiB of buffers) is posted over HTTP; its
job_start event says the budget fell from 96 to 31 MiB and its job_end that it came back;
/metrics shows the shrunk budget while the job runs and the evictions; the clients never
see an error and a key they keep reading survives; redis-py talks to it after."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request

from kvlib import SPECGEN, finish, ok, pick_port, skip

MiB = 1 << 20
ROOT = os.environ.get("SPECGEN_ROOT", os.path.join(os.path.dirname(__file__), "../../.."))
TASK = os.path.join(ROOT, "suites/demo/vector_scale")
# Correct, and slow enough (a loop whose result cancels out) that the job runs for a
# while on the CPU: long enough to read /metrics while it runs.
SLOW = """//@launch vector_scale grid=ceil_div(N,64) block=64
__kernel void vector_scale(__global const float *x, __global float *y, float alpha, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    float v = x[i], t = 0.0f;
    for (int k = 0; k < 400; k++) t += v * (float)k;
    y[i] = alpha * v + (t - t);
}
"""
try:
    import redis
except ImportError:
    redis = None


def bundle(folder):
    files = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.isfile(p) and not name.startswith("."):
            files[name] = open(p, encoding="utf-8").read()
    h = hashlib.sha256()
    for name in sorted(files, key=lambda n: n.encode()):
        data = files[name].encode()
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest(), files


def http(port, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def metrics(port):
    out = {}
    for line in http(port, "/metrics").splitlines():
        if line.startswith("specgen_kv_"):
            k, v = line.split()
            if k.endswith('{device="host"}'):  # PoCL: the one host kvstore
                k = k[: k.index("{")]
            out[k] = int(float(v))
    return out


tmp = tempfile.mkdtemp(prefix="pool-kv-")
r = subprocess.run([SPECGEN, "pool", "--listen", "127.0.0.1:0", "--devices", "opencl:0",
                    "--kv-listen", "0.0.0.0:0", "--cache-dir", tmp], capture_output=True, timeout=60)
ok(r.returncode != 0 and b"--kv-requirepass-file" in r.stderr,
   "a kvstore beyond loopback without --kv-requirepass-file is refused, with a message", r.stderr)
r = subprocess.run([SPECGEN, "pool", "--kv-listen", "127.0.0.1:0", "--kv-memory", "lots"],
                   capture_output=True, timeout=60)
ok(r.returncode == 2 and b"--kv-memory" in r.stderr, "a bad --kv-memory is named", r.stderr)
passfile = os.path.join(tmp, "kv.pass")
with open(passfile, "w") as f:
    f.write("s3cret\n")
os.chmod(passfile, 0o600)
port, kport = pick_port(), pick_port()
log = open(os.path.join(tmp, "agent.log"), "w+")
agent = subprocess.Popen([SPECGEN, "pool", "--listen", f"127.0.0.1:{port}", "--devices", "opencl:0",
                          "--kv-listen", f"127.0.0.1:{kport}", "--kv-memory", "96M",
                          "--kv-requirepass-file", passfile, "--cache-dir", tmp],
                         stdout=log, stderr=subprocess.STDOUT)
watchers = []
try:
    for _ in range(100):
        try:
            http(port, "/v1/status")
            break
        except OSError:
            time.sleep(0.1)
    cli = ["redis-cli", "-p", str(kport), "-a", "s3cret", "--no-auth-warning"]
    ok(subprocess.run(cli + ["PING"], capture_output=True).stdout == b"PONG\n",
       "the agent's kvstore answers redis-cli with the password from the file")
    noauth = subprocess.run(["redis-cli", "-p", str(kport), "GET", "x"], capture_output=True)
    ok(b"NOAUTH" in noauth.stdout + noauth.stderr, "without it: NOAUTH")
    fill = b"".join(b"*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$%d\r\n" % (len(str(i)) + 1, i, MiB) +
                    os.urandom(MiB) + b"\r\n" for i in range(80))
    r = subprocess.run(cli + ["--pipe"], input=fill, capture_output=True)
    ok(r.returncode == 0 and b"errors: 0, replies: 80" in r.stdout,
       "redis-cli --pipe stores 80 values of 1 MiB", r.stdout)
    w1 = open(os.path.join(tmp, "w1.out"), "w+")
    w2 = open(os.path.join(tmp, "w2.out"), "w+")
    watchers = [subprocess.Popen(cli + ["-r", "-1", "-i", "0.05", "CONFIG", "GET", "maxmemory"],
                                 stdout=w1, stderr=subprocess.STDOUT),
                subprocess.Popen(cli + ["-r", "-1", "-i", "0.05", "EXISTS", "k79"],
                                 stdout=w2, stderr=subprocess.STDOUT)]
    time.sleep(0.5)
    m = metrics(port)
    ok(m.get("specgen_kv_budget_bytes") == 96 * MiB and m.get("specgen_kv_clients") == 2,
       "/metrics: the whole budget, two clients", m)
    raw = http(port, "/metrics")
    ok('specgen_kv_budget_bytes{device="host"} %d' % (96 * MiB) in raw,
       "/metrics labels each kvstore by its device (PoCL: the one host kvstore)", raw[-600:])

    h, files = bundle(TASK)
    reply = json.loads(http(port, "/v1/jobs", {"kind": "validate", "task": h, "task_files": files,
                                               "candidate": SLOW, "id": "kvjob"}))
    ok(reply.get("state") == "queued", "the job is accepted", reply)
    seen_shrunk, ended, events = False, False, []
    deadline = time.time() + 120
    while not ended and time.time() < deadline:
        m = metrics(port)
        if m.get("specgen_kv_budget_bytes", 0) < 96 * MiB:
            seen_shrunk = seen_shrunk or m
        st = json.loads(http(port, "/v1/jobs/kvjob"))
        ended = st.get("state") == "ended"
        time.sleep(0.02)
    ok(ended, "the job ends", st)
    ok(st.get("result", {}).get("verdict") == "pass", "and passes", st.get("result"))
    ok(seen_shrunk and seen_shrunk["specgen_kv_budget_bytes"] == 31 * MiB and
       seen_shrunk["specgen_kv_jobs_need_bytes"] > 64 * MiB,
       "/metrics shows the budget at 31 MiB while the job runs", seen_shrunk)
    events = json.loads(http(port, "/v1/events?after=0"))["events"]
    start = [e for e in events if e.get("ev") == "job_start"]
    end = [e for e in events if e.get("ev") == "job_end"]
    kv0 = start[0].get("kv", {}) if start else {}
    ok(kv0.get("budget_from") == 96 * MiB and kv0.get("budget_to") == 31 * MiB and
       kv0.get("need", 0) >= 64 * MiB and kv0.get("evicted", 0) >= 49,
       "job_start: the budget gave the job's deficit (96 -> 31 MiB, LRU keys evicted)", start)
    kv1 = end[0].get("kv", {}) if end else {}
    ok(kv1.get("budget_to") == 96 * MiB, "job_end: the budget is back at 96 MiB", end)
    m = metrics(port)
    ok(m.get("specgen_kv_budget_bytes") == 96 * MiB and m.get("specgen_kv_jobs_need_bytes") == 0
       and m.get("specgen_kv_evictions_total", 0) >= 49 and m.get("specgen_kv_hits_total", 0) >= 1,
       "/metrics after: budget back, evictions and hits counted", m)
    time.sleep(0.3)
    ok(m.get("specgen_kv_clients", 0) >= 2, "the redis-cli clients stayed connected", m)
    for w in watchers:
        w.send_signal(signal.SIGTERM)
        w.wait(5)
    w1.seek(0)
    w2.seek(0)
    seen, hot = w1.read(), w2.read()
    ok("Error" not in seen + hot and "rror" not in seen + hot,
       "the connected clients never saw an error", (seen + hot)[-400:])
    values = [int(x) for x in seen.split() if x.isdigit()]
    ok(values and values[0] == 96 * MiB and 31 * MiB in values and values[-1] == 96 * MiB,
       "CONFIG GET maxmemory on one connection saw 96M, 31M, then 96M", sorted(set(values)))
    ok(hot.split() and set(hot.split()) == {"1"},
       "a key the clients keep reading survives the shrink (LRU, moved below the limit)",
       sorted(set(hot.split())))
    if redis is None:
        skip("redis-py stores 40 MiB in the room given back",
             "redis-py is not installed (make deps installs it)")
    else:
        rp = redis.Redis(port=kport, password="s3cret")
        rp.set("after", b"a" * (40 * MiB))
        ok(rp.strlen("after") == 40 * MiB, "redis-py stores 40 MiB in the room given back")
finally:
    for w in watchers:
        if w.poll() is None:
            w.kill()
    agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(15)
    except subprocess.TimeoutExpired:
        agent.kill()
    ok(agent.returncode == 0, "the agent stops cleanly on SIGTERM", agent.returncode)
    log.seek(0)
    print("# " + "\n# ".join(log.read().splitlines()[-5:]))
    subprocess.run(["rm", "-rf", tmp])
finish()
