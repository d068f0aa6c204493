/* fork.h — chat templates and the fork prompt.
 *
 * Contract: a chat template (prompts/templates/NAME.json) gives the text around each
 * message role, the generation prompt, the end-of-thinking marker and stop strings.
 * sg_template_render applies it to messages exactly as the model family's own chat
 * template does (tests/unit/test_speculate.c compares byte for byte with the models'
 * published templates rendered by jinja2: tests/fixtures/chat_templates/). The fork
 * prompt is the iteration's rendered prompt + think_open + the reasoning so far +
 * think_close + the answer prefix, so a fork shares the reasoning stream's token
 * prefix and hits the server's prefix cache. All strings are owned by the template;
 * sg_template_free releases them. */
#ifndef SG_FORK_H
#define SG_FORK_H

#include "common/buf.h"
#include "common/err.h"

#include <stddef.h>

#define SG_TEMPLATE_MAX_STOP 8

typedef struct sg_chat_template {
    char name[32];
    char *bos, *system, *user, *assistant, *generation, *think_open, *think_close;
    char *stop[SG_TEMPLATE_MAX_STOP];
    size_t nstop;
} sg_chat_template;

typedef struct sg_msg {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
} sg_msg;

/* Names: qwen3, deepseek-r1, glm, generic (files in prompts_dir/templates/). */
int sg_template_load(const char *prompts_dir, const char *name, sg_chat_template *t, sg_err *err);
void sg_template_free(sg_chat_template *t);

int sg_template_render(const sg_chat_template *t, const sg_msg *msgs, size_t n, int add_generation,
                       sg_buf *out, sg_err *err);

/* The raw /v1/completions prompt of a fork. The reasoning is used as streamed: when it
 * starts with the newline that think_open already ends with, that newline is not
 * doubled. answer_prefix is appended verbatim. */
int sg_fork_prompt(const sg_chat_template *t, const sg_msg *msgs, size_t n, const char *reasoning,
                   size_t reasoning_len, const char *answer_prefix, sg_buf *out, sg_err *err);
/* The fork's final assistant message, for servers that continue it (--fork-mode continue):
 * the same text sg_fork_prompt puts after the generation prompt — think_open, the
 * reasoning with the same newline rule, think_close, answer_prefix — appended to out. */
int sg_fork_assistant(const sg_chat_template *t, const char *reasoning, size_t reasoning_len,
                      const char *answer_prefix, sg_buf *out);

#endif
