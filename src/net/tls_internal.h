/* Private to net/: the shared TLS context as the session code sees it, its cache of
 * sessions to resume, and the protocol and cipher restrictions, which net/http_tls.c
 * applies to curl's contexts too. */
#ifndef PC_TLS_INTERNAL_H
#define PC_TLS_INTERNAL_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/tls.h"
#include "pulsarc/pulsarc.h"

/* Sessions kept for resumption (tls_cache.c): per host and port, as many as the client
 * keeps connections to one broker (each reconnecting connection offers one of its own),
 * at least PC_TLS_PER_PEER; in all, PC_TLS_PEERS times that (64 with the defaults). A host
 * name of PC_TLS_HOST_MAX bytes or more is never cached. */
#define PC_TLS_PER_PEER 8
#define PC_TLS_PEERS 8
#define PC_TLS_HOST_MAX 256
/* The largest ticket kept (a Pulsar broker's are about 200 bytes, 2 KiB with a client
 * certificate in them); larger ones are dropped, and the connection that got them makes a
 * full handshake next time. */
#define PC_TLS_TICKET_MAX (16 * 1024)

typedef struct pc_tls_cache pc_tls_cache_t;

/* NULL when out of memory (or a bound is 0). */
pc_tls_cache_t *pc_tls_cache_new(size_t max_sessions, size_t max_per_peer);
void pc_tls_cache_free(pc_tls_cache_t *c);
/* Keep session (the caller's reference passes to the cache) for host:port; when the peer
 * has max_per_peer already its oldest goes, else when the cache is full the oldest of all.
 * A host name too long to cache: the session is freed. */
void pc_tls_cache_put(pc_tls_cache_t *c, const char *host, uint16_t port, SSL_SESSION *session);
/* Take the newest resumable session for host:port out of the cache (the reference is the
 * caller's: each is offered once); expired ones are dropped. NULL: none. */
SSL_SESSION *pc_tls_cache_take(pc_tls_cache_t *c, const char *host, uint16_t port);
/* Drop every session (the identity they were made with is no longer ours). */
void pc_tls_cache_clear(pc_tls_cache_t *c);
/* Sessions held for host:port, or in all when host is NULL (for tests). */
size_t pc_tls_cache_count(pc_tls_cache_t *c, const char *host, uint16_t port);

/* Re-reading the files a context was built from (tls_reload.c). */
typedef struct pc_tls_reload pc_tls_reload_t;

struct pc_tls_ctx {
    SSL_CTX *ssl_ctx;        /* for new sessions; replaced when the files change */
    bool verify_peer;        /* false only with allow_insecure */
    bool verify_hostname;    /* meaningful only when verify_peer */
    pc_tls_cache_t *cache;   /* sessions to resume; NULL: resumption is off */
    size_t cache_per_peer;   /* its bound per host and port, for a shared handle's own cache */
    pc_tls_reload_t *reload; /* NULL: the files are read once (or there are none) */
};

/* A configured OpenSSL client context from s: everything but the session cache, whose
 * mode and callback (resumption on or off) are set too. PULSARC_OK, or
 * PULSARC_ERR_TLS_CONFIG / NO_MEMORY with the detail set. (tls_context.c) */
pulsarc_result pc_tls_ssl_ctx_new(const pc_tls_settings_t *s, SSL_CTX **out);

/* What re-reading needs: a copy of s and the files' identity now, taken before the
 * files are read for the first context. *out NULL (and
 * PULSARC_OK) when there is nothing to re-read: refresh_s 0, or no file named. */
pulsarc_result pc_tls_reload_new(const pc_tls_settings_t *s, pc_tls_reload_t **out);
/* An independent copy (for a shared handle); NULL r gives NULL. */
pulsarc_result pc_tls_reload_dup(const pc_tls_reload_t *r, pc_tls_reload_t **out);
void pc_tls_reload_free(pc_tls_reload_t *r);

/* OpenSSL's new-session callback (SSL_CTX_sess_set_new_cb) of a context with a cache: the
 * session of a connection (tls.c) goes into its context's cache once that connection
 * passed every check. Returns 1 when it kept the reference. */
int pc_tls_on_new_session(SSL *ssl, SSL_SESSION *session);

/* tlsProtocols and tlsCiphers on ctx (either may be NULL: unchanged), read as the binary
 * protocol reads them (net/tls.h). PULSARC_OK, or PULSARC_ERR_TLS_CONFIG / NO_MEMORY with
 * the detail set. */
pulsarc_result pc_tls_restrict(SSL_CTX *ctx, const char *protocols, const char *ciphers);

#endif
