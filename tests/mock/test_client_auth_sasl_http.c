/* authPlugin=sasl with an http:// service URL: partition metadata and lookups go through
 * the broker's SASL exchange in HTTP headers, against a web server on a thread of its own
 * (support/test_http_server.h) that plays AuthenticationProviderSasl's
 * authenticateHttpRequest with a real GSSAPI acceptor (sasl_peer.h, a KDC per test); the
 * producer then connects to the mock broker, which runs the binary exchange with an
 * acceptor of its own. Checked: the rounds (the Kerberos reply, the security-layer offer,
 * the choice) and the role token the lookups then carry, one exchange per client and host
 * while the token lasts, an expired token run again, a broker that never completes
 * stopped after a bounded number of rounds, malformed answers and a refusal failing by
 * name, and no token in the log or a detail. The real broker: tests/interop/
 * test_kerberos.py. */
#include <openssl/evp.h>
#include <pthread.h>
#include <strings.h>

#include "client_harness.h"
#include "common/clock.h"
#include "sasl_peer.h"
#include "test_http_server.h"

typedef enum {
    WEB_OK,         /* as the broker does */
    WEB_NEVER_DONE, /* after the Kerberos reply, every round gets another empty token */
    WEB_REFUSE,     /* the SaslServer refuses: 401 without SASL headers */
    WEB_NO_AUTH,    /* a web service without authentication: answers at once */
    WEB_MALFORMED,  /* the answer to Init is web.malformed, as it is */
} web_mode_t;

/* The web service. Written by the server's thread under mu; the test reads it with
 * web_read once the client is done. */
static struct web {
    pthread_mutex_t mu;
    web_mode_t mode;
    const char *malformed;
    size_t malformed_len;    /* 0: strlen */
    int partitions;          /* what partition metadata answers */
    char expired_token[400]; /* a role token that has expired */
    bool refuse_tokens;      /* every role token has expired as soon as it was handed out */
    sasl_peer_t peer;        /* the SaslServer of the exchange under way */
    char broker[128];        /* the lookup answer's brokerUrl */
    long server_id;          /* SASL-Server-ID of the exchange under way */
    int round;               /* its rounds so far */
    int most_rounds;         /* the most any exchange had */
    int inits;               /* exchanges begun (State: Init) */
    int exchanges;           /* exchanges completed (a role token handed out) */
    int expired;             /* answers SaslAuthRoleTokenExpired */
    int served;              /* requests passed on with a valid role token */
    bool empty_token;        /* a round carried an empty SASL-Token */
    char role_token[400];
    char problem[256]; /* the first thing the client did wrong */
    char buf[20000];   /* the answer being written */
} web = { .mu = PTHREAD_MUTEX_INITIALIZER };

static test_server_t server;
static sasl_peer_t bin_peer;

static void setup(void)
{
    kdc_start();
    h_setup();
    add_service_for_mock();
}

static void teardown(void)
{
    h_teardown();
    if (server.port)
        ts_stop(&server);
    kdc_stop();
}

TestSuite(client_auth_sasl_http, .init = setup, .fini = teardown, .timeout = H_SUITE_TIMEOUT(60));

static int web_read(const int *field)
{
    pthread_mutex_lock(&web.mu);
    int v = *field;
    pthread_mutex_unlock(&web.mu);
    return v;
}

static void problem(const char *what)
{
    if (!web.problem[0])
        snprintf(web.problem, sizeof web.problem, "%s", what);
}

/* The value of header `name` in the raw request (copied into out), or NULL. */
static const char *header_of(const char *req, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = strstr(req, "\r\n"); p && p[2] != '\r'; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, n) != 0 || line[n] != ':')
            continue;
        const char *v = line + n + 1;
        while (*v == ' ')
            v++;
        const char *end = strstr(v, "\r\n");
        size_t len = end ? (size_t)(end - v) : strlen(v);
        if (len >= cap)
            len = cap - 1;
        memcpy(out, v, len);
        out[len] = '\0';
        return out;
    }
    return NULL;
}

static const char *answer(size_t *len, int status, const char *headers, const char *body)
{
    int n = snprintf(web.buf, sizeof web.buf,
                     "HTTP/1.1 %d %s\r\n%sContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     status, status == 200 ? "OK" : "Unauthorized", headers, strlen(body), body);
    *len = (size_t)n;
    return web.buf;
}

/* What the admin API answers once authenticated. */
static const char *resource(const char *req, size_t *len)
{
    char body[256];
    if (strstr(req, "/partitions?"))
        snprintf(body, sizeof body, "{\"partitions\":%d}", web.partitions);
    else
        snprintf(body, sizeof body, "{\"brokerUrl\":\"%s\",\"brokerUrlTls\":\"\"}", web.broker);
    return answer(len, 200, "", body);
}

/* One round of the exchange: the client's token into the acceptor, its verdict out. */
static const char *exchange(const char *req, bool init, size_t *len)
{
    char token[8192], id[32];
    if (!header_of(req, "SASL-Token", token, sizeof token)) {
        problem("a request with neither a role token nor a SASL-Token");
        return answer(len, 401, "", "Authentication required");
    }
    if (init) {
        web.inits++;
        web.round = 0;
        web.server_id = 4242000 + web.inits;
    } else {
        char want[32];
        snprintf(want, sizeof want, "%ld", web.server_id);
        if (!header_of(req, "SASL-Server-ID", id, sizeof id) || strcmp(id, want) != 0)
            problem("a round without this exchange's SASL-Server-ID");
        web.round++;
    }
    if (web.round + 1 > web.most_rounds)
        web.most_rounds = web.round + 1;
    uint8_t in[6144], out[MOCK_AUTH_MAX];
    size_t tlen = strlen(token), in_len = 0, out_len = 0;
    int got = EVP_DecodeBlock(in, (const unsigned char *)token, (int)tlen);
    if (got < 0) {
        problem("a SASL-Token that is not base64");
        return answer(len, 401, "", "Authentication required");
    }
    in_len = (size_t)got - (tlen > 0 && token[tlen - 1] == '=') -
             (tlen > 1 && token[tlen - 2] == '=');
    if (in_len == 0)
        web.empty_token = true;
    char headers[12000];
    if (web.mode == WEB_NEVER_DONE && web.round >= 1) {
        snprintf(headers, sizeof headers,
                 "SASL-Type: Kerberos\r\nState: ING\r\nSASL-Server-ID: %ld\r\nSASL-Token: \r\n",
                 web.server_id);
        return answer(len, 401, headers, "SASL Authentication not complete.");
    }
    switch (sasl_peer_step(&web.peer, 0, web.round, in, in_len, out, &out_len)) {
    case MOCK_AUTH_CHALLENGE: {
        char b64[4 * (MOCK_AUTH_MAX / 3 + 1) + 1];
        EVP_EncodeBlock((unsigned char *)b64, out, (int)out_len);
        snprintf(headers, sizeof headers,
                 "SASL-Type: Kerberos\r\nState: ING\r\nSASL-Server-ID: %ld\r\nSASL-Token: %s\r\n",
                 web.server_id, b64);
        return answer(len, 401, headers, "SASL Authentication not complete.");
    }
    case MOCK_AUTH_DONE:
        web.exchanges++;
        snprintf(web.role_token, sizeof web.role_token,
                 "u=%s&i=%ld&e=%llu&s=mock+signature/%d==", web.peer.client, web.server_id,
                 (unsigned long long)(pc_wall_ms() + 3600000), web.exchanges);
        snprintf(headers, sizeof headers,
                 "SASL-Type: Kerberos\r\nState: Done\r\nSASL-Server-ID: %ld\r\n"
                 "SaslAuthRoleToken: %s\r\n",
                 web.server_id, web.role_token);
        return answer(len, 200, headers, "");
    default:
        return answer(len, 401, "", "Authentication required");
    }
}

static const char *respond_locked(const char *req, size_t *len)
{
    char state[64], type[64], role[512];
    if (web.mode == WEB_NO_AUTH)
        return resource(req, len);
    if (!header_of(req, "SASL-Type", type, sizeof type) || strcmp(type, "Kerberos") != 0)
        problem("a request without SASL-Type: Kerberos");
    const char *st = header_of(req, "State", state, sizeof state);
    if (header_of(req, "SaslAuthRoleToken", role, sizeof role)) {
        if (web.refuse_tokens || !strcmp(role, web.expired_token) ||
            strcmp(role, web.role_token) != 0) {
            web.expired++;
            return answer(len, 401, "SASL-Type: Kerberos\r\nState: SaslAuthRoleTokenExpired\r\n",
                          "Role token expired");
        }
        if (!st || strcmp(st, "Done") != 0)
            problem("a role token without State: Done");
        web.served++;
        return resource(req, len);
    }
    bool init = st && strcmp(st, "Init") == 0;
    if (!init && (!st || strcmp(st, "ING") != 0))
        problem("a round whose State is neither Init nor ING");
    if (init && web.mode == WEB_MALFORMED) {
        web.inits++;
        *len = web.malformed_len ? web.malformed_len : strlen(web.malformed);
        return web.malformed;
    }
    if (web.mode == WEB_REFUSE)
        web.peer.misbehave = REFUSE;
    return exchange(req, init, len);
}

static const char *respond(void *ctx, const char *req, size_t *len)
{
    (void)ctx;
    pthread_mutex_lock(&web.mu);
    const char *a = respond_locked(req, len);
    pthread_mutex_unlock(&web.mu);
    return a;
}

/* The web service in `mode`, and a client of it with the test realm's client keytab. */
static pulsarc_client_t *web_client(web_mode_t mode)
{
    web.mode = mode;
    snprintf(web.broker, sizeof web.broker, "%s", mock_broker_url(mb));
    if (web.peer.cred == GSS_C_NO_CREDENTIAL) { /* once per test: several clients share it */
        sasl_peer_acquire(&web.peer);
        sasl_peer_acquire(&bin_peer);
    }
    mock_broker_set_auth_server(mb, sasl_peer_step, &bin_peer);
    server.respond = respond;
    ts_start(&server);
    char url[64], params[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", server.port);
    snprintf(params, sizeof params,
             "{\"keytab\":\"%s/client.keytab\",\"principal\":\"client@PULSARC.TEST\"}", kdc_dir);
    return h_client_url(url, "authPlugin", "sasl", "authParams", params, "logLevel", "debug", NULL);
}

static void assert_nothing_secret_in_log(void)
{
    cr_assert(h_log_contains("DEBUG"), "no DEBUG lines were captured");
    cr_assert(!h_log_contains("keytab\":"), "authParams reached the log");
    cr_assert(!h_log_contains("mock+signature"), "a role token reached the log");
    cr_assert(!h_log_contains("SASL-Token"), "a SASL header reached the log");
    cr_assert_str_empty(web.problem, "the client: %s", web.problem);
}

/* Creating a producer fails with want and a detail holding needle, or (want2 not OK) with
 * want2 and needle2. */
static void expect_creation_fails_as(pulsarc_result want, const char *needle, pulsarc_result want2,
                                     const char *needle2)
{
    char detail[1024];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(client, H_TOPIC, h_producer_conf(0, NULL), detail,
                                        sizeof detail, &elapsed);
    bool first = r == want && strstr(detail, needle);
    bool second = want2 != PULSARC_OK && r == want2 && strstr(detail, needle2);
    cr_assert(first || second, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(!strstr(detail, "mock+signature") && !strstr(detail, "SASL-Token:"),
              "a token in the detail: %s", detail);
}

static void expect_creation_fails(pulsarc_result want, const char *needle)
{
    expect_creation_fails_as(want, needle, PULSARC_OK, NULL);
}

Test(client_auth_sasl_http, one_exchange_then_every_lookup_carries_the_role_token)
{
    web.partitions = 2;
    client = web_client(WEB_OK);
    producer = h_producer(client, H_TOPIC, NULL);
    /* Init, the answer to the Kerberos reply (empty), the answer to the offer. */
    cr_assert_eq(web_read(&web.inits), 1);
    cr_assert_eq(web_read(&web.exchanges), 1);
    cr_assert_eq(web_read(&web.most_rounds), 3, "%d rounds", web_read(&web.most_rounds));
    cr_assert(web.empty_token, "the answer to the Kerberos reply was not an empty SASL-Token");
    cr_assert_str_eq(web.peer.client, "client@PULSARC.TEST");
    cr_assert_str_eq(web.peer.authzid, "client@PULSARC.TEST");
    /* Partition metadata and a lookup per partition, each with the one role token. */
    cr_assert_eq(web_read(&web.served), 3, "%d", web_read(&web.served));
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    /* The binary exchange with the broker the lookup named: a context of its own. */
    cr_assert_eq(bin_peer.rounds, 3, "%d binary rounds", bin_peer.rounds);
    pulsarc_producer_free(producer);
    producer = NULL;

    /* Another topic: the kept token, no exchange. */
    web.partitions = 0;
    producer = h_producer(client, "persistent://public/default/another", NULL);
    cr_assert_eq(web_read(&web.inits), 1, "the exchange ran again");
    cr_assert_eq(web_read(&web.served), 5);
    assert_nothing_secret_in_log();
    h_finish();
}

Test(client_auth_sasl_http, expired_role_token_runs_the_exchange_again)
{
    client = web_client(WEB_OK);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(web_read(&web.exchanges), 1);
    pulsarc_producer_free(producer);
    producer = NULL;
    pthread_mutex_lock(&web.mu); /* the broker's hour is over */
    snprintf(web.expired_token, sizeof web.expired_token, "%s", web.role_token);
    pthread_mutex_unlock(&web.mu);
    /* The metadata request carries the old token, hears it expired, authenticates again
     * (a new token, which the broker takes), then goes through; the lookup after it
     * carries the new token. */
    producer = h_producer_ok(client, "persistent://public/default/after-expiry",
                             h_producer_conf(0, NULL));
    cr_assert_eq(web_read(&web.expired), 1);
    cr_assert_eq(web_read(&web.inits), 2);
    cr_assert_eq(web_read(&web.exchanges), 2);
    cr_assert_eq(web_read(&web.served), 4);
    assert_nothing_secret_in_log();
    h_finish();
}

/* Each token is refused as soon as it is handed out (a broker that cannot verify its own
 * signature). */
Test(client_auth_sasl_http, a_refused_fresh_token_is_not_retried_forever)
{
    web.refuse_tokens = true;
    client = web_client(WEB_OK);
    expect_creation_fails(PULSARC_ERR_BROKER_AUTHENTICATION,
                          "refused the role token it had just handed out");
    /* Two exchanges per request at most. */
    int inits = web_read(&web.inits), expired = web_read(&web.expired);
    cr_assert_eq(expired, inits, "%d expired answers for %d exchanges", expired, inits);
    cr_assert_eq(inits, 2, "%d exchanges", inits);
    h_finish();
}

Test(client_auth_sasl_http, a_broker_that_never_completes_is_stopped)
{
    client = web_client(WEB_NEVER_DONE);
    expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER,
                          "has not completed the exchange after 8 rounds");
    /* Init, then 8 rounds answered: the 9th answer ends it. */
    cr_assert_eq(web_read(&web.most_rounds), 9, "%d rounds", web_read(&web.most_rounds));
    cr_assert_eq(web_read(&web.exchanges), 0);
    assert_nothing_secret_in_log();
    h_finish();
}

Test(client_auth_sasl_http, refusal_is_broker_authentication)
{
    client = web_client(WEB_REFUSE);
    expect_creation_fails(PULSARC_ERR_BROKER_AUTHENTICATION,
                          "sasl: the broker refused the authentication of client@PULSARC.TEST "
                          "(HTTP 401 in round 1)");
    cr_assert_eq(web_read(&web.served), 0);
    h_finish();
}

Test(client_auth_sasl_http, a_web_service_without_authentication_answers_at_once)
{
    client = web_client(WEB_NO_AUTH);
    producer = h_producer(client, H_TOPIC, NULL);
    cr_assert_eq(h_send_sync(producer, 0), PULSARC_OK, "%s", pulsarc_last_error_detail());
    h_finish();
}

/* Answers to Init that break the exchange's rules, each failing the lookup by name. */
#define ING_HEAD "HTTP/1.1 401 Unauthorized\r\nSASL-Type: Kerberos\r\n"
#define TAIL "Content-Length: 0\r\nConnection: close\r\n\r\n"
static const struct bad_answer {
    const char *answer;
    const char *why;
} bad_answers[] = {
    { ING_HEAD "State: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: not*base64!\r\n" TAIL,
      "State ING without a SASL-Token in base64" },
    { ING_HEAD "State: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: YWJj=\r\n" TAIL,
      "State ING without a SASL-Token in base64" },
    { ING_HEAD "State: ING\r\nSASL-Token: YWJj\r\n" TAIL,
      "State ING without a decimal SASL-Server-ID" },
    { ING_HEAD "State: ING\r\nSASL-Server-ID: 7\r\nX-Injected: 1\r\nSASL-Token: YWJj\r\n" TAIL,
      NULL /* valid framing, garbage token: GSSAPI's words */ },
    { ING_HEAD "State: ING\r\nSASL-Server-ID: 7; rm\r\nSASL-Token: YWJj\r\n" TAIL,
      "State ING without a decimal SASL-Server-ID" },
    { ING_HEAD "State: ING\r\nState: Done\r\nSASL-Server-ID: 7\r\nSASL-Token: YWJj\r\n" TAIL,
      "its State header is repeated" },
    { ING_HEAD "State: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: YW\r\n Jj\r\n" TAIL,
      "its SASL-Token header is repeated, folded" },
    { ING_HEAD "State: Maybe\r\n" TAIL, "its State is none of ING, Done" },
    { "HTTP/1.1 200 OK\r\nState: Done\r\nSASL-Server-ID: 7\r\n" TAIL,
      "State Done without a SaslAuthRoleToken" },
    { "HTTP/1.1 200 OK\r\nState: Done\r\nSaslAuthRoleToken: u=a\x01&e=1\r\n" TAIL,
      "its SaslAuthRoleToken header is repeated, folded, too long or not printable" },
    { "HTTP/1.1 200 OK\r\nState: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: YWJj\r\n" TAIL,
      "State ING comes with a status other than 401" },
    { ING_HEAD "State: SaslAuthRoleTokenExpired\r\n" TAIL,
      "answered SaslAuthRoleTokenExpired to an exchange that carried no role token" },
};

Test(client_auth_sasl_http, malformed_answers_fail_by_name)
{
    for (size_t i = 0; i < sizeof bad_answers / sizeof bad_answers[0]; i++) {
        web.malformed = bad_answers[i].answer;
        client = web_client(WEB_MALFORMED);
        expect_creation_fails(PULSARC_ERR_AUTH_PROVIDER,
                              bad_answers[i].why ? bad_answers[i].why
                                                 : "sasl: gss_init_sec_context for "
                                                   "broker/127.0.0.1@PULSARC.TEST failed");
        cr_assert_eq(web_read(&web.served), 0, "case %zu", i);
        pulsarc_client_destroy(client);
        client = NULL;
        ts_stop(&server);
        server.port = 0;
    }
    /* A NUL inside a value (the bytes after it must not pass for the value: curl 7.88 fails
     * the transfer itself, pc_http_keep_line would refuse the header), then a value over
     * the HTTP client's limit. */
    static const char nul[] = ING_HEAD
        "State: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: YW\0Jj\r\n" TAIL;
    static char big[12000];
    int n = snprintf(big, sizeof big, ING_HEAD "State: ING\r\nSASL-Server-ID: 7\r\nSASL-Token: ");
    memset(big + n, 'A', 9000);
    snprintf(big + n + 9000, sizeof big - (size_t)n - 9000, "\r\n" TAIL);
    const struct {
        const char *answer;
        size_t len;
    } raw[] = { { nul, sizeof nul - 1 }, { big, 0 } };
    for (size_t i = 0; i < 2; i++) {
        web.malformed = raw[i].answer;
        web.malformed_len = raw[i].len;
        client = web_client(WEB_MALFORMED);
        expect_creation_fails_as(PULSARC_ERR_AUTH_PROVIDER,
                                 "its SASL-Token header is repeated, folded, too long or not "
                                 "printable",
                                 PULSARC_ERR_PROTOCOL, "Nul byte in header");
        pulsarc_client_destroy(client);
        client = NULL;
        ts_stop(&server);
        server.port = 0;
    }
    h_finish();
}
