/* Task bundles: a task folder's files as one JSON object, its SHA-256, and storing one in
 * the agent's cache (pool/internal.h states the rules). */
#include "pool/internal.h"

#include "common/buf.h"
#include "common/json.h"
#include "common/paths.h"

#include <dirent.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sg_pool_bundle_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n < 1 || n > 128) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int word =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!word && (i == 0 || (c != '.' && c != '-'))) return 0;
    }
    return 1;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int sg_pool_bundle_hash(const json_t *files, char hash[SG_POOL_HASH_HEX], sg_err *err) {
    if (!json_is_object(files)) return sg_errf(err, "\"task_files\": expected an object");
    size_t n = json_object_size(files), i = 0;
    const char **names = sg_xcalloc(n ? n : 1, sizeof *names);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)files, k, v) names[i++] = k;
    qsort(names, n, sizeof *names, cmp_str);
    sg_buf b = {0};
    int rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        const json_t *text = json_object_get(files, names[i]);
        if (!sg_pool_bundle_name_ok(names[i]))
            rc = sg_errf(err, "\"task_files\": '%s' is not a plain file name", names[i]);
        else if (!json_is_string(text))
            rc = sg_errf(err, "\"task_files.%s\": expected a string", names[i]);
        else {
            sg_buf_printf(&b, "%s%c%zu%c", names[i], 0, json_string_length(text), 0);
            sg_buf_append(&b, json_string_value(text), json_string_length(text));
        }
    }
    free(names);
    unsigned char d[32];
    if (rc == 0 && gnutls_hash_fast(GNUTLS_DIG_SHA256, b.data ? b.data : "", b.len, d) < 0)
        rc = sg_errf(err, "SHA-256 is not available");
    sg_buf_free(&b);
    if (rc < 0) return -1;
    for (int j = 0; j < 32; j++) snprintf(hash + 2 * j, 3, "%02x", d[j]);
    return 0;
}

json_t *sg_pool_bundle_read(const char *dir, char hash[SG_POOL_HASH_HEX], char **skipped,
                            sg_err *err) {
    *skipped = NULL;
    DIR *d = opendir(dir);
    if (!d) {
        sg_errf(err, "task folder %s: %s", dir, strerror(errno));
        return NULL;
    }
    json_t *files = json_object();
    sg_buf skip = {0};
    size_t total = 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        sg_buf b = {0};
        const char *why = NULL;
        if (!sg_pool_bundle_name_ok(e->d_name))
            why = "name";
        else if (sg_buf_read_file_max(&b, path, SG_SOURCE_MAX) != 0)
            why = errno == EFBIG ? "too large" : "unreadable";
        else if (sg_utf8_bad_at(b.data ? b.data : "", b.len) >= 0 ||
                 (b.data && memchr(b.data, 0, b.len)))
            why = "not UTF-8 text";
        if (why) {
            sg_buf_printf(&skip, "%s%s (%s)", skip.len ? ", " : "", e->d_name, why);
        } else if ((total += b.len) > SG_POOL_TASK_MAX) {
            rc = sg_errf(err, "task folder %s: its files are over %zu MiB together", dir,
                         SG_POOL_TASK_MAX >> 20);
        } else {
            json_object_set_new(files, e->d_name, json_stringn(b.data ? b.data : "", b.len));
        }
        sg_buf_free(&b);
    }
    closedir(d);
    if (rc == 0 && !json_object_get(files, "task.json"))
        rc = sg_errf(err, "task folder %s: no task.json to send", dir);
    if (rc == 0 && sg_pool_bundle_hash(files, hash, err) < 0) rc = -1;
    if (rc < 0) {
        json_decref(files);
        sg_buf_free(&skip);
        return NULL;
    }
    if (skip.len) *skipped = sg_buf_steal(&skip);
    sg_buf_free(&skip);
    return files;
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue; /* bundles hold no hidden files */
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int sg_pool_bundle_store(const char *cache_dir, const char *hash, const json_t *files, char *out,
                         size_t outlen, sg_err *err) {
    char got[SG_POOL_HASH_HEX];
    if (sg_pool_bundle_hash(files, got, err) < 0) return -1;
    if (strcmp(got, hash))
        return sg_errf(err, "\"task_files\" hash to %s, not to the \"task\" %s they came with", got,
                       hash);
    if (!json_is_string(json_object_get(files, "task.json")))
        return sg_errf(err, "\"task_files\": no task.json");
    if (sg_mkdir_p(cache_dir, err) < 0) return -2;
    snprintf(out, outlen, "%s/%s", cache_dir, hash);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) return 0; /* stored already */
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-XXXXXX", cache_dir, hash);
    if (!mkdtemp(tmp)) {
        sg_errf(err, "cannot make a folder in %s: %s", cache_dir, strerror(errno));
        return -2;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)files, k, v) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", tmp, k);
        FILE *f = fopen(path, "wb");
        size_t n = json_string_length(v);
        int ok = f && fwrite(json_string_value(v), 1, n, f) == n;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) {
            sg_errf(err, "cannot write %s: %s", path, strerror(errno));
            remove_tree(tmp);
            return -2;
        }
    }
    sg_val_task t;
    sg_err e;
    if (sg_val_task_load(tmp, &t, &e) < 0) {
        remove_tree(tmp);
        return sg_errf(err, "the task sent does not load: %s", e.msg);
    }
    sg_val_task_free(&t);
    if (rename(tmp, out) != 0) {
        remove_tree(tmp); /* another agent sharing the folder stored it first: fine */
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        sg_errf(err, "cannot store the task in %s: %s", out, strerror(errno));
        return -2;
    }
    return 1;
}
