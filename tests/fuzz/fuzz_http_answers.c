/* libFuzzer target for what HTTP servers answer: the HTTP lookup and partition metadata
 * (net/lookup_http.c, pc_http_lookup_judge), the OAuth2 issuer's discovery document
 * and token endpoint (auth/auth_oauth2.c, through its HTTP table), and the answer
 * headers of the broker's SASL exchange (net/http_kept.c, pc_http_keep_line, then
 * auth/auth_sasl_http.c, pc_sasl_http_read).
 *
 * Input: the first byte picks what is fuzzed.
 *   0, 1, 2  a lookup answer (plain, https service URL) or a partition-metadata answer:
 *            2 bytes of HTTP status (big-endian, modulo 600), then the body.
 *   3        an OAuth2 session: three rounds of "the connection wants a token" (the fake
 *            clock moves 10 min between them); each request the provider makes is
 *            answered by the next record of the input:
 *              1 byte   0 = an HTTP answer, else the request failed (no answer)
 *              2 bytes  status (big-endian, modulo 600)
 *              2 bytes  body length (big-endian), then that many body bytes
 *            When the input runs out, the request fails.
 *   4        a SASL answer: 2 bytes of HTTP status (big-endian, modulo 600), then the
 *            header block as the server sends it (lines split after each "\n", each
 *            handed over as curl hands it, with its line end).
 *
 * Checked: no crash or leak (ASan); a lookup succeeds only on status 200 with a usable
 * broker (non-empty host, a port) or a partition count in range, and a failure always
 * has a detail; every wait for a token ends exactly once; the client secret never
 * appears in a detail; the secret is only ever posted to an https:// endpoint (the issuer
 * is https); a success leaves a non-empty token to send; a kept header value is
 * printable ASCII within its limit, and none is kept that was refused; a SASL answer
 * read as a continuation has status 401, a decimal server id and a token whose base64
 * is exactly what the server sent (strict decoding), one read as done has status 200
 * and a printable role token, and a malformed one says why. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "auth/auth.h"
#include "auth/auth_sasl.h"
#include "common/error.h"
#include "net/http.h"
#include "fuzz_check.h"
#include "net/lookup_http.h"

#define SECRET "Fuzz-Secret-7Q"

#define CHECK(cond, ...) FUZZ_CHECK("fuzz_http_answers", cond, __VA_ARGS__)

typedef struct input {
    const uint8_t *p;
    size_t left;
} input_t;

static unsigned take_u16(input_t *in)
{
    unsigned v = 0;
    for (int i = 0; i < 2; i++) {
        v = v << 8 | (in->left ? *in->p : 0);
        if (in->left) {
            in->p++;
            in->left--;
        }
    }
    return v;
}

/* A failure has a detail; with the secret configured (OAuth2), it never holds it. */
static void check_detail(pulsarc_result res, bool secret_in_play)
{
    const char *d = pulsarc_last_error_detail();
    CHECK(d && *d, "%s without a detail", pulsarc_result_name(res));
    CHECK(!secret_in_play || !strstr(d, SECRET), "the secret in a detail: %s", d);
}

/* ---- lookups ----------------------------------------------------------------------- */

static void fuzz_lookup(int mode, input_t *in)
{
    long status = (long)(take_u16(in) % 600);
    pc_http_lookup_query_t q = { .topic = "persistent://public/default/t",
                                 .via_host = "web.test",
                                 .via_port = 8080,
                                 .partitions = mode == 2,
                                 .tls = mode == 1 };
    pc_host_port_t broker;
    memset(&broker, 0, sizeof broker);
    int partitions = -1;
    pulsarc_result res = pc_http_lookup_judge(&q, status, (const char *)in->p, in->left, &broker,
                                              &partitions);
    if (res != PULSARC_OK) {
        check_detail(res, false);
        return;
    }
    CHECK(status == 200, "success on HTTP %ld", status);
    if (q.partitions) {
        CHECK(partitions >= 0 && partitions <= PC_MAX_PARTITIONS, "%d partitions", partitions);
    } else {
        CHECK(broker.host[0] != '\0' && memchr(broker.host, '\0', sizeof broker.host),
              "an empty or unterminated broker host");
        CHECK(broker.port > 0 && broker.port <= 65535, "port %d", broker.port);
    }
}

/* ---- OAuth2 ------------------------------------------------------------------------ */

static struct {
    input_t *in;
    pc_auth_http_done_cb done;
    void *ctx;
    int requests;
} fake;

static uint64_t fake_now_ms;
static uint64_t fake_now(const pc_clock_t *clock)
{
    (void)clock;
    return fake_now_ms;
}
static const pc_clock_t fake_clock = { fake_now };

static int fake_get(void *h, const char *url, uint64_t timeout_ms, pc_auth_http_done_cb done,
                    void *ctx)
{
    (void)h, (void)url, (void)timeout_ms;
    CHECK(!fake.done, "a second request while one is in flight");
    fake.done = done;
    fake.ctx = ctx;
    fake.requests++;
    return 0;
}

static int fake_post(void *h, const char *url, const char *form, uint64_t timeout_ms,
                     pc_auth_http_done_cb done, void *ctx)
{
    CHECK(!strncmp(url, "https://", 8) || !strstr(form, "client_secret"), "the secret posted to %s",
          url);
    return fake_get(h, url, timeout_ms, done, ctx);
}

static void end_request(pulsarc_result res, long status, const char *body, size_t len)
{
    if (res != PULSARC_OK) /* as net/http.c does; and no stale detail from another input */
        pc_set_detail("fake HTTP: the request failed");
    pc_auth_http_done_cb done = fake.done;
    fake.done = NULL;
    done(res, status, body, len, fake.ctx);
}

static void fake_release(void *h)
{
    (void)h;
    if (fake.done) /* as pc_http_free does: a cancelled request ends with a failure */
        end_request(PULSARC_ERR_ALREADY_CLOSED, 0, NULL, 0);
}

/* Answer the request in flight from the next record (or fail it). */
static void answer_next(void)
{
    input_t *in = fake.in;
    if (!in->left) {
        end_request(PULSARC_ERR_CONNECT_FAILED, 0, NULL, 0);
        return;
    }
    int failed = *in->p != 0;
    in->p++;
    in->left--;
    long status = (long)(take_u16(in) % 600);
    size_t len = take_u16(in);
    if (len > in->left)
        len = in->left;
    /* A copy of exactly len bytes, so ASan sees any read past the body. */
    char *body = malloc(len ? len : 1);
    CHECK(body, "out of memory");
    memcpy(body, in->p, len);
    in->p += len;
    in->left -= len;
    if (failed)
        end_request(PULSARC_ERR_CONNECT_FAILED, 0, NULL, 0);
    else
        end_request(PULSARC_OK, status, body, len);
    free(body);
}

typedef struct waiter {
    pc_auth_wait_t w;
    int calls;
    pulsarc_result res;
} waiter_t;

static void on_ready(pc_auth_wait_t *w, pulsarc_result res)
{
    waiter_t *x = w->ctx;
    x->calls++;
    x->res = res;
    if (res != PULSARC_OK)
        check_detail(res, true);
}

static void fuzz_oauth2(input_t *in)
{
    pc_auth_oauth2_params_t params = { .issuer_url = "https://issuer.test",
                                       .client_id = "fuzz-client",
                                       .client_secret = SECRET,
                                       .audience = "urn:pulsar:fuzz" };
    pc_auth_t *a = NULL;
    if (pc_auth_oauth2(&params, &a) != PULSARC_OK)
        return;
    memset(&fake, 0, sizeof fake);
    fake.in = in;
    fake_now_ms = 1000;
    pc_auth_http_t table = { fake_get, fake_post, fake_release, NULL, 5000 };
    pc_auth_use_http(a, &table);
    pc_auth_oauth2_set_clock(a, &fake_clock);
    for (int round = 0; round < 3; round++) {
        waiter_t w = { 0 };
        pc_auth_prepare(a, &w.w, on_ready, &w);
        /* Discovery and the token request: two requests a round at most. */
        for (int i = 0; fake.done && i < 4; i++)
            answer_next();
        CHECK(!fake.done, "still asking after 4 answers");
        CHECK(w.calls == 1, "a wait ended %d times", w.calls);
        if (w.res == PULSARC_OK) {
            pc_auth_data_t d;
            pulsarc_result r = pc_auth_initial_data(a, &d);
            CHECK(r == PULSARC_OK && d.len > 0, "ready, but no token: %s", pulsarc_result_name(r));
            pc_auth_data_free(&d);
        }
        fake_now_ms += 600000;
    }
    pc_auth_free(a);
    CHECK(!fake.done, "a request outlived the provider");
}

/* ---- SASL answer headers ---------------------------------------------------------- */

static bool printable(const char *v)
{
    for (; *v; v++)
        if ((*v < 0x20 && *v != '\t') || (unsigned char)*v > 0x7e)
            return false;
    return true;
}

static void fuzz_sasl(input_t *in)
{
    long status = (long)(take_u16(in) % 600);
    const char *const *names = pc_sasl_http_reads;
    pc_http_kept_t kept = { 0 };
    const uint8_t *p = in->p, *end = in->p + in->left;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        /* A copy of exactly the line, so ASan sees any read past it. */
        char *line = malloc(n);
        CHECK(line, "out of memory");
        memcpy(line, p, n);
        CHECK(pc_http_keep_line(&kept, names, line, n) == 0, "out of memory");
        free(line);
        p += n;
    }
    int count = 0;
    while (names[count])
        count++;
    for (int i = 0; i < PC_HTTP_KEEP_MAX; i++) {
        const char *v = kept.values[i];
        CHECK(i < count || !v, "a value kept for no name (%d)", i);
        CHECK(!v || !(kept.bad & (1u << i)), "header %d refused and kept", i);
        CHECK(!v || (strlen(v) <= PC_HTTP_KEPT_VALUE_MAX && printable(v)),
              "header %d kept as %zu bytes of not plain text", i, v ? strlen(v) : 0);
    }
    pc_auth_http_reply_t reply = { .status = status,
                                   .values = (const char *const *)kept.values,
                                   .refused = kept.bad };
    static pc_sasl_http_answer_t a;
    pc_sasl_http_read(&reply, &a);
    switch (a.kind) {
    case PC_SASL_HTTP_CONTINUE: {
        CHECK(status == 401, "a continuation on HTTP %ld", status);
        CHECK(a.server_id && *a.server_id, "a continuation without a server id");
        CHECK(a.token_len <= PC_SASL_HTTP_TOKEN_MAX, "a %zu-byte token", a.token_len);
        static char again[PC_SASL_HTTP_TOKEN_MAX / 3 * 4 + 8];
        EVP_EncodeBlock((unsigned char *)again, a.token, (int)a.token_len);
        CHECK(!strcmp(again, kept.values[1]), "the token decoded from loose base64");
        break;
    }
    case PC_SASL_HTTP_DONE:
        CHECK(status == 200, "done on HTTP %ld", status);
        CHECK(a.role_token && *a.role_token && printable(a.role_token) &&
                  strlen(a.role_token) <= PC_SASL_HTTP_ROLE_TOKEN_MAX,
              "a role token that is not plain text");
        (void)pc_sasl_role_token_expiry(a.role_token);
        break;
    case PC_SASL_HTTP_EXPIRED:
    case PC_SASL_HTTP_REFUSED:
        CHECK(status == 401, "kind %d on HTTP %ld", a.kind, status);
        break;
    case PC_SASL_HTTP_MALFORMED:
        CHECK(a.why[0], "malformed without saying why");
        CHECK(a.token_len == 0, "malformed with a token");
        break;
    default:
        CHECK(!kept.values[0], "another answer with a State");
        break;
    }
    pc_http_kept_clear(&kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    input_t in = { data + 1, size - 1 };
    int mode = data[0] % 5;
    if (mode < 3)
        fuzz_lookup(mode, &in);
    else if (mode == 3)
        fuzz_oauth2(&in);
    else
        fuzz_sasl(&in);
    return 0;
}
