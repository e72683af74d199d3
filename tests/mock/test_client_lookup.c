/* The client against the mock broker: topic lookup (redirects, failures) and producer
 * creation (broker errors, retries, connection failures), plus what the client sends in
 * CONNECT and PRODUCER. */
#include "client_harness.h"

TestSuite(client_lookup, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));
TestSuite(client_create, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* ---- lookup -------------------------------------------------------------------------- */

Test(client_lookup, redirects_then_connect)
{
    mock_broker_lookup_redirect(mb, mock_broker_url(mb), 3);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    /* One question, three redirects, then the Connect answer. */
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 4);
    cr_assert_eq(h_count(mb, MOCK_PARTITION_METADATA), 1);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    /* Redirects to the same broker reuse the one connection. */
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    h_finish();
}

Test(client_lookup, too_many_redirects_fails)
{
    mock_broker_lookup_redirect(mb, mock_broker_url(mb), -1);
    client = h_client("maxLookupRedirects", "2", "operationTimeoutMs", "1000", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_TOO_MANY_REDIRECTS, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "redirect"), "detail: %s", detail);
    /* Each attempt asks once and follows 2 redirects; the third redirect ends it. The
     * attempt may be retried until operationTimeoutMs, but never goes past the limit. */
    uint64_t lookups = h_count(mb, MOCK_LOOKUPS);
    cr_assert_geq(lookups, 3);
    cr_assert_eq(lookups % 3, 0, "%llu lookups: an attempt followed more than 2 redirects",
                 (unsigned long long)lookups);
    cr_assert_lt(elapsed, h_upper_ms(1000), "create took %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    h_finish();
}

Test(client_lookup, redirect_limit_is_inclusive)
{
    /* Exactly maxLookupRedirects redirects are allowed. */
    mock_broker_lookup_redirect(mb, mock_broker_url(mb), 2);
    /* A long backoff: a failed first attempt would show as a slow create. The retry would
     * wait at least 90% of it (jitter), well above the bound. */
    uint64_t bound = h_upper_ms(0);
    client = h_client("maxLookupRedirects", "2", "initialBackoffIntervalMs", h_ms_str(2 * bound),
                      "maxBackoffIntervalMs", h_ms_str(2 * bound), "operationTimeoutMs",
                      h_ms_str(4 * bound), NULL);
    uint64_t t0 = h_now_ms();
    producer = h_producer(client, H_TOPIC, NULL);
    uint64_t elapsed = h_now_ms() - t0;
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 3);
    cr_assert_lt(elapsed, bound, "create took %llu ms: the first attempt failed",
                 (unsigned long long)elapsed);
    h_finish();
}

Test(client_lookup, redirect_to_second_broker)
{
    mock_broker_t *second = mock_broker_start();
    cr_assert_not_null(second);
    mock_broker_lookup_redirect(mb, mock_broker_url(second), 1);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 1);
    cr_assert_eq(h_count(second, MOCK_LOOKUPS), 1, "the redirect was not followed");
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    cr_assert_eq(h_count(second, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(second, MOCK_SENDS), 1);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(second, &info));
    cr_assert_str_eq(info.topic, H_TOPIC);
    h_finish(); /* the client goes before the broker it uses */
    mock_broker_stop(second);
}

Test(client_lookup, connect_answer_to_second_broker)
{
    mock_broker_t *second = mock_broker_start();
    cr_assert_not_null(second);
    mock_broker_set_lookup_url(mb, mock_broker_url(second));
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 1);
    cr_assert_eq(h_count(second, MOCK_LOOKUPS), 0, "a Connect answer is final");
    cr_assert_eq(h_count(second, MOCK_PRODUCERS), 1);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(second, MOCK_SENDS), 1);
    h_finish(); /* the client goes before the broker it uses */
    mock_broker_stop(second);
}

Test(client_lookup, topic_not_found_is_reported)
{
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__TopicNotFound,
                            "Topic faults-xyz does not exist", -1);
    /* The bound on "at once" stays well below the operation timeout. */
    uint64_t bound = h_upper_ms(0);
    client = h_client("operationTimeoutMs", h_ms_str(2 * bound), NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_TOPIC_NOT_FOUND, "got %s (%s)", pulsarc_result_name(r),
                 detail);
    cr_assert(strstr(detail, "Topic faults-xyz does not exist"), "detail: %s", detail);
    /* Terminal: no retry until the operation timeout. */
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 1);
    cr_assert_lt(elapsed, bound, "create took %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    h_finish();
}

Test(client_lookup, retryable_lookup_failure_then_ok)
{
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "loading", 2);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 3);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1);
    h_finish();
}

/* ---- producer creation --------------------------------------------------------------- */

Test(client_create, producer_busy_is_terminal)
{
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ProducerBusy,
                              "Producer with name 'p1' is already connected", -1);
    /* The bound on "at once" stays well below the operation timeout. */
    uint64_t bound = h_upper_ms(0);
    client = h_client("operationTimeoutMs", h_ms_str(2 * bound), NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC,
                                        h_producer_conf(0, "producerName", "p1", NULL), detail,
                                        sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_PRODUCER_BUSY, "got %s (%s)", pulsarc_result_name(r),
                 detail);
    cr_assert(strstr(detail, "already connected"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 1, "a terminal error was retried");
    cr_assert_lt(elapsed, bound, "create took %llu ms", (unsigned long long)elapsed);
    h_finish();
}

Test(client_create, service_not_ready_twice_then_ok)
{
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "not yet", 2);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 3);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 1);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.sequence_id, 0);
    cr_assert_not_null(s.producer_name, "SEND on a connection where the producer is unknown");
    mock_send_free(&s);
    h_finish();
}

Test(client_create, service_not_ready_always_times_out)
{
    mock_broker_fail_producer(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady, "still loading",
                              -1);
    client = h_client("operationTimeoutMs", "1000", "initialBackoffIntervalMs", "50", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_BROKER_SERVICE_NOT_READY, "got %s (%s)", pulsarc_result_name(r),
                 detail);
    cr_assert(strstr(detail, "still loading"), "detail: %s", detail);
    cr_assert_geq(h_count(mb, MOCK_PRODUCERS), 3, "retryable error not retried");
    /* It gives up when the next backoff (at most maxBackoffIntervalMs, 200 ms) would pass
     * operationTimeoutMs: not before 800 ms. */
    cr_assert_geq(elapsed, 500, "gave up after %llu ms", (unsigned long long)elapsed);
    cr_assert_lt(elapsed, h_upper_ms(1000), "create took %llu ms", (unsigned long long)elapsed);
    h_finish();
}

Test(client_create, connect_never_answered)
{
    mock_broker_set_ignore_connect(mb, true);
    client = h_client("connectionTimeoutMs", "500", "operationTimeoutMs", "1500", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert(r == PULSARC_ERR_CONNECT_FAILED || r == PULSARC_ERR_TIMEOUT, "got %s (%s)",
              pulsarc_result_name(r), detail);
    cr_assert_geq(h_count(mb, MOCK_CONNECTS), 1);
    cr_assert_geq(elapsed, 400, "failed after %llu ms", (unsigned long long)elapsed);
    cr_assert_lt(elapsed, h_upper_ms(1500), "create took %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    /* The abandoned connection is closed by the client. */
    cr_assert(h_wait_count_at_most(mb, MOCK_OPEN_CONNECTIONS, 0, 3000));
    h_finish();
}

Test(client_create, refused_connection_fails)
{
    mock_broker_set_refuse(mb, true);
    client = h_client("operationTimeoutMs", "1000", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert(r == PULSARC_ERR_CONNECTION_CLOSED || r == PULSARC_ERR_CONNECT_FAILED ||
                  r == PULSARC_ERR_TIMEOUT,
              "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert_geq(h_count(mb, MOCK_CONNECTIONS), 1);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0);
    cr_assert_lt(elapsed, h_upper_ms(1000), "create took %llu ms", (unsigned long long)elapsed);
    /* The client is still usable once the broker accepts again. */
    mock_broker_set_refuse(mb, false);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}

Test(client_create, broker_down_connect_failed)
{
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    client = h_client("operationTimeoutMs", "1000", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_CONNECT_FAILED, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert_neq(detail[0], '\0', "no detail for CONNECT_FAILED");
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0);
    cr_assert_lt(elapsed, h_upper_ms(1000), "create took %llu ms", (unsigned long long)elapsed);
    h_finish();
}

Test(client_create, truncated_connected_is_not_fatal_to_the_client)
{
    /* Half a CONNECTED, then EOF. Whether creation retries or fails, the client must
     * survive it and create the producer on the next attempt. */
    mock_broker_cut_next_reply(mb);
    client = h_client(NULL);
    pulsarc_producer_t *p = NULL;
    pulsarc_result r = pulsarc_client_create_producer(client, H_TOPIC, NULL, &p);
    if (r != PULSARC_OK) {
        cr_assert(r == PULSARC_ERR_CONNECTION_CLOSED || r == PULSARC_ERR_CONNECT_FAILED ||
                      r == PULSARC_ERR_PROTOCOL,
                  "got %s (%s)", pulsarc_result_name(r), pulsarc_last_error_detail());
        cr_assert_null(p);
        r = pulsarc_client_create_producer(client, H_TOPIC, NULL, &p);
    }
    cr_assert_eq(r, PULSARC_OK, "got %s (%s)", pulsarc_result_name(r), pulsarc_last_error_detail());
    producer = p;
    cr_assert_geq(h_count(mb, MOCK_CONNECTIONS), 2);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}

/* ---- what the client sends ------------------------------------------------------------ */

Test(client_create, connect_command_fields)
{
    client = h_client(NULL);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0, "client_new must not connect");
    producer = h_producer(client, H_TOPIC, NULL);
    mock_connect_info_t info;
    cr_assert(mock_broker_last_connect(mb, &info));
    cr_assert(strncmp(info.client_version, "pulsarc-", 8) == 0, "client_version \"%s\"",
              info.client_version);
    cr_assert_str_eq(info.client_version + 8, PULSARC_VERSION_STRING);
    cr_assert_eq(info.protocol_version, 21);
    cr_assert_not(info.has_auth_method_name);
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 1);
    h_finish();
}

Test(client_create, producer_command_fields)
{
    client = h_client(NULL);
    producer = h_producer(client, "faults-short", NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert_str_eq(info.topic, "persistent://public/default/faults-short");
    cr_assert_str_eq(pulsarc_producer_topic(producer), "persistent://public/default/faults-short");
    cr_assert(info.has_epoch);
    cr_assert_eq(info.epoch, 0);
    cr_assert_not(info.user_provided_producer_name);
    /* The broker-assigned name is the producer's name and goes into every message. */
    cr_assert_str_eq(pulsarc_producer_name(producer), "mock-0");
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), -1);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_not_null(s.metadata);
    cr_assert_str_eq(s.metadata->producer_name, "mock-0");
    cr_assert_eq(s.metadata->sequence_id, 0);
    cr_assert(s.checksum_ok);
    mock_send_free(&s);
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 0);

    pulsarc_producer_t *named = h_producer(client, H_TOPIC, "producerName", "my-name", NULL);
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(info.has_producer_name);
    cr_assert_str_eq(info.producer_name, "my-name");
    cr_assert(info.user_provided_producer_name);
    cr_assert_str_eq(pulsarc_producer_name(named), "my-name");
    cr_assert_neq(info.producer_id, 0);
    pulsarc_producer_free(named);
    h_finish();
}

Test(client_create, continues_from_broker_last_sequence_id)
{
    mock_broker_set_last_sequence_id(mb, 41);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(pulsarc_producer_last_sequence_id(producer), 41);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    mock_send_t s = h_get_send(mb, 0);
    cr_assert_eq(s.sequence_id, 42);
    mock_send_free(&s);
    h_finish();
}

/* ---- the handshake answered with something other than CONNECTED -------------------------- */

typedef struct create_job {
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    pulsarc_result res;
    char detail[512];
    uint64_t done_at_ms;     /* h_now_ms() when creation returned */
    uint64_t answered_at_ms; /* h_now_ms() just before the broker's answer went out */
} create_job_t;

static void *create_in_thread(void *arg)
{
    create_job_t *j = arg;
    j->res = pulsarc_client_create_producer(j->client, H_TOPIC, NULL, &j->producer);
    j->done_at_ms = h_now_ms();
    snprintf(j->detail, sizeof j->detail, "%s", pulsarc_last_error_detail());
    return NULL;
}

/* Create a producer in a thread while the mock holds back CONNECTED; answer the CONNECT
 * with cmd instead and return how creation ended. The timeouts are twice the bound the
 * tests put on "acted on at once" (from the answer to the end of creation). */
static create_job_t handshake_answered_with(const Pulsar__Proto__BaseCommand *cmd)
{
    mock_broker_set_ignore_connect(mb, true);
    const char *limit = h_ms_str(2 * h_upper_ms(0));
    client = h_client("operationTimeoutMs", limit, "connectionTimeoutMs", limit, NULL);
    create_job_t job = { .client = client };
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, create_in_thread, &job), 0);
    cr_assert(h_wait_count(mb, MOCK_CONNECTS, 1, 3000));
    job.answered_at_ms = h_now_ms();
    int reached = h_broker_send_cmd(mb, cmd);
    pthread_join(th, NULL);
    producer = job.producer;
    cr_assert_eq(reached, 1);
    return job;
}

Test(client_create, connect_answered_with_error)
{
    Pulsar__Proto__CommandError err = PULSAR__PROTO__COMMAND_ERROR__INIT;
    err.request_id = 0;
    err.error = PULSAR__PROTO__SERVER_ERROR__AuthenticationError;
    err.message = (char *)"Unable to authenticate: bad token";
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR;
    cmd.error = &err;
    create_job_t job = handshake_answered_with(&cmd);
    cr_assert_eq(job.res, PULSARC_ERR_BROKER_AUTHENTICATION, "got %s (%s)",
                 pulsarc_result_name(job.res), job.detail);
    cr_assert(strstr(job.detail, "bad token"), "detail: %s", job.detail);
    uint64_t acted = job.done_at_ms - job.answered_at_ms;
    cr_assert_lt(acted, h_upper_ms(0), "the handshake error was acted on after %llu ms",
                 (unsigned long long)acted);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    h_finish();
}

Test(client_create, connect_answered_with_auth_challenge)
{
    Pulsar__Proto__AuthData data = PULSAR__PROTO__AUTH_DATA__INIT;
    data.auth_method_name = (char *)"token";
    Pulsar__Proto__CommandAuthChallenge ch = PULSAR__PROTO__COMMAND_AUTH_CHALLENGE__INIT;
    ch.challenge = &data;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE;
    cmd.authchallenge = &ch;
    create_job_t job = handshake_answered_with(&cmd);
    cr_assert_eq(job.res, PULSARC_ERR_UNSUPPORTED, "got %s (%s)", pulsarc_result_name(job.res),
                 job.detail);
    uint64_t acted = job.done_at_ms - job.answered_at_ms;
    cr_assert_lt(acted, h_upper_ms(0), "the challenge was acted on after %llu ms",
                 (unsigned long long)acted);
    h_finish();
}

/* ---- unreachable brokers ------------------------------------------------------------------- */

Test(client_lookup, redirect_to_unreachable_broker)
{
    /* Port 1 on loopback: connection refused. */
    mock_broker_lookup_redirect(mb, "pulsar://127.0.0.1:1", -1);
    client = h_client("operationTimeoutMs", "1000", NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_CONNECT_FAILED, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert_lt(elapsed, h_upper_ms(1000), "create took %llu ms", (unsigned long long)elapsed);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    h_finish();
}

Test(client_lookup, lookup_answer_with_bad_url)
{
    mock_broker_set_lookup_url(mb, "not a url");
    /* Each answer fails at once, and creation retries it until operationTimeoutMs, then
     * fails with the last attempt's error: time passes until then. */
    client = h_client("operationTimeoutMs", "10000", NULL);
    h_create_call_t cc = { 0 };
    cr_assert(h_create_while_time_passes(&cc, 20000), "creation never ended");
    cr_assert_null(cc.producer, "a failed create_producer left a handle");
    pulsarc_result r = cc.result;
    const char *detail = cc.detail;
    cr_assert_eq(r, PULSARC_ERR_PROTOCOL, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "not a url"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_PRODUCERS), 0);
    h_finish();
}

/* lookupTimeoutMs: a lookup the broker never answers fails after it, not after the
 * operation timeout, and the retry gets the producer created. */
Test(client_lookup, an_unanswered_lookup_is_tried_again_after_lookup_timeout)
{
    mock_broker_lookup_unanswered(mb, 1);
    client = h_client("lookupTimeoutMs", "1000", "operationTimeoutMs", "60000", NULL);
    h_create_call_t cc = { 0 };
    uint64_t t0 = h_now_ms();
    cr_assert(h_create_while_time_passes(&cc, 30000), "creation never ended");
    cr_assert_eq(cc.result, PULSARC_OK, "%s (%s)", pulsarc_result_name(cc.result), cc.detail);
    producer = cc.producer;
    uint64_t took = h_now_ms() - t0;
    cr_assert_geq(took, 1000, "retried after %llu ms", (unsigned long long)took);
    cr_assert_lt(took, 60000, "waited for the operation timeout (%llu ms)",
                 (unsigned long long)took);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 2);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}

Test(client_lookup, service_url_with_a_dead_host)
{
    /* Two hosts, the first one down: lookups must get through on the other. */
    char url[256];
    snprintf(url, sizeof url, "pulsar://127.0.0.1:1,127.0.0.1:%u", (unsigned)mock_broker_port(mb));
    client = h_client_url(url, "operationTimeoutMs", "2000", NULL);
    pulsarc_producer_t *p = NULL;
    pulsarc_result r = pulsarc_client_create_producer(client, H_TOPIC, NULL, &p);
    cr_assert_eq(r, PULSARC_OK, "create with one dead host of two: %s (%s)", pulsarc_result_name(r),
                 pulsarc_last_error_detail());
    producer = p;
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}

/* A partition count no real topic has is an error in the answer: creation fails with a
 * protocol error instead of allocating producers for it. */
Test(client_lookup, absurd_partition_count_is_refused)
{
    mock_broker_set_partitions(mb, 4000000000u);
    client = h_client(NULL);
    char detail[256];
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, NULL);
    cr_assert_eq(r, PULSARC_ERR_PROTOCOL, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "4000000000"), "detail: %s", detail);
    h_finish();
}

/* The partition metadata lookup's connection drops (the first bytes the client sends are
 * cut): creation tries again with backoff, as the official clients do, and succeeds. */
Test(client_create, dropped_metadata_lookup_is_retried)
{
    mock_broker_cut_after_bytes(mb, 0);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_geq(h_count(mb, MOCK_CONNECTIONS), 2, "the first connection was not cut");
    cr_assert(h_log_contains("partition metadata lookup failed"), "no retry was logged");
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK);
    h_finish();
}
