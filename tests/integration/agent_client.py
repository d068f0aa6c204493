"""A plain HTTP client of `specgen pool` for tests (docs/agent.md), independent of specgen's
own: it computes the task bundle's SHA-256 as the protocol says and submits jobs.

  agent_client.py URL TOKEN submit TASK_DIR N   -> the HTTP status of each of N submits
  agent_client.py URL TOKEN cancel ID...        -> cancel those jobs
  agent_client.py URL TOKEN big BYTES           -> the status of a POST of that many bytes
  agent_client.py URL TOKEN pin TASK_DIR SLOT ID -> submit one job pinned to SLOT
  agent_client.py URL TOKEN burst TASK_DIR SLOT N -> N jobs pinned to SLOT (busy), each
      cancelled while queued: N events, on one keep-alive connection; prints the last seq
  agent_client.py URL TOKEN check-run EVENTS.jsonl [DB]  -> every pool job ended once, every
      candidate recorded once; prints 'requeued N' and the slots that ran jobs
"""
import hashlib, json, os, sqlite3, sys, urllib.request, collections

url, token, cmd = sys.argv[1], sys.argv[2], sys.argv[3]


def request(method, path, body):
    req = urllib.request.Request(url + path, data=body, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        r = urllib.request.urlopen(req, timeout=30)
        return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def bundle(task):
    files = {}
    for n in os.listdir(task):
        p = os.path.join(task, n)
        if os.path.isfile(p) and not n.startswith('.'):
            files[n] = open(p, encoding='utf-8').read()
    h = hashlib.sha256()
    for n in sorted(files, key=lambda s: s.encode()):
        b = files[n].encode()
        h.update(n.encode() + b"\0" + str(len(b)).encode() + b"\0" + b)
    return files, h.hexdigest()


if cmd == "submit":
    files, hx = bundle(sys.argv[4])
    for i in range(int(sys.argv[5])):
        body = {"id": "t-%d" % i, "kind": "validate", "task": hx, "candidate": None,
                "task_files": files}
        st, text = request("POST", "/v1/jobs", json.dumps(body).encode())
        print(st, text.strip())
elif cmd == "cancel":
    for i in sys.argv[4:]:
        print(*request("POST", "/v1/jobs/%s/cancel" % i, b""))
elif cmd == "big":
    st, text = request("POST", "/v1/jobs", b"x" * int(sys.argv[4]))
    print(st, text.strip())
elif cmd == "pin":
    files, hx = bundle(sys.argv[4])
    body = {"id": sys.argv[6], "client": "tester", "kind": "validate", "task": hx,
            "candidate": None, "slot": int(sys.argv[5]), "task_files": files}
    print(*request("POST", "/v1/jobs", json.dumps(body).encode()))
elif cmd == "burst":
    import http.client, urllib.parse
    files, hx = bundle(sys.argv[4])
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    first = True
    for i in range(int(sys.argv[6])):
        body = {"id": "burst-%d" % i, "client": "burst", "kind": "validate", "task": hx,
                "candidate": None, "slot": int(sys.argv[5])}
        if first:
            body["task_files"] = files
            first = False
        conn.request("POST", "/v1/jobs", json.dumps(body), hdr)
        r = conn.getresponse()
        text = r.read()
        if r.status != 202:
            sys.exit("burst: submit %d: %d %s" % (i, r.status, text))
        conn.request("POST", "/v1/jobs/burst-%d/cancel" % i, "", hdr)
        r = conn.getresponse()
        r.read()
    conn.request("GET", "/v1/status", headers=hdr)
    print("event_seq", json.loads(conn.getresponse().read())["event_seq"])
elif cmd == "check-run":
    ends, starts, requeued = collections.Counter(), collections.Counter(), 0
    slots, cands, done = set(), collections.Counter(), collections.Counter()
    for line in open(sys.argv[4]):
        e = json.loads(line)
        if e["ev"] == "job_end":
            ends[e["job"]] += 1
        elif e["ev"] == "job_start":
            starts[e["job"]] += 1
            slots.add(e["slot_name"].split("/")[0])
        elif e["ev"] == "job_requeue":
            requeued += 1
        elif e["ev"] == "candidate" and e.get("status") == "submitted":
            cands[e["candidate"]] += 1
        elif e["ev"] == "job_done":
            done[e.get("candidate", "baseline")] += 1
    bad = [j for j in starts if ends[j] != 1]
    bad += ["candidate %s seen %d times" % (c, n) for c, n in cands.items() if n != 1]
    bad += ["outcome of %s %d times" % (c, n) for c, n in done.items() if n != 1]
    if len(sys.argv) > 5:
        db = sqlite3.connect(sys.argv[5])
        rows = db.execute("SELECT n, count(*) FROM candidate GROUP BY task, n").fetchall()
        bad += ["db: candidate %s %d rows" % r for r in rows if r[1] != 1]
        jobs = db.execute("SELECT count(*), count(DISTINCT pool_job) FROM job").fetchone()
        if jobs[0] != jobs[1] or jobs[0] != len(starts):
            bad.append("db: %d job rows, %d distinct, %d jobs ran" % (jobs[0], jobs[1], len(starts)))
    print("jobs %d, requeued %d, agents %s, problems: %s" %
          (len(starts), requeued, " ".join(sorted(slots)), "; ".join(map(str, bad)) or "none"))
    sys.exit(1 if bad else 0)
