/* What nvcc gives a kernel for free and NVRTC does not: nvcc includes <cuda_runtime.h>,
 * which brings in the host's <math.h>, <float.h>, <limits.h> and <stdint.h>, so kernels
 * use INFINITY, FLT_MAX, M_PI, INT_MAX and uint8_t without any #include (and include those
 * headers when they do). Under NVRTC the host headers do not exist. Every CUDA compile
 * pre-includes the prelude below (built on libcu++, which NVRTC can compile), and the
 * C / C++ standard headers that kernels name are served as headers that add nothing
 * beyond it: their device-side content is the prelude. The prelude costs about as much
 * as the rest of a small kernel's compile, so it is pre-included only into a source that
 * needs it (sg_nvrtc_needs_prelude: it includes a header served here, names std::, or
 * uses a name the prelude defines). <cub/cub.cuh> is served as the
 * device-side parts of CUB (block, warp, thread); its device-wide algorithms are host
 * code, which NVRTC refuses. */
#include "device/device.h"

#include <string.h>

const char sg_nvrtc_prelude_name[] = "specgen_nvrtc_prelude.h";

/* INFINITY and NAN are spelled as libcu++'s <cuda/std/cmath> spells them under NVRTC, so
 * a kernel that includes it redefines them identically (no warning). */
static const char prelude[] = "#pragma once\n"
                              "#include <cuda/std/cstdint>\n"
                              "#include <cuda/std/climits>\n"
                              "#include <cuda/std/limits>\n"
                              "#include <cuda/std/cstddef>\n"
                              "#include <cuda/std/cassert>\n"
                              "#ifndef INFINITY\n"
                              "#define INFINITY _CUDA_VSTD::numeric_limits<float>::infinity()\n"
                              "#endif\n"
                              "#ifndef NAN\n"
                              "#define NAN _CUDA_VSTD::numeric_limits<float>::quiet_NaN()\n"
                              "#endif\n"
                              "#ifndef HUGE_VALF\n"
                              "#define HUGE_VALF __builtin_huge_valf()\n"
                              "#define HUGE_VAL __builtin_huge_val()\n"
                              "#endif\n"
                              "#ifndef FLT_MAX\n"
                              "#define FLT_MAX __FLT_MAX__\n"
                              "#define FLT_MIN __FLT_MIN__\n"
                              "#define FLT_EPSILON __FLT_EPSILON__\n"
                              "#define FLT_MANT_DIG __FLT_MANT_DIG__\n"
                              "#define DBL_MAX __DBL_MAX__\n"
                              "#define DBL_MIN __DBL_MIN__\n"
                              "#define DBL_EPSILON __DBL_EPSILON__\n"
                              "#define DBL_MANT_DIG __DBL_MANT_DIG__\n"
                              "#endif\n"
                              "#ifndef M_PI\n"
                              "#define M_E 2.7182818284590452354\n"
                              "#define M_LOG2E 1.4426950408889634074\n"
                              "#define M_LOG10E 0.43429448190325182765\n"
                              "#define M_LN2 0.69314718055994530942\n"
                              "#define M_LN10 2.30258509299404568402\n"
                              "#define M_PI 3.14159265358979323846\n"
                              "#define M_PI_2 1.57079632679489661923\n"
                              "#define M_PI_4 0.78539816339744830962\n"
                              "#define M_1_PI 0.31830988618379067154\n"
                              "#define M_2_PI 0.63661977236758134308\n"
                              "#define M_2_SQRTPI 1.12837916709551257390\n"
                              "#define M_SQRT2 1.41421356237309504880\n"
                              "#define M_SQRT1_2 0.70710678118654752440\n"
                              "#endif\n"
                              "using ::cuda::std::int8_t;\n"
                              "using ::cuda::std::int16_t;\n"
                              "using ::cuda::std::int32_t;\n"
                              "using ::cuda::std::int64_t;\n"
                              "using ::cuda::std::uint8_t;\n"
                              "using ::cuda::std::uint16_t;\n"
                              "using ::cuda::std::uint32_t;\n"
                              "using ::cuda::std::uint64_t;\n"
                              "using ::cuda::std::intptr_t;\n"
                              "using ::cuda::std::uintptr_t;\n";

static const char cub_device[] = "#pragma once\n"
                                 "#include <cub/config.cuh>\n"
                                 "#include <cub/block/block_reduce.cuh>\n"
                                 "#include <cub/block/block_scan.cuh>\n"
                                 "#include <cub/block/block_load.cuh>\n"
                                 "#include <cub/block/block_store.cuh>\n"
                                 "#include <cub/block/block_radix_sort.cuh>\n"
                                 "#include <cub/block/block_exchange.cuh>\n"
                                 "#include <cub/warp/warp_reduce.cuh>\n"
                                 "#include <cub/warp/warp_scan.cuh>\n"
                                 "#include <cub/thread/thread_operators.cuh>\n";

/* The standard headers served empty: the prelude holds what kernels use of them. <cuda.h>
 * is the driver's host API, which no kernel can call (NVRTC refuses its declarations). */
static const char *const std_names[] = {
    "float.h",  "cfloat",   "math.h",   "cmath",   "limits.h",  "climits",  "stdint.h",
    "cstdint",  "assert.h", "cassert",  "stdio.h", "cstdio",    "stdlib.h", "cstdlib",
    "stddef.h", "cstddef",  "string.h", "cstring", "stdbool.h", "cuda.h",   NULL};

static const char empty[] = "#pragma once\n/* served by specgen: see its NVRTC prelude */\n";

/* C++ headers whose device-side content libcu++ has (std::bool_constant, std::is_same,
 * std::numeric_limits, std::min): served as <cuda/std/NAME> with its names visible in std. */
static const char *const cxx_names[] = {"type_traits", "limits", "utility", "array", "tuple", NULL};
static const char *const cxx_texts[] = {
    ("#pragma once\n#include <cuda/std/type_traits>\nnamespace std { using namespace "
     "::cuda::std; }\n"),
    "#pragma once\n#include <cuda/std/limits>\nnamespace std { using namespace ::cuda::std; }\n",
    "#pragma once\n#include <cuda/std/utility>\nnamespace std { using namespace ::cuda::std; }\n",
    "#pragma once\n#include <cuda/std/array>\nnamespace std { using namespace ::cuda::std; }\n",
    "#pragma once\n#include <cuda/std/tuple>\nnamespace std { using namespace ::cuda::std; }\n",
};

int sg_nvrtc_headers(const char ***names, const char ***texts) {
    static const char *n[32], *t[32];
    int k = 0;
    n[k] = sg_nvrtc_prelude_name, t[k++] = prelude;
    n[k] = "cub/cub.cuh", t[k++] = cub_device;
    for (int i = 0; std_names[i]; i++) n[k] = std_names[i], t[k++] = empty;
    for (int i = 0; cxx_names[i]; i++) n[k] = cxx_names[i], t[k++] = cxx_texts[i];
    *names = n;
    *texts = t;
    return k;
}

/* An identifier the prelude defines (its macros, <stdint.h>'s types, <limits.h>'s and
 * <float.h>'s constants, <math.h>'s M_ constants, assert). */
static int prelude_ident(const char *id, size_t n) {
    static const char *const exact[] = {"INFINITY", "NAN",       "HUGE_VAL",  "HUGE_VALF",
                                        "assert",   "CHAR_BIT",  "intptr_t",  "uintptr_t",
                                        "intmax_t", "uintmax_t", "ptrdiff_t", NULL};
    for (int i = 0; exact[i]; i++)
        if (strlen(exact[i]) == n && !memcmp(id, exact[i], n)) return 1;
    if (n > 4 && (!memcmp(id, "FLT_", 4) || !memcmp(id, "DBL_", 4))) return 1;
    if (n > 2 && !memcmp(id, "M_", 2) && id[2] >= 'A' && id[2] <= 'Z') return 1;
    if (n > 4 && (!memcmp(id + n - 4, "_MAX", 4) || !memcmp(id + n - 4, "_MIN", 4)))
        return 1;                        /* INT_MAX, UINT_MAX, LLONG_MIN, INT32_MAX, ... */
    const char *t = id + (id[0] == 'u'); /* (u)int8_t .. (u)int64_t, least/fast variants */
    return !strncmp(t, "int", 3) && n > 4 && !memcmp(id + n - 2, "_t", 2) && t[3] >= '0' &&
           t[3] <= '9';
}

/* The header name of an #include line starting at p (after '#'), or NULL. */
static const char *include_name(const char *p, char *name, size_t cap) {
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "include", 7)) return NULL;
    p += 7;
    while (*p == ' ' || *p == '\t') p++;
    char close = *p == '<' ? '>' : *p == '"' ? '"' : 0;
    if (!close) return NULL;
    size_t k = 0;
    for (p++; *p && *p != close && *p != '\n' && k + 1 < cap; p++) name[k++] = *p;
    name[k] = 0;
    return name;
}

int sg_nvrtc_needs_prelude(const char *src) {
    int line_start = 1;
    for (const char *p = src; *p; p++) {
        if (*p == '\n') {
            line_start = 1;
            continue;
        }
        char name[128];
        if (line_start && *p == '#' && include_name(p + 1, name, sizeof name) &&
            sg_nvrtc_serves(name) && strcmp(name, "cub/cub.cuh"))
            return 1;
        if (*p != ' ' && *p != '\t') line_start = 0;
        int ident_start =
            (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) &&
            (p == src || !(p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') ||
                           (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= 'a' && p[-1] <= 'z')));
        if (!ident_start) continue;
        size_t n = 0;
        while (p[n] == '_' || (p[n] >= '0' && p[n] <= '9') || (p[n] >= 'A' && p[n] <= 'Z') ||
               (p[n] >= 'a' && p[n] <= 'z'))
            n++;
        if (prelude_ident(p, n)) return 1;
        if (n == 3 && !memcmp(p, "std", 3) && p[3] == ':' && p[4] == ':' &&
            !(p - src >= 2 && p[-1] == ':')) /* cuda::std:: is libcu++'s own */
            return 1;
        p += n - 1;
    }
    return 0;
}

int sg_nvrtc_serves(const char *name) {
    for (int i = 0; std_names[i]; i++)
        if (!strcmp(name, std_names[i])) return 1;
    for (int i = 0; cxx_names[i]; i++)
        if (!strcmp(name, cxx_names[i])) return 1;
    return !strcmp(name, "cub/cub.cuh");
}
