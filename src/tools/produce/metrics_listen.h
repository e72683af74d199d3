/* --metrics-listen HOST:PORT: the client's metrics served on http://HOST:PORT/metrics
 * (pulsarc_uv_metrics_serve) from a thread of its own with its own libuv loop, while the
 * run lasts. */
#ifndef PRODUCE_METRICS_LISTEN_H
#define PRODUCE_METRICS_LISTEN_H

#include <pulsarc/pulsarc.h>

struct metrics_listen;

/* Serve client's metrics on hostport ("127.0.0.1:9464", "[::1]:0"; port 0: one the
 * system picks) and print the address on stderr. NULL, with a message, when hostport is
 * not HOST:PORT or the address cannot be listened on. */
struct metrics_listen *metrics_listen_start(pulsarc_client_t *client, const char *hostport);
/* Stop serving and free m (NULL: nothing); before the client is destroyed. */
void metrics_listen_stop(struct metrics_listen *m);

#endif
