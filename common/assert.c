/* assert.c — SG_ASSERT's failure path. See assert.h for the contract. */
#include "common/assert.h"

#include <stdio.h>
#include <stdlib.h>

void sg_assert_fail(const char *file, int line, const char *func, const char *expr) {
    /* One fprintf: stderr is unbuffered, and one call keeps the line whole among workers. */
    fprintf(stderr, "%s:%d: assertion failed: %s (in %s)\n", file, line, expr, func);
    abort();
}
