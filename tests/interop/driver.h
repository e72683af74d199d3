/* What the C programs the Python tests drive share (tests/interop/interop_*.c and the
 * cluster rig's tests/cluster/cluster_producer.c): settings from the command line, the
 * one shape of their error lines, the client and producer they start with, and their
 * clock. driver.c is linked into each of them (tests/CMakeLists.txt).
 *
 * Exit statuses, as every driver documents them: 2 for a usage error (a bad option or
 * setting), 1 for a run that failed. */
#ifndef PC_TEST_DRIVER_H
#define PC_TEST_DRIVER_H

#include <stdbool.h>

#include "pulsarc/pulsarc.h"

/* "<what>: <pulsarc_strerror> (<detail>)" on stderr, the line test_security.py and
 * test_oauth2.py read the result from ("client: ...", "create producer: ..."). Returns
 * 1, the exit status of a failed run. */
int drv_fail(const char *what, pulsarc_result res);

/* "message <index> failed: <pulsarc_strerror> (<detail>)" on stderr, for a send's
 * callback (or a refused send), the line the encryption tests count. */
void drv_message_failed(long index, pulsarc_result res);

/* A setting given on the command line: --conf KEY=VALUE (the producer's), --client-conf
 * KEY=VALUE (the client's) or --encrypt NAME=FILE (encrypt for key NAME with the RSA
 * public key in PEM FILE). Returns false when opt is none of these, or names a
 * configuration the driver has none of (cc or pc NULL); applies it and returns true
 * otherwise, or exits with 2 after "bad <opt> <KEY>: <detail>" (the key only: a value may
 * be a secret, authParams). */
bool drv_setting(const char *opt, const char *value, pulsarc_client_config_t *cc,
                 pulsarc_producer_config_t *pc);

/* The client of url with cc (NULL: the defaults), which this frees. When it cannot be
 * made: drv_fail("client", ...) and exit 1. */
pulsarc_client_t *drv_client(const char *url, pulsarc_client_config_t *cc);

/* The producer on topic with pc, which this frees: made with
 * pulsarc_client_create_producer, or with pulsarc_client_create_producer_async and
 * waited for when async is set. Returns the result; *out is set on success. */
pulsarc_result drv_create_producer(pulsarc_client_t *client, const char *topic,
                                   pulsarc_producer_config_t *pc, bool async,
                                   pulsarc_producer_t **out);
/* drv_create_producer (blocking), or, when it fails, drv_fail("create producer", ...),
 * the client destroyed and exit 1. */
pulsarc_producer_t *drv_producer(pulsarc_client_t *client, const char *topic,
                                 pulsarc_producer_config_t *pc);

/* What a run of blocking sends came to. */
typedef struct drv_tally {
    int sent, failed;
    pulsarc_result first_error; /* PULSARC_OK while none failed */
} drv_tally_t;

/* Send "<prefix><i>" with pulsarc_producer_send through msg (cleared first, reused) and
 * count the outcome into t; a failure also gets drv_message_failed. */
void drv_send_numbered(pulsarc_producer_t *p, pulsarc_message_t *msg, const char *prefix, long i,
                       drv_tally_t *t);

/* Monotonic seconds. */
double drv_now_s(void);
void drv_pause_ms(long ms);
/* At most rate messages per second (0: no limit): returns once message i of a run that
 * began at t0 (drv_now_s) is due, at t0 + i / rate. */
void drv_pace(double t0, long i, double rate);

#endif
