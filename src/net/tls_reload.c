/* autoCertRefreshSeconds: the files a TLS context was built from (trust, client
 * certificate, key) looked at again when a connection starts, at most once per period,
 * and the OpenSSL context built anew from them when one changed.
 *
 * A change is any difference in a file's identity as stat(2) sees it: device, inode
 * (a file replaced by rename), size, modification or status-change time (a file
 * rewritten in place), or its appearing or vanishing. Nothing is read while nothing
 * changed, and nothing at all between connections: a message never pays for this.
 *
 * A change that cannot be used (a file half written, a key that does not match its
 * certificate) leaves the old context in place and the old identity recorded, so the next
 * due check tries again. PEM given in memory is never re-read: it is kept as given, for
 * the rebuild. */
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "net/tls.h"
#include "net/tls_internal.h"

/* What stat(2) tells of one file; all zero for a file not named or not there. */
typedef struct file_id {
    bool present;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_id_t;

enum { F_TRUST, F_CERT, F_KEY, F_COUNT };

struct pc_tls_reload {
    pc_tls_settings_t s; /* every string a copy of the caller's (s.key_pem wiped at the end) */
    uint64_t period_ms;
    uint64_t next_ms; /* no look before this */
    file_id_t files[F_COUNT];
};

/* The file that plays a role, or NULL: none, or a PEM in memory plays it. */
static const char *watched(const pc_tls_settings_t *s, int role)
{
    switch (role) {
    case F_TRUST:
        return s->trust_pem ? NULL : s->trust_file;
    case F_CERT:
        return s->cert_pem ? NULL : s->cert_file;
    default:
        return s->key_pem ? NULL : s->key_file;
    }
}

static void identify(const char *path, file_id_t *out)
{
    struct stat st;
    *out = (file_id_t){ 0 };
    if (!path || stat(path, &st) != 0)
        return;
    *out = (file_id_t){ .present = true,
                        .dev = st.st_dev,
                        .ino = st.st_ino,
                        .size = st.st_size,
                        .mtime = st.st_mtim,
                        .ctime = st.st_ctim };
}

static bool same_time(struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool same_file(const file_id_t *a, const file_id_t *b)
{
    return a->present == b->present && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           same_time(a->mtime, b->mtime) && same_time(a->ctime, b->ctime);
}

static void identify_all(const pc_tls_reload_t *r, file_id_t out[F_COUNT])
{
    for (int i = 0; i < F_COUNT; i++)
        identify(watched(&r->s, i), &out[i]);
}

/* ---- the copy of the settings --------------------------------------------------------- */

static void wipe_free(const char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse((char *)s, strlen(s));
    free((char *)s);
}

/* A copy of src, or NULL for NULL; *ok turns false when out of memory. */
static const char *dup_or_null(const char *src, bool *ok)
{
    if (!src)
        return NULL;
    char *d = strdup(src);
    *ok = *ok && d;
    return d;
}

/* r->s a copy of s, every string its own. PULSARC_OK or PULSARC_ERR_NO_MEMORY. */
static pulsarc_result copy_settings(pc_tls_reload_t *r, const pc_tls_settings_t *s)
{
    bool ok = true;
    r->s = *s;
    r->s.trust_file = dup_or_null(s->trust_file, &ok);
    r->s.trust_pem = dup_or_null(s->trust_pem, &ok);
    r->s.cert_file = dup_or_null(s->cert_file, &ok);
    r->s.cert_pem = dup_or_null(s->cert_pem, &ok);
    r->s.key_file = dup_or_null(s->key_file, &ok);
    r->s.key_pem = dup_or_null(s->key_pem, &ok);
    r->s.protocols = dup_or_null(s->protocols, &ok);
    r->s.ciphers = dup_or_null(s->ciphers, &ok);
    return ok ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

void pc_tls_reload_free(pc_tls_reload_t *r)
{
    if (!r)
        return;
    wipe_free(r->s.trust_file);
    wipe_free(r->s.trust_pem);
    wipe_free(r->s.cert_file);
    wipe_free(r->s.cert_pem);
    wipe_free(r->s.key_file);
    wipe_free(r->s.key_pem);
    wipe_free(r->s.protocols);
    wipe_free(r->s.ciphers);
    free(r);
}

static pulsarc_result reload_copy(const pc_tls_settings_t *s, uint64_t period_ms,
                                  const file_id_t files[F_COUNT], pc_tls_reload_t **out)
{
    pc_tls_reload_t *r = calloc(1, sizeof *r);
    if (!r)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pulsarc_result res = copy_settings(r, s);
    if (res != PULSARC_OK) {
        pc_tls_reload_free(r);
        return res;
    }
    r->period_ms = period_ms;
    memcpy(r->files, files, sizeof r->files);
    *out = r;
    return PULSARC_OK;
}

pulsarc_result pc_tls_reload_new(const pc_tls_settings_t *s, pc_tls_reload_t **out)
{
    *out = NULL;
    bool any = false;
    for (int i = 0; i < F_COUNT; i++)
        any = any || watched(s, i);
    if (s->refresh_s == 0 || !any)
        return PULSARC_OK;
    /* The files as they are now, before the caller reads them (pc_tls_ctx_new). */
    file_id_t files[F_COUNT];
    for (int i = 0; i < F_COUNT; i++)
        identify(watched(s, i), &files[i]);
    return reload_copy(s, (uint64_t)s->refresh_s * 1000, files, out);
}

pulsarc_result pc_tls_reload_dup(const pc_tls_reload_t *r, pc_tls_reload_t **out)
{
    *out = NULL;
    return r ? reload_copy(&r->s, r->period_ms, r->files, out) : PULSARC_OK;
}

/* ---- the check ------------------------------------------------------------------------ */

/* "subject, serial, valid until" of the context's client certificate: public facts. */
static void describe(SSL_CTX *ctx, char *what, size_t cap)
{
    X509 *leaf = SSL_CTX_get0_certificate(ctx);
    if (!leaf) {
        snprintf(what, cap, "no client certificate");
        return;
    }
    char subject[256];
    X509_NAME_oneline(X509_get_subject_name(leaf), subject, sizeof subject);
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
    char *serial = bn ? BN_bn2hex(bn) : NULL;
    char until[64] = "?";
    BIO *b = BIO_new(BIO_s_mem());
    if (b && ASN1_TIME_print(b, X509_get0_notAfter(leaf)) == 1) {
        int n = BIO_read(b, until, (int)sizeof until - 1);
        until[n > 0 ? n : 0] = '\0';
    }
    BIO_free(b);
    snprintf(what, cap, "client certificate %s, serial %s, valid until %s", subject,
             serial ? serial : "?", until);
    OPENSSL_free(serial);
    BN_free(bn);
}

pc_tls_refresh_t pc_tls_ctx_refresh(pc_tls_ctx_t *ctx, uint64_t now_ms, char *what, size_t cap)
{
    pc_tls_reload_t *r = ctx->reload;
    if (cap)
        what[0] = '\0';
    if (!r || now_ms < r->next_ms)
        return PC_TLS_REFRESH_NONE;
    r->next_ms = now_ms + r->period_ms;
    file_id_t now[F_COUNT];
    identify_all(r, now);
    bool changed = false;
    for (int i = 0; i < F_COUNT; i++)
        changed = changed || !same_file(&now[i], &r->files[i]);
    if (!changed)
        return PC_TLS_REFRESH_NONE;
    SSL_CTX *fresh;
    if (pc_tls_ssl_ctx_new(&r->s, &fresh) != PULSARC_OK) {
        /* r->files stays as it was: the next due check sees the change again. */
        snprintf(what, cap, "%s", pulsarc_last_error_detail());
        return PC_TLS_REFRESH_FAILED;
    }
    SSL_CTX_free(ctx->ssl_ctx); /* sessions made with it hold their own reference */
    ctx->ssl_ctx = fresh;
    memcpy(r->files, now, sizeof r->files);
    /* A resumed session would present the identity it was made with, and the broker
     * would not see the new certificate: none made before the change is offered. */
    if (ctx->cache)
        pc_tls_cache_clear(ctx->cache);
    describe(fresh, what, cap);
    return PC_TLS_REFRESH_RELOADED;
}
