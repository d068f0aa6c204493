#!/usr/bin/env bash
# The pool agent against slow and greedy clients, on loopback (PoCL): a flood of connections
# that send part of their headers and stop (from 127.0.0.1) leaves a request from 127.0.0.2
# served within a second; the slow ones, and one that trickles a byte at a time, are closed
# at --request-timeout; a long-poll still waits longer than that; libmicrohttpd's own lines
# go through the log (no raw lines on stderr). Then refusals of bad input: "slot": -1,
# ?after=-5, ?wait=abc, a slot path with a sign; no server path in an error; the cap on the
# tasks clients may store (429).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "pool agents on PoCL"
. "$SPECGEN_ROOT/tests/integration/agent_lib.bash"

check_output "--help names --request-timeout and the connection limits" \
    "--max-connections-per-address" "$SPECGEN" pool --help
check_fails "--request-timeout 0 is refused, exit 2" 2 \
    "$SPECGEN" pool --devices opencl:0 --request-timeout 0
check_fails "--max-connections-per-address above --max-connections is refused" 2 \
    "$SPECGEN" pool --devices opencl:0 --max-connections 8 --max-connections-per-address 9
check_fails "--max-tasks 0 is refused" 2 "$SPECGEN" pool --devices opencl:0 --max-tasks 0

# ---- item 24.2: the flood ----
cat >"$out/flood.py" <<'EOF'
"""flood.py PORT TOKEN N: N connections from 127.0.0.1 that send part of their headers and
stop, and one from 127.0.0.3 that sends a byte every 0.4 s; then a request from 127.0.0.2;
then how long until the agent closed them, from the flood's start (at most 8 s)."""
import http.client, select, socket, sys, time
port, token, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
slow = []
t_start = time.time()
for i in range(n):
    s = socket.socket()
    s.settimeout(3)
    s.bind(("127.0.0.1", 0))
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    except OSError:
        pass  # refused or reset at once: the agent's per-address limit
    slow.append(s)
trickle = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.3", 0))
t_trickle = time.time()
t0 = time.time()
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=("127.0.0.2", 0))
try:
    c.request("GET", "/v1/status", headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    r.read()
    print("from 127.0.0.2: status %d in %.3f s" % (r.status, time.time() - t0))
    print("served within 2 s" if r.status == 200 and time.time() - t0 < 2 else "too slow")
except OSError as e:
    print("from 127.0.0.2: no answer after %.3f s: %s" % (time.time() - t0, e))
opened = set(slow)
trickle_closed = None
header = b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Trickle: " + b"a" * 100
while (opened or trickle_closed is None) and time.time() - t_start < 8:
    if trickle_closed is None:
        try:
            trickle.send(header[:1])
            header = header[1:] or b"a"
        except OSError:
            trickle_closed = time.time() - t_trickle
    rl, _, _ = select.select(list(opened) + ([trickle] if trickle_closed is None else []), [],
                             [], 0.4)
    for s in rl:
        try:
            d = s.recv(4096)
        except OSError:
            d = b""
        if d:
            continue
        if s is trickle:
            trickle_closed = time.time() - t_trickle
        else:
            opened.discard(s)
print("slow connections still open %.1f s after the flood began: %d"
      % (time.time() - t_start, len(opened)))
print("the trickling one: %s" % ("closed after %.1f s" % trickle_closed
                                  if trickle_closed else "still open"))
EOF
# raw_lines LOG: the lines that are neither our log's nor the agent's own "specgen pool:" ones.
raw_lines() {
    local ours='^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (debug|info|warn|error) |specgen pool: )'
    grep -vE "$ours" "$1"
    echo "raw $(grep -cvE "$ours" "$1") of $(wc -l <"$1") lines"
}
start_agent f --token-file "$out/token" --request-timeout 2s
timeout 30 python3 "$out/flood.py" "$port_f" "$token" 600 >"$out/flood.out" 2>&1
# Within 2 s: while the flood's connections are still open (--request-timeout 2s closes
# them); tens of milliseconds here, but a loaded machine may add a second.
check_output "600 slow connections from 127.0.0.1: a request from 127.0.0.2 is served while they are open" \
    "^served within 2 s" cat "$out/flood.out"
check_output "  ... the slow ones are closed at --request-timeout (2 s)" \
    "still open [0-9.]+ s after the flood began: 0$" cat "$out/flood.out"
check_output "  ... and one that trickles a byte every 0.4 s too (the deadline is for the whole request)" \
    "the trickling one: closed after [2-5]\.[0-9] s" cat "$out/flood.out"
check_output "  ... the agent still answers" '"queued":0' agent_status "$port_f"
check_output "  ... stderr has no raw libmicrohttpd lines (only our log lines, at most a few)" \
    "^raw 0 of [0-9] lines$" raw_lines "$out/f.log"
check_output "a long-poll waits 4 s, past --request-timeout, and is answered" \
    '^200 [4-9]\.' curl -s -o /dev/null -w '%{http_code} %{time_total}' -m 10 \
    -H "Authorization: Bearer $token" "http://127.0.0.1:$port_f/v1/events?after=0&wait=4"

# ---- item 24.9 (agent): bad numbers, paths in errors, the task cap ----
# req PORT METHOD PATH [BODY]: "STATUS BODY" on one line, with the token (BODY: as curl -d
# takes it, @FILE for a file).
req() {
    local res
    res=$(curl -s -m 10 -w ' %{http_code}' -H "Authorization: Bearer $token" -X "$2" \
        ${4:+-d "$4"} "http://127.0.0.1:$1$3")
    res=${res//$'\n'/}
    echo "${res##* } ${res% *}"
}
hex=$(printf '%064d' 0)
check_output '"slot": -1 in a job: 400 naming it' \
    '^400 .*\\"slot\\" -1: this agent has slots 0\.\.0 \(leave' \
    req "$port_f" POST /v1/jobs "{\"kind\":\"validate\",\"task\":\"$hex\",\"slot\":-1}"
check_output '?after=-5: 400 naming it' '^400 .*after=-5 is not an event number' \
    req "$port_f" GET '/v1/events?after=-5'
check_output '?after=+5: 400' '^400 .*after=\+5 is not an event number' \
    req "$port_f" GET '/v1/events?after=%2B5'
check_output '?wait=abc: 400 (it meant 0 before)' '^400 .*wait=abc is not a number of seconds' \
    req "$port_f" GET '/v1/events?wait=abc'
check_output '?after=3&wait=0: still fine' '^200 .*"events":\[\]' \
    req "$port_f" GET '/v1/events?after=3&wait=0'
check_output '/v1/slots/+0/role: 404 (no sign in a slot number)' '^404 ' \
    req "$port_f" PUT /v1/slots/+0/role '{"role":"profile"}'

# bundle.py TASK_DIR [NAME BYTES [FIELD]]: a job with that task's files (plus a file NAME of
# BYTES, plus an unknown FIELD in task.json), hashed as docs/agent.md says.
cat >"$out/bundle.py" <<'PY'
import hashlib, json, os, sys
files = {n: open(os.path.join(sys.argv[1], n), encoding="utf-8").read()
         for n in os.listdir(sys.argv[1]) if not n.startswith(".")}
if len(sys.argv) > 3:
    files[sys.argv[2]] = "x" * int(sys.argv[3])
if len(sys.argv) > 4:
    t = json.loads(files["task.json"])
    t[sys.argv[4]] = 1
    files["task.json"] = json.dumps(t)
h = hashlib.sha256()
for n in sorted(files, key=lambda s: s.encode()):
    b = files[n].encode()
    h.update(n.encode() + b"\0" + str(len(b)).encode() + b"\0" + b)
print(json.dumps({"kind": "validate", "task": h.hexdigest(), "candidate": None,
                  "task_files": files}))
PY
# A task that does not load (an unknown field in task.json): the message names the file and
# the field, not the agent's cache folder.
python3 "$out/bundle.py" "$task" pad 1 lang >"$out/bad.json"
req "$port_f" POST /v1/jobs "@$out/bad.json" >"$out/bad.out"
check_output "a task that does not load: 400 naming task.json and the field" \
    '^400 .*task\.json.*unknown field .*lang' cat "$out/bad.out"
check "  ... without the agent's cache folder in it" \
    bash -c "! grep -qF -- '$out/cache-f' '$out/bad.out' && ! grep -q '\.tmp-' '$out/bad.out'"
: >"$out/notadir"
start_agent g --token-file "$out/token" --cache-dir "$out/notadir"
python3 "$out/bundle.py" "$task" >"$out/plain.json"
req "$port_g" POST /v1/jobs "@$out/plain.json" >"$out/store.out"
check_output "a cache folder that cannot be written: 500, saying so" \
    '^500 .*cannot store the task in its cache folder' cat "$out/store.out"
check "  ... without its path (the agent's log has it)" \
    bash -c "! grep -qF -- '$out/notadir' '$out/store.out' && grep -qF -- '$out/notadir' '$out/g.log'"

# The tasks clients may store: 2 tasks, then 429; and 1M of bytes, then 429.
start_agent h --token-file "$out/token" --max-tasks 2 --max-task-bytes 1M
for i in 1 2 3; do
    python3 "$out/bundle.py" "$task" "note$i" "$i" >"$out/job$i.json"
    req "$port_h" POST /v1/jobs "@$out/job$i.json"
done >"$out/cap.out"
check_output "--max-tasks 2: a third new task gets 429 with a message" \
    '^429 .*stores no more tasks: clients stored 2 .*--max-tasks' sed -n 3p "$out/cap.out"
check_output "  ... the first two were taken" '^202 [^#]*#202 ' tr '\n' '#' <"$out/cap.out"
check_output "  ... a task it holds can still be sent again" '^202 ' \
    req "$port_h" POST /v1/jobs "@$out/job1.json"
start_agent i --token-file "$out/token" --max-task-bytes 1M
for i in 1 2; do
    python3 "$out/bundle.py" "$task" pad "60000$i" >"$out/big$i.json"
    req "$port_i" POST /v1/jobs "@$out/big$i.json"
done >"$out/bytes.out"
check_output "--max-task-bytes 1M: a second task of 600k gets 429 naming the option" \
    '^202 [^#]*#429 .*--max-task-bytes' tr '\n' '#' <"$out/bytes.out"
finish
