/* campaign_import.h — a KernelBench problem's import (torchref/kb_import.py, started by
 * validator.h's sg_val_task_init_torch_start) as a child process watched on the campaign's
 * loop, so that the running tasks go on while a problem imports (docs/kernelbench.md).
 *
 * Contract: sg_camp_import_start spawns the importer and watches its stdout on the loop
 * (the loop's fd watch, as the pool's local slots watch their workers); once its output is
 * read to the end and the child reaped, done(arg) runs once, from the loop, and
 * sg_camp_import_ended says 1. Then sg_camp_import_result gives task init's result: 0 with
 * the importer's report appended to `report`, or -1 / SG_WFILE_REFUSED with its reason in
 * err. sg_camp_import_free stops and reaps an importer still running (SIGTERM, then SIGKILL
 * after half a second), cancels its watch and frees it; NULL is fine. */
#ifndef SG_CAMPAIGN_IMPORT_H
#define SG_CAMPAIGN_IMPORT_H

#include "common/buf.h"
#include "common/loop.h"
#include "validator/validator.h"

typedef struct sg_camp_import sg_camp_import;

sg_camp_import *sg_camp_import_start(sg_loop *loop, const char *problem, const char *task_dir,
                                     const sg_val_init_opts *opts, void (*done)(void *arg),
                                     void *arg, sg_err *err);
int sg_camp_import_ended(const sg_camp_import *im);
int sg_camp_import_result(sg_camp_import *im, sg_buf *report, sg_err *err);
void sg_camp_import_free(sg_camp_import *im);

#endif
