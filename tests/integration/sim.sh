#!/usr/bin/env bash
# `specgen sim`: the real task loop, trigger policy, criterion, device port and pool
# scheduler on modelled LLM and GPUs in virtual time. The same seeds give the same bytes;
# specgen beats each baseline on end-to-end time and on profiling feedback (the direction,
# not a tuned number); bad inputs get clear errors.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
out=$TMPDIR_TEST
check "sim --compare runs" bash -c "'$SPECGEN' sim --compare --seeds 1-2 --tasks 20 >'$out/a' 2>'$out/a.err'"
"$SPECGEN" sim --compare --seeds 1-2 --tasks 20 >"$out/b" 2>/dev/null
check "the same seeds give the same output, byte for byte" cmp "$out/a" "$out/b"
check_output "wall-clock times go to stderr, not to the table" 'of wall time' cat "$out/a.err"
if grep -q 'wall time' "$out/a"; then not_ok "the table holds no wall-clock time"; else ok "the table holds no wall-clock time"; fi
cat "$out/a" | sed 's/^/#   /'
# a row's field: the name is the first 22 characters, then e2e, (span), first, feedback
field() { python3 -c "
import sys
for l in open(sys.argv[1]):
    if l[:22].strip() == sys.argv[2]: print(l[22:].split()[int(sys.argv[3])]); break" "$out/a" "$1" "$2"; }
e2e() { field "$1" 0; }
fb() { field "$1" 3; }
for b in sequential parallel:4 probe:1000; do
    check "specgen's end-to-end time is shorter than $b's" \
        python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$(e2e specgen)" "$(e2e $b)"
    check "specgen gets more profiling feedback than $b" \
        python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$(fb specgen)" "$(fb $b)"
done
check_output "--sweep ranks the knobs and says where the defaults stand" \
    'the defaults \(s150 f4 d0.05 h0.2\) rank [0-9]+ of 192' "$SPECGEN" sim --sweep --seeds 1 --tasks 3
check_output "a workload's unknown field is named" "unknown field 'decode'" \
    bash -c "echo '{\"decode\": 3}' >'$out/w.json'; '$SPECGEN' sim --workload '$out/w.json'"
check_output "the reference workload file loads" '^workload reference' "$SPECGEN" sim --workload sim/workloads/reference.json --seeds 1 --tasks 2
check_fails "bad seeds are a usage error" 2 "$SPECGEN" sim --seeds 5-1
check_output "an unknown policy is named" "greedy" "$SPECGEN" sim --policy greedy
finish
