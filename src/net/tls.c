/* One connection's TLS session over memory: ciphertext in, plaintext out, and the other
 * way round; and the translation of OpenSSL's failures into named results.
 *
 * Ciphertext out goes through a BIO of our own (sink_*) that appends each record to a
 * growable buffer: OpenSSL's memory BIO would zero its buffer before every copy into it
 * and be copied out of once more, two passes over every byte sent. */
#include "net/tls.h"

#include <arpa/inet.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/tls_internal.h"

struct pc_tls_session {
    const pc_tls_ctx_t *ctx;
    SSL *ssl;
    BIO *in;              /* ciphertext from the peer, owned by ssl */
    BIO *out;             /* ciphertext for the peer (a sink BIO), owned by ssl */
    pc_tls_out_t own;     /* what the sink made while no caller's buffer was given */
    pc_tls_out_t *dst;    /* where the sink appends: &own, or pc_tls_write_to's out */
    bool out_of_memory;   /* the sink could not grow its buffer */
    SSL_SESSION *pending; /* TLS 1.2: the session the handshake made, until it passed */
    uint16_t port;
    bool cacheable; /* host fits in host[] whole: sessions may be kept and offered */
    bool established;
    bool cert_requested; /* the peer asked for a client certificate */
    pulsarc_result result;
    char host[PC_TLS_HOST_MAX];
    char detail[400];
};

static bool is_ip_literal(const char *host)
{
    unsigned char addr[16];
    return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

/* Called when the server sends a CertificateRequest: remembered so that a later
 * handshake_failure alert can be told apart from a cipher mismatch. */
static int on_cert_request(SSL *ssl, void *arg)
{
    ((pc_tls_session_t *)arg)->cert_requested = true;
    return 1;
}

/* The certificate must name the host we dialled: an IP literal is matched against the
 * certificate's IP addresses, a name against its DNS names. SNI is sent for names only
 * (RFC 6066 forbids literals), whether or not the name is checked. */
static int set_peer_name(pc_tls_session_t *s, const char *host)
{
    X509_VERIFY_PARAM *param = SSL_get0_param(s->ssl);
    if (is_ip_literal(host))
        return !s->ctx->verify_hostname || X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1;
    if (SSL_set_tlsext_host_name(s->ssl, host) != 1)
        return 0;
    if (!s->ctx->verify_hostname)
        return 1;
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return X509_VERIFY_PARAM_set1_host(param, host, 0) == 1;
}

/* ---- the sink BIO: ciphertext appended to a pc_tls_out_t ------------------------------ */

/* Room for need more bytes in out: doubled, at least 16 KiB (a record and its header). */
static bool out_reserve(pc_tls_out_t *out, size_t need)
{
    if (need <= out->cap - out->len)
        return true;
    if (need > SIZE_MAX / 2 - out->len)
        return false;
    size_t cap = out->cap ? out->cap * 2 : 16 * 1024 + 512;
    while (cap < out->len + need)
        cap *= 2;
    uint8_t *p = realloc(out->data, cap);
    if (!p)
        return false;
    out->data = p;
    out->cap = cap;
    return true;
}

static int sink_write(BIO *b, const char *data, size_t len, size_t *written)
{
    pc_tls_session_t *s = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (!out_reserve(s->dst, len)) {
        s->out_of_memory = true;
        return 0;
    }
    memcpy(s->dst->data + s->dst->len, data, len);
    s->dst->len += len;
    *written = len;
    return 1;
}

static long sink_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    pc_tls_session_t *s = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: /* OpenSSL flushes after each flight: nothing waits in here */
        return 1;
    case BIO_CTRL_WPENDING:
    case BIO_CTRL_PENDING:
        return s ? (long)s->own.len : 0;
    default:
        return 0;
    }
}

static int sink_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static BIO_METHOD *sink_method;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;

/* One method for the process; OpenSSL never frees it before exit. */
static void sink_method_make(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pulsarc TLS out");
    if (m && BIO_meth_set_write_ex(m, sink_write) == 1 && BIO_meth_set_ctrl(m, sink_ctrl) == 1 &&
        BIO_meth_set_create(m, sink_create) == 1)
        sink_method = m;
    else
        BIO_meth_free(m);
}

static BIO *sink_new(pc_tls_session_t *s)
{
    pthread_once(&sink_once, sink_method_make);
    BIO *b = sink_method ? BIO_new(sink_method) : NULL;
    if (b)
        BIO_set_data(b, s);
    return b;
}

/* Our client certificate is no longer valid. A resumed session carries the identity of
 * the handshake that made it, and a broker does not look at the certificate again on
 * resumption (a Pulsar broker was seen to accept an expired one that way): the connection
 * makes a full handshake instead, and the broker judges the certificate as it is now. */
static bool own_certificate_expired(const pc_tls_ctx_t *ctx)
{
    X509 *mine = SSL_CTX_get0_certificate(ctx->ssl_ctx);
    return mine && X509_cmp_current_time(X509_get0_notAfter(mine)) < 0;
}

pc_tls_session_t *pc_tls_session_new(pc_tls_ctx_t *ctx, const char *host, uint16_t port)
{
    pc_tls_session_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->port = port;
    s->cacheable = strlen(host) < sizeof s->host;
    s->dst = &s->own;
    snprintf(s->host, sizeof s->host, "%s", host);
    s->ssl = SSL_new(ctx->ssl_ctx);
    s->in = BIO_new(BIO_s_mem());
    s->out = sink_new(s);
    if (!s->ssl || !s->in || !s->out) {
        BIO_free(s->in);
        BIO_free(s->out);
        SSL_free(s->ssl);
        free(s);
        return NULL;
    }
    /* An empty input buffer means "wait for more", not end of stream. */
    BIO_set_mem_eof_return(s->in, -1);
    SSL_set_bio(s->ssl, s->in, s->out);
    SSL_set_connect_state(s->ssl);
    SSL_set_cert_cb(s->ssl, on_cert_request, s);
    SSL_set_app_data(s->ssl, s);
    if (!set_peer_name(s, host)) {
        pc_tls_session_free(s);
        return NULL;
    }
    /* The key includes the name as given, so a session is only ever offered to the host
     * name whose certificate check it passed (finish_handshake checks again). */
    SSL_SESSION *resume = ctx->cache && s->cacheable && !own_certificate_expired(ctx)
                              ? pc_tls_cache_take(ctx->cache, host, port)
                              : NULL;
    if (resume) {
        SSL_set_session(s->ssl, resume); /* takes its own reference; a refusal: full handshake */
        SSL_SESSION_free(resume);
    }
    return s;
}

/* ---- session resumption ------------------------------------------------------------ */

/* The session was made with the context's files as they are: after they changed
 * (pc_tls_ctx_refresh), what it learns would resume the identity it presented, not the
 * new one, and is not kept. */
static bool current(const pc_tls_session_t *s)
{
    return SSL_get_SSL_CTX(s->ssl) == s->ctx->ssl_ctx;
}

/* The cache holds copies: OpenSSL marks a connection's own session unresumable when the
 * connection is freed without a close_notify exchange, which is how a broker's connection
 * usually ends (the TLS 1.2 rule of old; TLS 1.1 and newer resume such sessions). */
int pc_tls_on_new_session(SSL *ssl, SSL_SESSION *session)
{
    pc_tls_session_t *s = SSL_get_app_data(ssl);
    if (!s || !s->ctx->cache || !s->cacheable || s->result != PULSARC_OK || !current(s))
        return 0;
    /* The broker chooses a ticket's size (up to 64 KiB) and how many it sends: a ticket
     * beyond what any broker needs is not kept, so the cache's bound in sessions is one
     * in memory too. */
    const unsigned char *ticket;
    size_t ticket_len;
    SSL_SESSION_get0_ticket(session, &ticket, &ticket_len);
    if (ticket_len > PC_TLS_TICKET_MAX)
        return 0;
    SSL_SESSION *copy = SSL_SESSION_dup(session);
    if (!copy)
        return 0; /* out of memory: this one is not kept */
    if (!s->established) {
        /* TLS 1.2 hands the session over inside the handshake, before our own checks
         * (finish_handshake) have run: it waits for them. */
        SSL_SESSION_free(s->pending);
        s->pending = copy;
    } else {
        /* TLS 1.3 tickets come after the handshake, which passed. */
        pc_tls_cache_put(s->ctx->cache, s->host, s->port, copy);
    }
    return 0; /* OpenSSL keeps what it holds of the original */
}

/* A resumed session brings the certificate of the handshake that made it, and OpenSSL
 * checks nothing again: that it names this host is checked here, so a session that
 * reached another host's connection (it should not: the cache is keyed by host) still
 * cannot stand in for that host's certificate. */
static bool resumed_peer_names_host(const pc_tls_session_t *s)
{
    X509 *peer = SSL_get0_peer_certificate(s->ssl);
    if (!peer)
        return false;
    if (is_ip_literal(s->host))
        return X509_check_ip_asc(peer, s->host, 0) == 1;
    return X509_check_host(peer, s->host, strlen(s->host), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS,
                           NULL) == 1;
}

/* The handshake passed: what it leaves to resume goes into the cache. A TLS 1.2 session
 * that was resumed may be resumed again (its ticket or id is the server's to renew). */
static void keep_session(pc_tls_session_t *s)
{
    if (!s->ctx->cache || !current(s))
        return;
    if (s->pending) {
        pc_tls_cache_put(s->ctx->cache, s->host, s->port, s->pending);
        s->pending = NULL;
    } else if (SSL_session_reused(s->ssl) && SSL_version(s->ssl) < TLS1_3_VERSION) {
        SSL_SESSION *again = SSL_SESSION_dup(SSL_get0_session(s->ssl));
        if (again)
            pc_tls_cache_put(s->ctx->cache, s->host, s->port, again);
    }
}

void pc_tls_session_free(pc_tls_session_t *s)
{
    if (!s)
        return;
    SSL_free(s->ssl); /* frees both BIOs */
    SSL_SESSION_free(s->pending);
    free(s->own.data);
    free(s);
}

static void fail(pc_tls_session_t *s, pulsarc_result r, const char *fmt, const char *arg)
{
    s->result = r;
    snprintf(s->detail, sizeof s->detail, fmt, s->host, arg);
}

/* Our check of the peer's certificate failed: which way. */
static void fail_verify(pc_tls_session_t *s, long v)
{
    const char *why = X509_verify_cert_error_string(v);
    switch (v) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        fail(s, PULSARC_ERR_TLS_HOSTNAME,
             "the certificate presented by %s is not issued for that "
             "name (%s); tlsEnableHostnameVerification=false skips "
             "this check",
             why);
        break;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
        fail(s, PULSARC_ERR_TLS_EXPIRED, "the certificate presented by %s is not valid now (%s)",
             why);
        break;
    default:
        fail(s, PULSARC_ERR_TLS_UNTRUSTED, "the certificate presented by %s is not trusted (%s)",
             why);
        break;
    }
}

/* The peer refused us with an alert, or the bytes were not TLS at all. */
static void fail_protocol(pc_tls_session_t *s, unsigned long e)
{
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    why = why ? why : "connection broken";
    switch (ERR_GET_LIB(e) == ERR_LIB_SSL ? ERR_GET_REASON(e) : 0) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
        fail(s, PULSARC_ERR_TLS_CLIENT_CERT,
             SSL_get_certificate(s->ssl)
                 ? "%s refused our client certificate (%s)"
                 : "%s requires a client certificate (%s); set tlsCertificateFilePath and "
                   "tlsKeyFilePath",
             why);
        break;
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
        if (s->cert_requested && !SSL_get_certificate(s->ssl))
            fail(s, PULSARC_ERR_TLS_CLIENT_CERT,
                 "%s requires a client certificate (%s); set "
                 "tlsCertificateFilePath and tlsKeyFilePath",
                 why);
        else
            fail(s, PULSARC_ERR_TLS_HANDSHAKE,
                 "TLS handshake with %s failed (%s): no common "
                 "cipher?",
                 why);
        break;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_HTTP_REQUEST:
        fail(s, PULSARC_ERR_TLS_HANDSHAKE, "%s does not speak TLS (%s): a plain-text port?", why);
        break;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
        fail(s, PULSARC_ERR_TLS_HANDSHAKE,
             "%s offers no TLS version we accept (%s); TLS 1.2 "
             "or newer is required",
             why);
        break;
    default:
        fail(s, PULSARC_ERR_TLS_HANDSHAKE, "TLS with %s failed: %s", why);
        break;
    }
}

/* Sort out why an SSL call failed, once: the first reason sticks. */
static void record_failure(pc_tls_session_t *s, int ssl_error)
{
    if (s->result != PULSARC_OK)
        return;
    long v = SSL_get_verify_result(s->ssl);
    if (s->out_of_memory)
        fail(s, PULSARC_ERR_NO_MEMORY, "no memory for TLS output to %s%s", "");
    else if (ssl_error == SSL_ERROR_ZERO_RETURN)
        fail(s, s->established ? PULSARC_ERR_CONNECTION_CLOSED : PULSARC_ERR_TLS_HANDSHAKE,
             "%s closed the TLS session%s", "");
    else if (s->ctx->verify_peer && v != X509_V_OK)
        fail_verify(s, v);
    else
        fail_protocol(s, ERR_peek_error());
    /* After the handshake only a refusal of our certificate (TLS 1.3 sends it then) says
     * something about the set-up; anything else is a broken stream, not a handshake
     * failure: the connection is simply gone and will be made again. */
    if (s->established && s->result != PULSARC_ERR_TLS_CLIENT_CERT &&
        s->result != PULSARC_ERR_CONNECTION_CLOSED) {
        char why[128];
        memcpy(why, s->detail, sizeof why - 1);
        why[sizeof why - 1] = '\0';
        s->result = PULSARC_ERR_CONNECTION_CLOSED;
        /* Cut long names rather than the sentence (precision from a variable: the compiler
         * cannot bound it, and a cut detail is still a detail). */
        int cap = (int)(sizeof s->detail / 3);
        snprintf(s->detail, sizeof s->detail, "TLS with %.*s broke after the handshake (%.*s)", cap,
                 s->host, cap, why);
    }
    ERR_clear_error();
}

/* Belt and braces: the handshake only counts when a certificate was presented and
 * verified, whatever OpenSSL's verify mode did. */
static pc_tls_status_t finish_handshake(pc_tls_session_t *s)
{
    if (s->ctx->verify_peer) {
        long v = SSL_get_verify_result(s->ssl);
        if (!SSL_get0_peer_certificate(s->ssl)) {
            fail(s, PULSARC_ERR_TLS_UNTRUSTED, "%s presented no certificate%s", "");
            return PC_TLS_FAILED;
        }
        if (v != X509_V_OK) {
            fail_verify(s, v);
            return PC_TLS_FAILED;
        }
        if (s->ctx->verify_hostname && SSL_session_reused(s->ssl) && !resumed_peer_names_host(s)) {
            fail(s, PULSARC_ERR_TLS_HOSTNAME,
                 "the session resumed with %s was made with a certificate not issued for that "
                 "name%s; tlsEnableHostnameVerification=false skips this check",
                 "");
            return PC_TLS_FAILED;
        }
    }
    s->established = true;
    keep_session(s);
    return PC_TLS_DONE;
}

pc_tls_status_t pc_tls_handshake(pc_tls_session_t *s)
{
    if (s->result != PULSARC_OK)
        return PC_TLS_FAILED;
    if (s->established)
        return PC_TLS_DONE;
    ERR_clear_error();
    int rc = SSL_do_handshake(s->ssl);
    if (rc == 1)
        return finish_handshake(s);
    int err = SSL_get_error(s->ssl, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
        return PC_TLS_WANT_MORE;
    record_failure(s, err);
    return PC_TLS_FAILED;
}

bool pc_tls_established(const pc_tls_session_t *s)
{
    return s->established;
}

bool pc_tls_resumed(const pc_tls_session_t *s)
{
    return s->established && SSL_session_reused(s->ssl);
}

int pc_tls_feed(pc_tls_session_t *s, const uint8_t *data, size_t len)
{
    while (len > 0) {
        int chunk = len > INT_MAX ? INT_MAX : (int)len;
        int n = BIO_write(s->in, data, chunk);
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

long pc_tls_read(pc_tls_session_t *s, uint8_t *out, size_t cap)
{
    if (s->result != PULSARC_OK)
        return -1;
    ERR_clear_error();
    int n = SSL_read(s->ssl, out, cap > INT_MAX ? INT_MAX : (int)cap);
    if (n > 0)
        return n;
    int err = SSL_get_error(s->ssl, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
        return 0;
    record_failure(s, err);
    return -1;
}

int pc_tls_write(pc_tls_session_t *s, const uint8_t *data, size_t len)
{
    if (s->result != PULSARC_OK || !s->established)
        return -1;
    ERR_clear_error();
    while (len > 0) {
        /* The sink takes everything: SSL_write completes or fails, never half. */
        int chunk = len > INT_MAX ? INT_MAX : (int)len;
        int n = SSL_write(s->ssl, data, chunk);
        if (n <= 0) {
            record_failure(s, SSL_get_error(s->ssl, n));
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int pc_tls_write_to(pc_tls_session_t *s, const uint8_t *data, size_t len, pc_tls_out_t *out)
{
    /* What the session made before (an answer to the peer's key update, say) goes first:
     * records must leave in the order they were made. */
    if (s->own.len > 0) {
        if (!out_reserve(out, s->own.len)) {
            s->out_of_memory = true;
            record_failure(s, SSL_ERROR_SSL);
            return -1;
        }
        memcpy(out->data + out->len, s->own.data, s->own.len);
        out->len += s->own.len;
        s->own.len = 0;
    }
    s->dst = out;
    int rc = pc_tls_write(s, data, len);
    s->dst = &s->own;
    return rc;
}

uint8_t *pc_tls_take_output(pc_tls_session_t *s, size_t *len)
{
    *len = s->own.len;
    if (s->own.len == 0)
        return NULL;
    uint8_t *buf = s->own.data;
    s->own = (pc_tls_out_t){ 0 };
    return buf;
}

void pc_tls_fail_eof(pc_tls_session_t *s)
{
    if (s->result != PULSARC_OK)
        return;
    if (s->established)
        fail(s, PULSARC_ERR_CONNECTION_CLOSED, "%s closed the connection%s", "");
    else
        fail(s, PULSARC_ERR_TLS_HANDSHAKE,
             "%s closed the connection during the TLS handshake%s"
             " (not a TLS port, or it refused us)",
             "");
}

pulsarc_result pc_tls_result(const pc_tls_session_t *s)
{
    return s->result;
}
const char *pc_tls_detail(const pc_tls_session_t *s)
{
    return s->detail;
}
