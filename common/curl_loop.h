/* curl_loop.h — drives a libcurl multi handle from the event loop (multi-socket API).
 *
 * Contract: sg_curl_loop installs CURLMOPT_SOCKETFUNCTION / TIMERFUNCTION so that
 * libcurl's sockets are watched by the loop and its timeouts are loop timers; nothing
 * blocks. An easy handle added with sg_curl_loop_add is owned by the caller; when its
 * transfer ends, `done` runs on the loop thread (once) with the CURLcode, after the
 * handle was removed from the multi. sg_curl_loop_remove cancels a transfer without
 * calling `done` (this closes the connection: how specgen aborts a generation). Use
 * the real loop: libcurl's own timeouts are wall-clock. */
#ifndef SG_CURL_LOOP_H
#define SG_CURL_LOOP_H

#include "common/err.h"
#include "common/loop.h"

#include <curl/curl.h>

typedef struct sg_curl_loop sg_curl_loop;
typedef void (*sg_curl_done_fn)(sg_curl_loop *cl, CURL *easy, CURLcode result, void *arg);

sg_curl_loop *sg_curl_loop_new(sg_loop *loop, sg_err *err);
/* Removes (without callbacks) any transfer still running, then frees. */
void sg_curl_loop_free(sg_curl_loop *cl);
sg_loop *sg_curl_loop_loop(sg_curl_loop *cl);

int sg_curl_loop_add(sg_curl_loop *cl, CURL *easy, sg_curl_done_fn done, void *arg, sg_err *err);
void sg_curl_loop_remove(sg_curl_loop *cl, CURL *easy);
/* Let libcurl act now on transfers just added (send a request at once instead of at
 * the next timer batch, which waits behind every ready socket). Runs the `done` callbacks
 * of transfers that ended. Not from a libcurl callback. */
void sg_curl_loop_kick(sg_curl_loop *cl);
/* The same from the loop's next turn: for callers that must not see `done` callbacks
 * (of this or any other transfer) run inside their own call. */
void sg_curl_loop_kick_soon(sg_curl_loop *cl);
size_t sg_curl_loop_running(const sg_curl_loop *cl);

#endif
