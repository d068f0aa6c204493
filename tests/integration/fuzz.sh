#!/usr/bin/env bash
# Every libFuzzer target (tests/fuzz/fuzz_*.c) builds with clang + ASan/UBSan and runs
# clean from its seed corpus for FUZZ_SECONDS (default 10) each.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
if ! command -v clang >/dev/null; then
    skip "fuzz targets" "clang is not installed (make deps installs it)"
    finish
fi
if [ -n "${SPECGEN_ASAN:-}" ]; then
    skip "fuzz targets" "already run by the normal make test; not repeated under test-asan"
    finish
fi
check "fuzz targets build (make fuzz-build)" make -s fuzz-build
secs=${FUZZ_SECONDS:-10}
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    mkdir -p build-fuzz/corpus/"$name"
    seeds=; [ -d tests/fuzz/corpus/"$name" ] && seeds=tests/fuzz/corpus/"$name"
    check "$name runs clean for ${secs}s" build-fuzz/fuzz/"$name" -max_total_time="$secs" \
        build-fuzz/corpus/"$name" $seeds
done
finish
