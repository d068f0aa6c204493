/* libFuzzer target: the replay-trace parser (docs/replay-trace.md), then choosing a trace
 * and a fork answer for a prompt taken from the input's start. Invariants: no crash, leak
 * or undefined behaviour; tokens tile their sequence's text; forks are sorted; a fork
 * chosen for n tokens lies at or before n. */
#include "replay/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    char dir[] = "/tmp/fuzz_replay.XXXXXX";
    if (!mkdtemp(dir)) abort();
    snprintf(path, sizeof path, "%s/trace.jsonl", dir);
    return 0;
}

static void check_seq(const sg_replay_seq *q) {
    size_t at = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (q->tok[i].text != q->text + at) abort();
        at += q->tok[i].len;
    }
    if (at != q->len) abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    FILE *f = fopen(path, "w");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    sg_replay_traces ts;
    sg_err err;
    err.msg[0] = 0;
    if (sg_replay_load(path, &ts, &err) < 0) {
        if (!err.msg[0]) abort();
        return 0;
    }
    for (size_t i = 0; i < ts.n; i++) {
        const sg_replay_trace *t = &ts.t[i];
        check_seq(&t->reasoning);
        check_seq(&t->answer);
        for (size_t k = 0; k < t->n_forks; k++) {
            check_seq(&t->forks[k].answer);
            if (k && t->forks[k - 1].at > t->forks[k].at) abort();
        }
    }
    /* a prompt: the input's first 64 bytes; a fork's reasoning prefix: its next ones */
    char prompt[65];
    size_t np = size < 64 ? size : 64;
    memcpy(prompt, data, np);
    prompt[np] = 0;
    const sg_replay_trace *t = sg_replay_select(&ts, "replay", prompt);
    if (t) {
        size_t n = sg_replay_prefix_tokens(t, (const char *)data + np, size - np);
        if (n > t->reasoning.n) abort();
        const sg_replay_fork *fk = sg_replay_fork_for(t, n);
        if (fk && fk->at > n) abort();
        sg_replay_prefix_tokens(t, t->reasoning.text ? t->reasoning.text : "", t->reasoning.len);
    }
    sg_replay_traces_free(&ts);
    return 0;
}
