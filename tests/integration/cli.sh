#!/usr/bin/env bash
# The command-line surface: help, version, unknown commands and options, bad values.
. "$(dirname "$0")/../lib.sh"

check_output "--help lists every command" \
    'optimize.*campaign.*results.*report.*task.*validate.*profile.*pool.*kvstore.*replay-llm.*llm-check.*sim' \
    bash -c "$SPECGEN --help | tr '\n' ' '"
check_output "--version prints a version" '^specgen [0-9]+\.[0-9]+\.[0-9]+' "$SPECGEN" --version
for cmd in optimize campaign results report task validate profile pool kvstore replay-llm llm-check sim; do
    check_output "$cmd --help explains the command" "^Usage: specgen $cmd" "$SPECGEN" "$cmd" --help
    check_fails "$cmd --bogus exits 2" 2 "$SPECGEN" "$cmd" --bogus
    check_output "$cmd --bogus names the option" "unknown option '--bogus'" "$SPECGEN" "$cmd" --bogus
done
check_fails "an unknown command exits 2" 2 "$SPECGEN" frobnicate
check_output "an unknown command is named" "'frobnicate' is not a command" "$SPECGEN" frobnicate
check_fails "no command exits 2" 2 "$SPECGEN"
check_output "a bad number names option and value" "--target: 'abc' is not a number" \
    "$SPECGEN" optimize x --target abc
check_output "a bad duration names option and value" "--budget-time: '5 parsecs' is not a duration" \
    "$SPECGEN" optimize x --budget-time '5 parsecs'
check_output "a missing value is reported" "option '--target' needs a value" "$SPECGEN" optimize x --target
check_output "--log-level rejects bad levels" "--log-level: 'loud'" "$SPECGEN" --log-level loud optimize
# short options (sg_opt.short_name): -o VALUE, -oVALUE, -o=VALUE; unknown ones are named
check_output "a short option shows in --help" '^  -o, --out FILE' "$SPECGEN" report --help
for form in "-o $TMPDIR_TEST/a.html" "-o$TMPDIR_TEST/a.html" "-o=$TMPDIR_TEST/a.html"; do
    # shellcheck disable=SC2086 # the form is split on purpose
    check_output "short option form '${form%%$TMPDIR_TEST*}...' is parsed" "no results database at $TMPDIR_TEST/none.db" \
        "$SPECGEN" report --db "$TMPDIR_TEST/none.db" $form
done
check_fails "an unknown short option exits 2" 2 "$SPECGEN" report -x
check_output "an unknown short option is named" "unknown option '-x'" "$SPECGEN" report -x
check_output "a short option needs its value" "option '--out' needs a value" "$SPECGEN" report -o
check_output "help CMD shows the command's help" "^Usage: specgen kvstore" "$SPECGEN" help kvstore
finish
