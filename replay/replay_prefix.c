/* replay-llm's --cached-prefix: the prompts it has served (the most recent
 * SG_REPLAY_PREFIX_KEEP), and how many leading bytes of a new prompt one of them already
 * holds — what a server with a prefix cache would find cached. */
#include "replay/replay_impl.h"

#include <stdlib.h>
#include <string.h>

static size_t common_prefix(const char *a, size_t na, const char *b, size_t nb) {
    size_t n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

size_t sg_replay_prefix_seen(sg_replay_prefixes *p, const char *prompt, size_t len) {
    size_t best = 0;
    for (size_t i = 0; i < p->n && best < len; i++) {
        size_t c = common_prefix(p->text[i], p->len[i], prompt, len);
        if (c > best) best = c;
    }
    size_t slot = p->n < SG_REPLAY_PREFIX_KEEP ? p->n++ : p->next; /* full: the oldest goes */
    if (p->n == SG_REPLAY_PREFIX_KEEP) p->next = (slot + 1) % SG_REPLAY_PREFIX_KEEP;
    free(p->text[slot]);
    p->text[slot] = sg_xmalloc(len + 1);
    memcpy(p->text[slot], prompt, len);
    p->text[slot][len] = '\0';
    p->len[slot] = len;
    return best;
}

void sg_replay_prefixes_free(sg_replay_prefixes *p) {
    for (size_t i = 0; i < p->n; i++) free(p->text[i]);
    memset(p, 0, sizeof *p);
}
