/* The TLS sessions a client may resume, per broker host and port (tls_internal.h).
 *
 * Bounded in count, per peer and in all: a broker chooses where lookups send us, so the
 * number of host names we learn is its to choose, and each session holds the peer's
 * certificates. Only sessions of handshakes that passed every check arrive here (tls.c).
 * A session is taken out to be offered, so a TLS 1.3 ticket is offered once (RFC 8446,
 * C.4: reuse links connections); the connection that uses it brings fresh ones. Taking
 * the newest first offers the ticket with the most life left.
 * @locality any thread (a mutex); in practice the client's loop thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/tls_internal.h"

typedef struct entry {
    SSL_SESSION *session; /* NULL: a free slot */
    uint64_t added;       /* order of arrival: the oldest goes first */
    uint16_t port;
    char host[PC_TLS_HOST_MAX];
} entry_t;

struct pc_tls_cache {
    pthread_mutex_t lock;
    size_t per_peer;
    size_t n_slots;
    uint64_t next_added;
    entry_t slots[];
};

pc_tls_cache_t *pc_tls_cache_new(size_t max_sessions, size_t max_per_peer)
{
    if (max_sessions == 0 || max_per_peer == 0)
        return NULL;
    pc_tls_cache_t *c = calloc(1, sizeof *c + max_sessions * sizeof c->slots[0]);
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->per_peer = max_per_peer;
    c->n_slots = max_sessions;
    return c;
}

static void clear(entry_t *e)
{
    SSL_SESSION_free(e->session);
    e->session = NULL;
}

void pc_tls_cache_free(pc_tls_cache_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_slots; i++)
        clear(&c->slots[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void pc_tls_cache_clear(pc_tls_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n_slots; i++)
        clear(&c->slots[i]);
    pthread_mutex_unlock(&c->lock);
}

static bool same_peer(const entry_t *e, const char *host, uint16_t port)
{
    return e->session && e->port == port && strcmp(e->host, host) == 0;
}

/* A session past its lifetime would only be refused: it is not offered. */
static bool expired(const SSL_SESSION *s, time_t now)
{
    time_t born = (time_t)SSL_SESSION_get_time(s);
    long life = SSL_SESSION_get_timeout(s);
    return !SSL_SESSION_is_resumable(s) || now < born || now - born >= life;
}

/* Names too long for a slot are not cached at all, rather than cut (two names sharing
 * the cut part would share sessions). */
static bool cacheable(const char *host)
{
    return host && strlen(host) < PC_TLS_HOST_MAX;
}

void pc_tls_cache_put(pc_tls_cache_t *c, const char *host, uint16_t port, SSL_SESSION *session)
{
    if (!cacheable(host)) {
        SSL_SESSION_free(session);
        return;
    }
    pthread_mutex_lock(&c->lock);
    entry_t *slot = NULL, *oldest = NULL, *oldest_of_peer = NULL;
    size_t of_peer = 0;
    for (size_t i = 0; i < c->n_slots; i++) {
        entry_t *e = &c->slots[i];
        if (!e->session) {
            slot = slot ? slot : e;
            continue;
        }
        if (!oldest || e->added < oldest->added)
            oldest = e;
        if (same_peer(e, host, port)) {
            of_peer++;
            if (!oldest_of_peer || e->added < oldest_of_peer->added)
                oldest_of_peer = e;
        }
    }
    /* The peer's own oldest makes room first, then a free slot, then the oldest of all. */
    if (of_peer >= c->per_peer)
        slot = oldest_of_peer;
    else if (!slot)
        slot = oldest;
    clear(slot);
    slot->session = session;
    slot->added = c->next_added++;
    slot->port = port;
    strcpy(slot->host, host); /* cacheable(): it fits */
    pthread_mutex_unlock(&c->lock);
}

SSL_SESSION *pc_tls_cache_take(pc_tls_cache_t *c, const char *host, uint16_t port)
{
    if (!cacheable(host))
        return NULL;
    time_t now = time(NULL);
    pthread_mutex_lock(&c->lock);
    entry_t *newest = NULL;
    for (size_t i = 0; i < c->n_slots; i++) {
        entry_t *e = &c->slots[i];
        if (!same_peer(e, host, port))
            continue;
        if (expired(e->session, now))
            clear(e);
        else if (!newest || e->added > newest->added)
            newest = e;
    }
    SSL_SESSION *s = newest ? newest->session : NULL;
    if (newest)
        newest->session = NULL; /* the caller's reference now */
    pthread_mutex_unlock(&c->lock);
    return s;
}

size_t pc_tls_cache_count(pc_tls_cache_t *c, const char *host, uint16_t port)
{
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n_slots; i++)
        if (host ? same_peer(&c->slots[i], host, port) : c->slots[i].session != NULL)
            n++;
    pthread_mutex_unlock(&c->lock);
    return n;
}
