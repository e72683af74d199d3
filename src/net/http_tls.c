/* HTTPS for pc_http: verification as on the binary protocol (the configured CAs only,
 * certificates and host names checked unless the settings say otherwise), the client
 * certificate, and tlsProtocols / tlsCiphers applied to curl's OpenSSL context by the
 * same code as the binary protocol's (tls_context.c), so both read them alike. */
#include "net/http_tls.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "net/curl_lib.h"
#include "net/tls_internal.h"

#define SETOPT(rc, e, opt, val)                            \
    do {                                                   \
        if ((rc) == CURLE_OK)                              \
            (rc) = pc_curl.easy_setopt((e), (opt), (val)); \
    } while (0)

static void blob_of(struct curl_blob *b, char *pem)
{
    *b = (struct curl_blob){ .data = pem, .len = pem ? strlen(pem) : 0, .flags = CURL_BLOB_NOCOPY };
}

/* curl calls this with the OpenSSL context of each new connection, after its own set-up:
 * the restrictions replace curl's protocol range and cipher lists. */
static CURLcode on_ssl_ctx(CURL *e, void *ssl_ctx, void *ud)
{
    (void)e;
    pc_http_tls_use_t *use = ud;
    SSL_CTX *ctx = ssl_ctx;
    /* As on the binary protocol: no renegotiation, nothing below TLS 1.2. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (pc_tls_restrict(ctx, use->conf->protocols, use->conf->ciphers) == PULSARC_OK)
        return CURLE_OK;
    use->restrict_failed = true;
    snprintf(use->detail, sizeof use->detail, "%s", pulsarc_last_error_detail());
    return CURLE_SSL_CIPHER;
}

CURLcode pc_http_tls_setopt(CURL *e, pc_http_tls_use_t *use)
{
    pc_http_tls_conf_t *c = use->conf;
    blob_of(&c->trust_blob, c->trust_pem);
    blob_of(&c->cert_blob, c->cert_pem);
    blob_of(&c->key_blob, c->key_pem);
    CURLcode rc = CURLE_OK;
    SETOPT(rc, e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    SETOPT(rc, e, CURLOPT_SSL_VERIFYPEER, c->allow_insecure ? 0L : 1L);
    SETOPT(rc, e, CURLOPT_SSL_VERIFYHOST, c->allow_insecure || !c->verify_hostname ? 0L : 2L);
    SETOPT(rc, e, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx);
    SETOPT(rc, e, CURLOPT_SSL_CTX_DATA, (void *)use);
    /* The configured CAs only: curl's default CA directory would otherwise widen them. */
    if (c->trust_pem || c->trust_file) {
        SETOPT(rc, e, CURLOPT_CAPATH, (char *)NULL);
        if (c->trust_pem) {
            SETOPT(rc, e, CURLOPT_CAINFO, (char *)NULL);
            SETOPT(rc, e, CURLOPT_CAINFO_BLOB, &c->trust_blob);
        } else {
            SETOPT(rc, e, CURLOPT_CAINFO, c->trust_file);
        }
    }
    if (c->cert_pem) {
        SETOPT(rc, e, CURLOPT_SSLCERTTYPE, "PEM");
        SETOPT(rc, e, CURLOPT_SSLCERT_BLOB, &c->cert_blob);
    } else if (c->cert_file) {
        SETOPT(rc, e, CURLOPT_SSLCERT, c->cert_file);
    }
    if (c->key_pem) {
        SETOPT(rc, e, CURLOPT_SSLKEYTYPE, "PEM");
        SETOPT(rc, e, CURLOPT_SSLKEY_BLOB, &c->key_blob);
    } else if (c->key_file) {
        SETOPT(rc, e, CURLOPT_SSLKEY, c->key_file);
    }
    return rc;
}

/* ---- curl errors to results -------------------------------------------------------- */

/* CURLE_PEER_FAILED_VERIFICATION covers both the chain and the host name. OpenSSL's
 * verify result tells them apart: curl checks the host name itself after a chain that
 * verified (result X509_V_OK); the error text is the fallback. */
static pulsarc_result verification_result(CURL *e, const char *errbuf)
{
    long vr = X509_V_OK;
    pc_curl.easy_getinfo(e, CURLINFO_SSL_VERIFYRESULT, &vr);
    if (vr == X509_V_ERR_CERT_HAS_EXPIRED || vr == X509_V_ERR_CERT_NOT_YET_VALID)
        return PULSARC_ERR_TLS_EXPIRED;
    if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH ||
        strstr(errbuf, "host name") || strstr(errbuf, "subject name"))
        return PULSARC_ERR_TLS_HOSTNAME;
    if (vr == X509_V_OK && errbuf[0] == '\0')
        return PULSARC_ERR_TLS_HOSTNAME;
    if (strstr(errbuf, "expired"))
        return PULSARC_ERR_TLS_EXPIRED;
    return PULSARC_ERR_TLS_UNTRUSTED;
}

pulsarc_result pc_http_curl_result(CURL *e, CURLcode rc, const char *errbuf)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
        return PULSARC_ERR_CONNECT_FAILED;
    case CURLE_OPERATION_TIMEDOUT:
        return PULSARC_ERR_TIMEOUT;
    case CURLE_PEER_FAILED_VERIFICATION:
        return verification_result(e, errbuf);
    case CURLE_SSL_CLIENTCERT:
        return PULSARC_ERR_TLS_CLIENT_CERT;
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
        return PULSARC_ERR_TLS_CONFIG;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
        /* A TLS 1.3 server asks for the client certificate after the handshake, so its
         * refusal arrives as an alert. */
        return strstr(errbuf, "certificate required") ? PULSARC_ERR_TLS_CLIENT_CERT
                                                      : PULSARC_ERR_TLS_HANDSHAKE;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return strstr(errbuf, "certificate required") ? PULSARC_ERR_TLS_CLIENT_CERT
                                                      : PULSARC_ERR_CONNECTION_CLOSED;
    case CURLE_TOO_MANY_REDIRECTS:
        return PULSARC_ERR_TOO_MANY_REDIRECTS;
    case CURLE_OUT_OF_MEMORY:
        return PULSARC_ERR_NO_MEMORY;
    case CURLE_URL_MALFORMAT:
        return PULSARC_ERR_INVALID_URL;
    default:
        return PULSARC_ERR_PROTOCOL;
    }
}
