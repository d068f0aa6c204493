#!/usr/bin/env bash
# scripts/gpu-bundle.sh — stage what `make gpu-check` needs on the lent device machine,
# which is offline and bare (no libjansson/libcurl/libmicrohttpd/OpenCL loader, no redis,
# maybe no make), into one ignored folder that the device tool carries (docs/gpu-checks.md).
#
#   scripts/gpu-bundle.sh BUILT DEST   stage BUILT/bin/specgen and BUILT/gpu/prof_streams (linked
#                                      by `make gpu-bundle` with a run path into DEST/lib)
#   scripts/gpu-bundle.sh --check DEST check that every library the staged programs need
#                                      resolves into DEST/lib or to the glibc family
#
# Layout of DEST: specgen; build/gpu/prof_streams; lib/ (every library they and redis need,
# real files under their soname); libexec/ (redis-server, redis-benchmark); bin/ (wrappers
# that run those with LD_LIBRARY_PATH=DEST/lib, so PATH=DEST/bin:$PATH finds them without
# pushing the bundle's libraries into python3 or anything else); MANIFEST.
#
# Not bundled, on purpose: the glibc family (the device's glibc is newer, 2.39, and the
# programs need only symbols up to this machine's), libgcc_s and libstdc++ (the device's
# are newer and NVRTC's builtins need them: an older copy on the run path would win), and
# CUDA (libcuda comes with the driver; NVRTC and CUPTI are dlopen'ed from the toolkit).
set -u
SYSTEM_LIBS='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libc_malloc_debug|libthread_db|libgcc_s|libstdc\+\+)\.so'
REDIS_TOOLS='redis-server redis-benchmark'

die() {
    echo "gpu-bundle: $*" >&2
    exit 1
}

# The ELF programs of a bundle (the wrappers in bin/ are scripts).
programs() { ls "$1/specgen" "$1/build/gpu/prof_streams" "$1"/libexec/* 2>/dev/null; }

# check DEST: every non-system library of every program resolves into DEST/lib.
check() {
    local dest bad=0 p env
    dest=$(realpath "$1")
    [ -d "$dest/lib" ] || die "no $1/lib: run make gpu-bundle first"
    command -v ldd >/dev/null || {
        echo "gpu-bundle: no ldd on this machine: the bundle's libraries were not checked"
        return 0
    }
    for p in $(programs "$dest"); do
        env=()
        case $p in */libexec/*) env=(LD_LIBRARY_PATH="$dest/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") ;; esac
        while read -r name _ path _; do
            [[ $name =~ $SYSTEM_LIBS ]] && continue
            [ "$path" = not ] || path=$(realpath "$path")
            if [ "${path#"$dest/lib/"}" = "$path" ]; then
                echo "gpu-bundle: ${p#"$dest/"} needs $name, found at '$path', not in $1/lib" >&2
                bad=1
            fi
        done < <(env "${env[@]}" ldd "$p" | grep '=>')
    done
    [ $bad -eq 0 ] || return 1
    echo "gpu-bundle: every library of $(programs "$dest" | wc -l) programs resolves into $1/lib or the system's glibc"
}

# stage_libs PROGRAM DEST: copy PROGRAM's non-system libraries (ldd: the whole closure)
# into DEST/lib under the name the loader asks for, following symlinks to the real file.
stage_libs() {
    local name path
    while read -r name _ path _; do
        [[ $name =~ $SYSTEM_LIBS ]] && continue
        [ "$path" = not ] && die "$1 needs $name, which is not installed here (make deps)"
        [ -e "$2/lib/$name" ] && continue
        cp -L "$path" "$2/lib/$name" || die "cannot copy $path"
        echo "lib/$name <- $(realpath "$path")" >>"$2/MANIFEST"
    done < <(env -u LD_LIBRARY_PATH ldd "$1" | grep '=>')
}

if [ "${1:-}" = --check ]; then
    [ $# -eq 2 ] || die "usage: scripts/gpu-bundle.sh --check DEST"
    check "$2"
    exit
fi
[ $# -eq 2 ] || die "usage: scripts/gpu-bundle.sh BUILT DEST (make gpu-bundle runs it)"
built=$1
dest=$2
for f in "$built/bin/specgen" "$built/gpu/prof_streams"; do
    [ -x "$f" ] || die "no $f: run make gpu-bundle, which builds it"
done
readelf -d "$built/bin/specgen" | grep -q 'RPATH.*\$ORIGIN/lib' ||
    die "$built/bin/specgen has no run path into lib/: build it through make gpu-bundle"
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/bin" "$dest/libexec" "$dest/build/gpu"
{
    echo "specgen GPU bundle, made $(date -u +%FT%TZ) on $(uname -m), $(ldd --version | head -n 1)"
    echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "# library <- where it came from"
} >"$dest/MANIFEST"
cp "$built/bin/specgen" "$dest/specgen"
cp "$built/gpu/prof_streams" "$dest/build/gpu/prof_streams"
stage_libs "$dest/specgen" "$dest"
stage_libs "$dest/build/gpu/prof_streams" "$dest"

# redis for kvstore/bench-kv.sh (optional: the GPU checks do not need it).
for t in $REDIS_TOOLS; do
    src=$(command -v "$t") || {
        echo "gpu-bundle: $t not installed here (make deps); the bundle has none" >&2
        continue
    }
    cp -L "$src" "$dest/libexec/$t"
    echo "libexec/$t <- $(realpath "$src")" >>"$dest/MANIFEST"
    stage_libs "$dest/libexec/$t" "$dest"
    cat >"$dest/bin/$t" <<EOF
#!/bin/sh
# $t from the machine that made this bundle, with its libraries from ../lib.
here=\$(cd "\$(dirname "\$0")/.." && pwd)
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/libexec/$t" "\$@"
EOF
    chmod +x "$dest/bin/$t"
done
check "$dest" || die "the staged bundle does not resolve into $dest/lib (see above)"
echo "gpu-bundle: $dest holds $(ls "$dest/lib" | wc -l) libraries, $(programs "$dest" | wc -l) programs;" \
    "$(du -sh "$dest" | cut -f1) in all (the device tool carries at most 64 MiB)"
echo "gpu-bundle: on the device: carry [\".gpu\"], command: bash scripts/gpu-check-device.sh"
