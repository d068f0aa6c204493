/* Workers started afresh: procpool.c runs `EXE __dev-worker OPTS` instead of only forking,
 * so that a worker maps none of its parent's memory (the LLM client's Authorization
 * header, what curl freed without zeroing, other tasks' sources). OPTS is the pool's
 * sg_dev_opts as JSON; the kinds travel by name and the exec'd program maps them back to
 * its own table. Nothing secret is in OPTS: it is visible in /proc/PID/cmdline. */
#include "device/device.h"

#include "common/buf.h"
#include "device/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *exec_path;

void sg_dev_worker_exec_set(const char *exe) { exec_path = exe; }

const char *sg_dev_worker_exec_path(void) { return exec_path; }

char *sg_dev_opts_to_json(const sg_dev_opts *o) {
    json_t *kinds = json_array(), *dirs = json_array();
    for (int i = 0; i < o->nkinds; i++)
        json_array_append_new(kinds, json_string(o->kinds[i]->name));
    for (int i = 0; o->read_dirs && o->read_dirs[i]; i++)
        json_array_append_new(dirs, json_string(o->read_dirs[i]));
    json_t *j =
        json_pack("{s:i,s:i,s:s*,s:b,s:I,s:I,s:I,s:i,s:i,s:i,s:o,s:o}", "device", (int)o->device,
                  "slots", o->slots, "arch", o->arch, "compile_only", o->compile_only,
                  "compile_timeout_ms", (json_int_t)o->compile_timeout_ms, "run_timeout_ms",
                  (json_int_t)o->run_timeout_ms, "mem_limit", (json_int_t)o->mem_limit,
                  "opencl_platform", o->opencl_platform, "opencl_device", o->opencl_device,
                  "cuda_device", o->cuda_device, "kinds", kinds, "read_dirs", dirs);
    if (j && o->nvrtc_pch) json_object_set_new(j, "nvrtc_pch", json_string(o->nvrtc_pch));
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL; /* NULL: a folder name not UTF-8 */
    json_decref(j);
    return s;
}

int sg_dev_opts_from_json(const char *text, const sg_dev_kind *const *all, int nall, sg_dev_opts *o,
                          sg_err *err) {
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j) return sg_errf(err, "worker options: %s", je.text);
    sg_dev_opts_default(o);
    int device = 0, compile_only = 0;
    json_int_t ct = 0, rt = 0, mem = 0;
    const char *arch = NULL;
    json_t *kinds = NULL, *dirs = NULL;
    if (json_unpack_ex(j, &je, 0, "{s:i,s:i,s?s,s:b,s:I,s:I,s:I,s:i,s:i,s:i,s:o,s:o}", "device",
                       &device, "slots", &o->slots, "arch", &arch, "compile_only", &compile_only,
                       "compile_timeout_ms", &ct, "run_timeout_ms", &rt, "mem_limit", &mem,
                       "opencl_platform", &o->opencl_platform, "opencl_device", &o->opencl_device,
                       "cuda_device", &o->cuda_device, "kinds", &kinds, "read_dirs", &dirs) < 0 ||
        !json_is_array(kinds) || !json_is_array(dirs)) {
        json_decref(j);
        return sg_errf(err, "worker options: %s", je.text);
    }
    o->device = (sg_dev_lang)device;
    o->compile_only = compile_only;
    o->compile_timeout_ms = ct;
    o->run_timeout_ms = rt;
    o->mem_limit = (uint64_t)mem;
    o->arch = arch ? sg_xstrdup(arch) : NULL;
    const char *pch = json_string_value(json_object_get(j, "nvrtc_pch"));
    o->nvrtc_pch = pch ? sg_xstrdup(pch) : NULL;
    const sg_dev_kind **k = sg_xcalloc(json_array_size(kinds) + 1, sizeof *k);
    const char **d = sg_xcalloc(json_array_size(dirs) + 1, sizeof *d);
    size_t i;
    json_t *v;
    json_array_foreach(kinds, i, v) {
        const char *name = json_string_value(v);
        for (int a = 0; name && a < nall; a++)
            if (!strcmp(all[a]->name, name)) k[o->nkinds++] = all[a];
    }
    json_array_foreach(dirs, i, v) {
        if (json_string_value(v)) d[i] = sg_xstrdup(json_string_value(v));
    }
    o->kinds = k;
    o->read_dirs = d;
    json_decref(j);
    return 0;
}

void sg_dev_opts_from_json_free(sg_dev_opts *o) {
    free((char *)o->arch);
    free((char *)o->nvrtc_pch);
    for (int i = 0; o->read_dirs && o->read_dirs[i]; i++) free((char *)o->read_dirs[i]);
    free((void *)o->read_dirs);
    free((void *)o->kinds);
    memset(o, 0, sizeof *o);
}

int sg_dev_worker_exec_main(const char *opts_json, const sg_dev_kind *const *all, int nall) {
    sg_dev_opts o;
    sg_err err;
    if (sg_dev_opts_from_json(opts_json, all, nall, &o, &err) < 0) {
        fprintf(stderr, "specgen __dev-worker: %s\n", err.msg);
        return 2;
    }
    /* procpool's socket is fd 3 (sg_proc_spawn); _exit as a forked worker does: no exit
     * handlers (a sanitizer's leak report) between the last reply and the end */
    _exit(sg_dev_worker_main(3, &o) & 0xff);
}
