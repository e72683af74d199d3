/** @file
 * pulsarc on the application's own libuv loop.
 *
 * A program that already runs a libuv loop (its servers, timers, files) can have the
 * client run on that loop instead of on a thread of the client's own: no second thread,
 * no lock on its sends, and every callback where its other callbacks run. Kept apart from
 * pulsarc/pulsarc.h so that the main header stays free of libuv's types.
 *
 * What changes against pulsarc_client_new (everything else is the same, line for line):
 *
 *   - The client starts no thread. "The loop thread" is the thread that runs the loop, and
 *     pulsarc_client_new_on_loop must be called on it. All of the client's work and every
 *     callback (send results, flush and close completions, producer creations, log lines,
 *     token suppliers and key readers) run there, inside uv_run(loop, ...).
 *
 *   - On the loop thread a send never waits and takes no lock: when maxPendingMessages or
 *     memoryLimitBytes is reached it returns PULSARC_ERR_QUEUE_FULL or
 *     PULSARC_ERR_MEMORY_LIMIT at once, whatever blockIfQueueFull says (waiting would stop
 *     the loop that makes room). Blocking calls return PULSARC_ERR_WOULD_BLOCK there and do
 *     nothing, as they do in callbacks: pulsarc_client_create_producer,
 *     pulsarc_producer_send, _flush, _close, and pulsarc_client_destroy before the close is
 *     done. Use pulsarc_client_create_producer_async, pulsarc_producer_send_async,
 *     _flush_async, _close_async and pulsarc_client_close_async.
 *
 *   - Other threads may call everything, as with pulsarc_client_new: their calls are handed
 *     over to the loop and wake it, and their blocking calls (blockIfQueueFull included)
 *     wait for the loop to do the work, so the loop must be running.
 *
 *   - The loop's life: pulsarc adds two handles to loop, a uv_poll_t and a uv_timer_t. It
 *     keeps its connections, timers and HTTP transfers on a loop of its own that these two
 *     drive (the poll watches that loop's backend descriptor, the timer its next timeout),
 *     so none of them is ever one of loop's handles. They keep uv_run(loop,
 *     UV_RUN_DEFAULT) running while the client has work: an operation in flight, a
 *     connection in use (an open producer; one the pool keeps open for nobody is no
 *     work), failover checks (failoverSecondaryUrls or a service URL provider), or a close
 *     in progress. An idle client (no producer, nothing pending) does not keep the loop
 *     alive, and uv_run returns once the application's own handles are done;
 *     statsIntervalSeconds is no work either (its callback comes while the loop runs).
 *     Work handed over from another thread after uv_run has returned waits until the loop
 *     runs again.
 *
 *   - Closing: pulsarc_client_close_async(client, cb, ctx). Producers still open are
 *     closed and their pending messages fail with PULSARC_ERR_ALREADY_CLOSED; cb runs on
 *     the loop once both of pulsarc's handles are closed, so that uv_loop_close(loop)
 *     finds nothing of pulsarc's (it returns 0 when the application's handles are closed
 *     too). Then pulsarc_client_destroy frees the client at once (in cb or later, on any
 *     thread). Close producers first (pulsarc_producer_close_async, which flushes) if
 *     their pending messages should be sent rather than failed.
 *     pulsarc_client_destroy on another thread before that starts the close and waits
 *     for it, which needs the loop to be running.
 *
 *   - pulsarc never calls uv_run, uv_stop or uv_walk on loop and never touches a handle it
 *     did not create. Do not close (or uv_walk-close) pulsarc's two handles yourself, and
 *     do not close the loop before the client's close is done.
 *
 *   - SIGPIPE: the client writes to the brokers on the loop thread. While it runs its work
 *     there (callbacks included) it blocks SIGPIPE on that thread, so a broker that resets a
 *     connection makes a write fail with EPIPE instead of killing the process; the
 *     signal's disposition is left alone.
 *
 * Needs a loop whose backend descriptor can be polled: Linux (epoll) and the BSDs and
 * macOS (kqueue). Elsewhere pulsarc_client_new_on_loop returns PULSARC_ERR_UNSUPPORTED.
 *
 * Building: a program that includes this header calls libuv itself (uv_loop_init,
 * uv_run, ...), so it links libuv as well as pulsarc. `pkg-config --cflags --libs
 * pulsarc-uv` gives both (pulsarc-uv.pc is pulsarc.pc plus libuv); with CMake, link
 * pulsarc::pulsarc_uv (or pulsarc::pulsarc_uv_static for the static library). pulsarc.pc
 * and pulsarc::pulsarc leave libuv out, so that a program of pulsarc/pulsarc.h alone does
 * not link a library it never calls.
 */
#ifndef PULSARC_UV_H
#define PULSARC_UV_H

#include <uv.h>

#include <pulsarc/pulsarc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A client on loop (see above): as pulsarc_client_new, without a thread. Call it on the
 * thread that runs loop. conf may be NULL (defaults); it is copied. Fails with
 * PULSARC_ERR_INVALID_ARGUMENT when loop is NULL, PULSARC_ERR_UNSUPPORTED when loop's
 * backend cannot be polled, and as pulsarc_client_new otherwise. */
PULSARC_API pulsarc_result pulsarc_client_new_on_loop(uv_loop_t *loop, const char *service_url,
                                                      const pulsarc_client_config_t *conf,
                                                      pulsarc_client_t **out);

/** @name Serving /metrics
 * A Prometheus endpoint on the application's loop: GET /metrics answers with
 * pulsarc_client_metrics_text (docs/statistics.md, "Prometheus"); any other path is 404,
 * any other method 405, a request head that is not HTTP/1.x, holds a control byte or
 * passes 8 KiB is 400, and each connection is closed after its one answer. A client
 * silent for 10 seconds is closed without one; at most 16 scrapes are served at once.
 * Plain HTTP without authentication: bind it to a loopback or otherwise private address.
 * The answer holds statistics and topic names, never a secret.
 *
 * Works for a client made either way: on the application's loop with
 * pulsarc_client_new_on_loop (the text is made at once), or with pulsarc_client_new (each
 * scrape waits for the client's thread, microseconds unless it is busy). The server's
 * handles are on loop and keep uv_run(loop, UV_RUN_DEFAULT) running until
 * pulsarc_uv_metrics_close. Call all three functions on the thread that runs loop, and
 * close the server before the client is destroyed.
 * @{ */
/** A /metrics server, opaque. */
typedef struct pulsarc_uv_metrics_server pulsarc_uv_metrics_server_t;
/** Listen on host (an IPv4 or IPv6 address, no name: "127.0.0.1", "::1", "0.0.0.0") and
 * port (0: one the system picks; see pulsarc_uv_metrics_port) and serve client's metrics.
 * PULSARC_ERR_INVALID_ARGUMENT (NULL, a port past 65535, a host that is not an address),
 * PULSARC_ERR_CONNECT_FAILED (cannot bind or listen; pulsarc_last_error_detail says why),
 * PULSARC_ERR_NO_MEMORY. */
PULSARC_API pulsarc_result pulsarc_uv_metrics_serve(uv_loop_t *loop, pulsarc_client_t *client,
                                                    const char *host, int port,
                                                    pulsarc_uv_metrics_server_t **out);
/** The port server listens on (the one picked for port 0); -1 for NULL. */
PULSARC_API int pulsarc_uv_metrics_port(const pulsarc_uv_metrics_server_t *server);
/** Stop listening and close every open scrape; done(ctx) runs on the loop once every
 * handle is closed and the server is freed (done may be NULL). NULL: nothing. */
PULSARC_API void pulsarc_uv_metrics_close(pulsarc_uv_metrics_server_t *server,
                                          void (*done)(void *ctx), void *ctx);
/** @} */

#ifdef __cplusplus
}
#endif

#endif
