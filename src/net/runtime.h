/* The runtime context: what the layers below client/ need from their surroundings, handed
 * down explicitly instead of reached for in the client struct. The client fills one and
 * owns it; net/ and producer/ only ever see this (so a mode running on the caller's own
 * loop only has to fill it differently).
 * @locality loop thread (every field). */
#ifndef PC_RUNTIME_H
#define PC_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "common/clock.h"
#include "common/freelist.h"
#include "common/log.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h" /* PULSARC_VERSION_STRING */

/* What CONNECT calls this client, and room for a description of up to 64 characters. */
#define PC_CLIENT_VERSION "pulsarc-" PULSARC_VERSION_STRING
#define PC_CLIENT_VERSION_MAX (sizeof PC_CLIENT_VERSION + 1 + 64)

struct pc_pool;
struct pc_tls_ctx;
struct pc_auth;
struct pc_auth_http;
struct pc_http;
struct pc_cluster_listener;

/* Timeouts, limits and lookup policy, from the client configuration. */
typedef struct pc_limits {
    uint64_t operation_timeout_ms;  /* a request's answer, a producer's creation or close */
    uint64_t lookup_timeout_ms;     /* a lookup's or partition metadata request's answer */
    uint64_t max_idle_ms;           /* close a connection unused this long; 0: never */
    uint64_t connection_timeout_ms; /* TCP connect plus the CONNECT/CONNECTED handshake */
    uint64_t keepalive_interval_ms; /* ping after this much silence; dead after twice it */
    int max_lookup_redirects;       /* binary Redirect answers, and HTTP redirects per lookup */
    bool http_auth_any_redirect;    /* httpLookupAuthAllowRedirect: credentials follow an HTTP
                                       lookup's redirect to hosts outside the service URL */
    uint64_t initial_backoff_ms;    /* reconnect backoff, doubling up to the maximum */
    uint64_t max_backoff_ms;
} pc_limits_t;

/* Where a client's bytes go, when not to the network: a test seam, NULL in production
 * (TCP to the brokers, libcurl to an OAuth2 issuer). Tests and fuzzers set one per client
 * (client/test_seams.h) to run it against a broker or issuer in the same process. Either
 * function may be NULL (that part stays real). Both run on the loop thread. */
typedef struct pc_transport {
    /* A new connection to `to` (the broker connected to, or the SNI proxy in front of
     * it): a connected stream socket that the connection owns from then on (its
     * handshake starts at once), or -1 to fail the connect. */
    int (*open_socket)(void *ctx, const pc_host_port_t *to);
    /* Fill *out with the HTTP table an OAuth2 provider talks to its issuer through, on
     * loop; 0, or -1 to fail client creation. */
    int (*auth_http)(void *ctx, uv_loop_t *loop, struct pc_auth_http *out);
    void *ctx;
} pc_transport_t;

/* Where connections go, from the client configuration: listener names, several
 * connections per broker, an SNI proxy in front of the brokers' TLS ports. */
typedef struct pc_net_settings {
    const char *listener_name; /* the advertised listener lookups ask for; NULL: the
                                   broker's internal one. The client owns the string. */
    /* What CONNECT says the client is: pulsarc-VERSION[-description]; empty: the bare
     * version (a runtime made without a configuration, in tests). */
    char client_version[PC_CLIENT_VERSION_MAX];
    int connections_per_broker; /* at least 1: producers spread over this many */
    bool sni_proxy;             /* TCP to sni_proxy_addr, the broker's host as TLS SNI */
    pc_host_port_t sni_proxy_addr;
} pc_net_settings_t;

#define PC_RUNTIME_OP_BLOCKS_MAX 1024

typedef struct pc_runtime {
    uv_loop_t *loop;
    const pc_logger_t *log;
    pc_limits_t limits;
    pc_net_settings_t net;
    const pc_service_url_t *service; /* where lookups start */
    int next_host;                   /* round-robin over the service URL's hosts */
    struct pc_pool *pool;            /* one connection per broker, shared */
    struct pc_tls_ctx *tls;          /* TLS for every connection; NULL: plain TCP */
    uint64_t next_request_id;        /* id generators */
    uint64_t next_producer_id;
    bool stopping;                   /* shutting down: no fail-over, no new work */
    struct pc_auth *auth;            /* credentials for CONNECT; NULL = no authentication */
    struct pc_http *http;            /* HTTP(S) for http(s):// service URLs' lookups; else NULL */
    const pc_clock_t *clock;         /* "now" for tokens' lifetimes, key re-reads, rotation;
                                        NULL: the real monotonic clock (common/clock.h) */
    const pc_transport_t *transport; /* test seam; NULL: the network */

    /* Cluster failover (net/service_provider.h). service, tls, auth and http above are
     * the active cluster's: a switch replaces all four at once and closes every
     * connection, so that each connection only ever presents the credentials of the
     * cluster it was opened for. Those who must hear of a switch (producers waiting to
     * reconnect) are listed here. */
    struct pc_cluster_listener *cluster_listeners;
    uint64_t cluster_switches;    /* switches so far (for logs and tests) */
    uint64_t tls_downgrades;      /* ... of them from TLS to plain text (statistics) */
    uint64_t tls_reloads;         /* TLS files changed and read anew (statistics) */
    uint64_t tls_reload_failures; /* ... changed but could not be used (statistics) */

    /* The loop thread's recycled op blocks (producer/op.c: an op per unbatched message),
     * at most PC_RUNTIME_OP_BLOCKS_MAX (a default pending window's worth, ~340 KiB); the
     * client drains it once the loop is done. */
    pc_freelist_t op_blocks;
} pc_runtime_t;

#endif
