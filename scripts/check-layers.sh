#!/usr/bin/env bash
# scripts/check-layers.sh [ROOT [BUILD]] — every dependency points down.
#
# The floors are read from the ```floors block of ROOT/docs/architecture.md (one line a
# floor: its number, then its modules), so the page and the check cannot disagree. Then:
#  1. every folder of ROOT holding .c or .h files (but tests/) has a floor;
#  2. every `#include "MODULE/..."` in a module's sources names its own module or one on a
#     lower floor (same-floor neighbours do not include each other), and never another
#     module's internal header (internal.h, *_impl.h, or "(internal" in its top comment);
#  3. with BUILD (a build folder holding MODULE/*.o), the same holds for the symbols the
#     objects use: an object may only use symbols defined in its own module or below, so
#     a call through a hand-written extern declaration cannot hide an upward dependency.
# Prints one line per violation and exits 1 when there is any; 0 and a summary otherwise.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
build=${2:-}
doc=$root/docs/architecture.md
declare -A floor
while read -r n mods; do
    for m in $mods; do floor[$m]=$n; done
done < <(sed -n '/^```floors$/,/^```$/p' "$doc" | grep -E '^[0-9]+ ')
[ "${#floor[@]}" -gt 0 ] || { echo "check-layers: no \`\`\`floors block in $doc"; exit 1; }

bad=0
violation() { echo "layers: $*"; bad=$((bad + 1)); }

# 1. every source folder has a floor
for d in "$root"/*/; do
    m=$(basename "$d")
    [ "$m" = tests ] && continue
    compgen -G "$d*.[ch]" >/dev/null || continue
    [ -n "${floor[$m]:-}" ] || violation "$m/ holds sources but has no floor in docs/architecture.md"
done

# 2. includes; another module's internal header (internal.h, *_impl.h, or one whose top
# comment says "(internal") is included only by its own module (tests/ may)
is_internal() {
    case $1 in */internal.h | *_impl.h) return 0 ;; esac
    [ -f "$1" ] && head -3 "$1" | grep -q '(internal'
}
nincl=0
for m in "${!floor[@]}"; do
    [ -d "$root/$m" ] || continue
    while IFS=: read -r file line inc; do
        dep=${inc%%/*}
        nincl=$((nincl + 1))
        [ "$dep" = "$m" ] && continue
        if [ -z "${floor[$dep]:-}" ]; then
            violation "$m/$(basename "$file"):$line includes \"$inc\": $dep/ has no floor"
        elif [ "${floor[$dep]}" -ge "${floor[$m]}" ]; then
            violation "$m/$(basename "$file"):$line includes \"$inc\" ($dep is on floor ${floor[$dep]}, $m on ${floor[$m]})"
        elif is_internal "$root/$inc"; then
            violation "$m/$(basename "$file"):$line includes \"$inc\", internal to $dep/ (use its public header)"
        fi
    done < <(grep -HnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/[^"]+"' \
        "$root/$m"/*.[ch] 2>/dev/null | sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]+"/:/; s/"$//')
done

# 3. symbols used by the objects (one nm over all of them: file:symbol pairs)
nsym=0
if [ -n "$build" ]; then
    objs=()
    for m in "${!floor[@]}"; do
        for o in "$build/$m"/*.o; do # objects of sources that still exist (a build folder
            # may hold objects of files that moved away)
            [ -e "$o" ] && [ -e "$root/$m/$(basename "$o" .o).c" ] && objs+=("$o")
        done
    done
    declare -A owner
    if [ "${#objs[@]}" -gt 0 ]; then
        while read -r o s; do
            m=${o%/*}
            owner[$s]=${m##*/}
        done < <(nm -A --defined-only -g "${objs[@]}" | awk '{sub(/:.*/, "", $1); print $1, $NF}')
        while read -r o s; do
            dep=${owner[$s]:-}
            [ -z "$dep" ] && continue # libc, libcurl, ...
            m=${o%/*}
            m=${m##*/}
            nsym=$((nsym + 1))
            [ "$dep" = "$m" ] && continue
            [ "${floor[$dep]}" -lt "${floor[$m]}" ] ||
                violation "$m/$(basename "$o" .o).c uses $s from $dep/ ($dep is on floor ${floor[$dep]}, $m on ${floor[$m]})"
        done < <(nm -A -u "${objs[@]}" | awk '{sub(/:.*/, "", $1); print $1, $NF}')
    fi
fi

if [ "$bad" -gt 0 ]; then
    echo "check-layers: $bad violation(s) of the floors in docs/architecture.md"
    exit 1
fi
echo "check-layers: ${#floor[@]} modules, $nincl includes${build:+, $nsym symbol uses}: every dependency points down"
