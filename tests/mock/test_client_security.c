/* What a client takes from a broker it cannot fully trust, and what it tells its user:
 * incoming frames stay small whatever CONNECTED announces, a broker's words reach details
 * and log lines without control characters, and credentials sent in clear text are
 * warned about once per client, and again at each switch of cluster that leaves TLS. */
#include "client_harness.h"

#include <jansson.h>
#include <unistd.h>

#include "../support/test_pki.h"

#include "wire/frame.h"

TestSuite(client_security, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* CONNECTED's max_message_size governs what the producer sends; it receives only small
 * commands, so a broker announcing 2 GiB and then starting a 6 MiB frame is cut off at
 * once rather than buffered. */
Test(client_security, incoming_frames_stay_small_whatever_the_broker_announces)
{
    mock_broker_set_max_message_size(mb, INT32_MAX);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert(h_wait_log("max message 2147483647", 5000), "CONNECTED did not announce 2 GiB");
    /* The head of a frame of 6 MiB: total size, command size, a few command bytes. */
    uint32_t total = 6u * 1024 * 1024;
    uint8_t head[12] = { (uint8_t)(total >> 24),
                         (uint8_t)(total >> 16),
                         (uint8_t)(total >> 8),
                         (uint8_t)total,
                         0,
                         0,
                         0,
                         4,
                         0x08,
                         0x02,
                         0x12,
                         0x00 };
    cr_assert_eq(mock_broker_send_raw(mb, head, sizeof head), 1);
    char want[128];
    snprintf(want, sizeof want, "the broker sent a frame larger than %u bytes",
             (unsigned)(PC_FRAME_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_OVERHEAD_ALLOWANCE));
    cr_assert(h_wait_log(want, 5000), "the connection was not closed on the 6 MiB frame");
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 2, 5000), "the producer did not reconnect");
    h_finish();
}

/* A broker's error message is shown to the user (the detail) and logged: an escape
 * sequence or a line break in it must not reach either. */
Test(client_security, broker_words_reach_details_and_logs_without_control_characters)
{
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__AuthorizationError,
                              "denied\x1b[2J\r\n00:00:00.000 pulsarc INFO forged", -1);
    client = h_client(NULL);
    char detail[512];
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, NULL);
    cr_expect_eq(r, PULSARC_ERR_BROKER_AUTHORIZATION, "%s", pulsarc_result_name(r));
    cr_expect(strstr(detail, "denied?[2J??00:00:00.000 pulsarc INFO forged") != NULL, "%s", detail);
    cr_expect(!strpbrk(detail, "\x1b\r\n"), "a control character in the detail: %s", detail);
    cr_expect(h_log_contains("denied?[2J"), "the refusal was not logged");
    cr_expect_not(h_log_contains("\x1b"), "an escape character reached the log");
    cr_expect_not(h_log_contains("\r"), "a carriage return reached the log");
    cr_expect_not(h_log_contains("\n00:00:00.000 pulsarc INFO forged"), "a forged log line");
    h_finish();
}

/* A token over pulsar:// travels in clear: one warning when the client is created, not
 * one per connection, producer or message. */
Test(client_security, clear_text_credentials_are_warned_about_once_per_client)
{
    client = h_client("authPlugin", "token", "authParams", "token:not-a-secret-here", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    pulsarc_producer_t *second = h_producer(client, H_TOPIC "-2", NULL);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(h_send(i % 2 ? second : producer, i), PULSARC_OK);
    cr_assert(h_wait_calls(4, 5000));
    mock_broker_cut_now(mb); /* reconnect: the credentials go again */
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 2, 5000));
    cr_assert_eq(h_send(producer, 4), PULSARC_OK);
    cr_assert(h_wait_calls(5, 5000));
    cr_expect_eq(h_log_count("goes to the broker unencrypted"), 1, "warnings: %d",
                 h_log_count("goes to the broker unencrypted"));
    cr_expect_not(h_log_contains("not-a-secret-here"));
    pulsarc_producer_free(second);
    h_finish();
}

/* ---- a switch of cluster that leaves TLS ------------------------------------------------ */

/* From a pulsar+ssl:// cluster to a pulsar:// one the credentials cross the network in
 * clear from then on: every such switch, however it comes about, is warned about (never
 * with the secret) and counted in the client's statistics; a switch between plain URLs
 * is neither. The TLS cluster is port 1 of the loopback: nothing connects to it. */
#define TLS_URL "pulsar+ssl://127.0.0.1:1"
#define LEFT_TLS "leaves TLS"
#define SWITCHED "connection(s) to" /* the last line of a switch */

static int64_t tls_downgrades(void)
{
    pulsarc_stats_t *s = NULL;
    cr_assert_eq(pulsarc_client_stats(client, &s), PULSARC_OK);
    json_t *j = json_loads(pulsarc_stats_json(s), 0, NULL);
    json_t *v = json_object_get(j, "tls_downgrades");
    cr_assert(json_is_integer(v), "no tls_downgrades in %s", pulsarc_stats_json(s));
    int64_t n = json_integer_value(v);
    cr_assert_eq((uint64_t)n, pulsarc_stats_get(s, PULSARC_STAT_TLS_DOWNGRADES),
                 "the JSON and pulsarc_stats_get disagree");
    json_decref(j);
    pulsarc_stats_free(s);
    return n;
}

static void update_url(const char *url, int switches)
{
    cr_assert_eq(pulsarc_client_update_service_url(client, url), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    cr_assert(h_wait_log_count(SWITCHED, switches, 5000), "switch %d never happened", switches);
}

Test(client_security, update_service_url_leaving_tls_is_warned_about_and_counted)
{
    client = h_client_url(TLS_URL, "authPlugin", "token", "authParams", "token:tls-secret-1", NULL);
    cr_assert_eq(tls_downgrades(), 0);
    update_url(mock_broker_url(mb), 1);
    cr_assert_eq(h_log_count(LEFT_TLS), 1, "no warning when the token left TLS");
    cr_assert_eq(tls_downgrades(), 1);
    update_url("pulsar://127.0.0.1:2", 2); /* plain to plain */
    update_url(TLS_URL, 3);
    update_url(mock_broker_url(mb), 4);
    cr_assert_eq(h_log_count(LEFT_TLS), 2, "not one warning per switch that leaves TLS");
    cr_assert_eq(tls_downgrades(), 2);
    cr_assert_not(h_log_contains("tls-secret-1"), "the token reached the log");
    h_finish();
}

static int provide_the_mock(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s", mock_broker_url(mb));
    return 0;
}

static void with_provider(pulsarc_client_config_t *cc)
{
    cr_assert_eq(pulsarc_client_config_set_service_url_provider(cc, provide_the_mock, NULL),
                 PULSARC_OK);
}

Test(client_security, a_provider_leaving_tls_is_warned_about_and_counted)
{
    h_client_setup = with_provider;
    client = h_client_url(TLS_URL, "failoverCheckIntervalMs", "20", "authPlugin", "token",
                          "authParams", "token:tls-secret-2", NULL);
    cr_assert(h_wait_log(LEFT_TLS, 5000), "no warning when the provider's answer left TLS");
    cr_assert_eq(tls_downgrades(), 1);
    cr_assert_not(h_log_contains("tls-secret-2"), "the token reached the log");
    h_finish();
}

Test(client_security, a_failover_leaving_tls_is_warned_about_and_counted)
{
    client = h_client_url(TLS_URL, "failoverSecondaryUrls", mock_broker_url(mb),
                          "failoverCheckIntervalMs", "20", "failoverDelayMs", "0", NULL);
    cr_assert(h_wait_log(LEFT_TLS, 5000), "no warning when the failover left TLS");
    cr_assert_eq(tls_downgrades(), 1);
    h_finish();
}

/* ---- TLS files that change (autoCertRefreshSeconds) ------------------------------------- */

/* The mock broker speaks no TLS: every connection fails its handshake and is made again,
 * and each one's start looks at the files (at most once a second). A certificate whose key
 * has not arrived yet is a warning and a count, never the key; once the key is there the
 * files are read anew, logged with the certificate's name, and counted. */
static char tls_dir[] = "/tmp/pulsarc-mock-tls-XXXXXX";
static char tls_trust[64], tls_cert[64], tls_key[64];

static uint64_t client_stat(pulsarc_stat which, const char *json_name)
{
    pulsarc_stats_t *s = NULL;
    cr_assert_eq(pulsarc_client_stats(client, &s), PULSARC_OK);
    json_t *j = json_loads(pulsarc_stats_json(s), 0, NULL);
    json_t *v = json_object_get(j, json_name);
    cr_assert(json_is_integer(v), "no %s in %s", json_name, pulsarc_stats_json(s));
    uint64_t n = pulsarc_stats_get(s, which);
    cr_assert_eq((uint64_t)json_integer_value(v), n, "the JSON and pulsarc_stats_get disagree");
    json_decref(j);
    pulsarc_stats_free(s);
    return n;
}

Test(client_security, changed_tls_files_are_read_at_a_connection_start_and_counted)
{
    ident_t ca = make_ident("mock CA", NULL, true, -DAY, DAY, NULL);
    ident_t first = make_ident("client-first", &ca, false, -DAY, DAY, NULL);
    ident_t second = make_ident("client-second", &ca, false, -DAY, DAY, NULL);
    cr_assert_not_null(mkdtemp(tls_dir));
    snprintf(tls_trust, sizeof tls_trust, "%s/ca.pem", tls_dir);
    snprintf(tls_cert, sizeof tls_cert, "%s/client.pem", tls_dir);
    snprintf(tls_key, sizeof tls_key, "%s/client.key", tls_dir);
    pki_write_file(tls_trust, cert_pem(&ca));
    pki_write_file(tls_cert, cert_pem(&first));
    pki_write_file(tls_key, key_pem(&first));
    char url[64];
    snprintf(url, sizeof url, "pulsar+ssl://127.0.0.1:%u", (unsigned)mock_broker_port(mb));
    client = h_client_url(url, "tlsTrustCertsFilePath", tls_trust, "tlsCertificateFilePath",
                          tls_cert, "tlsKeyFilePath", tls_key, "autoCertRefreshSeconds", "1", NULL);
    pki_write_file(tls_cert, cert_pem(&second)); /* its key comes later */
    h_producer_fails(client, H_TOPIC, NULL, NULL, 0, NULL);
    cr_expect_geq(client_stat(PULSARC_STAT_TLS_RELOAD_FAILURES, "tls_reload_failures"), 1);
    cr_expect_eq(client_stat(PULSARC_STAT_TLS_RELOADS, "tls_reloads"), 0);
    cr_expect(h_log_contains("TLS files changed but cannot be used"));
    pki_write_file(tls_key, key_pem(&second));
    usleep(1100 * 1000); /* autoCertRefreshSeconds: no second look within a second */
    h_producer_fails(client, H_TOPIC, NULL, NULL, 0, NULL);
    cr_expect_eq(client_stat(PULSARC_STAT_TLS_RELOADS, "tls_reloads"), 1);
    cr_expect(h_log_contains("new connections use them: client certificate /CN=client-second"));
    cr_expect_not(h_log_contains("PRIVATE KEY"), "key material in the log");
    h_finish();
    unlink(tls_trust);
    unlink(tls_cert);
    unlink(tls_key);
    rmdir(tls_dir);
    ident_t *all[] = { &ca, &first, &second };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free_ident(all[i]);
}
