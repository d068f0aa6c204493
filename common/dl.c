#include "common/dl.h"

#include "common/buf.h"

#include <dlfcn.h>
#include <stdio.h>

int sg_dl_load(const char *const *names, const sg_dl_sym *syms, void **handle, sg_err *err) {
    void *h = NULL;
    sg_buf tried = {0};
    const char *found = NULL;
    for (const char *const *n = names; *n && !h; n++) {
        h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (h)
            found = *n;
        else
            sg_buf_printf(&tried, "%s%s", tried.len ? "; " : "", dlerror());
    }
    if (!h) {
        sg_errf(err, "could not load %s (%s)", names[0], tried.data ? tried.data : "no names");
        sg_buf_free(&tried);
        return -1;
    }
    sg_buf_free(&tried);
    if (sg_dl_resolve(h, found, syms, err) < 0) {
        dlclose(h);
        return -1;
    }
    *handle = h;
    return 0;
}

int sg_dl_resolve(void *handle, const char *lib, const sg_dl_sym *syms, sg_err *err) {
    for (const sg_dl_sym *s = syms; s && s->name; s++) {
        *s->slot = dlsym(handle, s->name);
        if (!*s->slot && !s->optional)
            return sg_errf(err, "%s has no symbol %s (library too old?)", lib, s->name);
    }
    return 0;
}

void sg_dl_close(void *handle) {
    if (handle) dlclose(handle);
}
