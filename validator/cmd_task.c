/* `specgen task init KERNEL.cu|KERNEL.cl|PROBLEM.py`: a task folder from a bare kernel file or
 * a KernelBench-format problem (init_torch.c). */
#include "common/buf.h"
#include "common/cli.h"
#include "common/wfile.h"
#include "validator/validator.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char details[] =
    "The kernel's signature and body decide the task. const pointers are inputs; pointers\n"
    "the body writes are outputs, \"inout\" when it also reads them (in place: initialised\n"
    "before every run, compared after). Integer parameters that index a buffer or bound a\n"
    "loop are sizes; other integers and floats are scalars (a guessed value). Element types\n"
    "come from the parameter types, through typedefs and template arguments: half -> f16,\n"
    "__nv_bfloat16 -> bf16, __nv_fp8_e4m3 -> fp8_e4m3, uint8_t/bool -> u8, float4 -> f32\n"
    "(four per element). A buffer's count is the product of the sizes its indices reach;\n"
    "the launch follows the body: one thread per element (a guard i < N), a warp or a block\n"
    "per row, block = __launch_bounds__ or 256, smem= for extern __shared__. A //@launch\n"
    "line in the file is kept. The kernel is both the baseline and the reference. Every\n"
    "guess is printed with the hint that overrides it; edit task.json (docs/task-format.md)\n"
    "and check with `specgen validate DIR`.\n"
    "\n"
    "PROBLEM.py is a KernelBench problem (a PyTorch Model, get_inputs, get_init_inputs):\n"
    "it is imported as it is, its torch forward being the reference and the baseline\n"
    "(--precision, --baseline; the kernel hints do not apply); docs/kernelbench.md.\n"
    "\n"
    "Examples:\n"
    "  specgen task init saxpy.cu --size n=1000000\n"
    "  specgen task init layernorm.cu --kernel layernorm_forward_kernel3 --size N=8192\n"
    "  specgen task init encoder.cu --count wte=V*C --size V=50257\n"
    "  specgen task init softmax.cu --launch \"grid=N block=128 smem=C*4\" --force\n"
    "  specgen task init gelu.cu --kernel 'gelu_forward<__nv_bfloat16>'\n"
    "  specgen task init matmul.cl --size M=512 --size N=512 --size K=512 --out tasks/matmul\n"
    "  specgen task init level1/19_ReLU.py --precision fp16 --out tasks/19_ReLU\n";

int sg_cmd_task(int argc, char **argv) {
    const char *out = NULL;
    sg_val_init_opts io;
    memset(&io, 0, sizeof io);
    sg_opt opts[SG_VAL_INIT_NOPTS + 2] = {
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &out,
         .metavar = "DIR",
         .help = "output folder",
         .def = "./KERNEL_NAME",
         .short_name = 'o'},
    };
    sg_val_init_cli_opts(&io, opts + 1); /* the last entry stays {NULL}: the end */
    const sg_cmd_spec spec = {"task",
                              "init KERNEL.cu|KERNEL.cl|PROBLEM.py",
                              "Make a task folder from a kernel file or a KernelBench problem.",
                              details,
                              opts,
                              2,
                              2};
    char **pos;
    int npos;
    int rc = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rc == SG_CLI_HELP) return 0;
    if (rc != SG_CLI_OK) return 2;
    if (strcmp(pos[0], "init"))
        return sg_cli_fail(&spec, 2, "unknown subcommand '%s' (expected init)", pos[0]);
    char dflt[256];
    if (!out) {
        const char *b = strrchr(pos[1], '/');
        b = b ? b + 1 : pos[1];
        const char *dot = strrchr(b, '.');
        snprintf(dflt, sizeof dflt, "%.*s", (int)(dot ? dot - b : (long)strlen(b)), b);
        out = dflt;
    }
    sg_buf report = {0};
    sg_err err;
    rc = sg_val_task_init(pos[1], out, &io, &report, &err);
    if (rc < 0) {
        sg_buf_free(&report);
        return sg_cli_fail(&spec, rc == SG_WFILE_REFUSED ? 2 : 1, "%s", err.msg);
    }
    size_t pl = strlen(pos[1]);
    int py = pl > 3 && !strcmp(pos[1] + pl - 3, ".py");
    printf("wrote %s/task.json from %s; %s:\n%s", out, pos[1],
           py ? "what the importer decided" : "what was guessed", report.data ? report.data : "");
    sg_dev_lang lang = SG_DEV_OPENCL;
    sg_dev_lang_of_path(pos[1], &lang);
    if (lang == SG_DEV_CUDA)
        printf("next: specgen validate %s --device cuda   (on a machine with an NVIDIA GPU)\n"
               "      specgen validate %s --device cuda --compile-only --arch sm_90a   "
               "(anywhere: NVRTC only)\n",
               out, out);
    else
        printf("next: specgen validate %s\n", out);
    sg_buf_free(&report);
    return 0;
}
