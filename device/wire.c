/* Worker messages: a 4-byte big-endian length, then that many bytes of JSON. */
#include "device/device.h"

#include "common/json.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t n, sg_err *err) {
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return sg_errf(err, "worker socket: send failed: %s", strerror(errno));
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int sg_dev_msg_send(int fd, const json_t *msg, sg_err *err) {
    char *s = json_dumps(msg, JSON_COMPACT);
    if (!s) return sg_errf(err, "cannot serialize a worker message");
    size_t n = strlen(s);
    unsigned char hdr[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8), (unsigned char)n};
    int rc = write_all(fd, hdr, 4, err);
    if (rc == 0) rc = write_all(fd, s, n, err);
    free(s);
    return rc;
}

/* Read exactly n bytes; the first wait honours timeout_ms. 1 on timeout, -1 on EOF/error. */
static int read_all(int fd, void *p, size_t n, int timeout_ms, sg_err *err) {
    char *c = p;
    while (n) {
        if (timeout_ms >= 0) {
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            int r = poll(&pf, 1, timeout_ms);
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) return 1;
        }
        ssize_t got = read(fd, c, n);
        if (got < 0 && errno == EINTR) continue;
        if (got == 0) return sg_errf(err, "the worker closed its socket");
        if (got < 0) return sg_errf(err, "worker socket: read failed: %s", strerror(errno));
        c += got;
        n -= (size_t)got;
        timeout_ms = -1; /* a message that has started arrives whole */
    }
    return 0;
}

int sg_dev_msg_recv(int fd, int timeout_ms, json_t **msg, sg_err *err) {
    unsigned char hdr[4];
    int rc = read_all(fd, hdr, 4, timeout_ms, err);
    if (rc != 0) return rc;
    size_t n = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
    if (n > SG_DEV_MAX_MSG) return sg_errf(err, "worker message of %zu bytes is over the limit", n);
    char *buf = sg_xmalloc(n + 1);
    rc = read_all(fd, buf, n, -1, err);
    if (rc == 0) {
        *msg = sg_json_parse(buf, n, "worker message", err);
        if (!*msg || !json_is_object(*msg)) {
            json_decref(*msg);
            *msg = NULL;
            rc = sg_errf(err, "a worker message is not a JSON object");
        }
    }
    free(buf);
    return rc;
}
