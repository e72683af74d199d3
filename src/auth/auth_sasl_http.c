/* The broker's SASL (Kerberos) exchange over HTTP, as Pulsar's Java client speaks it
 * (AuthenticationSasl.authenticationStage / newRequestHeader) and the broker's
 * AuthenticationProviderSasl.authenticateHttpRequest answers it:
 *
 *   client                                           broker
 *   SASL-Type: Kerberos, State: Init,
 *   SASL-Token: base64(first GSSAPI token)   --->
 *                                            <---    401, State: ING, SASL-Server-ID: <id>,
 *                                                    SASL-Token: base64(its token)
 *   State: ING, SASL-Server-ID: <id>,
 *   SASL-Token: base64(the answer)           --->    ... until its SaslServer is done:
 *                                            <---    200, State: Done, SASL-Server-ID,
 *                                                    SaslAuthRoleToken: <signed role token>
 *   State: Done, SaslAuthRoleToken: <token>  --->    the request itself, with that role
 *
 * The role token ("u=<role>&i=<id>&e=<expiry ms>&s=<signature>", valid an hour) is kept
 * per web service host and port until shortly before the expiry it states, so later
 * requests go at once with it; a broker that no longer takes it answers 401, State:
 * SaslAuthRoleTokenExpired, and the exchange runs again (once per request). The Java
 * client asks first whether its token still holds (State: ServerCheckToken, answered 200
 * Done) before each request; pulsarc sends the request with the token straight away and
 * reads the 401 instead, which saves a round trip per request and ends the same way.
 *
 * The GSSAPI side is the binary protocol's (auth_sasl.c, through the session calls of
 * auth.h), with a security context of its own per exchange. Every answer header is
 * untrusted (pc_sasl_http_read); tokens are wiped and never logged nor quoted in a
 * detail. @locality loop thread. */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/auth_sasl.h"
#include "common/clock.h"
#include "common/error.h"

/* Answers with a broker token per exchange before it must be done: Kerberos with mutual
 * authentication needs three (its reply, the security-layer offer, the completion). */
#define ROUNDS_MAX 8
/* Exchanges per request: the first, and one more when the broker refuses a role token. */
#define EXCHANGES_MAX 2
/* Web service hosts whose role tokens are kept. */
#define HOSTS_MAX 32
/* How long the broker's role tokens live (AuthenticationProviderSasl), and how long before
 * the expiry a token states it is dropped (a request in flight, clocks apart). */
#define ROLE_TOKEN_LIFE_MS 3600000u
#define EXPIRY_MARGIN_MS 60000u

/* The order of pc_sasl_http_reads. */
enum { R_STATE, R_TOKEN, R_SERVER_ID, R_ROLE_TOKEN };
const char *const pc_sasl_http_reads[] = { "State", "SASL-Token", "SASL-Server-ID",
                                           "SaslAuthRoleToken", NULL };

/* ---- reading an answer ---------------------------------------------------------------- */

/* A base64 digit's value, or -1. */
static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict base64, as java.util.Base64's encoder writes it: groups of four, padding only at
 * the end, and the bits the padding leaves over zero (one spelling per token). 0 with
 * *len set, or -1. */
static int b64_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
    size_t n = strlen(s);
    if (n % 4 != 0 || n / 4 * 3 > cap)
        return -1;
    size_t pad = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=' && i >= n - 2)
            pad++;
        else if (pad > 0 || b64_value(s[i]) < 0)
            return -1;
    }
    if (pad > 0 && (b64_value(s[n - pad - 1]) & (pad == 1 ? 0x3 : 0xf)) != 0)
        return -1;
    if (n == 0) {
        *len = 0;
        return 0;
    }
    int got = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
    if (got < 0 || (size_t)got < pad)
        return -1;
    *len = (size_t)got - pad;
    return 0;
}

/* What Long.parseLong takes (the broker's id is a Java long), without a sign but '-'. */
static bool decimal_long(const char *s)
{
    size_t n = strlen(s), i = s[0] == '-';
    if (n == i || n - i > 19)
        return false;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    errno = 0;
    (void)strtoll(s, NULL, 10);
    return errno != ERANGE;
}

static bool role_token_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PC_SASL_HTTP_ROLE_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            return false;
    return true;
}

static void malformed(pc_sasl_http_answer_t *out, const char *why)
{
    out->kind = PC_SASL_HTTP_MALFORMED;
    snprintf(out->why, sizeof out->why, "%s", why);
}

void pc_sasl_http_read(const pc_auth_http_reply_t *reply, pc_sasl_http_answer_t *out)
{
    out->kind = PC_SASL_HTTP_OTHER;
    out->token_len = 0;
    out->server_id = out->role_token = NULL;
    out->why[0] = '\0';
    static const char *const names[] = { "State", "SASL-Token", "SASL-Server-ID",
                                         "SaslAuthRoleToken" };
    for (int i = 0; i < 4; i++)
        if (reply->refused & (1u << i)) {
            char why[sizeof out->why];
            snprintf(why, sizeof why,
                     "its %s header is repeated, folded, too long or not printable text", names[i]);
            malformed(out, why);
            return;
        }
    const char *const *v = reply->values;
    const char *state = v[R_STATE];
    if (!state) {
        if (reply->status == 401)
            out->kind = PC_SASL_HTTP_REFUSED;
        return;
    }
    if (!strcasecmp(state, "ING")) {
        if (reply->status != 401)
            malformed(out, "State ING comes with a status other than 401");
        else if (!v[R_TOKEN] ||
                 b64_decode(v[R_TOKEN], out->token, sizeof out->token, &out->token_len) != 0)
            malformed(out, "State ING without a SASL-Token in base64");
        else if (!v[R_SERVER_ID] || !decimal_long(v[R_SERVER_ID]))
            malformed(out, "State ING without a decimal SASL-Server-ID");
        else {
            out->kind = PC_SASL_HTTP_CONTINUE;
            out->server_id = v[R_SERVER_ID];
        }
        if (out->kind != PC_SASL_HTTP_CONTINUE) {
            OPENSSL_cleanse(out->token, sizeof out->token);
            out->token_len = 0;
        }
    } else if (!strcasecmp(state, "Done")) {
        if (reply->status != 200)
            malformed(out, "State Done comes with a status other than 200");
        else if (!v[R_ROLE_TOKEN] || !role_token_ok(v[R_ROLE_TOKEN]))
            malformed(out, "State Done without a SaslAuthRoleToken");
        else {
            out->kind = PC_SASL_HTTP_DONE;
            out->role_token = v[R_ROLE_TOKEN];
        }
    } else if (!strcasecmp(state, "SaslAuthRoleTokenExpired")) {
        if (reply->status != 401)
            malformed(out, "State SaslAuthRoleTokenExpired comes with a status other than 401");
        else
            out->kind = PC_SASL_HTTP_EXPIRED;
    } else {
        malformed(out, "its State is none of ING, Done, SaslAuthRoleTokenExpired");
    }
}

uint64_t pc_sasl_role_token_expiry(const char *token)
{
    for (const char *p = token; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (p[0] != 'e' || p[1] != '=')
            continue;
        uint64_t e = 0;
        const char *d = p + 2;
        int digits = 0;
        for (; *d >= '0' && *d <= '9' && digits < 19; d++, digits++)
            e = e * 10 + (uint64_t)(*d - '0');
        return digits > 0 && (*d == '&' || *d == '\0') ? e : 0;
    }
    return 0;
}

/* ---- the role tokens, per host -------------------------------------------------------- */

typedef struct role_token {
    char host[256];
    int port;
    char *token;       /* NULL: a free slot */
    uint64_t until_ms; /* on the runtime's monotonic clock */
} role_token_t;

struct pc_sasl_tokens {
    role_token_t slot[HOSTS_MAX];
};

static void slot_clear(role_token_t *t)
{
    pc_auth_secret_free(t->token);
    t->token = NULL;
}

void pc_sasl_tokens_free(pc_sasl_tokens_t *ts)
{
    if (!ts)
        return;
    for (int i = 0; i < HOSTS_MAX; i++)
        slot_clear(&ts->slot[i]);
    free(ts);
}

static role_token_t *slot_of(pc_sasl_tokens_t *ts, const char *host, int port)
{
    for (int i = 0; ts && i < HOSTS_MAX; i++)
        if (ts->slot[i].token && ts->slot[i].port == port && !strcasecmp(ts->slot[i].host, host))
            return &ts->slot[i];
    return NULL;
}

/* host:port's token while it lasts (dropped once it does not), or NULL. */
static const char *token_for(pc_auth_t *a, const char *host, int port, uint64_t now_ms)
{
    role_token_t *t = slot_of(*pc_sasl_tokens_of(a), host, port);
    if (t && now_ms >= t->until_ms)
        slot_clear(t);
    return t && t->token ? t->token : NULL;
}

static void token_drop(pc_auth_t *a, const char *host, int port)
{
    role_token_t *t = slot_of(*pc_sasl_tokens_of(a), host, port);
    if (t)
        slot_clear(t);
}

/* How long to keep a token: until the margin before the expiry it states (read on the
 * wall clock, as the broker wrote it), at most the broker's hour, and the hour when it
 * states none readable or one already past here (the broker's clock decides; it says
 * when the token no longer holds). */
static uint64_t keep_ms(const char *token)
{
    uint64_t e = pc_sasl_role_token_expiry(token), wall = pc_wall_ms();
    uint64_t life = e > wall ? e - wall : ROLE_TOKEN_LIFE_MS;
    if (life > ROLE_TOKEN_LIFE_MS)
        life = ROLE_TOKEN_LIFE_MS;
    return life > EXPIRY_MARGIN_MS ? life - EXPIRY_MARGIN_MS : 0;
}

/* Keep host:port's token (replacing the one there; with every slot taken, the one that
 * ends first). Out of memory only costs the next request an exchange. */
static void token_keep(pc_auth_t *a, const char *host, int port, const char *token, uint64_t now_ms)
{
    uint64_t keep = keep_ms(token);
    pc_sasl_tokens_t **ts = pc_sasl_tokens_of(a);
    if (keep == 0 || (!*ts && !(*ts = calloc(1, sizeof **ts))))
        return;
    role_token_t *t = slot_of(*ts, host, port);
    for (int i = 0; !t && i < HOSTS_MAX; i++)
        if (!(*ts)->slot[i].token)
            t = &(*ts)->slot[i];
    if (!t) {
        t = &(*ts)->slot[0];
        for (int i = 1; i < HOSTS_MAX; i++)
            if ((*ts)->slot[i].until_ms < t->until_ms)
                t = &(*ts)->slot[i];
    }
    slot_clear(t);
    if (!(t->token = strdup(token)))
        return;
    snprintf(t->host, sizeof t->host, "%s", host);
    t->port = port;
    t->until_ms = now_ms + keep;
}

/* ---- one request's exchange ------------------------------------------------------------ */

struct pc_auth_http_xchg {
    char host[256];
    int port;
    pc_auth_session_t *session; /* the GSSAPI context of the exchange under way */
    int rounds;                 /* broker tokens answered in it */
    int exchanges;              /* exchanges begun for this request */
    bool carries_token;         /* the request went with a role token */
};

static pulsarc_result no_memory(void)
{
    return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

/* The lines of an exchange round: state, the server's id (after the first), the token. */
static pulsarc_result round_lines(const char *state, const char *server_id,
                                  const pc_auth_data_t *token, pc_auth_data_t *lines)
{
    char head[128];
    int n = snprintf(head, sizeof head,
                     "SASL-Type: Kerberos\r\nState: %s\r\n%s%s%sSASL-Token: ", state,
                     server_id ? "SASL-Server-ID: " : "", server_id ? server_id : "",
                     server_id ? "\r\n" : "");
    if (n < 0 || (size_t)n >= sizeof head)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "sasl: the exchange's header is too long");
    size_t enc = 4 * ((token->len + 2) / 3);
    char *b64 = malloc(enc + 1);
    if (!b64)
        return no_memory();
    EVP_EncodeBlock((unsigned char *)b64, token->bytes, (int)token->len);
    b64[enc] = '\0';
    int rc = pc_auth_data_append(lines, head, (size_t)n);
    if (rc == 0)
        rc = pc_auth_data_append(lines, b64, enc);
    OPENSSL_cleanse(b64, enc);
    free(b64);
    return rc == 0 ? PULSARC_OK : no_memory();
}

/* The request itself, with the role token. */
static pulsarc_result request_lines(const char *role_token, pc_auth_data_t *lines)
{
    static const char head[] = "SASL-Type: Kerberos\r\nState: Done\r\nSaslAuthRoleToken: ";
    if (pc_auth_data_append(lines, head, sizeof head - 1) != 0 ||
        pc_auth_data_append(lines, role_token, strlen(role_token)) != 0)
        return no_memory();
    return PULSARC_OK;
}

/* A new exchange: a new security context and its first token (acquiring the credentials
 * first when needed; the KDC is asked for a service ticket when none is cached). */
static pulsarc_result start_exchange(pc_auth_t *a, pc_auth_http_xchg_t *x, pc_auth_data_t *lines)
{
    x->exchanges++;
    x->rounds = 0;
    x->carries_token = false;
    pc_auth_data_t token;
    pulsarc_result r = pc_auth_connect_data(a, x->host, &x->session, &token);
    if (r != PULSARC_OK)
        return r;
    r = round_lines("Init", NULL, &token, lines);
    pc_auth_data_free(&token);
    return r;
}

pulsarc_result pc_sasl_http_begin(pc_auth_t *a, const char *host, int port, uint64_t now_ms,
                                  pc_auth_http_xchg_t **out, pc_auth_data_t *lines)
{
    *out = NULL;
    size_t n = strlen(host);
    if (n >= sizeof((pc_auth_http_xchg_t *)0)->host)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "sasl: the host name %.64s... is too long", host);
    pc_auth_http_xchg_t *x = calloc(1, sizeof *x);
    if (!x)
        return no_memory();
    memcpy(x->host, host, n + 1);
    x->port = port;
    const char *token = token_for(a, host, port, now_ms);
    pulsarc_result r;
    if (token) {
        x->carries_token = true;
        r = request_lines(token, lines);
    } else {
        r = start_exchange(a, x, lines);
    }
    if (r != PULSARC_OK) {
        pc_auth_data_free(lines);
        pc_sasl_http_end(a, x);
        return r;
    }
    *out = x;
    return PULSARC_OK;
}

/* Answer the broker's token with the session's next one. */
static pulsarc_result next_round(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                 const pc_sasl_http_answer_t *ans, pc_auth_data_t *lines)
{
    if (++x->rounds > ROUNDS_MAX)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "sasl: the broker has not completed the exchange after %d rounds",
                       ROUNDS_MAX);
    pc_auth_data_t token;
    pulsarc_result r = pc_auth_connect_challenge(a, x->host, &x->session, ans->token,
                                                 ans->token_len, &token);
    if (r != PULSARC_OK)
        return r;
    r = round_lines("ING", ans->server_id, &token, lines);
    pc_auth_data_free(&token);
    return r;
}

static pulsarc_result exchange_step(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                    const pc_sasl_http_answer_t *ans, long status, uint64_t now_ms,
                                    int *again, pc_auth_data_t *lines)
{
    const char *me = pc_sasl_principal(a);
    switch (ans->kind) {
    case PC_SASL_HTTP_CONTINUE:
        *again = 1;
        return next_round(a, x, ans, lines);
    case PC_SASL_HTTP_DONE:
        pc_auth_session_end(a, &x->session);
        token_keep(a, x->host, x->port, ans->role_token, now_ms);
        x->carries_token = true;
        *again = 1;
        return request_lines(ans->role_token, lines);
    case PC_SASL_HTTP_OTHER: /* a broker that does not ask for SASL answered at once */
        pc_auth_session_end(a, &x->session);
        return PULSARC_OK;
    case PC_SASL_HTTP_REFUSED:
        return pc_fail(PULSARC_ERR_BROKER_AUTHENTICATION,
                       "sasl: the broker refused the authentication of %s (HTTP %ld in round "
                       "%d)",
                       me ? me : "the client", status, x->rounds + 1);
    case PC_SASL_HTTP_EXPIRED:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "sasl: the broker answered SaslAuthRoleTokenExpired to an exchange that "
                       "carried no role token");
    default:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "sasl: the broker's answer in round %d breaks the exchange: %s",
                       x->rounds + 1, ans->why);
    }
}

pulsarc_result pc_sasl_http_step(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                 const pc_auth_http_reply_t *reply, uint64_t now_ms, int *again,
                                 pc_auth_data_t *lines)
{
    *again = 0;
    pulsarc_result r;
    if (x->carries_token) {
        /* Any answer but 401 is the request's own; a 401 says the broker no longer takes
         * the token (expired, or signed with a key it no longer has). */
        if (reply->status != 401)
            return PULSARC_OK;
        token_drop(a, x->host, x->port);
        if (x->exchanges >= EXCHANGES_MAX)
            return pc_fail(PULSARC_ERR_BROKER_AUTHENTICATION,
                           "sasl: the broker refused the role token it had just handed out "
                           "(HTTP 401)");
        *again = 1;
        r = start_exchange(a, x, lines);
    } else {
        pc_sasl_http_answer_t *ans = malloc(sizeof *ans);
        if (!ans)
            return no_memory();
        pc_sasl_http_read(reply, ans);
        r = exchange_step(a, x, ans, reply->status, now_ms, again, lines);
        OPENSSL_cleanse(ans->token, ans->token_len);
        free(ans);
    }
    if (r != PULSARC_OK) {
        *again = 0;
        pc_auth_data_free(lines);
    }
    return r;
}

void pc_sasl_http_end(pc_auth_t *a, pc_auth_http_xchg_t *x)
{
    if (!x)
        return;
    pc_auth_session_end(a, &x->session);
    free(x);
}
