/* Building the TLS context shared by a client's connections: trust, client identity,
 * protocol range and ciphers. Every failure is PULSARC_ERR_TLS_CONFIG naming the setting
 * and OpenSSL's reason; never the contents of a PEM or a key. */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "net/tls.h"
#include "net/tls_internal.h"

/* OpenSSL's reason for the latest failure, and an empty error queue afterwards (a stale
 * entry would otherwise be blamed for the next connection's failure). A file that cannot
 * be opened queues the system's error (errno) first and only "system lib" last: the
 * system's says why ("No such file or directory"). */
static const char *openssl_reason(void)
{
    int sys_errno = 0;
    unsigned long e, last = 0;
    while ((e = ERR_get_error()) != 0) {
        if (!sys_errno && ERR_GET_LIB(e) == ERR_LIB_SYS)
            sys_errno = ERR_GET_REASON(e);
        last = e;
    }
    if (sys_errno)
        return strerror(sys_errno);
    const char *r = last ? ERR_reason_error_string(last) : NULL;
    return r ? r : "unknown error";
}

static pulsarc_result config_fail(const char *what, const char *where)
{
    return pc_fail(PULSARC_ERR_TLS_CONFIG, "cannot load %s%s%s%s: %s", what, where ? " '" : "",
                   where ? where : "", where ? "'" : "", openssl_reason());
}

/* A key with a passphrase must fail, not prompt on the terminal from the loop thread. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return 0;
}

static pulsarc_result load_trust_pem(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, no_passphrase, NULL)
                                     : NULL;
    BIO_free(bio);
    if (!infos)
        return config_fail("the trusted certificates (PEM in memory)", NULL);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    int added = 0;
    for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *info = sk_X509_INFO_value(infos, i);
        if (info->x509 && X509_STORE_add_cert(store, info->x509) == 1)
            added++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    if (added == 0)
        return pc_fail(PULSARC_ERR_TLS_CONFIG,
                       "the trusted certificates (PEM in memory) hold no certificate");
    return PULSARC_OK;
}

static pulsarc_result load_trust(SSL_CTX *ctx, const pc_tls_settings_t *s)
{
    if (s->trust_pem)
        return load_trust_pem(ctx, s->trust_pem);
    if (s->trust_file) {
        if (SSL_CTX_load_verify_locations(ctx, s->trust_file, NULL) != 1)
            return config_fail("tlsTrustCertsFilePath", s->trust_file);
        return PULSARC_OK;
    }
    if (SSL_CTX_set_default_verify_paths(ctx) != 1)
        return config_fail("the system's trusted certificates", NULL);
    return PULSARC_OK;
}

/* The first certificate of the PEM is ours; any that follow are its chain. */
static pulsarc_result use_cert_pem(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *leaf = bio ? PEM_read_bio_X509(bio, NULL, no_passphrase, NULL) : NULL;
    if (!leaf || SSL_CTX_use_certificate(ctx, leaf) != 1) {
        X509_free(leaf);
        BIO_free(bio);
        return config_fail("the client certificate (PEM in memory)", NULL);
    }
    X509_free(leaf);
    X509 *extra;
    while ((extra = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            BIO_free(bio);
            return config_fail("the client certificate chain (PEM in memory)", NULL);
        }
    }
    ERR_clear_error(); /* the end of the PEM reads as an error */
    BIO_free(bio);
    return PULSARC_OK;
}

static pulsarc_result use_key_pem(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    int ok = key && SSL_CTX_use_PrivateKey(ctx, key) == 1;
    EVP_PKEY_free(key);
    return ok ? PULSARC_OK : config_fail("the client key (PEM in memory)", NULL);
}

static pulsarc_result load_identity(SSL_CTX *ctx, const pc_tls_settings_t *s)
{
    bool have_cert = s->cert_pem || s->cert_file;
    bool have_key = s->key_pem || s->key_file;
    if (!have_cert && !have_key)
        return PULSARC_OK;
    if (have_cert != have_key)
        return pc_fail(PULSARC_ERR_TLS_CONFIG, "a client certificate needs its key and a key "
                                               "its certificate: give both or neither");
    pulsarc_result r = PULSARC_OK;
    if (s->cert_pem)
        r = use_cert_pem(ctx, s->cert_pem);
    else if (SSL_CTX_use_certificate_chain_file(ctx, s->cert_file) != 1)
        r = config_fail("tlsCertificateFilePath", s->cert_file);
    if (r != PULSARC_OK)
        return r;
    if (s->key_pem)
        r = use_key_pem(ctx, s->key_pem);
    else if (SSL_CTX_use_PrivateKey_file(ctx, s->key_file, SSL_FILETYPE_PEM) != 1)
        r = config_fail("tlsKeyFilePath", s->key_file);
    if (r != PULSARC_OK)
        return r;
    if (SSL_CTX_check_private_key(ctx) != 1)
        return pc_fail(PULSARC_ERR_TLS_CONFIG, "the client key does not match its certificate");
    return PULSARC_OK;
}

/* "TLSv1.2,TLSv1.3" (commas or spaces) narrows the range; older names are known but can
 * never widen it below TLS 1.2. */
static pulsarc_result set_protocols(SSL_CTX *ctx, const char *list)
{
    int lo = 0, hi = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ", ");
        int v = -1;
        if (n == 7 && strncmp(p, "TLSv1.2", n) == 0)
            v = TLS1_2_VERSION;
        else if (n == 7 && strncmp(p, "TLSv1.3", n) == 0)
            v = TLS1_3_VERSION;
        else if ((n == 5 && strncmp(p, "TLSv1", n) == 0) ||
                 (n == 7 && strncmp(p, "TLSv1.1", n) == 0) ||
                 (n == 5 && strncmp(p, "SSLv3", n) == 0))
            v = 0; /* too old: ignored */
        else if (n > 0)
            return pc_fail(PULSARC_ERR_TLS_CONFIG,
                           "tlsProtocols: unknown protocol '%.*s' "
                           "(expected TLSv1.2 or TLSv1.3)",
                           (int)n, p);
        if (v > 0) {
            lo = lo && lo < v ? lo : v;
            hi = hi > v ? hi : v;
        }
        p += n;
        p += strspn(p, ", ");
    }
    if (!lo)
        return pc_fail(PULSARC_ERR_TLS_CONFIG,
                       "tlsProtocols '%s' allows no protocol at TLS 1.2 or newer", list);
    SSL_CTX_set_min_proto_version(ctx, lo);
    SSL_CTX_set_max_proto_version(ctx, hi);
    return PULSARC_OK;
}

/* Pulsar users write the IANA names Java uses (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256);
 * OpenSSL's TLS 1.2 list wants its own. Unknown names are left for OpenSSL to judge. */
static const char *openssl_cipher_name(SSL_CTX *ctx, const char *name)
{
    STACK_OF(SSL_CIPHER) *all = SSL_CTX_get_ciphers(ctx);
    for (int i = 0; i < sk_SSL_CIPHER_num(all); i++) {
        const SSL_CIPHER *c = sk_SSL_CIPHER_value(all, i);
        const char *iana = SSL_CIPHER_standard_name(c);
        if (iana && strcmp(iana, name) == 0)
            return SSL_CIPHER_get_name(c);
    }
    return name;
}

static void append(char *dst, size_t cap, const char *name)
{
    size_t used = strlen(dst);
    snprintf(dst + used, cap - used, "%s%s", used ? ":" : "", name);
}

/* The list restricts both TLS 1.2 ciphers and TLS 1.3 suites, as it does in Java: naming
 * only TLS 1.2 ciphers means TLS 1.2 only (OpenSSL refuses to offer a TLS 1.3 it has no
 * suite for, rather than fall back), naming only TLS 1.3 suites means TLS 1.3 only
 * (OpenSSL cannot hold an empty TLS 1.2 list). Either fails when tlsProtocols excluded
 * the one version left. */
static pulsarc_result set_ciphers(SSL_CTX *ctx, const char *list)
{
    size_t cap = 2 * strlen(list) + 64;
    char *v12 = calloc(1, cap), *v13 = calloc(1, cap), *name = malloc(strlen(list) + 1);
    pulsarc_result r = PULSARC_OK;
    if (!v12 || !v13 || !name) {
        r = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    for (const char *p = list + strspn(list, ",: "); *p; p += strspn(p, ",: ")) {
        size_t n = strcspn(p, ",: ");
        memcpy(name, p, n);
        name[n] = '\0';
        p += n;
        if (strncmp(name, "TLS_AES_", 8) == 0 || strncmp(name, "TLS_CHACHA20_", 13) == 0)
            append(v13, cap, name);
        else
            append(v12, cap, openssl_cipher_name(ctx, name));
    }
    if (!*v12 && !*v13)
        r = pc_fail(PULSARC_ERR_TLS_CONFIG, "tlsCiphers is empty");
    else if (*v12 && SSL_CTX_set_cipher_list(ctx, v12) != 1)
        r = config_fail("tlsCiphers (no usable TLS 1.2 cipher)", list);
    else if (!*v12 && (SSL_CTX_get_max_proto_version(ctx) == TLS1_2_VERSION ||
                       SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1))
        r = pc_fail(PULSARC_ERR_TLS_CONFIG,
                    "tlsCiphers '%s' names TLS 1.3 suites only, but "
                    "tlsProtocols allows no TLS 1.3",
                    list);
    else if (!*v13 && (SSL_CTX_get_min_proto_version(ctx) == TLS1_3_VERSION ||
                       SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION) != 1))
        r = pc_fail(PULSARC_ERR_TLS_CONFIG,
                    "tlsCiphers '%s' names TLS 1.2 ciphers only, but "
                    "tlsProtocols allows no TLS 1.2",
                    list);
    else if (SSL_CTX_set_ciphersuites(ctx, v13) != 1)
        r = config_fail("tlsCiphers (TLS 1.3 suites)", list);
out:
    ERR_clear_error();
    free(v12);
    free(v13);
    free(name);
    return r;
}

pulsarc_result pc_tls_restrict(SSL_CTX *ctx, const char *protocols, const char *ciphers)
{
    pulsarc_result r = PULSARC_OK;
    if (protocols && (r = set_protocols(ctx, protocols)) != PULSARC_OK)
        return r;
    if (ciphers && (r = set_ciphers(ctx, ciphers)) != PULSARC_OK)
        return r;
    return PULSARC_OK;
}

static pulsarc_result configure(SSL_CTX *ctx, const pc_tls_settings_t *s)
{
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* The broker has no reason to renegotiate; refusing it removes a whole attack class. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_verify(ctx, s->allow_insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    pulsarc_result r = pc_tls_restrict(ctx, s->protocols, s->ciphers);
    if (r != PULSARC_OK)
        return r;
    if ((r = load_identity(ctx, s)) != PULSARC_OK)
        return r;
    /* Insecure mode still loads given trust (so that a bad path is reported) but does
     * not need the system store. */
    if (s->allow_insecure && !s->trust_pem && !s->trust_file)
        return PULSARC_OK;
    return load_trust(ctx, s);
}

pulsarc_result pc_tls_ssl_ctx_new(const pc_tls_settings_t *s, SSL_CTX **out)
{
    *out = NULL;
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx)
        return config_fail("OpenSSL's TLS client", NULL);
    pulsarc_result r = configure(ctx, s);
    if (r != PULSARC_OK) {
        SSL_CTX_free(ctx);
        return r;
    }
    if (s->session_resumption) {
        /* OpenSSL hands each new session to the callback and keeps none itself: a client
         * must choose what to offer, and we offer by host and port (tls_cache.c). */
        SSL_CTX_set_session_cache_mode(ctx,
                                       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ctx, pc_tls_on_new_session);
    } else {
        /* No ticket is asked for (TLS 1.2), none is kept. */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
    *out = ctx;
    return PULSARC_OK;
}

pulsarc_result pc_tls_ctx_new(const pc_tls_settings_t *s, pc_tls_ctx_t **out)
{
    *out = NULL;
    pc_tls_ctx_t *t = calloc(1, sizeof *t);
    if (!t)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    /* The files' identity first, then their contents: a change in between is seen as one
     * at the next look (and read once more), never missed. */
    pulsarc_result r = pc_tls_reload_new(s, &t->reload);
    if (r == PULSARC_OK)
        r = pc_tls_ssl_ctx_new(s, &t->ssl_ctx);
    if (r != PULSARC_OK) {
        pc_tls_ctx_free(t);
        return r;
    }
    t->verify_peer = !s->allow_insecure;
    t->verify_hostname = t->verify_peer && s->verify_hostname;
    if (s->session_resumption) {
        t->cache_per_peer = s->connections_per_peer > PC_TLS_PER_PEER ? s->connections_per_peer
                                                                      : PC_TLS_PER_PEER;
        if (!(t->cache = pc_tls_cache_new(PC_TLS_PEERS * t->cache_per_peer, t->cache_per_peer))) {
            pc_tls_ctx_free(t);
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        }
    }
    *out = t;
    return PULSARC_OK;
}

pulsarc_result pc_tls_ctx_share(const pc_tls_ctx_t *ctx, pc_tls_ctx_t **out)
{
    *out = NULL;
    pc_tls_ctx_t *t = malloc(sizeof *t);
    if (!t)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    *t = *ctx;
    t->cache = NULL;
    t->reload = NULL;
    /* A handle of its own re-reads the files on its own: each replaces only its own
     * context. */
    if ((ctx->cache &&
         !(t->cache = pc_tls_cache_new(PC_TLS_PEERS * ctx->cache_per_peer, ctx->cache_per_peer))) ||
        pc_tls_reload_dup(ctx->reload, &t->reload) != PULSARC_OK) {
        pc_tls_cache_free(t->cache);
        free(t);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    SSL_CTX_up_ref(t->ssl_ctx);
    *out = t;
    return PULSARC_OK;
}

void pc_tls_ctx_free(pc_tls_ctx_t *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl_ctx); /* sessions still alive hold their own reference */
    pc_tls_cache_free(ctx->cache);
    pc_tls_reload_free(ctx->reload);
    free(ctx);
}
