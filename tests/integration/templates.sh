#!/usr/bin/env bash
# specgen's chat templates against the models' own: renders the published Jinja templates in
# tests/fixtures/chat_templates/ with jinja2 (render.py) for the messages specgen builds, and
# has the unit test binary compare specgen's renderings (prompts/templates/NAME.json through
# specgen/fork.c) with those strings. Also: the committed expected.json (what the unit test
# reads without jinja2) is not stale, and a changed template file is caught.
. "$(dirname "$0")/../lib.sh"
PY=$SPECGEN_ROOT/.venv/bin/python
FIX=$SPECGEN_ROOT/tests/fixtures/chat_templates
UNIT=${BUILD:-$SPECGEN_ROOT/build}/tests/test_speculate
if ! "$PY" -c 'import jinja2' 2>/dev/null; then
    skip "published chat templates rendered with jinja2" "jinja2 is not installed in .venv (run make deps)"
    finish
fi
if [ ! -x "$UNIT" ]; then
    not_ok "the unit test binary $UNIT exists (make unit)"
    finish
fi

check "render.py renders qwen3, deepseek-r1 and glm" "$PY" "$FIX/render.py" --out "$TMPDIR_TEST/cases.json"
check "specgen's renderings match the templates rendered just now" \
    env SG_TEMPLATE_CASES="$TMPDIR_TEST/cases.json" CMOCKA_TEST_ABORT=0 "$UNIT"
check "the committed expected.json is what render.py renders" "$PY" "$FIX/render.py" --check

# A one-character change to a shipped template must fail the comparison.
root=$TMPDIR_TEST/root
mkdir -p "$root/tests/fixtures/chat_templates"
cp -r "$SPECGEN_ROOT/prompts" "$root/"
cp "$TMPDIR_TEST/cases.json" "$root/tests/fixtures/chat_templates/expected.json"
for t in qwen3 deepseek-r1 glm; do
    cp "$SPECGEN_ROOT/prompts/templates/$t.json" "$root/prompts/templates/$t.json"
    # think_close differs in each: drop its first character.
    "$PY" - "$root/prompts/templates/$t.json" <<'EOF'
import json, sys
p = sys.argv[1]
t = json.load(open(p, encoding="utf-8"))
t["think_close"] = t["think_close"][1:]
json.dump(t, open(p, "w", encoding="utf-8"), ensure_ascii=False)
EOF
    if SPECGEN_ROOT=$root "$UNIT" >"$TMPDIR_TEST/mut-$t.log" 2>&1; then
        not_ok "a changed prompts/templates/$t.json fails the comparison"
    else
        ok "a changed prompts/templates/$t.json fails the comparison"
    fi
    cp "$SPECGEN_ROOT/prompts/templates/$t.json" "$root/prompts/templates/$t.json"
done
finish
