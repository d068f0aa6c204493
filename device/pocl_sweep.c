/* Sweeping the temp files PoCL leaves in its kernel cache (device/sandbox.h). */
#include "device/sandbox.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_AGE_S 3600

int sg_dev_pocl_sweep(void) {
    char dir[4096];
    if (!sg_dev_cache_path("POCL_CACHE_DIR", "pocl/kcache", ".cache/pocl/kcache", dir, sizeof dir))
        return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    time_t now = time(NULL);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "tempfile_", 9)) continue;
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > SWEEP_AGE_S &&
            unlink(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}
