#!/usr/bin/env bash
# Every fuzz target (tests/fuzz/fuzz_*.c) replays its whole seed corpus, regressions
# included (tests/fuzz/corpus/NAME/), built with the normal compiler and a plain main
# (tests/fuzz/replay_main.c; `make test` builds them into $BUILD/fuzz-replay/, with ASan +
# UBSan under `make test-asan`). The fuzzing itself (clang, libFuzzer) is `make fuzz`.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
bin=${BUILD:-$SPECGEN_ROOT/build}/fuzz-replay
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    if [ ! -x "$bin/$name" ]; then
        not_ok "$name replays its corpus (no $bin/$name: make fuzz-replay builds it)"
        continue
    fi
    n=$(find tests/fuzz/corpus/"$name" -maxdepth 1 -type f 2>/dev/null | wc -l)
    if [ "$n" -eq 0 ]; then
        not_ok "$name has seeds in tests/fuzz/corpus/$name/"
        continue
    fi
    check_output "$name replays its $n seeds clean" "^$name: $n inputs replayed\$" \
        "$bin/$name" tests/fuzz/corpus/"$name"
done
# A file named alone is replayed too (a finding from `make fuzz`, say).
printf '*1\r\n$-5\r\n' >"$TMPDIR_TEST/input"
check_output "a target replays a single file" '^fuzz_resp: 1 inputs replayed$' \
    "$bin/fuzz_resp" "$TMPDIR_TEST/input"
finish
