/* Authentication providers behind one small interface: a method name for CONNECT, the
 * credentials to send with it, and the answer to the broker's AUTH_CHALLENGE. net/ calls
 * these on every connect and challenge without knowing which provider it holds; the
 * client builds the provider from authPlugin/authParams or the typed setters
 * (auth_plugin.h).
 *
 * Credentials are secrets: they never go into a log line or an error detail, and the
 * buffers that carry them are wiped before they are freed (pc_auth_data_free).
 *
 * Some providers must fetch their data over the network first (OAuth2 asks its issuer
 * for a token): net/ calls pc_auth_prepare before CONNECT and before answering a
 * challenge, and asks for the data only once the provider says it is ready. The loop
 * never blocks on a provider's network traffic.
 * @locality loop thread (a provider may read a file or call the user's supplier). */
#ifndef PC_AUTH_H
#define PC_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/log.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_auth pc_auth_t;
typedef struct pc_auth_wait pc_auth_wait_t;
typedef struct pc_auth_http pc_auth_http_t;
/* A multi-step method's state for one connection (a GSSAPI security context): defined by
 * the provider, held by the connection. */
typedef struct pc_auth_session pc_auth_session_t;
/* A method's state for one HTTP request it authenticates by an exchange of headers (see
 * "HTTP authentication in rounds" below): defined by the provider, held by the request. */
typedef struct pc_auth_http_xchg pc_auth_http_xchg_t;
typedef struct pc_auth_http_reply pc_auth_http_reply_t;

/* Credentials handed out by a provider: malloc'ed (bytes may be NULL when len is 0). The
 * public pulsarc_auth_data_t a custom provider fills (pulsarc_auth_data_set) is this very
 * struct, so built-in and custom providers write into the same wiped buffer. */
struct pulsarc_auth_data {
    uint8_t *bytes;
    size_t len;
};
typedef struct pulsarc_auth_data pc_auth_data_t;

/* The built-ins and the public pulsarc_auth_provider_t (auth_custom.c, an adapter) map
 * one to one: method <- method_name, initial <- initial_data, challenge <- challenge (a
 * "PulsarAuthRefresh" challenge <- refresh then initial_data), http_header <-
 * http_headers, destroy <- free (when the last reference goes); prepare, cancel and
 * use_http stay internal (OAuth2's fetch on the loop). */
typedef struct pc_auth_ops {
    const char *method; /* auth_method_name: "token", "basic", "tls" */
    /* The data for CONNECT. A failure returns PULSARC_ERR_AUTH_PROVIDER (or NO_MEMORY)
     * with a detail that names the source (a path, a variable) but never its content. */
    pulsarc_result (*initial)(pc_auth_t *a, pc_auth_data_t *out);
    /* The answer to an AUTH_CHALLENGE carrying `challenge`; NULL means "fresh initial
     * data", which is what every non-SASL provider answers (a "refresh" challenge after
     * a token expired wants exactly that). */
    pulsarc_result (*challenge)(pc_auth_t *a, const uint8_t *challenge, size_t len,
                                pc_auth_data_t *out);
    void (*destroy)(pc_auth_t *a);
    /* Optional (NULL: the data is always at hand). Start making the data ready and
     * finish w with pc_auth_wait_done once it is, possibly before returning. */
    void (*prepare)(pc_auth_t *a, pc_auth_wait_t *w);
    /* With prepare: forget the pending w; it must not be finished any more. */
    void (*cancel)(pc_auth_t *a, pc_auth_wait_t *w);
    /* Optional: the provider needs HTTP(S) and takes the client's (pc_auth_use_http). */
    void (*use_http)(pc_auth_t *a, const pc_auth_http_t *http);
    /* Optional, with use_http: the CA file its HTTPS peer is verified against (NULL: the
     * system's store). */
    const char *(*http_trust_file)(const pc_auth_t *a);
    /* Optional: why the provider's own traffic carries a secret unencrypted whatever the
     * service URL (an http:// OAuth2 issuer), or NULL. */
    const char *(*cleartext_risk)(const pc_auth_t *a);
    /* Optional: the header lines ("Name: value", "\r\n" between them) for HTTP lookups.
     * NULL: "token" sends a Bearer header of the initial data, "basic" a Basic one. */
    pulsarc_result (*http_header)(pc_auth_t *a, pc_auth_data_t *out);
    /* Optional, all three or none: a method whose exchange is per connection and depends
     * on the host connected to (SASL/GSSAPI: the service principal names the host, and
     * each connection has its own security context). session_start makes the state
     * (*s) and CONNECT's data, session_step answers each AUTH_CHALLENGE with it,
     * session_end frees it (NULL is a no-op). When set, initial and challenge are not
     * used for connections. */
    pulsarc_result (*session_start)(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                                    pc_auth_data_t *out);
    pulsarc_result (*session_step)(pc_auth_t *a, pc_auth_session_t *s, const uint8_t *challenge,
                                   size_t len, pc_auth_data_t *out);
    void (*session_end)(pc_auth_t *a, pc_auth_session_t *s);
    /* Optional, all four or none: HTTP requests authenticated by an exchange of headers
     * (the broker's SASL exchange); see pc_auth_http_begin. http_reads names the answer
     * headers the exchange reads (NULL-terminated, at most PC_AUTH_HTTP_READS_MAX). */
    const char *const *http_reads;
    pulsarc_result (*http_begin)(pc_auth_t *a, const char *host, int port, uint64_t now_ms,
                                 pc_auth_http_xchg_t **x, pc_auth_data_t *lines);
    pulsarc_result (*http_step)(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                const pc_auth_http_reply_t *reply, uint64_t now_ms, int *again,
                                pc_auth_data_t *lines);
    void (*http_end)(pc_auth_t *a, pc_auth_http_xchg_t *x);
} pc_auth_ops_t;

/* Providers embed this as their first member. method overrides ops->method when set (a
 * custom provider names its own). */
struct pc_auth {
    const pc_auth_ops_t *ops;
    const char *method;
};

const char *pc_auth_method(const pc_auth_t *a);
pulsarc_result pc_auth_initial_data(pc_auth_t *a, pc_auth_data_t *out);
pulsarc_result pc_auth_challenge_data(pc_auth_t *a, const uint8_t *challenge, size_t len,
                                      pc_auth_data_t *out);
/* For a connection to host: CONNECT's data, starting a fresh session in *s (the one there
 * before ended) when the provider has sessions, else pc_auth_initial_data. */
pulsarc_result pc_auth_connect_data(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                                    pc_auth_data_t *out);
/* The answer to an AUTH_CHALLENGE on that connection: the session's next step, or, for
 * the broker's "PulsarAuthRefresh", a new session's first data (as the Java client makes a
 * new data provider then); without sessions, pc_auth_challenge_data. */
pulsarc_result pc_auth_connect_challenge(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                                         const uint8_t *challenge, size_t len, pc_auth_data_t *out);
/* End the connection's session, if any; *s becomes NULL. */
void pc_auth_session_end(pc_auth_t *a, pc_auth_session_t **s);
/* True for the broker's refresh challenge (Pulsar's AuthData.REFRESH_AUTH_DATA). */
int pc_auth_is_refresh(const uint8_t *challenge, size_t len);
/* NULL is a no-op. */
void pc_auth_free(pc_auth_t *a);
/* True when the provider writes its own HTTP header lines (pc_auth_http_header). */
int pc_auth_has_http_header(const pc_auth_t *a);
/* The header lines for an HTTP lookup (see pc_auth_ops_t.http_header). */
pulsarc_result pc_auth_http_header(pc_auth_t *a, pc_auth_data_t *out);

/* ---- HTTP authentication in rounds ------------------------------------------------ */

/* Some methods authenticate an HTTP request by an exchange of headers before it: the
 * broker's SASL exchange answers 401 with its token until it is done, then hands out a
 * role token that the request itself carries. net/ drives it for each HTTP lookup:
 *
 *   pc_auth_http_begin   the header lines of the first request (on to the service host)
 *   pc_auth_http_step    each answer, read by the provider: *again says the request must
 *                        go once more with the new lines (another round, or the request
 *                        itself now that the exchange is done), else the answer is the
 *                        request's own and goes to its caller
 *   pc_auth_http_end     the request is over (whatever its outcome)
 *
 * The lines are secrets ("Name: value", "\r\n" between them; an empty value is sent
 * empty), wiped like all auth data. A failure is PULSARC_ERR_AUTH_PROVIDER (the client's
 * side, or an answer that breaks the exchange's rules) or BROKER_AUTHENTICATION (the
 * broker refused), with a detail that quotes no token. The provider bounds the rounds.
 * @locality loop thread. */

#define PC_AUTH_HTTP_READS_MAX 8

/* An answer as the provider reads it: status, and the values of the headers it named in
 * http_reads (values[i] for http_reads[i]; NULL when absent or refused by the HTTP
 * client, then bit i of refused is set: repeated, folded, too long or not printable). */
struct pc_auth_http_reply {
    long status;
    const char *const *values;
    unsigned refused;
};

/* True when the provider authenticates HTTP requests in rounds. */
int pc_auth_has_http_exchange(const pc_auth_t *a);
/* The answer headers its exchange reads (NULL-terminated). */
const char *const *pc_auth_http_reads(const pc_auth_t *a);
/* Start the exchange for a request to host:port (the service host asked; what the
 * provider keeps, a role token, is kept per host and port). now_ms: the runtime's
 * monotonic clock. */
pulsarc_result pc_auth_http_begin(pc_auth_t *a, const char *host, int port, uint64_t now_ms,
                                  pc_auth_http_xchg_t **x, pc_auth_data_t *lines);
pulsarc_result pc_auth_http_step(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                 const pc_auth_http_reply_t *reply, uint64_t now_ms, int *again,
                                 pc_auth_data_t *lines);
/* NULL *x is a no-op; *x becomes NULL. */
void pc_auth_http_end(pc_auth_t *a, pc_auth_http_xchg_t **x);

/* ---- waiting for data that must be fetched ---------------------------------------- */

/* res is PULSARC_OK when initial (or challenge) data can now be had without waiting,
 * else the failure (detail set; it never quotes a secret). */
typedef void (*pc_auth_ready_cb)(pc_auth_wait_t *w, pulsarc_result res);

/* Embedded by the waiter (a connection): no allocation, and pc_auth_cancel makes sure the
 * provider never calls into a waiter that went away. */
struct pc_auth_wait {
    pc_auth_wait_t *next; /* the provider's list while pending */
    pc_auth_ready_cb cb;
    void *ctx;
    int pending;
};

/* Call cb once the data is ready or cannot be (possibly before returning), unless
 * pc_auth_cancel comes first. w must not be pending already. */
void pc_auth_prepare(pc_auth_t *a, pc_auth_wait_t *w, pc_auth_ready_cb cb, void *ctx);
/* No-op unless w is pending. */
void pc_auth_cancel(pc_auth_t *a, pc_auth_wait_t *w);
/* For providers: mark w finished and call its callback. */
void pc_auth_wait_done(pc_auth_wait_t *w, pulsarc_result res);

/* ---- HTTP for providers that need it ---------------------------------------------- */

/* The outcome of a request, as net/http.h reports it: res is PULSARC_OK when an HTTP
 * answer came (whatever its status); body is valid during the call only. */
typedef void (*pc_auth_http_done_cb)(pulsarc_result res, long status, const char *body, size_t len,
                                     void *ctx);

/* auth/ may not include net/, so the client hands a provider its HTTP client as a table
 * (filled with net/http.h's pc_http_get / pc_http_post_form). get and post_form return
 * 0, or -1 when the request could not start (done not called, detail set). */
struct pc_auth_http {
    int (*get)(void *h, const char *url, uint64_t timeout_ms, pc_auth_http_done_cb done, void *ctx);
    int (*post_form)(void *h, const char *url, const char *form, uint64_t timeout_ms,
                     pc_auth_http_done_cb done, void *ctx);
    /* Optional: frees h (which cancels its requests: their done runs with a failure).
     * NULL when h is shared and freed by its owner. */
    void (*release)(void *h);
    void *h;
    uint64_t timeout_ms; /* for each request */
};

/* True when the provider needs HTTP. */
int pc_auth_wants_http(const pc_auth_t *a);
/* The CA file a provider that needs HTTP verifies its peer (the OAuth2 issuer) against:
 * its own setting, never the broker's; NULL: the system's store. The peer's certificate
 * and host name are always verified. */
const char *pc_auth_http_trust_file(const pc_auth_t *a);
/* Hand the provider its HTTP client (copied). NULL detaches: the provider releases the
 * client (on the loop thread, while the loop still runs, since releasing closes handles)
 * and fails whoever waits; the client calls this when it shuts down. */
void pc_auth_use_http(pc_auth_t *a, const pc_auth_http_t *http);

/* ---- credentials in clear text ---------------------------------------------------- */

/* Log one warning when a's secrets would travel unencrypted: a token or password over a
 * service URL without TLS (tls false), or a provider's own plain-text traffic (an http://
 * OAuth2 issuer). The client calls it once, when it is created, so the warning comes once
 * per client, not per connection or message. NULL a is a no-op. */
void pc_auth_warn_cleartext(const pc_auth_t *a, int tls, const pc_logger_t *log);

/* Wipe and free; leaves d empty. */
void pc_auth_data_free(pc_auth_data_t *d);
/* Append n bytes, through a fresh buffer (the old one wiped): 0, or -1 on no memory. */
int pc_auth_data_append(pc_auth_data_t *d, const void *bytes, size_t n);
/* Copy a NUL-terminated string into out (without the NUL). 0, or -1 on no memory. */
int pc_auth_data_set(pc_auth_data_t *out, const char *s);
/* Wipe a NUL-terminated secret and free it; NULL is a no-op. */
void pc_auth_secret_free(char *s);

/* ---- the providers ---------------------------------------------------------------- */

/* A custom provider (the public pulsarc_auth_provider_t, auth_custom.c): a reference-
 * counted holder of the user's callbacks and ctx, shared by configuration copies and the
 * providers built from it; the user's free runs when the last reference goes. */
typedef struct pc_auth_custom pc_auth_custom_t;
/* authPlugin of a configuration with a custom provider: "custom:<method>". */
#define PC_AUTH_CUSTOM_PREFIX "custom:"
/* Validates the layout rule and the method name; on failure the user's free is called
 * (the provider was handed over either way). INVALID_ARGUMENT, UNSUPPORTED, NO_MEMORY. */
pulsarc_result pc_auth_custom_new(const pulsarc_auth_provider_t *p, size_t size, void *ctx,
                                  pc_auth_custom_t **out);
/* Any thread. NULL is a no-op for both. */
void pc_auth_custom_ref(pc_auth_custom_t *cu);
void pc_auth_custom_unref(pc_auth_custom_t *cu);
const char *pc_auth_custom_method(const pc_auth_custom_t *cu);
/* A provider over cu (it takes its own reference). PULSARC_OK or NO_MEMORY. */
pulsarc_result pc_auth_custom(pc_auth_custom_t *cu, pc_auth_t **out);

/* Token (method "token"): each returns PULSARC_OK or PULSARC_ERR_NO_MEMORY. */
pulsarc_result pc_auth_token_literal(const char *token, pc_auth_t **out);
/* Read on every connect and challenge, so a token rotated on disk is picked up. */
pulsarc_result pc_auth_token_file(const char *path, pc_auth_t **out);
/* The variable is read on every connect and challenge. */
pulsarc_result pc_auth_token_env(const char *name, pc_auth_t **out);
/* The user's callback, called on every connect and challenge. */
pulsarc_result pc_auth_token_supplier(pulsarc_token_supplier_cb cb, void *ctx, pc_auth_t **out);

/* Basic (method "basic"): sends "user:password". */
pulsarc_result pc_auth_basic(const char *user, const char *password, pc_auth_t **out);

/* TLS (method "tls"): no data; the identity is the TLS client certificate, which the
 * client's TLS settings carry. cert_file and key_file are the files it is read from (NULL:
 * none, or given as PEM); they must be readable now, whatever the service URL's scheme:
 * PULSARC_ERR_AUTH_PROVIDER otherwise, as for an unreadable token file. */
pulsarc_result pc_auth_tls(const char *cert_file, const char *key_file, pc_auth_t **out);

/* SASL with Kerberos (method "sasl", the Java client's AuthenticationSasl) over the
 * system's GSSAPI library (auth_sasl.c). keytab NULL: the credentials the GSSAPI library
 * finds by itself (the default ticket cache, KRB5_CLIENT_KTNAME); principal NULL: the
 * keytab's (or the cache's) own; server_type NULL: "broker". The broker's service
 * principal is <server_type>/<host connected to>@<the client's realm>, as Java builds it.
 * Returns PULSARC_OK or NO_MEMORY; credentials are acquired at the first connect. */
typedef struct pc_auth_sasl_params {
    const char *keytab;
    const char *principal;
    const char *server_type;
} pc_auth_sasl_params_t;
pulsarc_result pc_auth_sasl(const pc_auth_sasl_params_t *p, pc_auth_t **out);

/* OAuth2 client credentials (method "token"): the access token from the issuer's token
 * endpoint (found through {issuer_url}/.well-known/openid-configuration), cached until
 * shortly before it expires. Needs pc_auth_use_http before the first connect. Strings
 * are copied; scope may be NULL. Returns PULSARC_OK or PULSARC_ERR_NO_MEMORY. */
typedef struct pc_auth_oauth2_params {
    const char *issuer_url;
    const char *client_id;
    const char *client_secret;
    const char *audience;   /* NULL: not sent */
    const char *scope;      /* NULL: not sent */
    const char *trust_file; /* the issuer's CAs (PEM file); NULL: the system's store */
} pc_auth_oauth2_params_t;
pulsarc_result pc_auth_oauth2(const pc_auth_oauth2_params_t *p, pc_auth_t **out);
/* The clock a token's lifetime is counted on; NULL (the default): the monotonic clock.
 * The client passes its runtime's (a test's fake clock, or NULL). */
void pc_auth_oauth2_set_clock(pc_auth_t *a, const pc_clock_t *clock);

#endif
