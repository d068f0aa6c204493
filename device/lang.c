/* Names of the languages (one backend each), both ways. */
#include "device/device.h"

#include <string.h>

static const char *const langs[] = {"cuda", "opencl"};

const char *sg_dev_lang_name(sg_dev_lang l) { return l < SG_DEV_NLANG ? langs[l] : "?"; }

int sg_dev_lang_parse(const char *s, sg_dev_lang *out, sg_err *err) {
    for (int i = 0; i < SG_DEV_NLANG; i++)
        if (!strcmp(s, langs[i])) {
            *out = (sg_dev_lang)i;
            return 0;
        }
    return sg_errf(err, "unknown device '%s' (expected cuda or opencl)", s);
}

int sg_dev_lang_of_path(const char *path, sg_dev_lang *out) {
    const char *dot = strrchr(path, '.');
    if (!dot) return -1;
    if (!strcmp(dot, ".cu") || !strcmp(dot, ".cuh"))
        *out = SG_DEV_CUDA;
    else if (!strcmp(dot, ".cl"))
        *out = SG_DEV_OPENCL;
    else
        return -1;
    return 0;
}
