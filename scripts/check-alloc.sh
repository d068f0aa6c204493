#!/usr/bin/env bash
# check-alloc.sh [ROOT] — one allocation policy: production code (every module folder,
# not tests/ or scripts/) allocates through common/buf.h's abort-on-OOM helpers
# (sg_xmalloc, sg_xcalloc, sg_xrealloc, sg_xstrdup, sg_buf), never through a bare
# malloc/calloc/realloc/strdup/strndup whose NULL could go unchecked. common/buf.c, which
# implements the helpers, is the one exception. Prints each offending line; exit 1 if any.
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
bad=$(find . -name '*.c' -not -path './tests/*' -not -path './scripts/*' \
    -not -path './build*' -not -path './common/buf.c' -not -path './.venv/*' -print0 |
    xargs -0 grep -nE '(^|[^_a-zA-Z0-9])(malloc|calloc|realloc|strdup|strndup)[[:space:]]*\(' |
    grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|//|/\*)' | sed 's|^\./||')
if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    echo "check-alloc: use sg_xmalloc/sg_xcalloc/sg_xrealloc/sg_xstrdup (common/buf.h) instead"
    exit 1
fi
echo "check-alloc: every allocation goes through common/buf.h's helpers"
