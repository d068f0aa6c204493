/* redact.h — what is shown or stored of a text that came from a user: URLs without their
 * credentials, names without control characters.
 *
 * Contract: sg_redact_url copies a text with the credentials of every URL in it replaced
 * by "***": the userinfo of scheme://user:password@host, and the value of each query
 * parameter whose name holds key, token, secret, pass, pwd, auth, credential or signature
 * (any case). The rest is copied as it is, so a list (URL,URL) or a message that quotes a
 * URL keeps its shape. Only what is shown or stored goes through it: a request keeps the
 * URL the user gave (libcurl sends its userinfo as Basic authentication).
 * sg_redact_ctrl writes control characters (C0, DEL, and C1 as UTF-8) as escapes (\n, \r,
 * \t, \xHH, \u0085), so a folder or task name cannot start a line of its own on a console
 * or in a log. All are pure (no I/O). */
#ifndef SG_REDACT_H
#define SG_REDACT_H

#include "common/buf.h"

#include <stddef.h>

void sg_redact_append_url(sg_buf *b, const char *s);
/* A new string (the caller frees it); NULL for NULL. */
char *sg_redact_url(const char *s);
/* Into out[n] (a text too long keeps its beginning and end). Returns out. */
const char *sg_redact_url_fit(char *out, size_t n, const char *s);

void sg_redact_append_ctrl(sg_buf *b, const char *s);
/* Into out[n] (a text too long keeps its beginning and end). Returns out. */
const char *sg_redact_ctrl(char *out, size_t n, const char *s);

/* s as one word that a shell reads back as s, for a command printed to be copied: as it is
 * when it holds only plain characters, else in '...', or in $'...' with escapes when it
 * holds control characters (so it stays on one line). */
void sg_redact_append_shell_word(sg_buf *b, const char *s);

#endif
