#!/usr/bin/env bash
# Output files under hostile targets (issue 24, items 1 and 9):
#  - every command that writes a file (report -o, results export -o, task init --out, sim
#    --events/--plots/--db, optimize --out, campaign --out) refuses a target that is a device
#    node, a FIFO, a symbolic link, a socket or a folder, and the results database in use
#    (same inode), exit 2, naming the path and what it is; the target is left as it was
#    (our own device node, made with mknod here: never /dev);
#  - report -o into a missing or read-only folder says why (not "Bad file descriptor");
#  - a full disk under the results database: every message names SQLite's reason.
# Read-only and full filesystems are tmpfs mounts in a private mount namespace (root and
# unshare -m; skipped otherwise).
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
t=$TMPDIR_TEST
spec_bin=$(cd "$(dirname "$SPECGEN")" && pwd)/$(basename "$SPECGEN")
task=suites/demo/vector_scale
db=$t/r.db
have_cl=0
command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Platform && have_cl=1
is_root=0
[ "$(id -u)" = 0 ] && is_root=1
"$SPECGEN" sim --db "$db" --tasks 2 --seeds 1 >/dev/null 2>&1 || not_ok "sim --db makes a database"
# a copy each for the sections after report's (one failure must not hide the next)
cp "$db" "$t/exp.db"
cp "$db" "$t/ro.db"

# ---- the hostile targets, in folder $1 ----
make_targets() {
    mkdir -p "$1"
    [ $is_root = 1 ] && mknod "$1/null" c 1 3
    mkfifo "$1/fifo"
    echo kept >"$1/target"
    ln -s target "$1/link"
    mkdir "$1/folder"
}
targets() { # the names that exist in $1
    local n
    for n in null fifo link folder; do [ -e "$1/$n" ] || [ -L "$1/$n" ] && echo "$n"; done
}
# What a target is, to compare before and after: type, device numbers, link target, content.
state() {
    local p=$1
    printf '%s|' "$(stat -c '%F %t:%T' "$p")"
    [ -L "$p" ] && printf '%s|' "$(readlink "$p")"
    [ -f "$p" ] && [ ! -L "$p" ] && md5sum <"$p"
    [ -L "$p" ] && md5sum <"$(dirname "$p")/$(readlink "$p")"
    echo
}
what() {
    case $1 in null) echo "a character device" ;; fifo) echo "a FIFO" ;;
    link) echo "a symbolic link" ;; folder) echo "a folder" ;; esac
}
# refused DESC PATH MESSAGE CMD...: exit 2, the output holds MESSAGE (label, path, what it
# is), and PATH is what it was.
refused() {
    local desc=$1 path=$2 want=$3 before out rc
    shift 3
    before=$(state "$path")
    out=$(timeout -k 5 30 "$@" 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out" && [ "$(state "$path")" = "$before" ]; then
        ok "$desc"
    else
        not_ok "$desc"
        printf '#   %s\n' "command: $* (exit $rc, wanted 2 and '$want')" \
            "before: $before" "after:  $(state "$path")" "${out//$'\n'/$'\n'#   }"
    fi
}
[ $is_root = 1 ] || skip "a character device target" "mknod needs root"

# ---- item 1: report -o ----
make_targets "$t/rep"
for n in $(targets "$t/rep"); do
    refused "report -o $(what $n) is refused and left as it was" "$t/rep/$n" \
        "-o $t/rep/$n: is $(what $n), not a regular file; refusing to replace it" \
        "$SPECGEN" report --db "$db" -o "$t/rep/$n"
done
refused "report --db X.db -o X.db is refused" "$db" "-o $db: is the results database in use" \
    "$SPECGEN" report --db "$db" -o "$db"
ln "$db" "$t/rep/hardlink"
check_output "report -o a hard link to the database is refused" \
    "hardlink: is the results database in use" "$SPECGEN" report --db "$db" -o "$t/rep/hardlink"
check_output "the database still opens after both" "^1 +sim " \
    "$SPECGEN" results --db "$db" campaigns
echo old >"$t/rep/target"
"$SPECGEN" report --db "$db" -o "$t/rep/target" >/dev/null 2>&1
if [ -f "$t/rep/target" ] && grep -q '<html' "$t/rep/target" && ! ls "$t/rep" | grep -q tmp; then
    ok "report -o an existing regular file replaces it (no temporary left)"
else not_ok "report -o an existing regular file replaces it"; fi
echo kept >"$t/rep/target"

# ---- item 1: results export ----
make_targets "$t/exp"
for n in $(targets "$t/exp"); do
    refused "results export -o $(what $n) is refused and left as it was" "$t/exp/$n" \
        "-o $t/exp/$n: is $(what $n)" \
        "$SPECGEN" results --db "$t/exp.db" export --format json -o "$t/exp/$n"
done
refused "results export -o the database itself is refused" "$t/exp.db" \
    "-o $t/exp.db: is the results database in use" \
    "$SPECGEN" results --db "$t/exp.db" export --format json -o "$t/exp.db"
mkdir -p "$t/csv"
mkfifo "$t/csv/task.csv"
refused "results export to a folder: a FIFO named TABLE.csv is refused (no hang)" \
    "$t/csv/task.csv" "$t/csv/task.csv: is a FIFO" \
    "$SPECGEN" results --db "$t/exp.db" export --format csv -o "$t/csv"

# ---- item 1: task init --out (with --force: only regular files are replaced) ----
make_targets "$t/ti"
for n in fifo link; do
    rm -f "$t/ti/task.json"
    mv "$t/ti/$n" "$t/ti/task.json"
    refused "task init --force: task.json as $(what $n) is refused and left as it was" \
        "$t/ti/task.json" "$t/ti/task.json: is $(what $n)" \
        "$SPECGEN" task init $task/baseline.cl --out "$t/ti" --force
    mv "$t/ti/task.json" "$t/ti/$n"
done

# ---- item 1: sim outputs ----
make_targets "$t/sim"
for n in $(targets "$t/sim"); do
    refused "sim --events $(what $n) is refused" "$t/sim/$n" "--events $t/sim/$n: is $(what $n)" \
        "$SPECGEN" sim --tasks 2 --seeds 1 --events "$t/sim/$n"
done
mkdir -p "$t/plots"
ln -s ../sim/target "$t/plots/utilisation.svg"
refused "sim --plots DIR with a symbolic link for a plot is refused" "$t/plots/utilisation.svg" \
    "--plots $t/plots/utilisation.svg: is a symbolic link" \
    "$SPECGEN" sim --tasks 2 --seeds 1 --plots "$t/plots"
for n in fifo null; do
    [ -e "$t/sim/$n" ] || continue
    before=$(state "$t/sim/$n")
    check_fails "sim --db $(what $n) is refused (exit 2)" 2 \
        timeout -k 5 30 "$SPECGEN" sim --tasks 2 --seeds 1 --db "$t/sim/$n"
    [ "$(state "$t/sim/$n")" = "$before" ] && ok "and it is left as it was" ||
        not_ok "and it is left as it was"
done
check_fails "sim --db X --events X is refused (exit 2)" 2 \
    "$SPECGEN" sim --tasks 2 --seeds 1 --db "$t/sim/r.db" --events "$t/sim/r.db"
check_output "and says the file is the database" "r.db: is the results database in use" \
    "$SPECGEN" sim --tasks 2 --seeds 1 --db "$t/sim/r.db" --events "$t/sim/r.db"

# ---- item 1: optimize --out and campaign --out (what they write inside) ----
make_targets "$t/opt"
mv "$t/opt/fifo" "$t/opt/events.jsonl"
refused "optimize --out: events.jsonl as a FIFO is refused before the run" \
    "$t/opt/events.jsonl" "--out $t/opt/events.jsonl: is a FIFO" \
        "$SPECGEN" optimize $task --device opencl --out "$t/opt"
rm "$t/opt/events.jsonl"
if [ $is_root = 1 ]; then
    mv "$t/opt/null" "$t/opt/best.cl"
    refused "optimize --out: best.cl as a character device is refused before the run" \
        "$t/opt/best.cl" "--out $t/opt/best.cl: is a character device" \
        "$SPECGEN" optimize $task --device opencl --out "$t/opt"
    rm "$t/opt/best.cl"
fi
mv "$t/opt/link" "$t/opt/summary.json"
refused "optimize --out: summary.json as a symbolic link is refused before the run" \
    "$t/opt/summary.json" "--out $t/opt/summary.json: is a symbolic link" \
        "$SPECGEN" optimize $task --device opencl --out "$t/opt"
mkdir -p "$t/camp/vector_scale"
mkfifo "$t/camp/vector_scale/best.cl"
if [ $have_cl = 1 ]; then
    out=$(timeout -k 5 60 "$SPECGEN" campaign suites/demo --tasks vector_scale --device opencl \
        --out "$t/camp" --db "$t/camp.db" 2>&1; echo "exit=$?")
    if grep -qF "vector_scale: could not run: --out $t/camp/vector_scale/best.cl: is a FIFO" \
        <<<"$out" && grep -q '^exit=1$' <<<"$out" && [ -p "$t/camp/vector_scale/best.cl" ]; then
        ok "campaign --out: a task whose best.cl is a FIFO could not run (exit 1), the FIFO kept"
    else
        not_ok "campaign --out: a task whose best.cl is a FIFO could not run (exit 1), the FIFO kept"
        printf '#   %s\n' "${out//$'\n'/$'\n'#   }"
    fi
else skip "campaign --out: a FIFO best.cl" "no OpenCL platform"; fi

mkfifo "$t/fifo.db"
check_fails "campaign --db FIFO: a usage error (exit 2) before any task starts" 2 \
    timeout 10 "$SPECGEN" campaign suites/demo --db "$t/fifo.db" --out "$t/cfifo"
[ -p "$t/fifo.db" ] && ok "  ... the FIFO is kept" || not_ok "  ... the FIFO is kept"

# ---- item 9: report -o into a missing or read-only folder says why ----
check_output "report -o into a missing folder: No such file or directory" \
    "cannot write $t/nope/r.html: No such file or directory" \
    "$SPECGEN" report --db "$t/ro.db" -o "$t/nope/r.html"
if [ $is_root = 1 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$t/ro"
    log=$(unshare -m bash -c '
        mount -t tmpfs -o ro,size=16k tmpfs "$1" || exit 99
        "$2" report --db "$3" -o "$1/r.html"; echo "exit=$?"' _ "$t/ro" "$spec_bin" "$t/ro.db" 2>&1)
    if grep -q '^exit=99' <<<"$log"; then
        skip "report -o into a read-only folder says why" "cannot mount a tmpfs here"
    else
        check_output "report -o into a read-only folder: Read-only file system, exit 1" \
            "cannot write $t/ro/r.html: Read-only file system.*exit=1" \
            tr '\n' ' ' <<<"$log"
    fi
else
    skip "report -o into a read-only folder says why" "needs root and unshare -m"
fi

# ---- item 9: a full disk under the results database: SQLite's reason in every message ----
if [ $have_cl = 1 ] && [ $is_root = 1 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$t/full"
    log=$(unshare -m bash -c '
        mount -t tmpfs -o size=128k tmpfs "$1" || exit 99
        timeout -k 5 60 "$2" campaign suites/demo --tasks vector_scale --device opencl \
            --iterations 1 --out "$3" --db "$1/r.db"; echo "exit=$?"' \
        _ "$t/full" "$spec_bin" "$t/full-out" 2>&1)
    if grep -q '^exit=99' <<<"$log"; then
        skip "a full disk: the database messages name SQLite's reason" "cannot mount a tmpfs"
    else
        dbl=$(grep 'results database' <<<"$log")
        printf '%s\n' "$dbl" | sed 's/^/# /'
        if [ -n "$dbl" ] && ! grep -vqE 'database or disk is full|No space left on device' \
            <<<"$dbl"; then
            ok "a full disk: every results database message names SQLite's reason"
        else
            not_ok "a full disk: every results database message names SQLite's reason"
            printf '#   %s\n' "${log//$'\n'/$'\n'#   }"
        fi
    fi
else
    skip "a full disk: the database messages name SQLite's reason" \
        "needs OpenCL, root and unshare -m"
fi
finish
