#!/usr/bin/env bash
# No function over 100 lines (option tables exempt by name) and no function-local static
# holding state (scripts/check-fn-length.sh, `make check-fn-length`); then the checker is
# shown to count right on a small tree. And invariants stay on: no build of the Makefile
# defines NDEBUG, which would compile SG_ASSERT (common/assert.h) away.
. "$(dirname "$0")/../lib.sh"
root=$SPECGEN_ROOT
check_output "no function over 100 lines, no function-local static holding state" \
    'no function over 100 lines, no function-local static' "$root/scripts/check-fn-length.sh" "$root"
check "no build defines NDEBUG (make, test, test-asan, fuzz keep SG_ASSERT on)" \
    bash -c "! grep -n 'NDEBUG' '$root/Makefile' '$root'/*/module.mk"

# A tree with functions of known lengths. body N: a function whose body (from '{' to '}')
# is N lines.
t=$TMPDIR_TEST/tree
mkdir -p "$t/pool" "$t/tests/unit"
body() { # NAME LINES
    printf 'static int %s(int a,\n                 int b) {\n' "$1"
    for _ in $(seq 1 $(($2 - 2))); do printf '    a += b; /* { not a brace */\n'; done
    printf '}\n\n'
}
{
    body ok100 100
    body long101 101
    printf 'typedef struct s {\n    int x;\n} s;\n\n'
    printf 'static const char *q = "}}}{";\n'
    printf 'int cmd(int argc) {\n    const sg_opt opts[] = {\n'
    for i in $(seq 1 60); do printf '        {"o%d", 0},\n' "$i"; done
    printf '        {NULL},\n    };\n'
    for _ in $(seq 1 50); do printf '    argc += '"'}'"';\n'; done
    printf '    return argc;\n}\n'
    printf 'int stateful(void) {\n    static int calls;\n    static const int table[] = {1, 2};\n    return ++calls + table[0];\n}\n'
} >"$t/pool/a.c"
printf 'int helper(void) {\n    static char buf[64];\n    return buf[0];\n}\n' >"$t/tests/unit/t.c"
out=$("$root/scripts/check-fn-length.sh" "$t"; echo "exit $?")
check_output "a 101-line function is caught, with its file and line" \
    '^pool/a.c:[0-9]+: long101\(\) is 101 lines \(max 100\)' echo "$out"
check "  ... a 100-line one, and a long option table, are not" \
    bash -c "! grep -E 'ok100|cmd\\(\\)' <<<'${out//\'/}'"
check_output "a function-local static holding state is caught (not a static const)" \
    '^pool/a.c:[0-9]+: stateful\(\) keeps state in a static: static int calls;' echo "$out"
check "  ... one line each, none from tests/" test "$(printf '%s\n' "$out" | grep -c '^[a-z/]*\.c:')" -eq 2
check_output "  ... exit 1" 'exit 1$' echo "$out"
check_output "-a lists every function with its length" '^pool/a.c:[0-9]+: cmd\(\)' \
    "$root/scripts/check-fn-length.sh" -a "$t"
check "-n 101 lets the 101-line function pass" \
    bash -c "! '$root/scripts/check-fn-length.sh' -n 101 '$t' | grep long101"
check_fails "-n 0 is a usage error" 2 "$root/scripts/check-fn-length.sh" -n 0 "$t"
finish
