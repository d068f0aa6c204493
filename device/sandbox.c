/* The worker's sandbox: Landlock confines what files the worker may open, before it
 * compiles or runs any candidate. A compiler that follows a hostile #include (trigraphs,
 * form feeds, carriage returns: spellings a text check misses) then cannot open the file.
 *
 * Allowed: the system's libraries and toolkits read-only (/usr, /lib*, /opt, CUDA_HOME,
 * LD_LIBRARY_PATH, the OpenCL vendor files, the loader cache), /proc/self, /sys and a few
 * device nodes, the task folder(s) read-only, and read-write only PoCL's and CUDA's own
 * cache folders. Nothing else of /etc, /tmp or the home folder. No TCP at all.
 * Without Landlock the worker refuses jobs (fail closed) unless SPECGEN_UNSANDBOXED=1. */
#include "device/sandbox.h"

#include "device/device.h"

#include "common/buf.h"
#include "common/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer rights than some installed headers know. */
#define LL_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND (1ULL << 0)   /* ABI 4 */
#define LL_NET_CONNECT (1ULL << 1)

/* The kernel's struct landlock_ruleset_attr as of ABI 4 (headers may hold only the first). */
typedef struct {
    uint64_t fs, net;
} ll_attr;

#define R_READ                                                                                     \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define R_WRITE                                                                                    \
    (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                               \
     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |  \
     LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LL_TRUNCATE)

typedef struct ruleset {
    int fd;
    uint64_t handled;
    int rules;
} ruleset;

static int landlock_abi(void) {
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? 0 : (int)v;
}

/* Add one path (a folder: everything beneath it; a file: that file). Paths that do not
 * exist on this machine are skipped: the list names every usual place. */
static void allow(ruleset *r, const char *path, uint64_t access) {
    if (!path || !*path) return;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
                  LANDLOCK_ACCESS_FS_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV;
    struct landlock_path_beneath_attr pb = {.allowed_access = access & r->handled, .parent_fd = fd};
    if (syscall(SYS_landlock_add_rule, r->fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == 0) r->rules++;
    close(fd);
}

static void allow_list(ruleset *r, const char *colon_list, uint64_t access) {
    if (!colon_list) return;
    char *copy = sg_xstrdup(colon_list), *save = NULL;
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
        allow(r, p, access);
    free(copy);
}

int sg_dev_cache_path(const char *env, const char *xdg_sub, const char *home_sub, char *path,
                      size_t n) {
    const char *set = getenv(env), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (set && *set)
        snprintf(path, n, "%s", set);
    else if (xdg_sub && xdg && *xdg)
        snprintf(path, n, "%s/%s", xdg, xdg_sub);
    else if (home && *home)
        snprintf(path, n, "%s/%s", home, home_sub);
    else
        return 0;
    return 1;
}

void sg_dev_pch_dir(const sg_dev_opts *o, char *out, size_t n) {
    out[0] = 0;
    if (o->nvrtc_pch && !strcmp(o->nvrtc_pch, "off")) return;
    if (o->nvrtc_pch && *o->nvrtc_pch) {
        snprintf(out, n, "%s", o->nvrtc_pch);
    } else {
        char nv[4000];
        if (!sg_dev_cache_path("CUDA_CACHE_PATH", NULL, ".nv", nv, sizeof nv)) return;
        snprintf(out, n, "%s/specgen-nvrtc-pch", nv);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", out);
    for (char *p = path + 1; *p; p++) /* mkdir -p */
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0700);
            *p = '/';
        }
    mkdir(path, 0700);
}

/* A cache folder the worker may write: created first, so that the rule has a target. */
static void allow_cache(ruleset *r, const char *env, const char *xdg_sub, const char *home_sub) {
    char path[4096];
    if (!sg_dev_cache_path(env, xdg_sub, home_sub, path, sizeof path)) return;
    for (char *p = path + 1; *p; p++) /* mkdir -p */
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0700);
            *p = '/';
        }
    mkdir(path, 0700);
    allow(r, path, R_READ | R_WRITE);
}

static const char *const system_read[] = {"/usr",
                                          "/lib",
                                          "/lib64",
                                          "/lib32",
                                          "/libx32",
                                          "/bin",
                                          "/sbin",
                                          "/opt",
                                          "/etc/OpenCL",
                                          "/etc/ld.so.cache",
                                          "/etc/ld.so.conf",
                                          "/etc/ld.so.conf.d",
                                          "/etc/alternatives",
                                          "/sys",
                                          "/proc/self",
                                          "/proc/thread-self",
                                          "/proc/cpuinfo",
                                          "/proc/meminfo",
                                          "/proc/stat",
                                          "/proc/driver/nvidia",
                                          NULL};

static const char *const device_rw[] = {"/dev/null",
                                        "/dev/zero",
                                        "/dev/urandom",
                                        "/dev/random",
                                        "/dev/nvidiactl",
                                        "/dev/nvidia-uvm",
                                        "/dev/nvidia-uvm-tools",
                                        "/dev/nvidia-caps",
                                        "/dev/shm",
                                        NULL};

static const char *const env_keep[] = {"PATH",
                                       "HOME",
                                       "USER",
                                       "LOGNAME",
                                       "TMPDIR",
                                       "TZ",
                                       "LANG",
                                       "LANGUAGE",
                                       "LC_*",
                                       "XDG_CACHE_HOME", /* PoCL's cache folder */
                                       "LD_LIBRARY_PATH",
                                       "CUDA_*",
                                       "NVIDIA_*",
                                       "POCL_*",
                                       "OCL_*",
                                       "OPENCL_*",
                                       "ASAN_OPTIONS",
                                       "UBSAN_OPTIONS",
                                       "LSAN_OPTIONS", /* sanitizer builds */
                                       "SPECGEN_UNSANDBOXED",
                                       "SPECGEN_SANDBOX_READ",
                                       "SPECGEN_WORKER_STDERR",
                                       "SPECGEN_PYTHON", /* a torch task's reference engine */
                                       "SPECGEN_DATA",
                                       "OMP_NUM_THREADS", /* the engine's torch threads */
                                       NULL};

void sg_dev_sandbox_env(void) { sg_proc_env_keep(env_keep); }

char **sg_dev_sandbox_env_list(void) { return sg_proc_env_kept(env_keep); }

int sg_dev_sandbox_apply(const char *const *read_dirs, const char *write_dir, sg_err *err) {
    const char *off = getenv("SPECGEN_UNSANDBOXED");
    if (off && !strcmp(off, "1")) return 0;
    int abi = landlock_abi();
    if (abi < 1)
        return sg_errf(err,
                       "sandbox: this kernel offers no Landlock (needed to keep candidates from "
                       "reading files through the compiler); candidates are not compiled. "
                       "Run on Linux >= 5.13 with Landlock enabled, or set "
                       "SPECGEN_UNSANDBOXED=1 for sources you trust");
    ll_attr a = {.fs = R_READ | R_WRITE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                       LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                       LANDLOCK_ACCESS_FS_MAKE_BLOCK | LL_IOCTL_DEV};
    if (abi < 2) a.fs &= ~(uint64_t)LANDLOCK_ACCESS_FS_REFER;
    if (abi < 3) a.fs &= ~LL_TRUNCATE;
    if (abi < 5) a.fs &= ~LL_IOCTL_DEV;
    if (abi >= 4) a.net = LL_NET_BIND | LL_NET_CONNECT;
    ruleset r = {.handled = a.fs};
    r.fd = (int)syscall(SYS_landlock_create_ruleset, &a, abi >= 4 ? sizeof a : sizeof a.fs, 0);
    if (r.fd < 0) return sg_errf(err, "sandbox: landlock_create_ruleset: %s", strerror(errno));
    for (int i = 0; system_read[i]; i++) allow(&r, system_read[i], R_READ);
    allow(&r, getenv("CUDA_HOME"), R_READ);
    allow(&r, getenv("CUDA_PATH"), R_READ);
    allow_list(&r, getenv("LD_LIBRARY_PATH"), R_READ);
    allow_list(&r, getenv("SPECGEN_SANDBOX_READ"), R_READ); /* an unusual install */
    for (int i = 0; device_rw[i]; i++)
        allow(&r, device_rw[i], R_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LL_IOCTL_DEV | R_WRITE);
    char nv[32];
    for (int i = 0; i < 64; i++) {
        snprintf(nv, sizeof nv, "/dev/nvidia%d", i);
        allow(&r, nv, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LL_IOCTL_DEV);
    }
    allow_cache(&r, "POCL_CACHE_DIR", "pocl", ".cache/pocl");
    allow_cache(&r, "CUDA_CACHE_PATH", NULL, ".nv");
    for (int i = 0; read_dirs && read_dirs[i]; i++) allow(&r, read_dirs[i], R_READ);
    if (write_dir && *write_dir) allow(&r, write_dir, R_READ | R_WRITE);
    int rc = 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_landlock_restrict_self, r.fd, 0) != 0)
        rc = sg_errf(err, "sandbox: landlock_restrict_self: %s", strerror(errno));
    close(r.fd);
    return rc;
}
