/* json.h — small helpers over jansson for reading documents with good errors.
 *
 * Contract: every getter takes a `where` string (usually the file name, or
 * "file: field.path") that prefixes any error message, so a bad input produces one
 * sentence such as `suites/x/task.json: field "sizes.B": expected an integer, got
 * string "abc"`. Getters never take ownership; returned pointers (strings, objects)
 * are borrowed from the json_t and live as long as it does. Loaders return a new
 * reference the caller must json_decref. */
#ifndef SG_JSON_H
#define SG_JSON_H

#include "common/err.h"

#include <jansson.h>
#include <stdint.h>

/* Load a JSON document from a file; errors carry file, line and column. */
json_t *sg_json_load_file(const char *path, sg_err *err);
/* Parse text; `where` names it in errors. */
json_t *sg_json_parse(const char *text, size_t len, const char *where, sg_err *err);

/* Whether s[0..n) is valid UTF-8 (what jansson accepts in strings); -1 if so, else the
 * offset of the first bad byte. */
long sg_utf8_bad_at(const char *s, size_t n);

/* Type name of a value as used in messages ("object", "string", ...). */
const char *sg_json_type_name(const json_t *v);

/* Required (required != 0) or optional fields. An absent optional field leaves *out
 * untouched and returns 0; a present field of the wrong type is always an error. */
int sg_json_get_str(const json_t *obj, const char *key, int required, const char **out,
                    const char *where, sg_err *err);
int sg_json_get_int(const json_t *obj, const char *key, int required, int64_t *out,
                    const char *where, sg_err *err);
int sg_json_get_num(const json_t *obj, const char *key, int required, double *out,
                    const char *where, sg_err *err);
int sg_json_get_bool(const json_t *obj, const char *key, int required, int *out, const char *where,
                     sg_err *err);
int sg_json_get_obj(const json_t *obj, const char *key, int required, json_t **out,
                    const char *where, sg_err *err);
int sg_json_get_arr(const json_t *obj, const char *key, int required, json_t **out,
                    const char *where, sg_err *err);

/* Refuse keys of obj outside `known` (NULL-terminated): `where: unknown field "colour"
 * (did you mean "color"?)`, the suggestion being the nearest known key by edit distance
 * when it is close enough to be a likely typo. */
int sg_json_check_keys(const json_t *obj, const char *const *known, const char *where, sg_err *err);

/* Serialize compactly; caller frees the string. */
char *sg_json_dump(const json_t *v);

#endif
