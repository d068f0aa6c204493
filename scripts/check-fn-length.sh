#!/usr/bin/env bash
# check-fn-length.sh [-n MAX] [-a] [ROOT] — no C function longer than MAX lines (default 100),
# and no function-local static that holds state.
#
# Counts each function definition's lines from its opening '{' to its closing '}' (both
# included), in every .c file under the module folders and tests/ (generated and vendored
# trees such as build*/ and .venv/ are skipped). The sources are clang-format clean
# (.clang-format), which this brace counter relies on: a definition's body ends with '}' in
# column 0, and a line at brace depth 0 that ends with '{' and holds a '(' starts one.
# Braces inside string and character literals and comments are ignored.
#
# Option tables are exempt by name: the lines of an initializer of an array of options,
# `[static] const sg_opt NAME[] = { ... };` written inside a function, do not count toward
# its length (a table is data; one row per option).
#
# Statics: a `static` declared inside a function of production code (not tests/) must be
# `static const` (a lookup table); anything else is hidden state that breaks reentrancy
# (docs/architecture.md, Conventions).
#
# Prints one line per offender, "file:line: function() is N lines (max MAX)" longest first,
# then "file:line: function() keeps state in a static: DECLARATION"; -a prints every
# function with its length instead. Exit 1 if any offender, 0 if none, 2 on a usage error.
max=100 all=0
while [ $# -gt 0 ]; do
    case $1 in
    -n) [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || {
        echo "check-fn-length: -n takes a positive line count" >&2
        exit 2
    }
        max=$2; shift 2 ;;
    -a) all=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-fn-length: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
files=$(find . -name '*.c' -not -path './build*' -not -path './.venv/*' -not -path './deps/*' \
    -not -path './.git/*' | sed 's|^\./||' | sort)
[ -n "$files" ] || { echo "check-fn-length: no .c files under $root" >&2; exit 2; }
# shellcheck disable=SC2086
out=$(awk -v max="$max" -v all="$all" '
function strip(s,   out, i, c, n) {   # drop literals and comments, keep braces of code
    out = ""; n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (incomment) {
            if (c == "*" && substr(s, i + 1, 1) == "/") { incomment = 0; i++ }
            continue
        }
        if (c == "/" && substr(s, i + 1, 1) == "*") { incomment = 1; i++; continue }
        if (c == "/" && substr(s, i + 1, 1) == "/") break
        if (c == "\"" || c == sq) {
            q = c
            for (i++; i <= n; i++) {
                c = substr(s, i, 1)
                if (c == "\\") { i++; continue }
                if (c == q) break
            }
            out = out "x"; continue
        }
        out = out c
    }
    return out
}
BEGIN { sq = sprintf("%c", 39) }
FNR == 1 {
    if (NR > 1 && depth != 0) printf "0 %s: braces do not balance (depth %d at its end)\n", prev, depth
    prev = FILENAME
    depth = 0; incomment = 0; infn = 0; intable = 0; pending = "" }
{
    raw = $0
    code = strip(raw)
    if (code ~ /^#/) next
    if (!infn && depth == 0) {
        # a signature may span lines: remember the text since the last ; or }
        pending = pending " " code
        if (code ~ /\{[ \t]*$/ && pending ~ /\(/ && pending !~ /=[ \t]*\{[ \t]*$/ &&
            pending !~ /^[ \t]*(typedef|struct|union|enum)[ \t]/) {
            infn = 1; start = FNR; exempt = 0
            name = pending
            sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
            pending = ""
        }
    }
    if (!all && infn && FILENAME !~ /^tests\// && code ~ /^[ \t]+static[ \t]/ && code !~ /^[ \t]+static[ \t]+const[ \t]/) {
        decl = raw; sub(/^[ \t]+/, "", decl)
        printf "-1 %s:%d: %s() keeps state in a static: %s\n", FILENAME, FNR, name, decl
    }
    if (infn && !intable && code ~ /^[ \t]+(static[ \t]+)?const[ \t]+sg_opt[ \t]+[A-Za-z_0-9]+[ \t]*\[[^]]*\][ \t]*=[ \t]*\{/) {
        intable = 1; tstart = FNR; tdepth = depth
    }
    o = gsub(/\{/, "{", code); c = gsub(/\}/, "}", code)
    depth += o - c
    if (intable && depth == tdepth) { exempt += FNR - tstart + 1; intable = 0 }
    if (!infn && depth == 0 && code ~ /[;}][ \t]*$/) pending = ""
    if (infn && depth == 0) {
        n = FNR - start + 1 - exempt
        if (all) printf "%d %s:%d: %s() %d lines\n", n, FILENAME, start, name, n
        else if (n > max) printf "%d %s:%d: %s() is %d lines (max %d)\n", n, FILENAME, start, name, n, max
        infn = 0; pending = ""
    }
}
END { if (depth != 0) printf "0 %s: braces do not balance (depth %d at its end)\n", prev, depth }' $files | sort -t' ' -k1,1nr -s | cut -d' ' -f2-)
if [ "$all" = 1 ]; then
    printf '%s\n' "$out"
    exit 0
fi
if [ -n "$out" ]; then
    printf '%s\n' "$out"
    long=$(printf '%s\n' "$out" | grep -c ' lines (max ')
    st=$(printf '%s\n' "$out" | grep -c 'keeps state in a static')
    [ "$long" = 0 ] || echo "check-fn-length: $long function(s) over $max lines; split them (option tables, const sg_opt NAME[] = {...}, do not count)"
    [ "$st" = 0 ] || echo "check-fn-length: $st function-local static(s) holding state; pass a context or allocate per call"
    exit 1
fi
echo "check-fn-length: no function over $max lines, no function-local static holding state"
