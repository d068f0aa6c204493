#!/usr/bin/env bash
# report_compare.sh — the report of one campaign and the report that puts campaigns side by
# side, each kind of page drawn in headless Chromium: a screenshot of each in the test's
# output folder ($BUILD/test-logs/report_compare/), and in the DOM Chromium built, every
# chart (<svg>) has a title, data marks (class "data") and titled axes. The pages: two real
# campaigns of the demo task with different policies (and each of them alone), and the 27
# campaigns of `sim --compare --db` (3 seeds of 9 configurations, grouped with their spread).
# `results compare` gives the same figures as CSV, JSON and a table.
source "$(dirname "$0")/../lib.sh"
T=$TMPDIR_TEST
SHOTS=${BUILD:-$T}/test-logs/report_compare
mkdir -p "$SHOTS"

check "sim --compare --db: 9 configurations x 3 seeds" \
    "$SPECGEN" sim --compare --db "$T/sim.db" --tasks 4 --seeds 1-3
check_output "results compare: a row per campaign, the configuration named" \
    '^27 +sim +specgen no forks +3 ' "$SPECGEN" results --db "$T/sim.db" compare
check "results compare --format csv: a header and 27 rows" bash -c \
    "[ \$('$SPECGEN' results --db '$T/sim.db' compare --format csv | wc -l) -eq 28 ]"
check "results compare --campaign 1,4 --json: those two, numbers as numbers" bash -c \
    "'$SPECGEN' results --db '$T/sim.db' compare --campaign 1,4 --json | python3 -c \"import json,sys; d=json.load(sys.stdin); assert [r['campaign'] for r in d]==[1,4] and [r['configuration'] for r in d]==['specgen','sequential'] and 0<d[0]['utilisation']<1, d\""
check_fails "results compare --campaign 1-99: a campaign that is not there" 1 \
    "$SPECGEN" results --db "$T/sim.db" compare --campaign 1-99
check_fails "results compare --campaign x: usage" 2 \
    "$SPECGEN" results --db "$T/sim.db" compare --campaign x
check_fails "results tasks --campaign 1,2: one id there" 2 \
    "$SPECGEN" results --db "$T/sim.db" tasks --campaign 1,2
check "report --campaign 1-27: the simulations side by side" \
    "$SPECGEN" report --db "$T/sim.db" --campaign 1-27 -o "$T/sim-compare.html"
check "report --campaign 1: one simulated campaign" \
    "$SPECGEN" report --db "$T/sim.db" --campaign 1 -o "$T/sim-one.html"
pages=(sim-compare sim-one)

if command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Platform; then
    for pol in specgen sequential; do
        check "a campaign of the demo task, policy $pol" "$SPECGEN" campaign \
            "$SPECGEN_ROOT/suites/demo" --tasks vector_scale --policy "$pol" --db "$T/real.db" \
            --out "$T/out-$pol" --speed 10 --device opencl
    done
    check "report --campaign 1,2: two policies side by side" \
        "$SPECGEN" report --db "$T/real.db" --campaign 1,2 -o "$T/real-compare.html"
    check "report --campaign 1: one real campaign" \
        "$SPECGEN" report --db "$T/real.db" --campaign 1 -o "$T/real-one.html"
    check_output "... the two policies are two configurations" 'campaign specgen.*campaign sequential' \
        tr -d '\n' <"$T/real-compare.html"
    pages+=(real-compare real-one)
else
    skip "real campaigns side by side" "no OpenCL platform (make deps installs pocl-opencl-icd)"
fi

chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
    skip "the pages in headless Chromium" "chromium is not installed (make deps installs it)"
    finish
fi
cflags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome")
for page in "${pages[@]}"; do
    # one Chromium run takes the screenshot and dumps the DOM it built (a second start of
    # Chromium for the DOM cost 1-2 s of CPU a page)
    timeout 120 "$chrome" "${cflags[@]}" --screenshot="$SHOTS/$page.png" --window-size=1000,3000 \
        --dump-dom "file://$T/$page.html" >"$T/$page.dom" 2>"$T/chrome.log"
    px=$(python3 "$SPECGEN_ROOT/tests/integration/png_pixels.py" "$SHOTS/$page.png" '#4e79a7' 2>&1)
    read -r nonwhite _ <<<"$px"
    if [ "${nonwhite:-0}" -gt 20000 ]; then ok "$page: drawn ($SHOTS/$page.png)"
    else not_ok "$page: drawn ($px)"; cat "$T/chrome.log"; fi
    check "$page: every chart has data, a title and titled axes (in Chromium's DOM)" \
        python3 - "$T/$page.dom" <<'PY'
import sys
from html.parser import HTMLParser

class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.depth, self.text_of = [], 0, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.depth += 1
            if self.depth == 1:
                self.charts.append({"title": "", "data": 0, "xtitle": "", "ytitle": ""})
            return
        if not self.depth:
            return
        c = self.charts[-1]
        cls = (a.get("class") or "").split()
        if "data" in cls:
            c["data"] += 1
        if tag == "title" and not c["title"]:
            self.text_of = "title"
        elif tag == "text" and ("xtitle" in cls or "ytitle" in cls):
            self.text_of = "xtitle" if "xtitle" in cls else "ytitle"
    def handle_endtag(self, tag):
        if tag == "svg":
            self.depth -= 1
        self.text_of = None if tag in ("title", "text") else self.text_of
    def handle_data(self, d):
        if self.depth and self.text_of:
            self.charts[-1][self.text_of] += d.strip()

p = Charts()
p.feed(open(sys.argv[1]).read())
bad = [(i, c) for i, c in enumerate(p.charts) if not (c["title"] and c["data"] and c["xtitle"] and c["ytitle"])]
print(f"{len(p.charts)} charts")
if not p.charts or bad:
    sys.exit(f"charts without data, title or axis titles: {bad}")
PY
done
finish
