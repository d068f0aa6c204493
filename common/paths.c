#include "common/paths.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int sg_data_dir(const char *name, char *out, size_t n, sg_err *err) {
    char exe[4096] = "", bindir[4096] = ".";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        snprintf(bindir, sizeof bindir, "%s", dirname(exe));
    }
    const char *env = getenv("SPECGEN_DATA");
    char cand[5][4200];
    int nc = 0;
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%s/%s", env, name);
    snprintf(cand[nc++], sizeof cand[0], "%s/%s", bindir, name);
    snprintf(cand[nc++], sizeof cand[0], "%s/../%s", bindir, name); /* bin/specgen in a checkout */
    snprintf(cand[nc++], sizeof cand[0], "%s/../share/specgen/%s", bindir, name);
    snprintf(cand[nc++], sizeof cand[0], "./%s", name);
    for (int i = 0; i < nc; i++) {
        if (is_dir(cand[i])) {
            snprintf(out, n, "%s", cand[i]);
            return 0;
        }
    }
    return sg_errf(
        err, "cannot find specgen's %s folder (looked in %s, %s, %s, %s%s%s); set SPECGEN_DATA",
        name, cand[0], cand[1], cand[2], cand[3], nc > 4 ? ", " : "", nc > 4 ? cand[4] : "");
}

int sg_mkdir_p(const char *dir, sg_err *err) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return sg_errf(err, "cannot create %s: path too long", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return sg_errf(err, "cannot create %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return sg_errf(err, "cannot create %s: %s", tmp, strerror(errno));
    if (!is_dir(tmp)) return sg_errf(err, "cannot create %s: it exists and is not a folder", tmp);
    return 0;
}
