/* Test seams: what a test or fuzzer swaps in under one client, through its configuration,
 * so that it can run the client against a broker or an OAuth2 issuer in the same process
 * and decide what time it is (common/clock.h) instead of sleeping. Each client created
 * from the configuration gets them in its runtime context (net/runtime.h); other clients
 * in the process are untouched.
 *
 * Not part of the API: this header is not installed, and the functions are internal
 * (pc_ prefix, hidden in the shared library, which exports pulsarc_* only), so only code
 * linked with the static library (tests, fuzzers) reaches them. Production never sets
 * them, and the runtime then reads the real clock and opens real connections.
 * @locality any thread, before pulsarc_client_new; what they point to must outlive every
 * client created with them. */
#ifndef PC_TEST_SEAMS_H
#define PC_TEST_SEAMS_H

#include "common/clock.h"
#include "net/runtime.h"
#include "pulsarc/pulsarc.h"

/* Broker connections and the OAuth2 issuer's HTTP through transport; NULL: the network. */
void pc_client_config_set_transport(pulsarc_client_config_t *conf, const pc_transport_t *transport);
/* "Now" for cached tokens' lifetimes and the producers' key re-reads; NULL: the real
 * monotonic clock. */
void pc_client_config_set_clock(pulsarc_client_config_t *conf, const pc_clock_t *clock);
/* The TLS context of a pulsar+ssl:// client's broker connections, built once by the test
 * (pc_tls_ctx_new) and shared by every client given it, instead of one built from the
 * configuration's tls* settings per client; NULL: built from them. */
void pc_client_config_set_tls_ctx(pulsarc_client_config_t *conf, const struct pc_tls_ctx *tls);

#endif
