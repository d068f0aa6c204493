#!/usr/bin/env bash
# deploy/k8s without a cluster: `kubectl kustomize` renders the base (8 GPUs a node) and the
# example overlay deploy/k8s-overlays/gpus-4 from a copy with throwaway secret files, and
# tests/integration/k8s/check_manifests.py (PyYAML from .venv) checks the output: Namespace
# first, the Secret generated from the files (no placeholder), the GPU count of each (node
# selector, limit, one kvstore port a GPU), resources, the image tag, non-root with a
# read-only root, probes, selectors, and every option against `specgen pool --help`.
# KUBECTL names the kubectl (default: the one on PATH; Debian 12's kubernetes-client is
# kubectl 1.20, kustomize v2.0.3: the manifests use only what that version knows).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
py=$SPECGEN_ROOT/.venv/bin/python
kubectl=${KUBECTL:-kubectl}
if [ ! -x "$py" ] || ! "$py" -c 'import yaml' 2>/dev/null; then
    skip "deploy/k8s manifests" "PyYAML is missing from .venv (make deps installs it)"
    finish
fi
if ! command -v "$kubectl" >/dev/null; then
    skip "deploy/k8s manifests" "no kubectl (make deps installs kubernetes-client)"
    finish
fi
"$kubectl" version --client 2>&1 | sed -n '1s/^/# /p'

# The secret files are the user's: the test renders a copy, never deploy/k8s itself.
check_output "deploy/k8s/token and kv-password are ignored by git" '^deploy/k8s/kv-password$' \
    git check-ignore deploy/k8s/token deploy/k8s/kv-password
copy=$TMPDIR_TEST/deploy
mkdir -p "$copy" && cp -r deploy/k8s deploy/k8s-overlays "$copy/"
rm -f "$copy/k8s/token" "$copy/k8s/kv-password"
check_fails "without the secret files, kubectl kustomize refuses to render" 1 \
    "$kubectl" kustomize "$copy/k8s"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$copy/k8s/token"
echo "kv-$RANDOM-$RANDOM" >"$copy/k8s/kv-password"

r=$TMPDIR_TEST/r
mkdir -p "$r"
"$SPECGEN" pool --help >"$r/pool-help.txt" 2>&1
render() { # render DIR OUT: kubectl kustomize DIR >OUT, one TAP line
    if "$kubectl" kustomize "$1" >"$2" 2>"$2.err"; then ok "kubectl kustomize ${1#"$copy"/} renders"; else
        not_ok "kubectl kustomize ${1#"$copy"/} renders"; sed 's/^/#   /' "$2.err"; fi
}
render "$copy/k8s" "$r/base.yaml"
render "$copy/k8s-overlays/gpus-4" "$r/gpus-4.yaml"

checker() { "$py" tests/integration/k8s/check_manifests.py "$r/pool-help.txt" "$copy/k8s" "$@"; }
checker "$r/base.yaml:8" "$r/gpus-4.yaml:4" >"$r/checks.txt" 2>&1
rc=$?
while IFS= read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) not_ok "${line#not ok - }" ;;
    *) echo "$line" ;;
    esac
done <"$r/checks.txt"
[ "$rc" -le 1 ] || not_ok "check_manifests.py ran to its end (exit $rc)"

# The checker can fail: a Service whose selector misses the pods, an overlay whose GPU
# limit is not the count asked for, a kvstore port missing.
sed 's|^    app.kubernetes.io/name: specgen-pool$|    app.kubernetes.io/name: other|' \
    "$r/base.yaml" >"$r/bad-selector.yaml"
check_output "the checker catches a Service that selects no agent pod" \
    'not ok - bad-selector: the Service selects the agent pods' checker "$r/bad-selector.yaml:8"
check_output "the checker catches a GPU limit that is not the node's count" \
    'not ok - gpus-4: the GPU limit is 2' checker "$r/gpus-4.yaml:2"
sed '/- containerPort: 6387$/,/protocol: TCP$/d' "$r/base.yaml" >"$r/bad-ports.yaml"
check_output "the checker catches a kvstore port left undeclared" \
    'not ok - bad-ports: one kvstore port a GPU' checker "$r/bad-ports.yaml:8"

# The agent starts as the manifest says, outside a cluster: the rendered args and env, as
# its runAsUser with the Secret's files group-readable by its fsGroup (0440, as the kubelet
# mounts them), every path it writes mapped into this test's folder (what the emptyDirs
# are), loopback instead of 0.0.0.0. What the startupProbe waits for, the agent's port,
# opens; the token is asked; the kvstore answers with the password.
need_opencl "the agent starts with the rendered args as a non-root user"
run=$TMPDIR_TEST/run
mkdir -p "$run/etc" "$run/cache" "$run/tmp"
port=$(pick_port) kvport=$(pick_port)
mapfile -d '' words < <("$py" tests/integration/k8s/check_manifests.py --argv "$r/base.yaml" \
    /etc/specgen="$run/etc" /var/cache/specgen="$run/cache" /tmp="$run/tmp" \
    0.0.0.0:7070=127.0.0.1:"$port" 0.0.0.0:6380=127.0.0.1:"$kvport")
uid=${words[0]} gid=${words[1]}
words=("${words[@]:2}")
for i in "${!words[@]}"; do [ "${words[$i]}" = specgen ] && words[i]=$SPECGEN; done
as_agent() { setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs "$@"; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! [[ $uid =~ ^[1-9][0-9]*$ ]]; then
    skip "the agent starts with the rendered args as a non-root user" "needs root and setpriv"
    finish
fi
chmod 711 "$TMPDIR_TEST"
cp "$copy/k8s/token" "$copy/k8s/kv-password" "$run/etc/"
chgrp "$gid" "$run/etc"/* && chmod 0440 "$run/etc"/*
chown "$uid:$gid" "$run/cache" "$run/tmp"
if ! as_agent test -x "$SPECGEN"; then
    skip "the agent starts with the rendered args as a non-root user" "uid $uid cannot run $SPECGEN"
    finish
fi
# setpriv execs env, which execs the agent: $! is the agent itself.
setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs \
    env -i PATH="$PATH" "${words[@]}" >"$run/agent.log" 2>&1 &
agent=$!
on_exit "kill $agent 2>/dev/null; wait $agent 2>/dev/null"
if wait_port "$port" 20; then ok "the agent, as uid $uid with the rendered args, opens its port"; else
    not_ok "the agent, as uid $uid with the rendered args, opens its port"; sed 's/^/#   /' "$run/agent.log"; fi
check_output "it asks for the token (401 without)" '^401$' \
    curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/status"
check_output "it answers with the Secret's token" '^200$' \
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$copy/k8s/token")" \
    "http://127.0.0.1:$port/v1/status"
check_output "its kvstore answers with the Secret's password" '^PONG$' \
    redis-cli -p "$kvport" --no-auth-warning -a "$(cat "$copy/k8s/kv-password")" PING
check_output "it keeps its tasks in the cache emptyDir" "tasks in $run/cache/tasks" cat "$run/agent.log"
finish
