#!/usr/bin/env bash
# LLM options as OpenAI/vLLM users know them (#28): --llm defaults to $OPENAI_BASE_URL, the
# key comes from --api-key-file (or $SPECGEN_API_KEY / $OPENAI_API_KEY) and is sent as the
# bearer token and never printed, --temperature/--top-p and --fork-temperature/--fork-top-p
# reach the request bodies, and a JSON config file takes every long option with the
# precedence flag > env > file > default, which --show-config prints (no credential in it).
# Against `specgen replay-llm --log-requests` (the bodies) and a loopback listener that
# records the request head (the header), both on loopback.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
t=$TMPDIR_TEST
task=$SPECGEN_ROOT/suites/demo/vector_scale

# ---- the config file and --show-config (no device, no server) ----
mkdir -p "$t/proj" "$t/xdg/specgen"
cat >"$t/proj/specgen.json" <<'EOF'
{"llm": "http://alice:pw-in-url@file.example:8000", "model": "file-model", "iterations": 3,
 "optimize": {"iterations": 4, "temperature": 0.5, "no-fork": true, "task-budget-time": "90s"},
 "campaign": {"concurrency": 3}}
EOF
show() { (cd "$t/proj" && "$SPECGEN" "$@" --show-config 2>&1); }
line() { grep -E "^--$1 " <<<"$2"; }
out=$(OPENAI_BASE_URL=http://env.example:9000 show optimize --model flag-model)
check_output "--show-config names the file it read" '^config file: \./specgen\.json$' echo "$out"
check_output "  ... a flag beats env and file (--model flag)" '^--model +flag-model +flag$' line model "$out"
check_output "  ... env beats the file (--llm from \$OPENAI_BASE_URL)" \
    '^--llm +http://env\.example:9000 +env \$OPENAI_BASE_URL$' line llm "$out"
check_output "  ... the command's section beats the top level (--iterations 4)" \
    '^--iterations +4 +file \./specgen\.json$' line iterations "$out"
check_output "  ... the file beats the default (--temperature 0.5, a duration as text)" \
    '^--temperature +0\.5 +file' line temperature "$out"
check_output "  ... a flag from the file is on" '^--no-fork +on +file' line no-fork "$out"
check_output "  ... an option given nowhere is the default, as --help says it" \
    '^--fork-temperature +prompts/fork\.json.s temperature: 0\.2 +default$' line fork-temperature "$out"
out=$(show optimize)
check_output "without \$OPENAI_BASE_URL, --llm is the file's, its password hidden" \
    '^--llm +http://\*\*\*@file\.example:8000 +file' line llm "$out"
check_fails "  ... and the password is nowhere in the output" 1 grep -q pw-in-url <<<"$out"
out=$(show campaign --iterations 7)
check_output "campaign reads its own section (--concurrency 3)" '^--concurrency +3 +file' \
    line concurrency "$out"
check_output "  ... and the top level, not optimize's section (--iterations: the flag)" \
    '^--iterations +7 +flag$' line iterations "$out"
out=$(OPENAI_API_KEY=sk-env-secret-28 show optimize --config none)
check_output "--config none reads no file" '^config file: none \(--config none\)$' echo "$out"
check_output "  ... the key's source is shown, not the key" \
    '^--api-key-file +\(set; not shown\) +env \$OPENAI_API_KEY$' line api-key-file "$out"
check_fails "  ... which is nowhere in the output" 1 grep -q sk-env-secret-28 <<<"$out"
echo '{"optimize": {"model": "xdg-model"}}' >"$t/xdg/specgen/config.json"
out=$(cd "$t" && XDG_CONFIG_HOME=$t/xdg "$SPECGEN" optimize --show-config 2>&1)
check_output "no ./specgen.json: \$XDG_CONFIG_HOME/specgen/config.json is read" \
    "^--model +xdg-model +file $t/xdg/specgen/config.json$" line model "$out"

# A bad file: exit 2, naming the file and the key.
bad() { printf '%s' "$1" >"$t/bad.json"; "$SPECGEN" optimize "$task" --config "$t/bad.json" 2>&1; }
check_fails "a bad config file is a usage error (exit 2)" 2 bad '{"optimize": {"iteratons": 2}}'
check_output "  ... naming the file and the key, with a did-you-mean" \
    "bad\.json: section \"optimize\": unknown field \"iteratons\" \(did you mean \"iterations\"\?\)" \
    bad '{"optimize": {"iteratons": 2}}'
check_output "an unknown top-level key (a misspelt section)" \
    'bad\.json: unknown field "optimise" \(did you mean "optimize"\?\)' bad '{"optimise": {}}'
check_output "a command's own option at the top level: put it in its section" \
    "bad\.json: \"out\" is an option of some commands only: put it in the command's section" \
    bad '{"out": "x"}'
check_output "a value out of range names the file, the key and the range" \
    "bad\.json: \"optimize\.temperature\": '3' must be 0\.\.2" bad '{"optimize": {"temperature": 3}}'
check_output "a value of the wrong type" 'bad\.json: "model": expected a string, got integer' \
    bad '{"model": 7}'
check_output "a file that is not JSON names its line" 'bad\.json:1:' bad '{"model": '
check_output "a bad \$OPENAI_BASE_URL is named as such" \
    "\\\$OPENAI_BASE_URL \(--llm's default\): .*must start with http" \
    env OPENAI_BASE_URL=ftp://x "$SPECGEN" optimize "$task" --model m --config none

need_opencl "optimize against replay-llm"
# ---- $OPENAI_BASE_URL and the sampling options reach the server ----
port=$(pick_port)
"$SPECGEN" replay-llm --trace prompts/traces --listen "127.0.0.1:$port" --speed 20 \
    --log-requests "$t/req.jsonl" >"$t/replay.log" 2>&1 &
on_exit "kill $!"
wait_port "$port" 10 || not_ok "replay-llm listens"
run_opt() { # OUT args...
    local o=$1
    shift
    OPENAI_BASE_URL=http://127.0.0.1:$port/v1 "$SPECGEN" optimize "$task" --device opencl \
        --model replay --iterations 1 --db none --config none -o "$t/$o" "$@" >"$t/$o.log" 2>&1
}
# sampling FILE: one line per request: path temperature top_p
sampling() {
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l); r = d["request"]
    print(d["path"], r.get("temperature", "-"), r.get("top_p", "-"))' "$1" | sort -u
}
run_opt sampled --temperature 0.7 --top-p 0.9 --fork-temperature 0.3 --fork-top-p 0.8
check_output "optimize with \$OPENAI_BASE_URL (…/v1) and no --llm runs on that server" \
    '^== specgen optimize: done' cat "$t/sampled.log"
check_output "  ... the server got its requests" '/v1/chat/completions' cat "$t/req.jsonl"
check_multi "  ... the reasoning request carries --temperature 0.7 and --top-p 0.9, each fork \
--fork-temperature 0.3 and --fork-top-p 0.8" \
    '^/v1/chat/completions 0\.7 0\.9./v1/completions 0\.3 0\.8$' sampling "$t/req.jsonl"
: >"$t/req.jsonl"
run_opt plain
check_multi "without them: the server's defaults for the reasoning, fork.json's 0.2 for forks" \
    '^/v1/chat/completions - -./v1/completions 0\.2 -$' sampling "$t/req.jsonl"

# ---- the key: --api-key-file's first line as the bearer token, never printed ----
hport=$(pick_port)
python3 - "$hport" "$t/heads" <<'PY' >"$t/listener.log" 2>&1 &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        with open(sys.argv[2], "a") as f:
            f.write("".join(f"{k}: {v}\n" for k, v in self.headers.items()) + "--\n")
        body = b'{"error": {"message": "recorded", "type": "invalid_request_error"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
on_exit "kill $!"
wait_port "$hport" 10 || not_ok "the recording listener listens"
printf 'sk-file-key-28\nsecond line\n' >"$t/key"
chmod 600 "$t/key"
key_run() { # OUT args...
    local o=$1
    shift
    : >"$t/heads"
    "$SPECGEN" optimize "$task" --device opencl --llm "http://127.0.0.1:$hport" --model m \
        --iterations 1 --db none -o "$t/$o" "$@" >"$t/$o.log" 2>&1
}
key_run k1 --config none --api-key-file "$t/key"
check_output "--api-key-file: its first line is sent as the bearer token" \
    '^Authorization: Bearer sk-file-key-28$' cat "$t/heads"
check_output "  ... and never printed or written (log, events, summary)" '^0$' \
    bash -c "cat '$t/k1.log' '$t/k1/events.jsonl' '$t/k1/summary.json' 2>/dev/null | grep -c sk-file-key"
OPENAI_API_KEY=sk-env-key-28 key_run k2 --config none --api-key-file "$t/key"
check_output "the flag beats \$OPENAI_API_KEY" '^Authorization: Bearer sk-file-key-28$' cat "$t/heads"
echo "{\"api-key-file\": \"$t/key\"}" >"$t/keycfg.json"
OPENAI_API_KEY=sk-env-key-28 key_run k3 --config "$t/keycfg.json"
check_output "\$OPENAI_API_KEY beats the config file's api-key-file" \
    '^Authorization: Bearer sk-env-key-28$' cat "$t/heads"
key_run k4 --config "$t/keycfg.json"
check_output "the config file's api-key-file, with no key in the environment" \
    '^Authorization: Bearer sk-file-key-28$' cat "$t/heads"
chmod 644 "$t/key"
key_run k5 --config none --api-key-file "$t/key"
check_output "a key file others may read is warned about" 'readable by other users \(chmod 600 it\)' \
    cat "$t/k5.log"
check_fails "  ... and the key is still not printed" 1 grep -q sk-file-key "$t/k5.log"
key_run k6 --config none --api-key-file "$t/nokey"
check_output "a missing key file is an error naming it" "--api-key-file $t/nokey: cannot read" \
    cat "$t/k6.log"
finish
