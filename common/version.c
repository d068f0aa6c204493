/* The commit comes from the Makefile (-DSG_COMMIT, for this file only). */
#include "common/version.h"

#ifndef SG_COMMIT
#define SG_COMMIT ""
#endif

const char *sg_version_commit(void) { return SG_COMMIT; }
