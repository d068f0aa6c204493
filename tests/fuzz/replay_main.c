/* A main for the fuzz targets without libFuzzer: `make test` links each tests/fuzz/fuzz_*.c
 * with this file using the normal compiler (build/fuzz-replay/NAME; with ASan + UBSan under
 * `make test-asan`) and feeds it every file of its seed corpus, regressions included
 * (tests/integration/fuzz.sh). `make fuzz` builds the same targets with libFuzzer and
 * searches for new inputs.
 *
 *     NAME PATH...     each PATH a file or a folder (its files, sorted by name); every
 *                      input once, in a buffer of exactly its size, as libFuzzer does
 *
 * Prints "NAME: N inputs replayed" and exits 0. A target that aborts (a broken invariant)
 * or crashes ends the run: the input in hand is named on stderr first. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target: libFuzzer calls it once before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static const char *current; /* the input being replayed, for the crash message */

static void on_crash(int sig) {
    static const char head[] = "fuzz replay: crashed on input ";
    if (current) {
        (void)!write(2, head, sizeof head - 1);
        (void)!write(2, current, strlen(current));
        (void)!write(2, "\n", 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz replay: %s: cannot open: %m\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b) free(buf);
            buf = b;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        fprintf(stderr, "fuzz replay: %s: cannot read it\n", path);
        free(buf);
        return -1;
    }
    /* exactly n bytes, so that a read past the end is one under ASan */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) abort();
    memcpy(exact, buf, n);
    free(buf);
    current = path;
    LLVMFuzzerTestOneInput(exact, n);
    current = NULL;
    free(exact);
    return 0;
}

static int only_files(const struct dirent *d) { return d->d_name[0] != '.'; }

int main(int argc, char **argv) {
    signal(SIGABRT, on_crash);
    signal(SIGSEGV, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGBUS, on_crash);
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH... (seed files or folders of them)\n", name);
        return 2;
    }
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    long done = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "fuzz replay: %s: %m\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) < 0) return 1;
            done++;
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, only_files, alphasort);
        if (n < 0) {
            fprintf(stderr, "fuzz replay: %s: %m\n", argv[i]);
            return 1;
        }
        int rc = 0;
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], ents[k]->d_name);
            if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(path) < 0)
                    rc = 1;
                else
                    done++;
            }
            free(ents[k]);
        }
        free(ents);
        if (rc) return 1;
    }
    printf("%s: %ld inputs replayed\n", name, done);
    return 0;
}
