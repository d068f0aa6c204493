#!/usr/bin/env bash
# Issue 25: one option table. Walks every command's table (`specgen options --format tsv`)
# and checks that --help lists each option, that the parser takes each one (a valid value
# from its range, then --help: exit 0; or a message naming it, never "unknown option"),
# that aliases are taken quietly and deprecated names with a warning, that a value past
# the range is refused naming the range, that docs/options.md is what the table generates,
# and that the bash completion completes every option. Then the renames of issue 25.
. "$(dirname "$0")/../lib.sh"
cd "$SPECGEN_ROOT" || exit 1
t=$TMPDIR_TEST

"$SPECGEN" options --format tsv >"$t/table.tsv" 2>"$t/err" || not_ok "specgen options --format tsv runs"
[ -s "$t/table.tsv" ] && ok "the option table lists $(wc -l <"$t/table.tsv") options" ||
    not_ok "the option table is empty"

# A value the option takes: its range's lower bound (the parser's own spelling: 1s, 4k),
# else one by kind. 0 as a lower bound must be documented ("0: ..."), or the parse fails.
value_for() { # kind range
    local kind=$1 range=$2
    if [ "$range" != - ]; then
        printf '%s' "${range%%..*}"
        return
    fi
    case $kind in
        int | count | size | number) printf 1 ;;
        duration) printf 30s ;;
        *) printf x ;;
    esac
}

# One check per command: every option listed by --help and taken by the parser.
cmds=$(cut -f1 "$t/table.tsv" | uniq)
for cmd in $cmds; do
    help=$("$SPECGEN" "$cmd" --help 2>&1)
    bad=()
    while IFS=$'\t' read -r c name short kind metavar range aliases deprecated; do
        [ "$c" = "$cmd" ] || continue
        grep -qE -- "(^|[ ,])--$name( |$)" <<<"$help" || bad+=("--$name not in --help")
        [ "$short" = - ] || grep -qE -- "^  $short, --$name" <<<"$help" || bad+=("$short not in --help")
        args=(--"$name")
        [ "$kind" = flag ] || args+=("$(value_for "$kind" "$range")")
        out=$("$SPECGEN" "$cmd" "${args[@]}" --help 2>&1)
        rc=$?
        if [ "$rc" -ne 0 ]; then
            if [ "$rc" -ne 2 ] || ! grep -q -- "--$name" <<<"$out" || grep -q "unknown option" <<<"$out"; then
                bad+=("${args[*]}: exit $rc: $(head -1 <<<"$out")")
            elif [ "$kind" != string ]; then # only a string's own check may refuse 'x'
                bad+=("${args[*]} (in its range) refused: $(head -1 <<<"$out")")
            fi
        fi
        if [ "$aliases" != - ]; then
            for a in $aliases; do
                out=$("$SPECGEN" "$cmd" --"$a" "${args[@]:1}" --help 2>&1 >/dev/null)
                [ -z "$out" ] || bad+=("alias --$a: $out")
                grep -qE -- "also .*--$a" <<<"$help" || bad+=("alias --$a not in --help")
            done
        fi
        if [ "$deprecated" != - ]; then
            for d in $deprecated; do
                out=$("$SPECGEN" "$cmd" --"$d" "${args[@]:1}" --help 2>&1 >/dev/null)
                grep -q -- "--$d is deprecated; use --$name" <<<"$out" || bad+=("--$d: no warning ($out)")
            done
        fi
        if [[ $kind == int && $range =~ ^-?[0-9]+\.\.([0-9]+)$ ]]; then
            above=$((BASH_REMATCH[1] + 1))
            out=$("$SPECGEN" "$cmd" --"$name" "$above" --help 2>&1)
            grep -q -- "--$name: '$above' must be $range" <<<"$out" || bad+=("--$name $above: $out")
        fi
    done <"$t/table.tsv"
    if [ ${#bad[@]} -eq 0 ]; then ok "$cmd: every option in --help, parsed, in range"; else
        not_ok "$cmd: every option in --help, parsed, in range"
        printf '#   %s\n' "${bad[@]}"
    fi
done

# docs/options.md is generated (make docs-options): the same text.
"$SPECGEN" options >"$t/options.md"
if cmp -s "$t/options.md" docs/options.md; then ok "docs/options.md is what the table generates"; else
    not_ok "docs/options.md is what the table generates (run make docs-options)"
    diff docs/options.md "$t/options.md" | head -20 | sed 's/^/#   /'
fi

# ---- shell completion ----
"$SPECGEN" completion bash >"$t/c.bash"
check_output "bash sources the completion and specgen has one" '^complete .*-F _specgen specgen$' \
    bash -c ". '$t/c.bash' && complete -p specgen"
complete_words() { # WORD...: what bash completes after `specgen WORD...`
    bash -c '. "$1"; shift; COMP_WORDS=(specgen "$@"); COMP_CWORD=$#; _specgen; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$t/c.bash" "$@"
}
check_output "the first word completes to commands" '^campaign$' complete_words ca
bad=()
for cmd in $cmds; do
    words=$(complete_words "$cmd" --)
    while IFS=$'\t' read -r c name _ _ _ _ aliases deprecated; do
        [ "$c" = "$cmd" ] || continue
        grep -qx -- "--$name" <<<"$words" || bad+=("$cmd --$name")
        for d in ${deprecated/#-/}; do grep -qx -- "--$d" <<<"$words" && bad+=("$cmd offers deprecated --$d"); done
    done <"$t/table.tsv"
done
[ ${#bad[@]} -eq 0 ] && ok "bash completes every command's options (no deprecated ones)" ||
    { not_ok "bash completes every command's options"; printf '#   %s\n' "${bad[@]}"; }
check_output "completion skips --log-level's value" '^--slots-per-device$' \
    complete_words --log-level debug optimize --slots-per
"$SPECGEN" completion zsh >"$t/_specgen"
check_output "the zsh completion has every command" "sim\\) _arguments" cat "$t/_specgen"
if command -v zsh >/dev/null; then check "zsh reads the completion" zsh -n "$t/_specgen"; else
    skip "zsh reads the completion" "no zsh here"; fi
check_fails "completion fish is a usage error" 2 "$SPECGEN" completion fish

# ---- one name per concept (issue 25): the new spellings, the old ones warn ----
for cmd in optimize campaign sim pool; do
    check_output "$cmd: --slots-per-device 65 is refused with the one bound" \
        "--slots-per-device: '65' must be 1\.\.64" "$SPECGEN" $cmd --slots-per-device 65 --help
done
check_output "sim --slots-per-gpu warns" '--slots-per-gpu is deprecated; use --slots-per-device' \
    "$SPECGEN" sim --slots-per-gpu 2 --help
check_output "sim --gpus warns" '--gpus is deprecated; use --devices' "$SPECGEN" sim --gpus 2 --help
check_output "optimize --budget-time is the task's" '--budget-time is deprecated; use --task-budget-time' \
    "$SPECGEN" optimize x --budget-time 1m --help
check_output "campaign --budget-time is the campaign's" \
    '--budget-time is deprecated; use --campaign-budget-time' "$SPECGEN" campaign x --budget-time 1h --help
check_output "campaign --per-task-time is the task's" \
    '--per-task-time is deprecated; use --task-budget-time' "$SPECGEN" campaign x --per-task-time 1m --help
check_output "campaign takes --target" '--target X' "$SPECGEN" campaign --help
check_output "validate --timeout is --run-timeout" '--timeout is deprecated; use --run-timeout' \
    "$SPECGEN" validate x --timeout 5s --help
check_output "kvstore --timeout is --idle-timeout" '--timeout is deprecated; use --idle-timeout' \
    "$SPECGEN" kvstore --timeout 5s --help
check_output "llm-check --timeout is --first-token-timeout" \
    '--timeout is deprecated; use --first-token-timeout' "$SPECGEN" llm-check --timeout 5s --help
for cmd in optimize campaign sim report results task; do
    check_output "$cmd takes -o/--out" '^  -o, --out ' "$SPECGEN" $cmd --help
done
for v in all 2 cuda:0,1 opencl:0; do
    check "pool and optimize take --devices $v" bash -c \
        "'$SPECGEN' pool --devices $v --help >/dev/null && '$SPECGEN' optimize x --devices $v --help >/dev/null"
done
check_output "--devices cuda:0,0 names the device given twice" "--devices: 'cuda:0,0': device 0 twice" \
    "$SPECGEN" optimize x --devices cuda:0,0
check_output "--device and a --devices list of another backend disagree" \
    "--device cuda and --devices opencl:... name different backends" \
    "$SPECGEN" optimize x --device cuda --devices opencl:0

# sim -o: the table goes to the file, and --devices N is the pool's size
check "sim -o FILE writes the table" "$SPECGEN" sim --tasks 2 --seeds 1 --devices 2 -o "$t/sim.txt"
check_output "sim -o: the file holds the table" '^specgen ' cat "$t/sim.txt"
check_output "sim -o: --devices 2 in the header" '2 devices x 1 slot' cat "$t/sim.txt"

# results: --format on every subcommand; a format a subcommand cannot write is refused
check "sim --db makes a results database" "$SPECGEN" sim --tasks 2 --seeds 1 --db "$t/r.db" -o "$t/s2.txt"
check_output "results best --format json prints JSON" '^\[' "$SPECGEN" results best --format json --db "$t/r.db"
check_output "results tasks --json prints JSON" '^\[' "$SPECGEN" results tasks --json --db "$t/r.db"
check_output "results campaigns --format csv prints CSV" '^id,kind,' "$SPECGEN" results campaigns --format csv --db "$t/r.db"
check "results campaigns -o FILE" "$SPECGEN" results campaigns --json -o "$t/c.json" --db "$t/r.db"
check_output "results -o: the file holds the JSON" '"kind": ?"sim"' cat "$t/c.json"
check_fails "results show --format csv is refused (exit 2)" 2 "$SPECGEN" results show 1 --format csv --db "$t/r.db"
check_output "results show --format csv says what show writes" 'show cannot write csv \(it writes a table or json\)' \
    "$SPECGEN" results show 1 --format csv --db "$t/r.db"
check_output "results export --format table is refused" 'export cannot write table' \
    "$SPECGEN" results export --format table --db "$t/r.db"
check_output "results --json --format csv contradict" '--json and --format csv: choose one' \
    "$SPECGEN" results tasks --json --format csv --db "$t/r.db"
check_output "results --format xml names the formats" "--format 'xml': expected csv, json or table" \
    "$SPECGEN" results tasks --format xml --db "$t/r.db"
finish
