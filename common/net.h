/* net.h — small socket helpers: host:port parsing, listening, loopback checks, and
 * port picking for tests.
 *
 * Contract: functions return an fd (>= 0) or 0 on success and -1 with a message in
 * err. Sockets returned are non-blocking and close-on-exec. */
#ifndef SG_NET_H
#define SG_NET_H

#include "common/err.h"

#include <stddef.h>

/* Parse "HOST:PORT", "[V6]:PORT" or ":PORT" (host defaults to 127.0.0.1). */
int sg_net_parse_hostport(const char *s, char *host, size_t hostlen, int *port, sg_err *err);
/* Listen on host:port (port 0: any free one; sg_net_local_port tells which). */
int sg_net_listen_tcp(const char *host, int port, int backlog, sg_err *err);
int sg_net_local_port(int fd);
/* Nonzero when host is a loopback address or "localhost". */
int sg_net_is_loopback(const char *host);
int sg_net_set_nonblock(int fd);
/* A TCP port on 127.0.0.1 that was free a moment ago (for tests that start servers). */
int sg_net_pick_port(sg_err *err);

#endif
