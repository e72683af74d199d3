/* One connection's TLS session over memory BIOs: ciphertext in, plaintext out, and the
 * other way round; and the translation of OpenSSL's failures into named results. */
#include "net/tls.h"

#include <arpa/inet.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/tls_internal.h"

struct pc_tls_session {
    const pc_tls_ctx_t *ctx;
    SSL *ssl;
    BIO *in;  /* ciphertext from the peer, owned by ssl */
    BIO *out; /* ciphertext for the peer, owned by ssl */
    bool established;
    bool cert_requested; /* the peer asked for a client certificate */
    pulsarc_result result;
    char host[256];
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

pc_tls_session_t *pc_tls_session_new(pc_tls_ctx_t *ctx, const char *host)
{
    pc_tls_session_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    snprintf(s->host, sizeof s->host, "%s", host);
    s->ssl = SSL_new(ctx->ssl_ctx);
    s->in = BIO_new(BIO_s_mem());
    s->out = BIO_new(BIO_s_mem());
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
    if (!set_peer_name(s, host)) {
        pc_tls_session_free(s);
        return NULL;
    }
    return s;
}

void pc_tls_session_free(pc_tls_session_t *s)
{
    if (!s)
        return;
    SSL_free(s->ssl); /* frees both BIOs */
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
    if (ssl_error == SSL_ERROR_ZERO_RETURN)
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
    }
    s->established = true;
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
        /* A memory BIO takes everything: SSL_write completes or fails, never half. */
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

uint8_t *pc_tls_take_output(pc_tls_session_t *s, size_t *len)
{
    *len = 0;
    size_t pending = BIO_ctrl_pending(s->out);
    if (pending == 0)
        return NULL;
    uint8_t *buf = malloc(pending);
    if (!buf) {
        if (s->result == PULSARC_OK)
            fail(s, PULSARC_ERR_NO_MEMORY, "no memory for TLS output to %s%s", "");
        return NULL;
    }
    int n = BIO_read(s->out, buf, pending > INT_MAX ? INT_MAX : (int)pending);
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
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
