#include "common/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int sg_net_parse_hostport(const char *s, char *host, size_t hostlen, int *port, sg_err *err) {
    const char *colon;
    const char *hstart = s;
    size_t hlen;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return sg_errf(err, "'%s' is not HOST:PORT (expected [IPv6]:PORT)", s);
        hstart = s + 1;
        hlen = (size_t)(close - hstart);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) return sg_errf(err, "'%s' is not HOST:PORT (no ':PORT')", s);
        hlen = (size_t)(colon - s);
    }
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end || errno || p < 0 || p > 65535)
        return sg_errf(err, "'%s': port '%s' is not a number from 0 to 65535", s, colon + 1);
    if (hlen == 0) {
        hstart = "127.0.0.1";
        hlen = strlen(hstart);
    }
    if (hlen + 1 > hostlen) return sg_errf(err, "'%s': host name too long", s);
    memcpy(host, hstart, hlen);
    host[hlen] = '\0';
    *port = (int)p;
    return 0;
}

int sg_net_set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int sg_net_listen_tcp(const char *host, int port, int backlog, sg_err *err) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc != 0) return sg_errf(err, "cannot resolve '%s': %s", host, gai_strerror(rc));
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return sg_errf(err, "cannot listen on %s:%d: %s", host, port, strerror(saved));
    return fd;
}

int sg_net_local_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) return -1;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

int sg_net_is_loopback(const char *host) {
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0) return 1;
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
    return 0;
}

int sg_net_pick_port(sg_err *err) {
    int fd = sg_net_listen_tcp("127.0.0.1", 0, 1, err);
    if (fd < 0) return -1;
    int port = sg_net_local_port(fd);
    close(fd);
    if (port <= 0) return sg_errf(err, "cannot read the picked port: %s", strerror(errno));
    return port;
}
