/* kb_export.h — the KernelBench export's pieces (internal to the validator): the Python
 * template of the ModelNew file (kb_model_new.c), filled by kb_export.c. */
#ifndef SG_VAL_KB_EXPORT_H
#define SG_VAL_KB_EXPORT_H

/* Placeholders: {name} {note} {sizes} {model} {cuda} {cpp} {buffers} {scratch} {ext}. */
extern const char sg_val_kb_model_new_py[];

#endif
