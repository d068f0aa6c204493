#!/usr/bin/env bash
# One allocation policy (scripts/check-alloc.sh): production code allocates only through
# common/buf.h's abort-on-OOM helpers. Then the checker is shown to catch a bare call.
. "$(dirname "$0")/../lib.sh"
root=$SPECGEN_ROOT
check_output "production code allocates through sg_x* helpers only" \
    'every allocation goes through' "$root/scripts/check-alloc.sh" "$root"

t=$TMPDIR_TEST/tree
mkdir -p "$t/orchestrator" "$t/common"
printf 'void *f(void) { return calloc(1, 8); }\n' >"$t/orchestrator/bad.c"
printf 'char *g(const char *s) { return strdup(s); }\n/* strdup( in a comment is fine */\n' >"$t/common/x.c"
printf 'void *sg_xmalloc(unsigned long n) { return malloc(n); }\n' >"$t/common/buf.c"
out=$("$root/scripts/check-alloc.sh" "$t"; echo "exit $?")
check_output "a bare calloc is caught" '^orchestrator/bad.c:1:' echo "$out"
check_output "a bare strdup is caught, not one in a comment" '^common/x.c:1:' echo "$out"
check "  ... and only those two lines" test "$(printf '%s\n' "$out" | grep -c '\.c:')" -eq 2
check_output "  ... exit 1" 'exit 1$' echo "$out"
finish
