#!/usr/bin/env bash
# The floors of docs/architecture.md hold: every #include and every symbol an object uses
# points to its own module or a lower floor (scripts/check-layers.sh). Then the checker is
# shown to catch what it must: an upward include, a same-floor include, a folder with no
# floor, and an upward call hidden behind a hand-written extern declaration.
. "$(dirname "$0")/../lib.sh"
root=$SPECGEN_ROOT
check_output "the tree's includes and symbols point down" 'every dependency points down' \
    "$root/scripts/check-layers.sh" "$root" "${BUILD:-$root/build}"

# A copy of the sources and the page, to break on purpose.
t=$TMPDIR_TEST/tree
mkdir -p "$t"
(cd "$root" && tar cf - docs/architecture.md $(ls -d */ | grep -v '^tests/\|^build\|^bin/') 2>/dev/null) |
    tar xf - -C "$t" --exclude='*.o' --exclude='*.d'
check "the copy is clean too" "$root/scripts/check-layers.sh" "$t"

cp -r "$t" "$t.up"
echo '#include "profiler/profiler.h"' >>"$t.up/validator/check.c"
check_output "an upward include (validator -> profiler) is caught" \
    'validator/check.c:[0-9]+ includes "profiler/profiler.h" \(profiler is on floor 4, validator on 3\)' \
    bash -c "'$root/scripts/check-layers.sh' '$t.up'; [ \$? -eq 1 ]"

cp -r "$t" "$t.side"
echo '#include "replay/replay.h"' >>"$t.side/llm/llm.c"
check_output "a same-floor include (llm -> replay) is caught" 'llm/llm.c:[0-9]+ includes "replay/replay.h"' \
    bash -c "'$root/scripts/check-layers.sh' '$t.side'; [ \$? -eq 1 ]"

cp -r "$t" "$t.new"
mkdir -p "$t.new/scheduler" && echo 'int x;' >"$t.new/scheduler/x.c"
check_output "a source folder without a floor is caught" 'scheduler/ holds sources but has no floor' \
    bash -c "'$root/scripts/check-layers.sh' '$t.new'; [ \$? -eq 1 ]"

# Objects: validator calling the profiler through its own extern declaration.
if command -v cc >/dev/null && command -v nm >/dev/null; then
    cp -r "$t" "$t.obj"
    b=$TMPDIR_TEST/objs
    mkdir -p "$b/validator" "$b/profiler"
    echo 'int sg_prof_secret(void) { return 1; }' >"$t.obj/profiler/p.c"
    echo 'int sg_prof_secret(void); int f(void) { return sg_prof_secret(); }' >"$t.obj/validator/v.c"
    cc -c -o "$b/profiler/p.o" "$t.obj/profiler/p.c" && cc -c -o "$b/validator/v.o" "$t.obj/validator/v.c"
    check_output "an upward call without an include is caught in the objects" \
        'validator/v.c uses sg_prof_secret from profiler/' \
        bash -c "'$root/scripts/check-layers.sh' '$t.obj' '$b'; [ \$? -eq 1 ]"
    rm "$t.obj/validator/v.c" # an object whose source moved away is not looked at
    check "objects of sources that moved away are ignored" "$root/scripts/check-layers.sh" "$t.obj" "$b"
else
    skip "upward call in the objects" "no cc or nm"
fi
finish
