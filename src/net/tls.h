/* TLS for broker connections: OpenSSL driven entirely through memory buffers, so that the
 * event loop never blocks and the socket stays libuv's. A context (pc_tls_ctx_t) holds
 * what every connection of a client shares: trust, the client certificate, the protocol
 * range and ciphers. A session (pc_tls_session_t) is one connection's TLS state: the
 * connection feeds it the ciphertext it reads, takes plaintext out, hands it plaintext to
 * encrypt, and writes whatever ciphertext the session has ready.
 *
 * Safe by default: the peer's certificate is verified (unless allow_insecure), the host
 * name or IP address is checked against it (unless verify_hostname is false), the
 * protocol is TLS 1.2 or newer, and SNI names every host name.
 *
 * Failures are named results (PULSARC_ERR_TLS_*) with a detail message; no detail ever
 * holds key material or the contents of a PEM given in memory.
 * @locality a context is built on any thread and then used by one (the loop thread): only
 * pc_tls_ctx_refresh changes it, on that thread; a session belongs to the thread that
 * uses it. */
#ifndef PC_TLS_H
#define PC_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

/* What a context is built from. Strings may be NULL (unset); none is kept after
 * pc_tls_ctx_new returns. A PEM in memory wins over the file of the same role. */
typedef struct pc_tls_settings {
    const char *trust_file; /* PEM file of trusted CAs */
    const char *trust_pem;  /* the same in memory; both unset: the system's store */
    const char *cert_file;  /* client certificate (chain) for mTLS, PEM */
    const char *cert_pem;
    const char *key_file; /* its private key, PEM, not encrypted */
    const char *key_pem;
    const char *protocols; /* "TLSv1.2,TLSv1.3": narrows the range, never below 1.2 */
    const char *ciphers;   /* comma or colon separated; OpenSSL or IANA names */
    bool allow_insecure;   /* accept any certificate: no verification at all */
    bool verify_hostname;  /* the certificate must name the host connected to */
    /* Keep the sessions brokers hand out and offer one (once) when connecting to the same
     * host and port again: a reconnect then skips the certificate exchange and checks. */
    bool session_resumption;
    /* Connections the client keeps to one broker (connectionsPerBroker; 0 counts as 1):
     * after a drop each needs a session of its own to resume, so the cache keeps as many
     * per host and port (at least 8). */
    unsigned connections_per_peer;
    /* autoCertRefreshSeconds: the files above (never PEM in memory) are looked at again,
     * at most this often and only when a connection starts (pc_tls_ctx_refresh), and the
     * context is built anew from them when one changed. 0: read once. */
    unsigned refresh_s;
} pc_tls_settings_t;

typedef struct pc_tls_ctx pc_tls_ctx_t;
typedef struct pc_tls_session pc_tls_session_t;

/* Build a context. Returns PULSARC_OK with *out set, or PULSARC_ERR_TLS_CONFIG (a file or
 * PEM that cannot be loaded, a bad protocol or cipher list) / PULSARC_ERR_NO_MEMORY with
 * the detail set (pc_set_detail). */
pulsarc_result pc_tls_ctx_new(const pc_tls_settings_t *s, pc_tls_ctx_t **out);
/* Another handle on the same context (OpenSSL's is reference counted), freed on its own
 * with pc_tls_ctx_free. It has a session cache of its own (empty), so that what one
 * holder's connections learn never reaches another's. PULSARC_OK, or
 * PULSARC_ERR_NO_MEMORY with the detail set. */
pulsarc_result pc_tls_ctx_share(const pc_tls_ctx_t *ctx, pc_tls_ctx_t **out);
void pc_tls_ctx_free(pc_tls_ctx_t *ctx);

typedef enum pc_tls_refresh {
    PC_TLS_REFRESH_NONE,     /* not due, nothing changed, or the context reads no file */
    PC_TLS_REFRESH_RELOADED, /* a file changed: sessions made from now on use the new one */
    PC_TLS_REFRESH_FAILED,   /* a file changed but cannot be used: the old context stays */
} pc_tls_refresh_t;

/* Called before a new session (a connection or a reconnect): when the context re-reads its
 * files (refresh_s > 0) and refresh_s seconds have passed since it last looked (now_ms on
 * any monotonic clock), look at the files' identity (device, inode, size, modification
 * and change times); when one changed, build a new OpenSSL context from the files. It
 * replaces the old for new sessions only: a session holds the context it was made with
 * (OpenSSL counts references), and the sessions kept for resumption are dropped, since
 * resuming one would present the identity it was made with. On RELOADED, what holds a
 * line for the log naming the client certificate (subject, serial, expiry; never key
 * material); on FAILED, why (the next due check tries again). Cheap when not due: a
 * comparison. */
pc_tls_refresh_t pc_tls_ctx_refresh(pc_tls_ctx_t *ctx, uint64_t now_ms, char *what, size_t cap);

typedef enum pc_tls_status {
    PC_TLS_WANT_MORE, /* the handshake needs more bytes from the peer */
    PC_TLS_DONE,      /* handshake finished and the peer verified */
    PC_TLS_FAILED,    /* see pc_tls_result / pc_tls_detail */
} pc_tls_status_t;

/* A client session towards host:port (host a name, or an IP literal checked as an
 * address). With session resumption on, it offers a session the context kept for that
 * host and port, if any (the handshake then says whether the broker took it). The context
 * must outlive the session. NULL when out of memory. */
pc_tls_session_t *pc_tls_session_new(pc_tls_ctx_t *ctx, const char *host, uint16_t port);
void pc_tls_session_free(pc_tls_session_t *s);

/* Advance the handshake (the first call produces the ClientHello). Only PC_TLS_DONE
 * means the certificate and host name checks have passed. */
pc_tls_status_t pc_tls_handshake(pc_tls_session_t *s);
bool pc_tls_established(const pc_tls_session_t *s);
/* The handshake resumed an earlier session (no certificate was exchanged). */
bool pc_tls_resumed(const pc_tls_session_t *s);

/* Ciphertext read from the socket. Returns 0, or -1 when out of memory. */
int pc_tls_feed(pc_tls_session_t *s, const uint8_t *data, size_t len);
/* Decrypt into out. Returns the number of plaintext bytes (> 0), 0 when no complete
 * record is buffered, or -1 on failure (the session has failed: see pc_tls_result). */
long pc_tls_read(pc_tls_session_t *s, uint8_t *out, size_t cap);
/* Encrypt plaintext (after the handshake). Returns 0 or -1 (failed). */
int pc_tls_write(pc_tls_session_t *s, const uint8_t *data, size_t len);

/* A malloc'ed buffer ciphertext is appended to: len bytes used of cap; grown with realloc
 * when the records do not fit. */
typedef struct pc_tls_out {
    uint8_t *data;
    size_t len, cap;
} pc_tls_out_t;

/* pc_tls_write, with the records appended to the caller's out instead of the session's own
 * output (whatever the session had made before goes first, so the order holds). Lets the
 * caller keep and reuse the buffers ciphertext goes into. 0, or -1 (failed: see
 * pc_tls_result; out keeps what it had, perhaps grown). */
int pc_tls_write_to(pc_tls_session_t *s, const uint8_t *data, size_t len, pc_tls_out_t *out);

/* Ciphertext ready to go to the socket (handshake messages, encrypted records, alerts):
 * a malloc'ed buffer the caller frees, or NULL with *len 0 when there is none. */
uint8_t *pc_tls_take_output(pc_tls_session_t *s, size_t *len);

/* The peer closed the transport before the handshake finished: record why. */
void pc_tls_fail_eof(pc_tls_session_t *s);

/* Why the session failed (PULSARC_OK while it has not), and a sentence saying so. */
pulsarc_result pc_tls_result(const pc_tls_session_t *s);
const char *pc_tls_detail(const pc_tls_session_t *s);

#endif
