#include "common/log.h"

#include "common/err.h"

#include "common/buf.h"
#include "common/redact.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    sg_log_level min;
    int json;
    int fd;
} g_log = {SG_LOG_INFO, 0, 2};

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void sg_log_configure(sg_log_level min_level, int json, int fd) {
    g_log.min = min_level;
    g_log.json = json;
    g_log.fd = fd;
}

int sg_log_level_parse(const char *name, sg_log_level *out) {
    for (int i = 0; i <= SG_LOG_OFF; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (sg_log_level)i;
            return 0;
        }
    }
    return -1;
}

int sg_log_enabled(sg_log_level level) { return level >= g_log.min && level < SG_LOG_OFF; }

void sg_log(sg_log_level level, const char *module, const char *fmt, ...) {
    if (!sg_log_enabled(level)) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[40];
    snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);

    sg_buf line = {0};
    if (g_log.json) {
        sg_buf_printf(&line, "{\"ts\":\"%s\",\"level\":\"%s\",\"mod\":", stamp, level_names[level]);
        sg_buf_append_json_string(&line, module);
        sg_buf_append_str(&line, ",\"msg\":");
        sg_buf_append_json_string(&line, msg);
        sg_buf_append_str(&line, "}\n");
    } else {
        /* one line per message: a name with a newline in it cannot fake a line */
        sg_buf_printf(&line, "%s %-5s %s: ", stamp, level_names[level], module);
        sg_redact_append_ctrl(&line, msg);
        sg_buf_append_str(&line, "\n");
    }
    if (line.data) {
        ssize_t n = write(g_log.fd, line.data, line.len);
        (void)n;
    }
    sg_buf_free(&line);
}
