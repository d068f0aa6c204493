#!/usr/bin/env bash
# PoCL's leftovers (device/pocl_sweep.c): an OpenCL device pool, at its start, removes the
# tempfile_* entries older than an hour from PoCL's kernel cache folder (POCL_CACHE_DIR here),
# which PoCL 3.1 leaves there (an empty one per process, and a killed compile's sources),
# and leaves everything else: a fresh tempfile (a compile running now), the cache's own
# entries, however old.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
need_opencl "PoCL's cache folder"
tmp=$(mktemp -d)
on_exit "rm -rf $tmp"
kc=$tmp/kcache
mkdir -p "$kc/AB/old-program"
: >"$kc/tempfile_Old111"
echo "__kernel void f() {}" >"$kc/tempfile_Old222.preproc-0123abcd.cl.tmp"
: >"$kc/tempfile_New333"
: >"$kc/AB/old-program/program.bc"
: >"$kc/notatempfile"
touch -d '2 hours ago' "$kc/tempfile_Old111" "$kc/tempfile_Old222.preproc-0123abcd.cl.tmp" \
    "$kc/AB/old-program/program.bc" "$kc/notatempfile"
check_output "validate on PoCL with POCL_CACHE_DIR set: pass" '^pass: ' \
    env POCL_CACHE_DIR="$kc" "$SPECGEN" validate suites/demo/vector_scale --device opencl
check "the tempfiles older than an hour are gone" \
    test ! -e "$kc/tempfile_Old111" -a ! -e "$kc/tempfile_Old222.preproc-0123abcd.cl.tmp"
check "a fresh tempfile is kept (a compile may be running)" test -e "$kc/tempfile_New333"
check "the cache's own entries and other files are kept, however old" \
    test -e "$kc/AB/old-program/program.bc" -a -e "$kc/notatempfile"
finish
