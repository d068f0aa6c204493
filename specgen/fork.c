#include "specgen/fork.h"
#include "common/buf.h"

#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_template_free(sg_chat_template *t) {
    char **fields[] = {&t->bos,        &t->system,     &t->user,       &t->assistant,
                       &t->generation, &t->think_open, &t->think_close};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        free(*fields[i]);
        *fields[i] = NULL;
    }
    for (size_t i = 0; i < t->nstop; i++) free(t->stop[i]);
    t->nstop = 0;
}

int sg_template_load(const char *prompts_dir, const char *name, sg_chat_template *t, sg_err *err) {
    memset(t, 0, sizeof *t);
    for (const char *c = name; *c; c++)
        if (!(*c == '-' || *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
            return sg_errf(err, "template name '%s' has characters other than a-z 0-9 - _", name);
    char path[1024];
    snprintf(path, sizeof path, "%s/templates/%s.json", prompts_dir, name);
    json_t *j = sg_json_load_file(path, err);
    if (!j)
        return sg_err_prefix(err, "chat template '%s' (known: qwen3, deepseek-r1, glm, generic)",
                             name);
    snprintf(t->name, sizeof t->name, "%s", name);
    struct {
        const char *key;
        char **out;
    } f[] = {
        {"bos", &t->bos},
        {"system", &t->system},
        {"user", &t->user},
        {"assistant", &t->assistant},
        {"generation", &t->generation},
        {"think_open", &t->think_open},
        {"think_close", &t->think_close},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0] && rc == 0; i++) {
        const char *v = NULL;
        rc = sg_json_get_str(j, f[i].key, 1, &v, path, err);
        if (rc == 0) *f[i].out = sg_xstrdup(v);
    }
    json_t *stop = NULL;
    if (rc == 0) rc = sg_json_get_arr(j, "stop", 0, &stop, path, err);
    size_t i;
    json_t *s;
    if (rc == 0 && stop) {
        json_array_foreach(stop, i, s) {
            if (!json_is_string(s) || t->nstop == SG_TEMPLATE_MAX_STOP) {
                rc = sg_errf(err, "%s: field \"stop\"[%zu]: expected at most %d strings", path, i,
                             SG_TEMPLATE_MAX_STOP);
                break;
            }
            t->stop[t->nstop++] = sg_xstrdup(json_string_value(s));
        }
    }
    json_decref(j);
    if (rc < 0) sg_template_free(t);
    return rc;
}

int sg_template_render(const sg_chat_template *t, const sg_msg *msgs, size_t n, int add_generation,
                       sg_buf *out, sg_err *err) {
    sg_buf_append_str(out, t->bos);
    for (size_t i = 0; i < n; i++) {
        const char *tmpl = !strcmp(msgs[i].role, "system")      ? t->system
                           : !strcmp(msgs[i].role, "user")      ? t->user
                           : !strcmp(msgs[i].role, "assistant") ? t->assistant
                                                                : NULL;
        if (!tmpl)
            return sg_errf(err, "message %zu: role '%s' is not system, user or assistant", i,
                           msgs[i].role);
        const char *key = "content";
        sg_buf_fill(out, tmpl, &key, &msgs[i].content, 1);
    }
    if (add_generation) sg_buf_append_str(out, t->generation);
    return 0;
}

int sg_fork_assistant(const sg_chat_template *t, const char *reasoning, size_t rlen,
                      const char *answer_prefix, sg_buf *out) {
    sg_buf_append_str(out, t->think_open);
    /* Servers differ on whether the reasoning they stream keeps the newline after the
     * opening tag; the text must not hold it twice. */
    size_t ol = strlen(t->think_open);
    const char *gen_end = ol ? t->think_open : t->generation;
    size_t gl = strlen(gen_end);
    if (gl && gen_end[gl - 1] == '\n' && rlen && reasoning[0] == '\n') reasoning++, rlen--;
    sg_buf_append(out, reasoning, rlen);
    sg_buf_append_str(out, t->think_close);
    sg_buf_append_str(out, answer_prefix);
    return 0;
}

int sg_fork_prompt(const sg_chat_template *t, const sg_msg *msgs, size_t n, const char *reasoning,
                   size_t rlen, const char *answer_prefix, sg_buf *out, sg_err *err) {
    if (sg_template_render(t, msgs, n, 1, out, err) < 0) return -1;
    return sg_fork_assistant(t, reasoning, rlen, answer_prefix, out);
}
