/* log.h — leveled logging to stderr (or a file), as text or as JSON lines.
 *
 * Contract: the logger is the one piece of process-wide state in specgen, configured
 * once by main before any thread starts (sg_log_configure) and only read afterwards;
 * it is safe to log from several threads (each line is written with one write(2)).
 * Lines look like `2026-11-30T05:36:17.123Z info  loop: message` or, in JSON mode,
 * `{"ts":"...","level":"info","mod":"loop","msg":"message"}`. Timestamps are wall
 * clock: logging is I/O, and policy code that must run in virtual time logs through
 * its context's clock-free interface, never by reading time itself. */
#ifndef SG_LOG_H
#define SG_LOG_H

typedef enum { SG_LOG_DEBUG = 0, SG_LOG_INFO, SG_LOG_WARN, SG_LOG_ERROR, SG_LOG_OFF } sg_log_level;

/* fd: where lines go (2 = stderr). json: nonzero for JSON lines. */
void sg_log_configure(sg_log_level min_level, int json, int fd);

/* Parse "debug|info|warn|error|off"; returns -1 for anything else. */
int sg_log_level_parse(const char *name, sg_log_level *out);

int sg_log_enabled(sg_log_level level);

void sg_log(sg_log_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define sg_debug(mod, ...) sg_log(SG_LOG_DEBUG, mod, __VA_ARGS__)
#define sg_info(mod, ...) sg_log(SG_LOG_INFO, mod, __VA_ARGS__)
#define sg_warn(mod, ...) sg_log(SG_LOG_WARN, mod, __VA_ARGS__)
#define sg_error(mod, ...) sg_log(SG_LOG_ERROR, mod, __VA_ARGS__)

#endif
