/* assert.h — invariants: SG_ASSERT(expr) states what must hold for the code around it to
 * be correct, as opposed to what input may get wrong (that is an sg_err, err.h).
 *
 * Contract: SG_ASSERT(expr) evaluates expr once; when it is false it writes
 * "FILE:LINE: assertion failed: EXPR" (and the function) to stderr and calls abort(), so a
 * broken invariant stops the process with SIGABRT where it is noticed, not later where its
 * damage shows. A violated SG_ASSERT is always a bug in specgen, never a user's mistake:
 * bad input, a server's reply or a worker's message must be refused with an sg_err first.
 *
 * On or off: SG_ASSERT is on in every build unless NDEBUG is defined. The Makefile never
 * defines NDEBUG (the default build behind `make`, `make test`, `make test-asan` and
 * `make fuzz` keeps asserts on), so the shipped binary checks its invariants too, as Redis's
 * serverAssert does. Only O(1) checks (a comparison of counters or indexes) go in SG_ASSERT,
 * which keeps their cost below what the benchmarks can measure (docs/architecture.md,
 * "Invariants"). With NDEBUG, SG_ASSERT(expr) compiles to nothing and does not evaluate expr
 * (it still must compile), so expr must not have side effects. */
#ifndef SG_ASSERT_H
#define SG_ASSERT_H

/* Report a failed assertion and abort(); never returns. For SG_ASSERT's use. */
_Noreturn void sg_assert_fail(const char *file, int line, const char *func, const char *expr);

#ifdef NDEBUG
#define SG_ASSERT(expr) ((void)sizeof(!(expr)))
#else
#define SG_ASSERT(expr)                                                                            \
    (__builtin_expect(!!(expr), 1) ? (void)0 : sg_assert_fail(__FILE__, __LINE__, __func__, #expr))
#endif

/* Marks a point the code can never reach (after a switch that names every value of its
 * enum): fails as SG_ASSERT(0) with "unreachable: WHY" as its expression text. It stays on
 * with NDEBUG too: the code after it has nothing correct to do. */
#define SG_UNREACHABLE(why) sg_assert_fail(__FILE__, __LINE__, __func__, "unreachable: " why)

#endif
