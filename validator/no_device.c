/* What a user can do instead when CUDA cannot run here (validate and profile say it). */
#include "validator/validator.h"

#include <stdio.h>

void sg_val_say_alternatives(const char *task_dir, int from_validate) {
    sg_val_task t;
    sg_err e;
    int has_cl = 0;
    if (sg_val_task_load(task_dir, &t, &e) == 0) {
        has_cl = t.source[SG_DEV_OPENCL] != NULL;
        sg_val_task_free(&t);
    }
    if (from_validate)
        printf(
            "here instead: --compile-only --arch sm_90a checks that the CUDA sources compile%s\n",
            has_cl ? "; --device opencl runs the task's OpenCL kernels (PoCL)" : "");
    else
        printf("here instead: specgen validate %s --compile-only --arch sm_90a checks that the "
               "CUDA sources compile%s\n",
               task_dir, has_cl ? "; --device opencl runs the task's OpenCL kernels (PoCL)" : "");
}
