#!/usr/bin/env bash
# deploy/k8s without a cluster: the manifests parse (PyYAML from .venv) and their pieces
# fit together — selectors and labels, named ports, the Secret mounted where the agent's
# --token-file and --kv-requirepass-file point, every option one `specgen pool` knows.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
py=$SPECGEN_ROOT/.venv/bin/python
if [ ! -x "$py" ] || ! "$py" -c 'import yaml' 2>/dev/null; then
    skip "deploy/k8s manifests" "PyYAML is missing from .venv (make deps installs it)"
    finish
fi
"$SPECGEN" pool --help >"$TMPDIR_TEST/pool-help.txt" 2>&1
"$py" tests/integration/k8s/check_manifests.py deploy/k8s "$TMPDIR_TEST/pool-help.txt" \
    >"$TMPDIR_TEST/checks.txt" 2>&1
rc=$?
while IFS= read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) not_ok "${line#not ok - }" ;;
    *) echo "$line" ;;
    esac
done <"$TMPDIR_TEST/checks.txt"
[ "$rc" -le 1 ] || not_ok "check_manifests.py ran to its end (exit $rc)"

# The checker can fail: a Service whose selector misses the pods is caught.
bad=$TMPDIR_TEST/bad
mkdir -p "$bad" && cp deploy/k8s/*.yaml "$bad/"
sed -i 's|app.kubernetes.io/name: specgen-pool$|app.kubernetes.io/name: other|' "$bad/service.yaml"
check_output "the checker catches a Service that selects no agent pod" \
    'not ok - the Service selects the agent pods' \
    "$py" tests/integration/k8s/check_manifests.py "$bad" "$TMPDIR_TEST/pool-help.txt"
finish
