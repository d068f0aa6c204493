/* The JSON body of a streamed chat or completions request. */
#include "llm/llm_impl.h"

#include "common/json.h"

#include <string.h>

/* jansson drops a string that is not UTF-8 (a message would silently vanish): refuse. */
static int text_ok(const char *what, const char *s, sg_err *err) {
    long at = s ? sg_utf8_bad_at(s, strlen(s)) : -1;
    if (at < 0) return 1;
    sg_errf(err, "LLM request: the %s is not valid UTF-8 (byte 0x%02x at offset %ld)", what,
            (unsigned char)s[at], at);
    return 0;
}

char *sg_llm_body(const sg_llm_request *req, int with_ids, sg_err *err) {
    if (!req->model || !*req->model) {
        sg_errf(err, "LLM request: no model name");
        return NULL;
    }
    if (!text_ok("model name", req->model, err) || !text_ok("system message", req->system, err) ||
        !text_ok("user message", req->user, err) ||
        !text_ok("assistant message", req->assistant, err) || !text_ok("prompt", req->prompt, err))
        return NULL;
    json_t *b = json_object();
    json_object_set_new(b, "model", json_string(req->model));
    if (req->api == SG_LLM_CHAT) {
        if (!req->user) {
            json_decref(b);
            sg_errf(err, "LLM chat request: no user message");
            return NULL;
        }
        json_t *msgs = json_array();
        if (req->system)
            json_array_append_new(
                msgs, json_pack("{s:s, s:s}", "role", "system", "content", req->system));
        json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", req->user));
        if (req->assistant) {
            /* vLLM / SGLang: render the template without a generation prompt and let the
             * model go on from the end of this message. */
            json_array_append_new(
                msgs, json_pack("{s:s, s:s}", "role", "assistant", "content", req->assistant));
            json_object_set_new(b, "continue_final_message", json_true());
            json_object_set_new(b, "add_generation_prompt", json_false());
        }
        json_object_set_new(b, "messages", msgs);
    } else {
        if (!req->prompt && !req->prompt_ids) {
            json_decref(b);
            sg_errf(err, "LLM completions request: no prompt");
            return NULL;
        }
        if (req->prompt_ids) { /* vLLM and SGLang take a prompt given as token ids */
            json_t *ids = json_array();
            for (size_t i = 0; i < req->n_prompt_ids; i++)
                json_array_append_new(ids, json_integer(req->prompt_ids[i]));
            json_object_set_new(b, "prompt", ids);
        } else {
            json_object_set_new(b, "prompt", json_string(req->prompt));
        }
    }
    /* vLLM: prompt_token_ids in the first chunk, each chunk's token_ids (llm_ids.c). */
    if (with_ids && req->return_ids) json_object_set_new(b, "return_token_ids", json_true());
    json_object_set_new(b, "stream", json_true());
    /* continuous_usage_stats: vLLM (and SGLang) then put the running usage in every chunk;
     * other servers ignore the field. */
    json_object_set_new(b, "stream_options",
                        json_pack("{s:b,s:b}", "include_usage", 1, "continuous_usage_stats", 1));
    if (req->max_tokens > 0) json_object_set_new(b, "max_tokens", json_integer(req->max_tokens));
    if (req->temperature >= 0) json_object_set_new(b, "temperature", json_real(req->temperature));
    if (req->top_p > 0) json_object_set_new(b, "top_p", json_real(req->top_p));
    if (req->nstop) {
        json_t *stop = json_array();
        for (size_t i = 0; i < req->nstop; i++)
            json_array_append_new(stop, json_string(req->stop[i]));
        json_object_set_new(b, "stop", stop);
    }
    if (req->extra_json) {
        json_t *x =
            sg_json_parse(req->extra_json, strlen(req->extra_json), "LLM request extra JSON", err);
        if (!x || !json_is_object(x)) {
            if (x) sg_errf(err, "LLM request extra JSON must be an object");
            json_decref(x);
            json_decref(b);
            return NULL;
        }
        json_object_update(b, x);
        json_decref(x);
    }
    char *s = sg_json_dump(b);
    json_decref(b);
    return s;
}
