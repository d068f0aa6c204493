# tests/integration/byok_lib.bash — sourced by tests/integration/byok.sh and
# validator/gpu-check.sh: the own-kernel fixtures and the `task init` hint that
# tests/fixtures/byok/README.md's table gives each. Needs SPECGEN (the binary).
byok_fx=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/byok" && pwd)

# byok_hint FILE: the hint column of FILE's row (a base name), backquotes dropped; empty
# when the row has none (or there is no row).
byok_hint() { sed -n "s/^| $1 | [^|]* | \(.*\) |$/\1/p" "$byok_fx/README.md" | tr -d '`'; }

# byok_init KERNEL DIR [ARGS...]: `specgen task init KERNEL --out DIR` with KERNEL's hint
# (the hint is shell words as written in the table: quotes are kept, hence the eval).
byok_init() {
    # shellcheck disable=SC2034 # f and d are read inside the eval
    local f=$1 d=$2 h
    shift 2
    h=$(byok_hint "$(basename "$f")")
    eval "\"\$SPECGEN\" task init \"\$f\" --out \"\$d\" \"\$@\" $h"
}
