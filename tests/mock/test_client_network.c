/* The client against the mock broker: where its connections go. The advertised listener
 * it asks for in every lookup (listenerName) and a listener the broker does not have,
 * connections per broker (connectionsPerBroker), and an SNI proxy in front of the
 * brokers (proxyServiceUrl + proxyProtocol=SNI). */
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/test_seams.h"
#include "client_harness.h"

TestSuite(client_network, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

/* ---- listenerName ------------------------------------------------------------------- */

Test(client_network, every_lookup_asks_for_the_listener)
{
    mock_broker_t *second = mock_broker_start();
    cr_assert_not_null(second);
    /* The first broker redirects: the question to the second carries the name too. */
    mock_broker_lookup_redirect(mb, mock_broker_url(second), 1);
    client = h_client("listenerName", "external", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_lookup_info_t first, redirected;
    cr_assert(mock_broker_last_lookup(mb, &first));
    cr_assert(mock_broker_last_lookup(second, &redirected));
    cr_assert(first.has_listener_name, "the lookup named no listener");
    cr_assert_str_eq(first.listener_name, "external");
    cr_assert(redirected.has_listener_name, "the redirected lookup named no listener");
    cr_assert_str_eq(redirected.listener_name, "external");
    h_finish(); /* the client goes before the broker it uses */
    mock_broker_stop(second);
}

Test(client_network, no_listener_name_by_default)
{
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    mock_lookup_info_t info;
    cr_assert(mock_broker_last_lookup(mb, &info));
    cr_assert_not(info.has_listener_name, "asked for listener \"%s\"", info.listener_name);
    h_finish();
}

/* Pulsar answers a listener it does not have as if it were not ready (Failed,
 * ServiceNotReady, "the broker do not have NAME listener", as 4.0.8 does on the cluster
 * rig): retrying cannot help, so creation fails at once with a configuration error. */
Test(client_network, unknown_listener_fails_at_once)
{
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady,
                            "the broker do not have nosuch listener", -1);
    uint64_t bound = h_upper_ms(0);
    client = h_client("listenerName", "nosuch", "operationTimeoutMs", h_ms_str(2 * bound), NULL);
    char detail[512];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, NULL, detail, sizeof detail, &elapsed);
    cr_assert_eq(r, PULSARC_ERR_INVALID_CONFIG, "got %s (%s)", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, "\"nosuch\"") && strstr(detail, "listenerName"), "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 1, "the lookup was retried");
    cr_assert_lt(elapsed, bound, "create took %llu ms", (unsigned long long)elapsed);
    h_finish();
}

/* The same answer about another listener is the broker not being ready: retried. */
Test(client_network, another_listeners_answer_is_retried)
{
    mock_broker_lookup_fail(mb, PULSAR__PROTO__SERVER_ERROR__ServiceNotReady,
                            "the broker do not have other listener", 2);
    client = h_client("listenerName", "external", NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_count(mb, MOCK_LOOKUPS), 3);
    h_finish();
}

/* ---- a Pulsar proxy ------------------------------------------------------------------ */

/* The mock answers lookups as a Pulsar proxy does: Connect to the owning broker, through
 * the service URL. The producer's connection goes to the mock again, a second one, and
 * its CONNECT names the broker (host:port, no scheme), as the C++ client's does. */
Test(client_network, through_a_proxy_connect_names_the_broker)
{
    mock_broker_set_lookup_url(mb, "pulsar://broker-7.pulsarc.invalid:6650");
    mock_broker_set_lookup_proxied(mb, true);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    mock_connect_info_t info;
    cr_assert(mock_broker_last_connect(mb, &info));
    cr_assert(info.has_proxy_to_broker_url, "the proxied CONNECT named no broker");
    cr_assert_str_eq(info.proxy_to_broker_url, "broker-7.pulsarc.invalid:6650");
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 2, "one for the lookups, one for the broker");
    h_finish();
}

/* ---- connectionsPerBroker ----------------------------------------------------------- */

/* The connection (accept order) each partition's producer sent on: one message to each of
 * n partitions, round robin without batching. */
static void connections_of_partitions(int n, int conn_of[])
{
    h_send_range(producer, 0, n);
    cr_assert(h_wait_calls(n, 3000), "only %d of %d callbacks", h_total(), n);
    h_assert_each_once(n, PULSARC_OK);
    for (int i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, (size_t)i);
        int partition = T.partition[h_send_index(&s)];
        cr_assert(partition >= 0 && partition < n);
        conn_of[partition] = s.connection;
        mock_send_free(&s);
    }
}

Test(client_network, producers_take_the_connections_in_turn)
{
    mock_broker_set_partitions(mb, 6);
    client = h_client("connectionsPerBroker", "3", NULL);
    producer = h_producer(client, H_TOPIC, "messageRoutingMode", "round_robin", NULL);
    int conn_of[6];
    connections_of_partitions(6, conn_of);
    /* Lookups share the first connection; six producers take three connections in
     * turn: two each. */
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 3);
    for (int i = 0; i < 6; i++) {
        int same = 0;
        for (int j = 0; j < 6; j++)
            same += conn_of[j] == conn_of[i];
        cr_assert_eq(same, 2, "partition %d's connection %d carries %d producers", i, conn_of[i],
                     same);
    }
    h_finish();
}

Test(client_network, one_connection_per_broker_by_default)
{
    mock_broker_set_partitions(mb, 6);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "messageRoutingMode", "round_robin", NULL);
    int conn_of[6];
    connections_of_partitions(6, conn_of);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1);
    h_finish();
}

/* After the broker drops them all, the producers come back on as many connections as
 * before, not one more. */
Test(client_network, reconnects_keep_the_number_of_connections)
{
    mock_broker_set_partitions(mb, 6);
    client = h_client("connectionsPerBroker", "2", NULL);
    producer = h_producer(client, H_TOPIC, "messageRoutingMode", "round_robin", NULL);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 2);
    uint64_t producers = h_count(mb, MOCK_PRODUCERS);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, producers + 6, 3000),
              "not every producer came back");
    h_send_range(producer, 0, 6);
    cr_assert(h_wait_calls(6, 3000), "only %d of 6 callbacks", h_total());
    h_assert_each_once(6, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 4, "two connections, then two again");
    cr_assert_eq(h_count(mb, MOCK_OPEN_CONNECTIONS), 2);
    h_finish();
}

static bool none_open(void *arg)
{
    (void)arg;
    return h_count(mb, MOCK_OPEN_CONNECTIONS) == 0;
}

/* connectionMaxIdleSeconds: once its producer closed, the connection is closed after that
 * long unused (not before), and the next producer opens a new one; -1 keeps it. */
Test(client_network, an_unused_connection_is_closed_after_max_idle)
{
    client = h_client("connectionMaxIdleSeconds", "20", NULL);
    pulsarc_producer_t *first = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(first, 0), PULSARC_OK);
    pulsarc_producer_free(first); /* closes it: the connection is unused from now on */
    h_let_time_pass(15000);
    cr_assert_eq(h_count(mb, MOCK_OPEN_CONNECTIONS), 1, "closed before 20 s unused");
    cr_assert(h_let_time_pass_until(none_open, NULL, 10000), "not closed after 20 s unused");
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 1), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 2, "a new connection for the next producer");
    /* In use, a connection stays however long it is quiet. */
    h_let_time_pass(45000);
    cr_assert_eq(h_count(mb, MOCK_OPEN_CONNECTIONS), 1);
    h_finish();
}

Test(client_network, max_idle_off_keeps_unused_connections)
{
    client = h_client("connectionMaxIdleSeconds", "-1", NULL);
    pulsarc_producer_t *first = h_producer(client, H_TOPIC, NULL);
    pulsarc_producer_free(first);
    h_let_time_pass(300000);
    cr_assert_eq(h_count(mb, MOCK_OPEN_CONNECTIONS), 1);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 1);
    h_finish();
}

Test(client_network, connections_per_broker_is_at_least_one)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "connectionsPerBroker", "0"),
                 PULSARC_ERR_INVALID_CONFIG);
    pulsarc_client_config_free(cc);
}

/* ---- SNI proxy ---------------------------------------------------------------------- */

/* A test transport standing in for the network: records where each connection was to go,
 * and hands the first one a socket pair whose other end the test reads. Later connects
 * fail (the retries after the first one breaks). */
typedef struct sni_seam {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int connects;
    pc_host_port_t first_to;
    int peer; /* the test's end of the first connection, or -1 */
} sni_seam_t;

static sni_seam_t seam = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, { "", 0 }, -1 };

static int seam_open(void *ctx, const pc_host_port_t *to)
{
    sni_seam_t *s = ctx;
    int fds[2] = { -1, -1 };
    pthread_mutex_lock(&s->mu);
    if (s->connects++ == 0) {
        s->first_to = *to;
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0)
            s->peer = fds[1];
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->mu);
    return fds[0];
}

static const pc_transport_t sni_transport = { .open_socket = seam_open, .ctx = &seam };

static void use_sni_transport(pulsarc_client_config_t *cc)
{
    pc_client_config_set_transport(cc, &sni_transport);
}

/* Read a TLS ClientHello record from fd; returns its length (0 on failure). */
static size_t read_client_hello(int fd, uint8_t *buf, size_t cap)
{
    size_t have = 0, want = 5;
    while (have < want) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, h_deadline_ms(3000)) != 1)
            return 0;
        ssize_t n = read(fd, buf + have, cap - have);
        if (n <= 0)
            return 0;
        have += (size_t)n;
        if (have >= 5)
            want = 5 + ((size_t)buf[3] << 8 | buf[4]);
        if (want > cap)
            return 0;
    }
    return want;
}

/* The server_name (SNI) of a ClientHello record, or "" when it has none. */
static void client_hello_sni(const uint8_t *b, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    cr_assert(len > 9 && b[0] == 22 && b[5] == 1, "not a TLS ClientHello");
    size_t at = 9 + 2 + 32;                     /* record and handshake headers, version, random */
    at += 1 + b[at];                            /* session id */
    at += 2 + ((size_t)b[at] << 8 | b[at + 1]); /* cipher suites */
    at += 1 + b[at];                            /* compression methods */
    size_t end = at + 2 + ((size_t)b[at] << 8 | b[at + 1]);
    cr_assert_leq(end, len, "extensions run past the record");
    for (at += 2; at + 4 <= end;) {
        unsigned type = (unsigned)b[at] << 8 | b[at + 1];
        size_t ext_len = (size_t)b[at + 2] << 8 | b[at + 3];
        at += 4;
        cr_assert_leq(at + ext_len, end);
        if (type == 0 && ext_len >= 5 && b[at + 2] == 0) { /* server_name, host_name */
            size_t n = (size_t)b[at + 3] << 8 | b[at + 4];
            cr_assert_leq(5 + n, ext_len);
            cr_assert_lt(n, cap);
            memcpy(out, b + at + 5, n);
            out[n] = '\0';
            return;
        }
        at += ext_len;
    }
}

/* Every connection opens TCP to the proxy and names the broker as SNI: the first one,
 * the lookup's, names the service URL's host (a name that resolves nowhere, as behind a
 * real SNI proxy). */
Test(client_network, sni_proxy_is_dialled_with_the_broker_as_sni)
{
    h_client_setup = use_sni_transport;
    client = h_client_url("pulsar+ssl://broker1.pulsarc.invalid:6651", "proxyServiceUrl",
                          "pulsar+ssl://sni-proxy.pulsarc.invalid:4443", "proxyProtocol", "SNI",
                          "operationTimeoutMs", "1000", NULL);
    pulsarc_producer_t *p = NULL;
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    cr_assert_neq(pulsarc_client_create_producer(client, H_TOPIC, pc, &p), PULSARC_OK,
                  "no broker answered, yet the producer was created");
    pulsarc_producer_config_free(pc);
    pthread_mutex_lock(&seam.mu);
    int peer = seam.peer;
    pc_host_port_t to = seam.first_to;
    pthread_mutex_unlock(&seam.mu);
    cr_assert_geq(peer, 0, "the client never connected");
    cr_assert_str_eq(to.host, "sni-proxy.pulsarc.invalid");
    cr_assert_eq(to.port, 4443);
    uint8_t hello[16384];
    size_t n = read_client_hello(peer, hello, sizeof hello);
    close(peer);
    cr_assert_gt(n, 0, "no ClientHello on the proxy's connection");
    char sni[256];
    client_hello_sni(hello, n, sni, sizeof sni);
    cr_assert_str_eq(sni, "broker1.pulsarc.invalid");
    h_finish();
}

/* ---- writes ---------------------------------------------------------------------------- */

/* A turn's frames go to the socket at once as far as it takes them (conn_io.c,
 * write_at_once), and the rest through libuv from the byte where the socket stopped:
 * here frames of 12 MiB among small ones, above what a loopback socket takes at once
 * (its send buffer grows to 4 MiB), so frames are cut inside their payload. Each must
 * reach the broker whole (the mock checks every frame's CRC), in order, with its own
 * bytes. */
static void fill_pattern(uint8_t *buf, size_t len, int idx)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 7 + (size_t)idx * 13 + (i >> 12));
}

Test(client_network, frames_the_socket_takes_in_part_arrive_whole_and_in_order)
{
    enum { N = 6, BIG = 12 * 1024 * 1024 };
    mock_broker_set_max_message_size(mb, 2 * BIG);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "batchingEnabled", "false", NULL);
    uint8_t *buf = malloc(BIG);
    cr_assert_not_null(buf);
    size_t lens[N];
    for (int i = 0; i < N; i++) {
        lens[i] = i % 2 ? BIG - (size_t)i : 100 + (size_t)i; /* small and large in turn */
        fill_pattern(buf, lens[i], i);
        pulsarc_message_t *m = pulsarc_message_new();
        cr_assert_eq(pulsarc_message_set_payload(m, buf, lens[i]), PULSARC_OK);
        T.slots[i].idx = i;
        pulsarc_result r = pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[i]);
        pulsarc_message_free(m);
        cr_assert_eq(r, PULSARC_OK, "send %d: %s", i, pulsarc_result_name(r));
    }
    cr_assert(h_wait_calls(N, h_deadline_ms(20000)), "%d of %d callbacks", h_total(), N);
    h_assert_each_once(N, PULSARC_OK);
    h_assert_order(N);
    for (int i = 0; i < N; i++) {
        mock_send_t s;
        cr_assert(mock_broker_get_send(mb, (size_t)i, &s));
        cr_assert(s.has_payload && s.checksum_ok, "frame %d arrived damaged", i);
        cr_assert_eq(s.sequence_id, (uint64_t)i);
        cr_assert_eq(s.payload_len, lens[i], "frame %d: %zu bytes", i, s.payload_len);
        fill_pattern(buf, lens[i], i);
        cr_assert(memcmp(s.payload, buf, lens[i]) == 0, "frame %d's payload differs", i);
        mock_send_free(&s);
    }
    free(buf);
    h_finish();
}
