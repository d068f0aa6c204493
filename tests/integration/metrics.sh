#!/usr/bin/env bash
# Every /metrics of our own passes `promtool check metrics` and carries specgen_build_info:
# the pool agent's (with its embedded kvstore's figures), optimize's and campaign's
# (--metrics-listen, scraped while they run). --metrics-listen keeps the agent's token rule:
# refused beyond loopback without --metrics-token-file; with a token, 401 without it.
# (replay-llm's /metrics imitates vLLM's and SGLang's names, with ':': exempt, a mimic.)
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
task=suites/demo/vector_scale
if ! command -v promtool >/dev/null; then
    skip "promtool checks" "no promtool (Debian's prometheus package: make deps)"
    finish
fi
need_opencl "metrics of runs on PoCL"
echo "m-$RANDOM-$RANDOM" >"$out/token"
chmod 600 "$out/token"
token=$(cat "$out/token")

# promtool_ok DESC URL [CURL ARGS...]: the scrape passes promtool and has build_info.
promtool_ok() {
    local desc=$1 url=$2
    shift 2
    curl -sf -m 5 "$@" "$url" >"$out/scrape.txt"
    cat "$out/scrape.txt" >>"$out/all.txt"
    local lint
    if lint=$(promtool check metrics <"$out/scrape.txt" 2>&1); then ok "$desc: promtool"; else
        not_ok "$desc: promtool"
        printf '#   %s\n' "${lint//$'\n'/$'\n'#   }"
    fi
    check_output "  ... specgen_build_info with the version, value 1" \
        '^specgen_build_info\{version="[0-9.]+".*\} 1$' cat "$out/scrape.txt"
}

# wait_log FILE PATTERN: up to 20 s for a line in FILE.
wait_log() {
    local i
    for ((i = 0; i < 400; i++)); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
port_of() { grep -o 'metrics at http://127.0.0.1:[0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }

# ---- the pool agent, with a kvstore in it ----
"$SPECGEN" pool --listen 127.0.0.1:0 --devices opencl:0 --cache-dir "$out/cache" \
    --kv-listen 127.0.0.1:0 --kv-memory 16M --token-file "$out/token" >"$out/pool.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_log "$out/pool.log" serving
pport=$(grep -o '127.0.0.1:[0-9]*' "$out/pool.log" | head -1 | cut -d: -f2)
promtool_ok "the pool agent's /metrics" "http://127.0.0.1:$pport/metrics" \
    -H "Authorization: Bearer $token"
check_output "  ... with the kvstore's figures" '^specgen_kv_budget_bytes' cat "$out/scrape.txt"
check_output "  ... component pool" 'component="pool"' cat "$out/scrape.txt"

# ---- optimize, scraped while it runs (a token: 401 without it) ----
"$SPECGEN" optimize $task --device opencl --speed 0.5 --db none --out "$out/opt" \
    --metrics-listen 127.0.0.1:0 --metrics-token-file "$out/token" >"$out/opt.out" 2>"$out/opt.log" &
opid=$!
on_exit "kill $opid 2>/dev/null"
wait_log "$out/opt.log" 'metrics at'
oport=$(port_of "$out/opt.log")
check_output "optimize says where its metrics are, and that a token is needed" \
    'metrics at http://127.0.0.1:[0-9]+/metrics \(token required\)' cat "$out/opt.log"
check_output "  ... without the token: 401" '^401' \
    curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$oport/metrics"
check_output "  ... a wrong one: 401" '^401' \
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer x$token" \
    "http://127.0.0.1:$oport/metrics"
check_output "  ... another path: 404" '^404' \
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
    "http://127.0.0.1:$oport/"
wait_log "$out/opt.log" 'candidate 1' # some candidates and forks counted
promtool_ok "optimize's /metrics" "http://127.0.0.1:$oport/metrics" -H "Authorization: Bearer $token"
check_output "  ... component optimize" 'component="optimize"' cat "$out/scrape.txt"
for m in specgen_tasks specgen_iterations_total specgen_candidates_total specgen_forks_total \
    specgen_tokens_total specgen_feedback_latency_seconds_bucket \
    specgen_llm_first_token_seconds_bucket specgen_pool_utilisation_ratio; do
    check_output "  ... has $m" "^$m[{ ]" cat "$out/scrape.txt"
done
check_output "  ... the task runs" '^specgen_tasks\{state="running"\} 1$' cat "$out/scrape.txt"
kill -INT $opid 2>/dev/null
wait $opid 2>/dev/null

# ---- campaign ----
"$SPECGEN" campaign suites/demo --device opencl --speed 0.5 --concurrency 2 --db none \
    --out "$out/camp" --metrics-listen 127.0.0.1:0 >"$out/camp.out" 2>"$out/camp.log" &
cpid=$!
on_exit "kill $cpid 2>/dev/null"
wait_log "$out/camp.log" 'metrics at'
cport=$(port_of "$out/camp.log")
wait_log "$out/camp.log" 'started'
promtool_ok "campaign's /metrics (loopback, no token)" "http://127.0.0.1:$cport/metrics"
check_output "  ... component campaign" 'component="campaign"' cat "$out/scrape.txt"
check_output "  ... the suite's third task is queued" '^specgen_tasks\{state="queued"\} 1$' \
    cat "$out/scrape.txt"
kill -INT $cpid 2>/dev/null
wait $cpid 2>/dev/null

# ---- the Grafana dashboard: its queries parse, and every metric it reads is served ----
python3 - "$SPECGEN_ROOT/deploy/grafana/specgen.json" "$out/rules.yml" "$out/names.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"].replace("$job", ".*") for p in d["panels"] for t in p["targets"]]
with open(sys.argv[2], "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, e in enumerate(exprs):
        f.write("      - record: dashboard:q%d\n        expr: %s\n" % (i, json.dumps(e)))
names = sorted({n for e in exprs for n in re.findall(r"\b(specgen_[a-z_]+)", e)})
open(sys.argv[3], "w").write("\n".join(names) + "\n")
PY
check "deploy/grafana/specgen.json: every query parses (promtool check rules)" \
    promtool check rules "$out/rules.yml"
missing=$(while read -r n; do grep -q "^$n[{ ]" "$out/all.txt" || echo "$n"; done <"$out/names.txt")
check_output "  ... every metric it reads is served by one of the /metrics above" '^none missing$' \
    echo "${missing:-none} missing"

# ---- the token rule ----
check_fails "--metrics-listen beyond loopback without a token: exit 2" 2 \
    "$SPECGEN" optimize $task --db none --out "$out/x" --metrics-listen 0.0.0.0:0
check_output "  ... and says why" 'refusing to listen beyond loopback without --metrics-token-file' \
    "$SPECGEN" campaign suites/demo --db none --out "$out/x" --metrics-listen 0.0.0.0:0
check_output "a token file that cannot be read is named" 'metrics-token-file.*no/such' \
    "$SPECGEN" optimize $task --db none --out "$out/x" --metrics-listen 127.0.0.1:0 \
    --metrics-token-file no/such
check_fails "  ... a usage error" 2 "$SPECGEN" optimize $task --db none --out "$out/x" \
    --metrics-listen 127.0.0.1:0 --metrics-token-file no/such
check_output "a bad address is named" '--metrics-listen' \
    "$SPECGEN" optimize $task --db none --out "$out/x" --metrics-listen nowhere
finish
