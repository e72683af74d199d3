/** @file
 * pulsarc — a C producer for Apache Pulsar.
 *
 * Threading: every function may be called from any thread unless its comment says
 * otherwise. The client runs one event-loop thread of its own (pulsarc_client_new), or
 * runs on the application's own libuv loop without a thread of its own
 * (pulsarc_client_new_on_loop, in pulsarc/pulsarc_uv.h): "the loop thread" is that
 * thread, or the thread running the application's loop. Every callback the library makes
 * (send results, flush and close completions, log lines from the loop, statistics,
 * interceptors' on_ack and on_partitions_change) runs on the loop thread, also while
 * pulsarc_client_destroy runs; custom routers and interceptors' before_send run on the
 * thread that sends. Callbacks may send, flush or close asynchronously (_async), create
 * producers with pulsarc_client_create_producer_async, close the client with
 * pulsarc_client_close_async and free producers; blocking calls made on the loop thread
 * (send, flush, close, create_producer, client_destroy) never wait and do nothing: they
 * fail with PULSARC_ERR_WOULD_BLOCK instead of deadlocking the loop.
 *
 * Sharing objects between threads: a client (pulsarc_client_t) and its producers
 * (pulsarc_producer_t) may be used by any number of threads at once, until
 * pulsarc_producer_free / pulsarc_client_destroy, which no other thread may race. Every
 * other object is the caller's own and not synchronised: a message builder
 * (pulsarc_message_t), a configuration, a message id, a schema or a statistics snapshot
 * is used by one thread at a time (hand it over as you would any plain struct). A
 * configuration and a message are copied by the calls that take them, so the caller may
 * reuse or free them as soon as the call returns.
 *
 * Ownership: objects a function returns through an out-parameter belong to the caller
 * and are released with the matching _free/_destroy function; bytes the library
 * allocates for the caller (pulsarc_message_id_serialize) are released with
 * pulsarc_free(), never with the application's free() (the library may come with
 * another allocator than the program). Strings passed in are copied unless a comment
 * says otherwise.
 *
 * Errors: every fallible function returns a pulsarc_result. pulsarc_strerror() describes
 * a code; pulsarc_last_error_detail() gives the detail of the most recent failure on the
 * calling thread (for example the broker's own error message), also inside a send
 * callback that reports a failure.
 */
#ifndef PULSARC_H
#define PULSARC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PULSARC_BUILDING)
#define PULSARC_API __attribute__((visibility("default")))
#else
#define PULSARC_API
#endif

/** @name Version
 * PULSARC_VERSION (MAJOR * 10000 + MINOR * 100 + PATCH) and PULSARC_VERSION_STRING
 * ("MAJOR.MINOR.PATCH") are the version of this header (from pulsarc/version.h, which the
 * build generates); pulsarc_version() and pulsarc_version_string() are those of the library
 * the program runs with: they differ only when the program runs with another build of the
 * shared library than the one it was compiled against. The shared library's SONAME carries
 * the major version (libpulsarc.so.0).
 * @{ */
#include <pulsarc/version.h>

/** The version of the library the program runs with, counted as PULSARC_VERSION is. */
PULSARC_API int pulsarc_version(void);
/** A static string; never freed. */
PULSARC_API const char *pulsarc_version_string(void);

/** Releases bytes the library allocated for the caller (see Ownership above); NULL does
 * nothing. Any thread. */
PULSARC_API void pulsarc_free(void *ptr);

/** @} */

/** @name Results
 * 0 is success; local errors are negative; errors the broker reported are
 * PULSARC_ERR_BROKER_BASE + the protocol's ServerError code.
 * @{ */
/** The result of every fallible call: PULSARC_OK, a local error (negative) or an error the
 * broker reported (PULSARC_ERR_BROKER_BASE + the protocol's ServerError code). */
typedef enum pulsarc_result {
    PULSARC_OK = 0, /**< success */

    PULSARC_ERR_INVALID_ARGUMENT = -1,    /**< NULL or out-of-range argument */
    PULSARC_ERR_INVALID_TOPIC = -2,       /**< topic name does not parse */
    PULSARC_ERR_INVALID_URL = -3,         /**< service URL does not parse */
    PULSARC_ERR_INVALID_CONFIG = -4,      /**< unknown key or bad value */
    PULSARC_ERR_NO_MEMORY = -5,           /**< out of memory */
    PULSARC_ERR_CONNECT_FAILED = -6,      /**< could not resolve or reach a broker, or it did not
                                          * finish the handshake (TLS, CONNECT) within
                                          * connectionTimeoutMs */
    PULSARC_ERR_CONNECTION_CLOSED = -7,   /**< the connection dropped during a request */
    PULSARC_ERR_TIMEOUT = -8,             /**< a request got no answer within operationTimeoutMs */
    PULSARC_ERR_SEND_TIMEOUT = -9,        /**< no receipt within sendTimeoutMs: the message MAY have
                                           been persisted */
    PULSARC_ERR_QUEUE_FULL = -10,         /**< maxPendingMessages reached and blockIfQueueFull off
                                          * (or the send was made on the loop thread) */
    PULSARC_ERR_MEMORY_LIMIT = -11,       /**< client memoryLimitBytes reached, blockIfQueueFull off
                                          * (or the send was made on the loop thread) */
    PULSARC_ERR_MESSAGE_TOO_BIG = -12,    /**< above the broker's max message size, chunking off */
    PULSARC_ERR_ALREADY_CLOSED = -13,     /**< the producer or client is closed */
    PULSARC_ERR_PROTOCOL = -14,           /**< malformed frame or unexpected answer from the peer */
    PULSARC_ERR_TOO_MANY_REDIRECTS = -15, /**< lookup redirected more than maxLookupRedirects */
    PULSARC_ERR_WOULD_BLOCK = -16, /**< a blocking call was made on the client's loop thread */
    PULSARC_ERR_UNSUPPORTED = -17, /**< a feature this build does not provide */
    PULSARC_ERR_DUPLICATE_DROPPED = -18,    /**< the broker dropped the message as a duplicate of
                                          * an id it already had, though this producer never
                                          * sent that id before: it was NOT stored */
    PULSARC_ERR_TLS_HANDSHAKE = -19,        /**< TLS handshake failed (no common protocol or
                                          * cipher, a plain-text peer, a broken stream) */
    PULSARC_ERR_TLS_UNTRUSTED = -20,        /**< the broker's certificate does not chain to a
                                          * trusted CA (self-signed, wrong CA) */
    PULSARC_ERR_TLS_HOSTNAME = -21,         /**< the certificate was not issued for the host */
    PULSARC_ERR_TLS_EXPIRED = -22,          /**< a certificate is expired or not yet valid */
    PULSARC_ERR_TLS_CLIENT_CERT = -23,      /**< the broker wants a client certificate (mTLS) that
                                          * was not given or that it does not trust */
    PULSARC_ERR_TLS_CONFIG = -24,           /**< a CA, certificate or key could not be loaded */
    PULSARC_ERR_AUTH_PROVIDER = -25,        /**< the authentication provider could not produce
                                          * credentials (token file unreadable, issuer down) */
    PULSARC_ERR_CRYPTO = -26,               /**< end-to-end encryption failed: the key reader
                                          * failed or a public key is unusable (with
                                          * cryptoFailureAction=fail) */
    PULSARC_ERR_INVALID_PAYLOAD = -27,      /**< the payload does not match the schema it is sent
                                          * with (bad UTF-8, JSON or Avro, wrong width) */
    PULSARC_ERR_SPOOL = -28,                /**< the producer's spool (spoolDir) cannot be used: a
                                          * directory that cannot be opened or is locked by
                                          * another producer, a spool written under another
                                          * producer name or topic, a failed write or fsync */
    PULSARC_ERR_TXN_DISABLED = -29,         /**< a transaction call on a client without
                                          * enableTransaction=true */
    PULSARC_ERR_TXN_STATE = -30,            /**< the transaction is not open (it is committing,
                                          * aborting or ended): nothing more can be sent in
                                          * it, nor can it end again */
    PULSARC_ERR_TXN_OPERATION_FAILED = -31, /**< a commit found that a send in the
                                          * transaction failed: the transaction was aborted
                                          * instead, nothing of it is visible */

    PULSARC_ERR_BROKER_BASE = 100,           /**< the first of the broker's errors: ServerError 0 */
    PULSARC_ERR_BROKER_UNKNOWN = 100,        /**< the broker's UnknownError */
    PULSARC_ERR_BROKER_METADATA = 101,       /**< the broker's MetadataError */
    PULSARC_ERR_BROKER_PERSISTENCE = 102,    /**< the broker's PersistenceError */
    PULSARC_ERR_BROKER_AUTHENTICATION = 103, /**< the broker's AuthenticationError */
    PULSARC_ERR_BROKER_AUTHORIZATION = 104,  /**< the broker's AuthorizationError */
    PULSARC_ERR_BROKER_CONSUMER_BUSY = 105,  /**< the broker's ConsumerBusy */
    PULSARC_ERR_BROKER_SERVICE_NOT_READY = 106,        /**< the broker's ServiceNotReady */
    PULSARC_ERR_BROKER_QUOTA_EXCEEDED_ERROR = 107,     /**< ProducerBlockedQuotaExceededError */
    PULSARC_ERR_BROKER_QUOTA_EXCEEDED_EXCEPTION = 108, /**< ProducerBlockedQuotaExceededException */
    PULSARC_ERR_BROKER_CHECKSUM = 109,                 /**< the broker's ChecksumError */
    PULSARC_ERR_BROKER_UNSUPPORTED_VERSION = 110,      /**< the broker's UnsupportedVersionError */
    PULSARC_ERR_BROKER_TOPIC_NOT_FOUND = 111,          /**< the broker's TopicNotFound */
    PULSARC_ERR_BROKER_SUBSCRIPTION_NOT_FOUND = 112,   /**< the broker's SubscriptionNotFound */
    PULSARC_ERR_BROKER_CONSUMER_NOT_FOUND = 113,       /**< the broker's ConsumerNotFound */
    PULSARC_ERR_BROKER_TOO_MANY_REQUESTS = 114,        /**< the broker's TooManyRequests */
    PULSARC_ERR_BROKER_TOPIC_TERMINATED = 115,         /**< the broker's TopicTerminatedError */
    PULSARC_ERR_BROKER_PRODUCER_BUSY = 116,            /**< the broker's ProducerBusy */
    PULSARC_ERR_BROKER_INVALID_TOPIC_NAME = 117,       /**< the broker's InvalidTopicName */
    PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA = 118,      /**< the broker's IncompatibleSchema */
    PULSARC_ERR_BROKER_CONSUMER_ASSIGN = 119,          /**< the broker's ConsumerAssignError */
    PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND = 120, /**< TransactionCoordinatorNotFound */
    PULSARC_ERR_BROKER_INVALID_TXN_STATUS = 121,        /**< the broker's InvalidTxnStatus */
    PULSARC_ERR_BROKER_NOT_ALLOWED = 122,               /**< the broker's NotAllowedError */
    PULSARC_ERR_BROKER_TXN_CONFLICT = 123,              /**< the broker's TransactionConflict */
    PULSARC_ERR_BROKER_TXN_NOT_FOUND = 124,             /**< the broker's TransactionNotFound */
    PULSARC_ERR_BROKER_PRODUCER_FENCED = 125,           /**< the broker's ProducerFenced */
    PULSARC_ERR_BROKER_LAST = 125, /**< the last of the broker's errors this version knows */
} pulsarc_result;

/** A sentence describing the code ("send timeout: the message may have been persisted"). */
PULSARC_API const char *pulsarc_strerror(pulsarc_result res);
/** The enumerator's name without the prefix ("SEND_TIMEOUT"). */
PULSARC_API const char *pulsarc_result_name(pulsarc_result res);
/** Detail of the most recent failure on the calling thread; "" when there is none. The
 * string stays valid until the next pulsarc call on the same thread. */
PULSARC_API const char *pulsarc_last_error_detail(void);
/** Nonzero when res means the producer has stopped for good (topic terminated, producer
 * fenced, not allowed, not authorised or authenticated, invalid topic or schema, a
 * configuration the broker refuses such as an unknown listenerName): retrying
 * cannot help, and every later send on that producer fails with the same result. Other
 * broker errors (producer busy, service not ready, quota, topic not found after creation)
 * are retried with backoff. */
PULSARC_API int pulsarc_result_is_terminal(pulsarc_result res);

/** @} */

/** @name Logging
 * @{ */
/** The severity of a log line; logLevel names the least severe that is logged. */
typedef enum pulsarc_log_level {
    PULSARC_LOG_DEBUG = 0, /**< details of the client's work */
    PULSARC_LOG_INFO = 1,  /**< connections, registrations and other events */
    PULSARC_LOG_WARN = 2,  /**< trouble the client works around */
    PULSARC_LOG_ERROR = 3, /**< failures */
    PULSARC_LOG_OFF = 4,   /**< as logLevel: nothing is logged */
} pulsarc_log_level;

/** Called for each log line at or above the configured level, on whichever thread logged
 * (mostly the loop thread). Must not block for long. */
typedef void (*pulsarc_log_cb)(pulsarc_log_level level, const char *file, int line,
                               const char *message, void *ctx);

/** @} */

/** @name Client configuration
 * A client's settings: keys named as the official Java client names them, given as text to
 * pulsarc_client_config_set (an unknown key or a bad value fails with
 * PULSARC_ERR_INVALID_CONFIG and a detail message), and typed setters for what is not a
 * plain value: the logger and the statistics callback here, TLS material, authentication
 * and failover clusters in the groups below. Every key, client and producer, is documented
 * once, in docs/configuration.md (the "Configuration keys" page of this reference): its
 * default, the values it takes and what it does. pulsarc_client_config_dump prints the
 * effective values.
 * @{ */
/** A client's configuration, opaque: the keys of docs/configuration.md, set with
 * pulsarc_client_config_set, and the typed setters below. */
typedef struct pulsarc_client_config pulsarc_client_config_t;

/** A configuration with every key at its default; NULL when out of memory. */
PULSARC_API pulsarc_client_config_t *pulsarc_client_config_new(void);
/** Frees conf (NULL: nothing); the clients made with it keep copies of their own. */
PULSARC_API void pulsarc_client_config_free(pulsarc_client_config_t *conf);
/** Sets key to value, given as text; PULSARC_ERR_INVALID_CONFIG, with a detail, for an
 * unknown key or a bad value. */
PULSARC_API pulsarc_result pulsarc_client_config_set(pulsarc_client_config_t *conf, const char *key,
                                                     const char *value);
/** Replace the default logger (which writes to stderr). cb may be NULL to silence. */
PULSARC_API void pulsarc_client_config_set_logger(pulsarc_client_config_t *conf, pulsarc_log_cb cb,
                                                  void *ctx);
/** Print every setting with its effective value, one "key=value" per line, into buf,
 * then each cluster added with pulsarc_client_config_add_failover_cluster, in the order
 * added (N from 0): failoverCluster.N.serviceUrl, .authPlugin (custom:METHOD for your own
 * provider), .authParams (whether set, never the value) and .tlsTrustCertsFilePath.
 * Returns the length that was needed (like snprintf); buf may be NULL when len is 0. */
PULSARC_API size_t pulsarc_client_config_dump(const pulsarc_client_config_t *conf, char *buf,
                                              size_t len);
/** The keys pulsarc_client_config_set takes, for tools that list them or suggest one for
 * a misspelt key: the name of key number index (0, 1, ... in the order of
 * docs/configuration.md), NULL past the last. A static string. */
PULSARC_API const char *pulsarc_client_config_key_name(size_t index);
/** The values an enumerated client key takes (logLevel: "debug", "info", ...): value
 * number index (0, 1, ...), NULL past the last, and NULL for a key that is not enumerated
 * or not a client key. pulsarc_client_config_set matches them without regard to case. A
 * static string. */
PULSARC_API const char *pulsarc_client_config_key_value(const char *key, size_t index);
/** Called every statsIntervalSeconds (when that is not 0) with the client's statistics, a
 * JSON object of len bytes laid out as docs/statistics.md says (the same text
 * pulsarc_stats_json gives for pulsarc_client_stats), NUL-terminated and valid only
 * during the call. Runs on the loop thread, like every callback: keep it quick (hand the
 * text to another thread to ship it). cb NULL removes it. As librdkafka's stats_cb with
 * statistics.interval.ms. */
typedef void (*pulsarc_stats_cb)(const char *json, size_t len, void *ctx);
/** Sets the statistics callback (see pulsarc_stats_cb); cb NULL removes it. */
PULSARC_API pulsarc_result pulsarc_client_config_set_stats_cb(pulsarc_client_config_t *conf,
                                                              pulsarc_stats_cb cb, void *ctx);

/** @} */

/** @name TLS material in memory
 * PEM text instead of the files tlsTrustCertsFilePath, tlsCertificateFilePath and
 * tlsKeyFilePath name (a PEM given here wins over the file of the same role). The text is
 * copied and checked at once: a PEM that does not parse is PULSARC_ERR_TLS_CONFIG. NULL
 * clears. The key is a secret: never logged or dumped, and wiped from memory when replaced
 * or freed. Keys with a passphrase are not supported.
 * @{ */

/** Trusted CA certificates (one or more PEM certificates). */
PULSARC_API pulsarc_result
pulsarc_client_config_set_tls_trust_certs_pem(pulsarc_client_config_t *conf, const char *pem);
/** The client certificate (optionally followed by its chain) and its private key, for
 * mTLS; both or neither (NULL, NULL clears). */
PULSARC_API pulsarc_result pulsarc_client_config_set_tls_cert_pem(pulsarc_client_config_t *conf,
                                                                  const char *cert_pem,
                                                                  const char *key_pem);

/** @} */

/** @name Authentication
 * Typed equivalents of authPlugin + authParams. Each setter replaces whatever
 * authentication was configured before (it rewrites both keys, so dumps show authPlugin and
 * keep authParams masked). The secrets are copied, and wiped like authParams
 * (docs/configuration.md).
 *
 * authParams by plugin, as the official clients write them:
 *   token   "token:<jwt>" | "file:///path" | "env:NAME" | {"token":"<jwt>"} |
 *           {"file":"/path"} | the bare token. A file or variable is read again on every
 *           connect and every AUTH_CHALLENGE from the broker (token refresh).
 *   basic   {"userId":"u","password":"p"} | "userId:u,password:p"
 *   tls     {"tlsCertFile":"/c.pem","tlsKeyFile":"/k.pem"} |
 *           "tlsCertFile:/c.pem,tlsKeyFile:/k.pem": sets tlsCertificateFilePath and
 *           tlsKeyFilePath unless those are set themselves
 *   oauth2  {"issuer_url":"https://...","private_key":"/creds.json","audience":"..."}
 *           (or client_id + client_secret; or the Java names issuerUrl, privateKey),
 *           "scope" optional, "trustCertsFilePath" the issuer's CAs (unset: the system's
 *           store). The issuer's certificate and host name are always verified: the
 *           broker's tlsTrustCertsFilePath, tlsAllowInsecureConnection and
 *           tlsEnableHostnameVerification=false do not apply to it.
 *   sasl    {"keytab":"/client.keytab","principal":"client@EXAMPLE.COM",
 *           "serverType":"broker"}: Kerberos (SASL GSSAPI) as the Java client's
 *           AuthenticationSasl; each key optional (no keytab: the default ticket cache;
 *           serverType "proxy" through a Pulsar proxy). KRB5_CONFIG names the realm's
 *           krb5.conf as for any Kerberos program. Binary protocol only: an http(s)://
 *           service URL fails with PULSARC_ERR_UNSUPPORTED. docs/security.md (Kerberos).
 * An unknown plugin or bad parameters fail pulsarc_client_new with
 * PULSARC_ERR_INVALID_CONFIG; a token that cannot be read at connect time fails the
 * connection (and so producer creation) with PULSARC_ERR_AUTH_PROVIDER. A token or
 * password over pulsar:// or http:// (or a client secret to an http:// issuer) travels
 * unencrypted: pulsarc_client_new logs one warning saying so.
 *
 * Secrets in memory: the library wipes its copies of tokens, passwords, client secrets,
 * OAuth2 access tokens and private keys given as PEM before it frees them, as well as
 * the HTTP headers, forms and answers that carry them and the copies jansson makes while
 * parsing authParams, credentials files and token answers (unless the application has
 * installed its own jansson allocator, which it then keeps); it hands a client key PEM to
 * libcurl without letting curl copy it; the encoded CONNECT and AUTH_RESPONSE frames
 * (and, over TLS, the plaintext copy they pass through) are wiped once written. Not
 * wiped: libcurl's request buffer (the Authorization header, the token request's form)
 * and OpenSSL's internal buffers.
 * @{ */

/** Supplies a token on each connect and each AUTH_CHALLENGE, on the client's loop thread
 * (keep it quick: fetching over the network here stalls every producer of the client).
 * Returns a NUL-terminated token in memory from malloc(), which the library wipes and
 * releases with free(); NULL means no token is available (the connection attempt fails
 * with PULSARC_ERR_AUTH_PROVIDER and is retried like any failed connect). */
typedef char *(*pulsarc_token_supplier_cb)(void *ctx);

/** The token itself (a JWT). */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_token(pulsarc_client_config_t *conf,
                                                                const char *token);
/** A file holding the token (read on every connect and challenge; blanks trimmed). */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_token_file(pulsarc_client_config_t *conf,
                                                                     const char *path);
/** An environment variable holding the token (read on every connect and challenge). */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_token_env(pulsarc_client_config_t *conf,
                                                                    const char *name);
/** A callback that supplies the token (see pulsarc_token_supplier_cb). */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_token_supplier(
    pulsarc_client_config_t *conf, pulsarc_token_supplier_cb cb, void *ctx);
/** HTTP-basic-style credentials (method "basic"); user must not contain ':'. */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_basic(pulsarc_client_config_t *conf,
                                                                const char *user,
                                                                const char *password);
/** Mutual TLS as the identity (method "tls"): the client certificate and its key (PEM). */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_tls(pulsarc_client_config_t *conf,
                                                              const char *cert_file,
                                                              const char *key_file);

/** A library-owned buffer for credentials that a provider fills (pulsarc_auth_data_set,
 * pulsarc_auth_data_append). The library wipes it (OPENSSL_cleanse) before it frees it,
 * once the frame or request that carries it is written; the provider keeps no pointer to
 * it after its callback returns. */
typedef struct pulsarc_auth_data pulsarc_auth_data_t;

/** Replace the buffer's content with a copy of len bytes (the old content is wiped).
 * PULSARC_OK, PULSARC_ERR_INVALID_ARGUMENT (NULL out, or NULL bytes with len > 0) or
 * PULSARC_ERR_NO_MEMORY. */
PULSARC_API pulsarc_result pulsarc_auth_data_set(pulsarc_auth_data_t *out, const void *bytes,
                                                 size_t len);
/** Append a copy of len bytes (grows the buffer without leaving an unwiped copy behind). */
PULSARC_API pulsarc_result pulsarc_auth_data_append(pulsarc_auth_data_t *out, const void *bytes,
                                                    size_t len);

/** Your own authentication method (pulsarc_client_config_set_auth_provider). Only
 * method_name and initial_data are required; the other callbacks may be NULL.
 *
 * Threads: every callback but free runs on the client's loop thread, one at a time for a
 * client. The library waits for each: while one runs, nothing else of the client moves
 * (no receipts, no sends written, no timers), and no timeout can interrupt it, so a
 * callback that blocks (reads a vault, asks a server) stalls every producer of the client
 * for that long; the connect that asked for the data is still bounded by
 * connectionTimeoutMs once the callback returns. Fetch slow credentials ahead of time
 * (another thread of yours refreshing a cache) and answer from memory. A configuration
 * used for several clients calls the same ctx from each client's loop thread, possibly
 * at the same time.
 *
 * Return PULSARC_OK, or any other result to fail: the connection (or HTTP lookup) then
 * fails with PULSARC_ERR_AUTH_PROVIDER, its detail naming the method and the callback,
 * and is retried like any failed connect. Data a failing callback wrote is wiped and
 * dropped. Never put a secret in a log line of yours either.
 *
 * Layout and ABI: pass sizeof(pulsarc_auth_provider_t) as the size. Later versions only
 * add members at the end: a library accepts the smaller struct of an older caller (the
 * missing callbacks are NULL), and a larger one of a newer caller only when every byte
 * past the members it knows is zero (else PULSARC_ERR_UNSUPPORTED). */
typedef struct pulsarc_auth_provider {
    /** auth_method_name of CONNECT and AUTH_RESPONSE ("token" for a JWT the broker's
     * AuthenticationProviderToken checks): 1 to 63 characters out of A-Z a-z 0-9 . _ -;
     * copied. */
    const char *method_name;
    /** The auth data for CONNECT, asked afresh on every connect. */
    pulsarc_result (*initial_data)(void *ctx, pulsarc_auth_data_t *out);
    /** The answer to an AUTH_CHALLENGE carrying `challenge` (len bytes, valid during the
     * call), on the same connection. NULL: every challenge is answered as a refresh. */
    pulsarc_result (*challenge)(void *ctx, const uint8_t *challenge, size_t len,
                                pulsarc_auth_data_t *out);
    /** The HTTP header lines for a lookup over http(s):// ("Authorization: Bearer ...",
     * several separated by "\r\n"; no other control characters), asked before each
     * request. Sent only to the service URL's hosts (see httpLookupAuthAllowRedirect).
     * NULL: method "token" sends "Authorization: Bearer <initial data>", "basic" its
     * Basic header, any other method fails HTTP lookups with PULSARC_ERR_UNSUPPORTED. */
    pulsarc_result (*http_headers)(void *ctx, pulsarc_auth_data_t *out);
    /** The broker holds expired credentials (its AUTH_CHALLENGE "PulsarAuthRefresh",
     * after authenticationRefreshCheckSeconds; any challenge when challenge is NULL):
     * drop whatever you cache. initial_data is asked right after, and its data answers
     * the challenge. */
    void (*refresh)(void *ctx);
    /** Called once, when the configuration and every client made from it are done with
     * ctx: from the thread that lets go last (pulsarc_client_config_free, or the client's
     * close or free), never while another callback runs. Also called when setting the
     * provider fails. */
    void (*free)(void *ctx);
} pulsarc_auth_provider_t;

/** Your own method (pulsarc_auth_provider_t) as the client's authentication (a failover
 * cluster's: pulsarc_client_config_set_failover_cluster_auth_provider): replaces any
 * authentication set before; dumps show authPlugin=custom:METHOD (METHOD the method_name)
 * and nothing of ctx. provider is copied (size: sizeof(pulsarc_auth_provider_t)); ctx is
 * handed to every callback. Setting
 * authPlugin afterwards (pulsarc_client_config_set or another typed setter) drops the
 * provider. Errors: PULSARC_ERR_INVALID_ARGUMENT (NULL conf or provider, no initial_data,
 * a bad method name), PULSARC_ERR_UNSUPPORTED (see the layout rule), NO_MEMORY. */
PULSARC_API pulsarc_result pulsarc_client_config_set_auth_provider(
    pulsarc_client_config_t *conf, const pulsarc_auth_provider_t *provider, size_t size, void *ctx);

/** @} */

/** @name Cluster failover
 * The Java client's AutoClusterFailover (the C++ client's AutoClusterFailover, a
 * ServiceInfoProvider), and its ServiceUrlProvider.
 *
 * Automatic: the service URL given to pulsarc_client_new is the primary cluster;
 * failoverSecondaryUrls and then the clusters added here, in order, are the secondaries.
 * Every failoverCheckIntervalMs the client probes the active cluster as the official
 * clients do: can a TCP connection be opened to a host of its service URL (within
 * connectionTimeoutMs; nothing is sent). When it has failed every probe for
 * failoverDelayMs, the client switches to the first of the others, the primary first,
 * that passes a probe. While a secondary is active the primary is probed too, and once
 * it has passed every probe for switchBackDelayMs the client switches back to it.
 * Probes run on the loop thread and never block it.
 *
 * A switch closes every connection: each producer then takes its usual reconnect path
 * (look the topic up on the new cluster, register, resend its pending messages in order)
 * at once, whatever its backoff. Every message gets its callback once. A message in
 * flight at the switch (written, no receipt yet) may be stored by both clusters:
 * deduplication does not span clusters. Sequence ids go on from where they were.
 *
 * Credentials go only where they are configured: a cluster added with its own
 * authentication gets that and nothing else (not the client's authPlugin, nor its client
 * certificate); the client's authentication goes to the primary and to the secondaries
 * of failoverSecondaryUrls. tlsProtocols, tlsCiphers, tlsAllowInsecureConnection and
 * tlsEnableHostnameVerification apply to every cluster.
 *
 * A switch from a pulsar+ssl:// or https:// URL to a plain-text one (by failover, a
 * service URL provider's answer or pulsarc_client_update_service_url) sends everything,
 * the credentials included, in clear text from then on: each such switch is logged at
 * WARN (the URLs, never a secret) and counted (PULSARC_STAT_TLS_DOWNGRADES, JSON
 * "tls_downgrades"). It is not refused: the URL comes from the application or its
 * configuration, a plain URL at creation is likewise only warned about, and the Java and
 * C++ clients switch without a word.
 * @{ */

/** A secondary cluster with its own credentials and trust (the C++ client's ServiceInfo),
 * after those of failoverSecondaryUrls, in the order added (16 secondaries at most).
 * auth_plugin and auth_params as authPlugin and authParams (see "Authentication"); NULL
 * plugin: no authentication (or your own provider, set afterwards with
 * pulsarc_client_config_set_failover_cluster_auth_provider). auth_params is a secret: copied, never logged or dumped,
 * wiped when the configuration is freed. tls_trust_certs_file: a PEM file of CAs for this
 * cluster; NULL: the client's trust settings. A tls plugin's certificate is this
 * cluster's client certificate. Fails with PULSARC_ERR_INVALID_URL (the URL does not
 * parse), PULSARC_ERR_INVALID_CONFIG (an unknown plugin, too many clusters) or
 * PULSARC_ERR_INVALID_ARGUMENT; bad parameters fail pulsarc_client_new, as for the
 * client's own. */
PULSARC_API pulsarc_result pulsarc_client_config_add_failover_cluster(
    pulsarc_client_config_t *conf, const char *service_url, const char *auth_plugin,
    const char *auth_params, const char *tls_trust_certs_file);

/** Your own method (pulsarc_auth_provider_t, see "Authentication") as the credentials of
 * a cluster added with pulsarc_client_config_add_failover_cluster: the one added last
 * with this service_url (the same text). Its connections and HTTP lookups present this
 * provider's data and nothing else; no other cluster ever gets it, and the client's own
 * authentication never goes to this cluster. It replaces the cluster's auth_plugin and
 * auth_params, or the provider set for it before (whose free then runs); the client's
 * authentication setters leave it alone. Dumps show failoverCluster.N.authPlugin=
 * custom:METHOD (METHOD the method_name) and nothing of ctx. provider is copied, by the
 * same layout rule (size: sizeof(pulsarc_auth_provider_t)); ctx is shared by the
 * configuration, its copies and every client made from it, and free runs once, when the
 * last of them lets go. On failure ctx is handed over all the same: free has run when
 * provider was given. Errors: PULSARC_ERR_INVALID_ARGUMENT (NULL conf, service_url or
 * provider, no cluster added with that URL, no initial_data, a bad method name),
 * PULSARC_ERR_UNSUPPORTED (see the layout rule), NO_MEMORY. */
PULSARC_API pulsarc_result pulsarc_client_config_set_failover_cluster_auth_provider(
    pulsarc_client_config_t *conf, const char *service_url, const pulsarc_auth_provider_t *provider,
    size_t size, void *ctx);

/** The user's service URL provider (the Java client's ServiceUrlProvider): asked for the
 * service URL every failoverCheckIntervalMs, on the client's loop thread, from the first
 * interval on (the URL given to pulsarc_client_new comes first). Write a service URL
 * (NUL-terminated, at most len bytes with the NUL) into buf and return 0, or return
 * nonzero to keep the current one. A URL other than the current one becomes active as
 * in a switch above, with the client's authentication and TLS settings (the client builds
 * its TLS context at creation, so a pulsar+ssl:// URL may come later); one that does not
 * parse is logged and ignored. The function must return quickly: no network, no blocking
 * calls. Not with failover clusters (pulsarc_client_new fails with
 * PULSARC_ERR_INVALID_CONFIG). cb NULL removes it. */
typedef int (*pulsarc_service_url_provider_cb)(void *ctx, char *buf, size_t len);
/** Sets the service URL provider (see pulsarc_service_url_provider_cb). */
PULSARC_API pulsarc_result pulsarc_client_config_set_service_url_provider(
    pulsarc_client_config_t *conf, pulsarc_service_url_provider_cb cb, void *ctx);

/** @} */

/** @name Schemas
 * A producer with a schema registers it with the broker's schema registry, so typed
 * consumers (Java, Python, Go) read its messages as records; every message then carries the
 * schema version the broker assigned. A schema is built once, given to a producer
 * configuration (pulsarc_producer_config_set_schema) or to single messages
 * (pulsarc_message_set_schema, for producers that publish several schemas), and freed by
 * the caller whenever it likes: configurations and messages keep their own reference. A
 * schema is frozen once it was given away: pulsarc_schema_set_property then fails with
 * PULSARC_ERR_INVALID_ARGUMENT.
 *
 * Payload checks: unless the producer setting schemaValidationEnabled is false, every
 * send checks the payload against the message's schema before the message is accepted
 * and fails with PULSARC_ERR_INVALID_PAYLOAD (and a detail saying what is wrong):
 *   STRING          valid UTF-8 (no overlong forms, surrogates or code points > U+10FFFF)
 *   JSON            one JSON value (jansson), nothing but blanks after it
 *   AVRO            Avro binary that decodes against the definition, with nothing left
 *                   over; only when the library was built with avro-c (libavro-dev):
 *                   pulsarc_schema_avro_validation_available() says so. Without it
 *                   AVRO payloads are not checked.
 *   BOOLEAN, INT8 .. LOCAL_DATE_TIME   exactly the width the Java client writes (see
 *                   the encoders below)
 *   KEY_VALUE       INLINE: the layout parses and both parts pass their own checks;
 *                   SEPARATED: the payload passes the value schema's check
 *   BYTES, PROTOBUF, PROTOBUF_NATIVE   not checked
 * @{ */

/** The protocol's Schema.Type numbers, plus AUTO_PRODUCE which is local only. */
typedef enum pulsarc_schema_type {
    PULSARC_SCHEMA_AUTO_PRODUCE = -1, /**< take the topic's schema at creation (GET_SCHEMA)
                                          * and check raw payloads against it */
    PULSARC_SCHEMA_BYTES = 0,         /**< "NONE" on the wire: no schema is registered */
    PULSARC_SCHEMA_STRING = 1,        /**< UTF-8 text */
    PULSARC_SCHEMA_JSON = 2,          /**< JSON documents (an Avro record definition) */
    PULSARC_SCHEMA_PROTOBUF = 3,      /**< Protocol Buffers */
    PULSARC_SCHEMA_AVRO = 4,          /**< Avro binary */
    PULSARC_SCHEMA_BOOLEAN = 5,       /**< 1 byte */
    PULSARC_SCHEMA_INT8 = 6,          /**< 1 byte */
    PULSARC_SCHEMA_INT16 = 7,         /**< 2 bytes */
    PULSARC_SCHEMA_INT32 = 8,         /**< 4 bytes */
    PULSARC_SCHEMA_INT64 = 9,         /**< 8 bytes */
    PULSARC_SCHEMA_FLOAT = 10,        /**< 4 bytes, IEEE 754 */
    PULSARC_SCHEMA_DOUBLE = 11,       /**< 8 bytes, IEEE 754 */
    PULSARC_SCHEMA_DATE = 12,         /**< int64 milliseconds since the epoch */
    PULSARC_SCHEMA_TIME = 13,         /**< int64 milliseconds of the day */
    PULSARC_SCHEMA_TIMESTAMP = 14,    /**< int64 milliseconds since the epoch */
    PULSARC_SCHEMA_KEY_VALUE = 15,  /**< a key and a value schema (pulsarc_schema_new_key_value) */
    PULSARC_SCHEMA_INSTANT = 16,    /**< seconds and nanoseconds (12 bytes) */
    PULSARC_SCHEMA_LOCAL_DATE = 17, /**< int64 days since 1970-01-01 */
    PULSARC_SCHEMA_LOCAL_TIME = 18, /**< int64 nanoseconds of the day */
    PULSARC_SCHEMA_LOCAL_DATE_TIME = 19, /**< days and nanoseconds of the day (16 bytes) */
    PULSARC_SCHEMA_PROTOBUF_NATIVE = 20, /**< Protocol Buffers with a native descriptor */
} pulsarc_schema_type;

/** How a KEY_VALUE schema lays a message out (as the Java client does):
 *   INLINE     payload = [int32 BE key length][key][int32 BE value length][value]
 *   SEPARATED  payload = value; the key goes into the message key, base64-encoded, with
 *              the protocol's partition_key_b64_encoded flag set (so routing, compaction
 *              and Key_Shared use the key) */
typedef enum pulsarc_key_value_encoding {
    PULSARC_KV_INLINE = 0,    /**< key and value in the payload */
    PULSARC_KV_SEPARATED = 1, /**< the key in the message key, the value in the payload */
} pulsarc_key_value_encoding;

/** A schema, opaque (see "Schemas" above); configurations and messages given it keep a
 * reference of their own. */
typedef struct pulsarc_schema pulsarc_schema_t;

/** Any schema: type, name (NULL = the Java client's default name for the type, e.g.
 * "String", "INT32"; "" for JSON/AVRO/PROTOBUF), definition bytes (schema_data, may be
 * NULL when len is 0), no properties. AVRO and JSON definitions must be an Avro schema
 * in JSON text (checked: JSON always, Avro when avro-c is available); PROTOBUF and
 * PROTOBUF_NATIVE definitions are taken as given. KEY_VALUE: use
 * pulsarc_schema_new_key_value. */
PULSARC_API pulsarc_result pulsarc_schema_new(pulsarc_schema_type type, const char *name,
                                              const void *data, size_t len, pulsarc_schema_t **out);
/** AVRO / JSON from an Avro schema definition (JSON text, e.g. {"type":"record",...}),
 * with the properties the Java client sets for them (__alwaysAllowNull=true,
 * __jsr310ConversionEnabled=false). A JSON schema's definition is an Avro record
 * definition, as every official client writes it. */
PULSARC_API pulsarc_result pulsarc_schema_new_avro(const char *definition, pulsarc_schema_t **out);
/** JSON from an Avro record definition, as pulsarc_schema_new_avro describes. */
PULSARC_API pulsarc_result pulsarc_schema_new_json(const char *definition, pulsarc_schema_t **out);
/** The types without a definition: BYTES, STRING, BOOLEAN, INT8 .. LOCAL_DATE_TIME except
 * KEY_VALUE, and AUTO_PRODUCE. Named as the Java client names them. */
PULSARC_API pulsarc_result pulsarc_schema_new_primitive(pulsarc_schema_type type,
                                                        pulsarc_schema_t **out);
/** KEY_VALUE from a key and a value schema (neither AUTO_PRODUCE nor KEY_VALUE), laid out
 * as Java's KeyValueSchemaInfo: name "KeyValue", schema_data = [int32 BE key definition
 * length][key definition][int32 BE value definition length][value definition],
 * properties key.schema.name/type/properties, value.schema.name/type/properties and
 * kv.encoding.type (INLINE | SEPARATED). */
PULSARC_API pulsarc_result pulsarc_schema_new_key_value(const pulsarc_schema_t *key,
                                                        const pulsarc_schema_t *value,
                                                        pulsarc_key_value_encoding encoding,
                                                        pulsarc_schema_t **out);
/** Adds or replaces a property (sent with the schema). Fails once the schema is frozen. */
PULSARC_API pulsarc_result pulsarc_schema_set_property(pulsarc_schema_t *schema, const char *key,
                                                       const char *value);
/** Releases the caller's reference (NULL: nothing). */
PULSARC_API void pulsarc_schema_free(pulsarc_schema_t *schema);

/** The schema's type. */
PULSARC_API pulsarc_schema_type pulsarc_schema_get_type(const pulsarc_schema_t *schema);
/** The schema's name. */
PULSARC_API const char *pulsarc_schema_name(const pulsarc_schema_t *schema);
/** The definition (schema_data) and its length; never NULL (an empty definition is ""). */
PULSARC_API const void *pulsarc_schema_data(const pulsarc_schema_t *schema, size_t *len);
/** NULL when the schema has no such property. */
PULSARC_API const char *pulsarc_schema_property(const pulsarc_schema_t *schema, const char *key);
/** Properties by index, 0 .. count-1, in the order they were added. */
PULSARC_API size_t pulsarc_schema_property_count(const pulsarc_schema_t *schema);
/** The key and value of property index; PULSARC_ERR_INVALID_ARGUMENT past the last. */
PULSARC_API pulsarc_result pulsarc_schema_property_at(const pulsarc_schema_t *schema, size_t index,
                                                      const char **key, const char **value);
/** For a KEY_VALUE schema: its encoding and its two parts (owned by schema). */
PULSARC_API pulsarc_key_value_encoding pulsarc_schema_kv_encoding(const pulsarc_schema_t *schema);
/** A KEY_VALUE schema's key schema (owned by schema). */
PULSARC_API const pulsarc_schema_t *pulsarc_schema_kv_key(const pulsarc_schema_t *schema);
/** A KEY_VALUE schema's value schema (owned by schema). */
PULSARC_API const pulsarc_schema_t *pulsarc_schema_kv_value(const pulsarc_schema_t *schema);
/** Names for types ("INT32", "KEY_VALUE", "AUTO_PRODUCE", as the Java enum spells them but
 * BOOLEAN for Bool) and the reverse (case-insensitive; "NONE" is BYTES). */
PULSARC_API const char *pulsarc_schema_type_name(pulsarc_schema_type type);
/** The type a name names (case-insensitive; "NONE" is BYTES). */
PULSARC_API pulsarc_result pulsarc_schema_type_from_name(const char *name,
                                                         pulsarc_schema_type *out);
/** Nonzero when this build checks AVRO payloads (it was built with avro-c). */
PULSARC_API int pulsarc_schema_avro_validation_available(void);
/** Checks payload against schema as a send would (see "Payload checks" above). Returns
 * PULSARC_OK or PULSARC_ERR_INVALID_PAYLOAD with the reason in
 * pulsarc_last_error_detail(). An AUTO_PRODUCE schema (no topic yet) accepts anything. */
PULSARC_API pulsarc_result pulsarc_schema_validate(const pulsarc_schema_t *schema,
                                                   const void *payload, size_t len);

/** Value encoders, byte for byte as the Java client's schemas encode (big-endian,
 * IEEE 754 for FLOAT/DOUBLE). They write into out and return the number of bytes written.
 *   BOOLEAN  1 byte, 1 or 0
 *   INT8 1, INT16 2, INT32 4, INT64 8 bytes
 *   FLOAT 4, DOUBLE 8 bytes
 *   DATE, TIME, TIMESTAMP   int64 milliseconds (since the epoch; TIME: of the day)
 *   LOCAL_DATE   int64 days since 1970-01-01;  LOCAL_TIME  int64 nanoseconds of the day
 *   INSTANT      int64 seconds since the epoch, then int32 nanoseconds (12 bytes)
 *   LOCAL_DATE_TIME  int64 days since 1970-01-01, then int64 nanoseconds of the day
 *                    (16 bytes) */
PULSARC_API size_t pulsarc_schema_encode_bool(int value, uint8_t out[1]);
/** INT8: 1 byte. */
PULSARC_API size_t pulsarc_schema_encode_int8(int8_t value, uint8_t out[1]);
/** INT16: 2 bytes. */
PULSARC_API size_t pulsarc_schema_encode_int16(int16_t value, uint8_t out[2]);
/** INT32: 4 bytes. */
PULSARC_API size_t pulsarc_schema_encode_int32(int32_t value, uint8_t out[4]);
/** INT64, and DATE, TIME, TIMESTAMP, LOCAL_DATE, LOCAL_TIME: 8 bytes. */
PULSARC_API size_t pulsarc_schema_encode_int64(int64_t value, uint8_t out[8]);
/** FLOAT: 4 bytes, IEEE 754. */
PULSARC_API size_t pulsarc_schema_encode_float(float value, uint8_t out[4]);
/** DOUBLE: 8 bytes, IEEE 754. */
PULSARC_API size_t pulsarc_schema_encode_double(double value, uint8_t out[8]);
/** INSTANT: seconds since the epoch, then nanoseconds (12 bytes). */
PULSARC_API size_t pulsarc_schema_encode_instant(int64_t seconds, int32_t nanos, uint8_t out[12]);
/** LOCAL_DATE_TIME: days since 1970-01-01, then nanoseconds of the day (16 bytes). */
PULSARC_API size_t pulsarc_schema_encode_local_date_time(int64_t epoch_day, int64_t nano_of_day,
                                                         uint8_t out[16]);

/** @} */

/** @name Producer configuration
 * A producer's settings: keys given as text to pulsarc_producer_config_set, as for the
 * client, and typed setters for the schema, the router, the producer's properties and (in
 * the groups below) the encryption keys and the interceptors. Every key is documented once,
 * in docs/configuration.md; pulsarc_producer_config_dump prints the effective values.
 * @{ */
/** A producer's configuration, opaque: the keys of docs/configuration.md, set with
 * pulsarc_producer_config_set, and the typed setters below. */
typedef struct pulsarc_producer_config pulsarc_producer_config_t;
/** A message builder, opaque (see "Messages" below). */
typedef struct pulsarc_message pulsarc_message_t;

/** A custom MessageRouter: returns the partition (0..n_partitions-1) for msg. Runs on the
 * thread that calls send, before the send returns; it must not block. A value out of
 * range fails the send with PULSARC_ERR_INVALID_ARGUMENT. */
typedef int (*pulsarc_router_cb)(const pulsarc_message_t *msg, int n_partitions, void *ctx);

/* Every _free function in this API accepts NULL and then does nothing. */
/** A configuration with every key at its default; NULL when out of memory. */
PULSARC_API pulsarc_producer_config_t *pulsarc_producer_config_new(void);
/** Frees conf; the producers made with it keep copies of their own. */
PULSARC_API void pulsarc_producer_config_free(pulsarc_producer_config_t *conf);
/** Sets key to value, given as text; PULSARC_ERR_INVALID_CONFIG, with a detail, for an
 * unknown key or a bad value. */
PULSARC_API pulsarc_result pulsarc_producer_config_set(pulsarc_producer_config_t *conf,
                                                       const char *key, const char *value);
/** Every setting with its effective value, as pulsarc_client_config_dump prints them. */
PULSARC_API size_t pulsarc_producer_config_dump(const pulsarc_producer_config_t *conf, char *buf,
                                                size_t len);
/** The keys pulsarc_producer_config_set takes, as pulsarc_client_config_key_name gives
 * the client's. */
PULSARC_API const char *pulsarc_producer_config_key_name(size_t index);
/** The values an enumerated producer key takes (compressionType: "none", "lz4", ...), as
 * pulsarc_client_config_key_value gives the client's. */
PULSARC_API const char *pulsarc_producer_config_key_value(const char *key, size_t index);
/** The producer's schema (see "Schemas"), registered when the producer connects and
 * again on every reconnect; NULL = BYTES (no schema sent). The configuration keeps a
 * reference. Creation fails with PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA and the broker's
 * message as the detail when the broker refuses the schema (incompatible with the
 * topic's, invalid, or auto-update disabled), and likewise when a producer without a
 * schema meets a topic that enforces one. */
PULSARC_API pulsarc_result pulsarc_producer_config_set_schema(pulsarc_producer_config_t *conf,
                                                              const pulsarc_schema_t *schema);
/** Install a custom router (and set messageRoutingMode to custom). */
PULSARC_API pulsarc_result pulsarc_producer_config_set_router(pulsarc_producer_config_t *conf,
                                                              pulsarc_router_cb cb, void *ctx);
/** A property of the producer (the Java client's ProducerBuilder.property): sent when it
 * registers (CommandProducer.metadata, on every partition and every reconnect) and shown
 * in the broker's topic stats (publishers[].metadata). Key and value are copied; the same
 * key again replaces its value. PULSARC_ERR_INVALID_ARGUMENT for a NULL config, a NULL
 * or empty key or a NULL value. Not part of pulsarc_producer_config_dump. */
PULSARC_API pulsarc_result pulsarc_producer_config_set_property(pulsarc_producer_config_t *conf,
                                                                const char *key, const char *value);

/** @} */

/** @name End-to-end encryption
 * Compatible with the official clients' consumers (RSA keys; EC keys: the Java consumer).
 *
 * Each entry the producer writes (a single message, a batch, each chunk of a chunked
 * message) is compressed first, then encrypted with AES-256-GCM under the producer's
 * current data key (random, 256 bits) and a fresh random IV. The data key travels with
 * every entry wrapped with the public key of each key name in encryptionKeys (RSA-OAEP
 * with SHA-1 for an RSA key, ECIES as the Java client for an EC key: docs/encryption.md); a consumer holding one of the private keys unwraps it. Encrypted: the
 * entry's payload. Readable by the broker and anyone: the entry's metadata, i.e. the key
 * names, the key reader's metadata and, for a message sent alone, its key, ordering
 * key, properties and event time. In a batch those of each message travel inside the
 * encrypted payload, except that the batch's metadata repeats its first message's key
 * and ordering key (for routing and Key_Shared delivery).
 *
 * The data key changes every dataKeyRotationMs and whenever a public key the key reader
 * returns differs from the one in use (the keys are read again about once a minute, and
 * at each rotation); messages already built keep theirs, sends never wait. The data key
 * survives reconnects: resent messages are resent byte for byte.
 *
 * Public keys come from a key reader: the ready-made readers below (a PEM file read again
 * each time, or PEM text in memory), or a callback (pulsarc_crypto_key_reader_cb) for
 * names they do not cover. RSA public keys ("BEGIN PUBLIC KEY" or "BEGIN RSA PUBLIC KEY")
 * and EC public keys on P-256, P-384 or P-521 ("BEGIN PUBLIC KEY") are accepted; other
 * key types and curves fail with PULSARC_ERR_CRYPTO. The keys are first
 * read when the producer builds its first entry (creating the producer does not need
 * them). While they cannot be read, the producer tries again at each entry and
 * cryptoFailureAction decides what happens to the entries meanwhile: fail (each such
 * message ends with PULSARC_ERR_CRYPTO and a detail naming the key) or send (published
 * unencrypted). Once a data key exists, a failed re-read or rotation keeps it in use
 * (with a warning) and is tried again a second later. Key material never appears in
 * logs, details or config dumps; key names do.
 * @{ */

/** What a key reader callback fills: the public key and optional metadata, set with the
 * functions below. It belongs to the library and is valid only during the callback. */
typedef struct pulsarc_crypto_key pulsarc_crypto_key_t;

/** Supplies the public key of key_name by filling key (pulsarc_crypto_key_set_pem, and
 * pulsarc_crypto_key_add_metadata any number of times). Runs on the client's loop thread
 * (keep it quick); ctx must stay valid while producers made with this configuration
 * exist. With spoolDir it also runs on the sending threads (one at a time), which
 * encrypt before the spool stores. Return PULSARC_OK when key is filled; any other result
 * means the key is not available now (the producer applies cryptoFailureAction and asks
 * again later). */
typedef pulsarc_result (*pulsarc_crypto_key_reader_cb)(const char *key_name,
                                                       pulsarc_crypto_key_t *key, void *ctx);

/** The PEM text of the public key (copied; need not be NUL-terminated). */
PULSARC_API pulsarc_result pulsarc_crypto_key_set_pem(pulsarc_crypto_key_t *key, const void *pem,
                                                      size_t len);
/** A metadata pair sent with the wrapped data key (EncryptionKeys.metadata), which the
 * consumer's key reader receives; name and value are copied. */
PULSARC_API pulsarc_result pulsarc_crypto_key_add_metadata(pulsarc_crypto_key_t *key,
                                                           const char *name, const char *value);

/** The callback asked for every key name that add_encryption_key_file/_pem did not cover
 * (NULL removes it). Does not change encryptionKeys: name the keys there. */
PULSARC_API pulsarc_result pulsarc_producer_config_set_crypto_key_reader(
    pulsarc_producer_config_t *conf, pulsarc_crypto_key_reader_cb cb, void *ctx);
/** Encrypt for key name, whose public key is the PEM file at pem_path; the file is read
 * each time the key is needed, so replacing it rotates the data key. Adds name to
 * encryptionKeys (once) and replaces an earlier file or PEM for the same name. name
 * must not contain ','. */
PULSARC_API pulsarc_result pulsarc_producer_config_add_encryption_key_file(
    pulsarc_producer_config_t *conf, const char *name, const char *pem_path);
/** The same with the PEM text in memory (NUL-terminated, copied). It is checked at once:
 * anything but an RSA or EC public key as above fails with PULSARC_ERR_INVALID_CONFIG. */
PULSARC_API pulsarc_result pulsarc_producer_config_add_encryption_key_pem(
    pulsarc_producer_config_t *conf, const char *name, const char *pem);

/** @} */

/** @name Message ids
 * @{ */
/** Where the broker stored a message, opaque. */
typedef struct pulsarc_message_id pulsarc_message_id_t;

/** Ledger and entry are both -1 in the id of a message the broker already held when it
 * arrived (deduplication on: a replayed sequence id, or a resend after a reconnect): it
 * was stored earlier and not stored again. */
PULSARC_API int64_t pulsarc_message_id_ledger(const pulsarc_message_id_t *id);
/** The entry id (see pulsarc_message_id_ledger). */
PULSARC_API int64_t pulsarc_message_id_entry(const pulsarc_message_id_t *id);
/** -1 for a topic without partitions. */
PULSARC_API int32_t pulsarc_message_id_partition(const pulsarc_message_id_t *id);
/** -1 when the message was not sent in a batch. */
PULSARC_API int32_t pulsarc_message_id_batch_index(const pulsarc_message_id_t *id);
/** The number of messages in the batch the message was sent in. */
PULSARC_API int32_t pulsarc_message_id_batch_size(const pulsarc_message_id_t *id);
/** A chunked message's id names its last chunk (ledger, entry above) and its first one:
 * returns 1 and fills ledger/entry with the first chunk's position, or 0 for an id that
 * is not chunked. */
PULSARC_API int pulsarc_message_id_first_chunk(const pulsarc_message_id_t *id, int64_t *ledger,
                                               int64_t *entry);
/** "ledger:entry:partition:batch_index", NUL-terminated. Returns the length needed. */
PULSARC_API size_t pulsarc_message_id_str(const pulsarc_message_id_t *id, char *buf, size_t len);
/** The protocol's MessageIdData encoding, as the official clients' serialize() writes it.
 * *out is the caller's: release it with pulsarc_free(). */
PULSARC_API pulsarc_result pulsarc_message_id_serialize(const pulsarc_message_id_t *id,
                                                        uint8_t **out, size_t *len);
/** Reads the encoding pulsarc_message_id_serialize writes; free *out with
 * pulsarc_message_id_free. */
PULSARC_API pulsarc_result pulsarc_message_id_deserialize(const uint8_t *data, size_t len,
                                                          pulsarc_message_id_t **out);
/** A copy of id, to be freed with pulsarc_message_id_free. */
PULSARC_API pulsarc_message_id_t *pulsarc_message_id_copy(const pulsarc_message_id_t *id);
/** Frees id (NULL: nothing). */
PULSARC_API void pulsarc_message_id_free(pulsarc_message_id_t *id);

/** @} */

/** @name Messages
 * A message is a builder owned by the caller: a send reads it and the caller may reuse or
 * free it as soon as the send call returns.
 * @{ */
/** Called once the library no longer needs a borrowed payload (after the message's send
 * callback ran, or when the message is freed or given another payload before being sent). */
typedef void (*pulsarc_payload_free_cb)(void *payload, size_t len, void *ctx);

/** An empty message builder; NULL when out of memory. */
PULSARC_API pulsarc_message_t *pulsarc_message_new(void);
/** Frees the builder (NULL: nothing). */
PULSARC_API void pulsarc_message_free(pulsarc_message_t *msg);
/** Copy mode (default): the bytes must stay valid until the send call returns; the send
 * copies them. */
PULSARC_API pulsarc_result pulsarc_message_set_payload(pulsarc_message_t *msg, const void *data,
                                                       size_t len);
/** Borrow mode (zero copy): the library reads the bytes in place until it calls free_cb.
 * The first accepted send takes the payload over; the message then has no payload. */
PULSARC_API pulsarc_result pulsarc_message_set_payload_borrowed(pulsarc_message_t *msg,
                                                                const void *data, size_t len,
                                                                pulsarc_payload_free_cb free_cb,
                                                                void *ctx);
/** The message key (copied): partitions, compaction and Key_Shared go by it. */
PULSARC_API pulsarc_result pulsarc_message_set_key(pulsarc_message_t *msg, const char *key);
/** A binary key (the Java client's keyBytes): sent base64-encoded with the protocol's
 * partition_key_b64_encoded flag, so consumers get the bytes back (Java's getKeyBytes).
 * Routing, compaction and Key_Shared use the encoded text, as they do for the Java
 * client; pulsarc_message_key returns it. key may be NULL when len is 0. */
PULSARC_API pulsarc_result pulsarc_message_set_key_bytes(pulsarc_message_t *msg, const void *key,
                                                         size_t len);
/** A null value: the message has no payload and says so (MessageMetadata null_value, the
 * Java client's value(null)), which on a compacted topic removes its key from the
 * compacted view (a tombstone: give it the key, pulsarc_message_set_key). Drops the
 * builder's payload; setting a payload again makes the value non-null. */
PULSARC_API pulsarc_result pulsarc_message_set_null_value(pulsarc_message_t *msg);
/** The ordering key (copied), which Key_Shared subscriptions use instead of the key. */
PULSARC_API pulsarc_result pulsarc_message_set_ordering_key(pulsarc_message_t *msg, const void *key,
                                                            size_t len);
/** Adds a property; name and value are copied. */
PULSARC_API pulsarc_result pulsarc_message_set_property(pulsarc_message_t *msg, const char *name,
                                                        const char *value);
/** Milliseconds since the epoch; 0 = unset. */
PULSARC_API pulsarc_result pulsarc_message_set_event_time(pulsarc_message_t *msg, uint64_t ms);
/** An explicit sequence id (>= 0) for deduplication; ids must increase per producer. */
PULSARC_API pulsarc_result pulsarc_message_set_sequence_id(pulsarc_message_t *msg, int64_t id);
/** Deliver no earlier than this time (milliseconds since the epoch; 0 = unset). Such
 * messages are never batched. Only shared/key-shared subscriptions honour it: other
 * subscriptions get the message at once. Replaces a delay set with deliver_after.
 * PULSARC_ERR_INVALID_ARGUMENT above 2^62. */
PULSARC_API pulsarc_result pulsarc_message_set_deliver_at(pulsarc_message_t *msg, uint64_t ms);
/** Deliver no earlier than ms milliseconds after the send (0 = unset): each send of the
 * builder stamps deliver_at = its own wall-clock time + ms (the Go client's DeliverAfter;
 * the Java and C++ builders add the delay when it is set). Otherwise as deliver_at, which
 * it replaces. */
PULSARC_API pulsarc_result pulsarc_message_set_deliver_after(pulsarc_message_t *msg, uint64_t ms);
/** Replicate this message only to these clusters (geo-replication; MessageMetadata
 * replicate_to), instead of the namespace's replication clusters; names are copied, none
 * may be NULL or empty; n = 0 clears. Such messages are never batched. A cluster the
 * namespace does not replicate to is ignored by the broker: the message is stored and
 * read locally as usual. */
PULSARC_API pulsarc_result pulsarc_message_set_replication_clusters(pulsarc_message_t *msg,
                                                                    const char *const *clusters,
                                                                    size_t n);
/** disable nonzero: replicate this message to no other cluster (replicate_to is
 * ["__local__"], as the Java client's disableReplication writes it); 0 clears the list
 * again. It replaces set_replication_clusters and the other way round. */
PULSARC_API pulsarc_result pulsarc_message_disable_replication(pulsarc_message_t *msg, int disable);
/** A schema for this message alone (multi-schema producers, as the Java client's
 * newMessage(schema)): the producer registers it once with the broker
 * (GET_OR_CREATE_SCHEMA, cached per producer) and stamps the version it gets; messages
 * wait in order meanwhile, and a batch never mixes versions. A schema the broker refuses
 * fails the messages using it with PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA (not terminal:
 * other messages go on). NULL = the producer's schema. AUTO_PRODUCE is refused. */
PULSARC_API pulsarc_result pulsarc_message_set_schema(pulsarc_message_t *msg,
                                                      const pulsarc_schema_t *schema);
/** Sets payload and key of a message for a KEY_VALUE schema kv, laid out as the Java
 * client does for kv's encoding (see pulsarc_key_value_encoding); both parts are
 * copied. A NULL part with length 0 is Java's null (INLINE: length -1; SEPARATED: the
 * null_partition_key / null_value flags). Does not set the message's schema. */
PULSARC_API pulsarc_result pulsarc_message_set_key_value(pulsarc_message_t *msg,
                                                         const pulsarc_schema_t *kv,
                                                         const void *key, size_t key_len,
                                                         const void *value, size_t value_len);
/** Read back what was set (for custom routers). NULL / 0 when unset. */
PULSARC_API const char *pulsarc_message_key(const pulsarc_message_t *msg);
/** The payload, and its length in *len. */
PULSARC_API const void *pulsarc_message_payload(const pulsarc_message_t *msg, size_t *len);
/** The value of the property name. */
PULSARC_API const char *pulsarc_message_property(const pulsarc_message_t *msg, const char *name);
/** Clear everything so the builder can be reused. */
PULSARC_API void pulsarc_message_clear(pulsarc_message_t *msg);

/** @} */

/** @name Client
 * @{ */
/** A client, opaque: its connections to a cluster, and the producers on them. */
typedef struct pulsarc_client pulsarc_client_t;

/** Starts the client's loop thread. No connection is made until a producer is created.
 * conf may be NULL (defaults); it is copied. service_url: "pulsar://host[:port][,host...]"
 * (binary protocol), "pulsar+ssl://..." (TLS), or "http://" / "https://" (lookups over the
 * brokers' HTTP API; the producers then connect to the addresses the lookup names). Each
 * form takes several hosts, tried in turn.
 * (On the application's own libuv loop instead: pulsarc_client_new_on_loop in
 * pulsarc/pulsarc_uv.h.) */
PULSARC_API pulsarc_result pulsarc_client_new(const char *service_url,
                                              const pulsarc_client_config_t *conf,
                                              pulsarc_client_t **out);
/** Completion of pulsarc_client_close_async, on the loop thread; res is PULSARC_OK. */
typedef void (*pulsarc_client_done_cb)(pulsarc_client_t *client, pulsarc_result res, void *ctx);
/** Starts closing the client without waiting: every producer still open is closed as by
 * pulsarc_client_destroy (their pending messages fail with PULSARC_ERR_ALREADY_CLOSED),
 * every connection and HTTP transfer closes, and cb (may be NULL) runs once on the loop
 * thread when all of it is done: after it, no handle of the client's is left on any loop
 * (with pulsarc_client_new_on_loop, uv_loop_close on the application's loop finds none of
 * pulsarc's) and no callback of the client's runs again. The client must still be freed
 * with pulsarc_client_destroy, which may be called in cb or after it and then does not
 * wait. Any thread, also a callback. PULSARC_ERR_ALREADY_CLOSED when the close has begun
 * already (cb is then not called). */
PULSARC_API pulsarc_result pulsarc_client_close_async(pulsarc_client_t *client,
                                                      pulsarc_client_done_cb cb, void *ctx);
/** Closes every producer still open (their pending messages fail with ALREADY_CLOSED, their
 * callbacks run on the loop thread as always; as with a send timeout, the detail says "may
 * have been persisted" for a message already written to a connection and "not sent" for
 * one never written), stops the loop thread and frees the client.
 * On the loop thread it returns PULSARC_ERR_WOULD_BLOCK and does nothing, except once the
 * close is done (in the callback of pulsarc_client_close_async or, on the application's
 * loop, after it): then it frees the client at once. On the application's loop
 * (pulsarc_client_new_on_loop), destroy called from another thread waits for the close,
 * which that loop must run.
 * Threads blocked in a send waiting for room (blockIfQueueFull) wake and get
 * PULSARC_ERR_ALREADY_CLOSED; threads waiting in send, flush or close get their results.
 * Apart from these and from callbacks, no call on the client or its producers may run
 * while destroy does.
 * The producer handles stay valid: every one must still be released with
 * pulsarc_producer_free, before or after destroy. After destroy the accessors still
 * answer and every other call fails with PULSARC_ERR_ALREADY_CLOSED. */
PULSARC_API pulsarc_result pulsarc_client_destroy(pulsarc_client_t *client);
/** What memoryLimitBytes counts for the accepted messages whose callbacks have not run
 * yet: payloads, second copies, 512 bytes per message for its record. */
PULSARC_API uint64_t pulsarc_client_memory_used(const pulsarc_client_t *client);
/** Point the client at another cluster (the Java client's PulsarClient.updateServiceUrl,
 * for an application that finds its cluster itself): lookups go to service_url from
 * now on and every connection closes, as in a failover switch (see "Cluster failover"),
 * with the client's authentication and TLS settings. The URL is checked here
 * (PULSARC_ERR_INVALID_URL; PULSARC_ERR_TLS_CONFIG when a pulsar+ssl:// URL needs a TLS
 * context the settings cannot build); the switch itself happens on the loop thread right
 * after the call returns (the same URL as now changes nothing). Any thread, also a
 * callback. PULSARC_ERR_INVALID_ARGUMENT on a client that switches by itself (failover
 * clusters or a service URL provider). */
PULSARC_API pulsarc_result pulsarc_client_update_service_url(pulsarc_client_t *client,
                                                             const char *service_url);

/** @} */

/** @name Producer
 * @{ */
/** A producer of one topic, partitioned or not, opaque. */
typedef struct pulsarc_producer pulsarc_producer_t;

/** Called exactly once per accepted message, on the loop thread. On success id names the
 * stored message; on failure id is NULL and pulsarc_last_error_detail() explains. The id
 * is valid only during the call (copy it with pulsarc_message_id_copy). */
typedef void (*pulsarc_send_cb)(pulsarc_producer_t *producer, pulsarc_result res,
                                const pulsarc_message_id_t *id, void *ctx);
/** Completion of flush_async / close_async, on the loop thread. */
typedef void (*pulsarc_done_cb)(pulsarc_producer_t *producer, pulsarc_result res, void *ctx);

/** Looks the topic up, connects and registers the producer with the broker; blocks until
 * done or operationTimeoutMs passed (then PULSARC_ERR_TIMEOUT, with a detail saying what
 * did not answer). A broker that accepts the connection but never answers CONNECT fails
 * it after connectionTimeoutMs with PULSARC_ERR_CONNECT_FAILED (as the official C++
 * client's ResultConnectError), or with PULSARC_ERR_TIMEOUT when operationTimeoutMs is
 * the shorter of the two. conf may be NULL (defaults); it is copied. */
PULSARC_API pulsarc_result pulsarc_client_create_producer(pulsarc_client_t *client,
                                                          const char *topic,
                                                          const pulsarc_producer_config_t *conf,
                                                          pulsarc_producer_t **out);
/** The producer, or the failure, of pulsarc_client_create_producer_async, on the loop
 * thread. On PULSARC_OK producer is the caller's (release it with pulsarc_producer_free);
 * on a failure it is NULL and pulsarc_last_error_detail() explains. */
typedef void (*pulsarc_create_cb)(pulsarc_client_t *client, pulsarc_result res,
                                  pulsarc_producer_t *producer, void *ctx);
/** pulsarc_client_create_producer without waiting: the same lookup, registration and
 * operationTimeoutMs, answered through cb (not NULL) exactly once, on the loop thread,
 * when PULSARC_OK is returned (also PULSARC_ERR_ALREADY_CLOSED when the client closes
 * first). Any other result: nothing was started and cb is not called. Any thread, also a
 * callback (where the blocking create returns PULSARC_ERR_WOULD_BLOCK). With spoolDir the
 * spool is opened here, on the calling thread (PULSARC_ERR_SPOOL when it cannot be used),
 * and what it holds is resent, from a thread of the library's, before cb gets the
 * producer. */
PULSARC_API pulsarc_result pulsarc_client_create_producer_async(
    pulsarc_client_t *client, const char *topic, const pulsarc_producer_config_t *conf,
    pulsarc_create_cb cb, void *ctx);

/** Accepts the message for sending and returns at once (or waits for room when
 * blockIfQueueFull is on and the call is not on the loop thread: on the loop thread a
 * send never waits and takes no lock, so a full queue returns PULSARC_ERR_QUEUE_FULL, or
 * PULSARC_ERR_MEMORY_LIMIT, whatever blockIfQueueFull says). On PULSARC_OK, cb
 * (may be NULL) will be called exactly once. On any other result the message was not
 * accepted and cb will not be called. Once a message of this producer has failed with a
 * terminal result (pulsarc_result_is_terminal), every later send fails at once with that
 * result and its detail. */
PULSARC_API pulsarc_result pulsarc_producer_send_async(pulsarc_producer_t *producer,
                                                       pulsarc_message_t *msg, pulsarc_send_cb cb,
                                                       void *ctx);
/** Called once, on the loop thread, when a producer that refused a send made on the loop
 * thread with PULSARC_ERR_QUEUE_FULL or PULSARC_ERR_MEMORY_LIMIT has room again: at the
 * end of the loop turn in which receipts (or failures) gave back a permit of this
 * producer and enough of the client's memory for a message the size of the refused one
 * (memory another producer of the client gave back counts too). Until the next such
 * refusal it is not called again; a send made inside it that is refused again arms it
 * again. Not called for a producer that is closing or freed, nor once the client closes.
 * On the application's own loop (pulsarc_client_new_on_loop), where a send never waits,
 * this is the signal to send what was refused. Sends refused on other threads do not arm
 * it (they can wait: blockIfQueueFull). producer is the handle the send was made on. */
typedef void (*pulsarc_room_cb)(pulsarc_producer_t *producer, void *ctx);

/** Sets the room callback of producers made with conf (see pulsarc_room_cb); cb NULL
 * removes it. ctx must stay valid while those producers exist. Without one, a refusal
 * costs nothing more than before. PULSARC_ERR_INVALID_ARGUMENT for a NULL conf. */
PULSARC_API pulsarc_result pulsarc_producer_config_set_room_cb(pulsarc_producer_config_t *conf,
                                                               pulsarc_room_cb cb, void *ctx);

/** Sends and waits for the receipt. id_out (may be NULL) receives the message id, to be
 * freed with pulsarc_message_id_free. */
PULSARC_API pulsarc_result pulsarc_producer_send(pulsarc_producer_t *producer,
                                                 pulsarc_message_t *msg,
                                                 pulsarc_message_id_t **id_out);
/** Waits until every message accepted before the call has had its callback. Returns OK,
 * or the first failure among the messages it covers, with that failure's detail in
 * pulsarc_last_error_detail() (for flush_async: inside its callback). A flush covers the
 * messages accepted before it that no earlier flush covered, including those whose
 * callbacks ran before the call, so each failure is reported by one flush. */
PULSARC_API pulsarc_result pulsarc_producer_flush(pulsarc_producer_t *producer);
/** pulsarc_producer_flush without waiting: cb gets its result, on the loop thread. */
PULSARC_API pulsarc_result pulsarc_producer_flush_async(pulsarc_producer_t *producer,
                                                        pulsarc_done_cb cb, void *ctx);
/** Flushes, then closes the producer on the broker; the whole close is bounded by
 * operationTimeoutMs, after which messages still without a receipt fail with
 * PULSARC_ERR_ALREADY_CLOSED (they may have been persisted) and close returns
 * PULSARC_ERR_TIMEOUT. Later sends fail with PULSARC_ERR_ALREADY_CLOSED. The handle stays
 * valid until pulsarc_producer_free. From a callback it fails with PULSARC_ERR_WOULD_BLOCK
 * and does nothing: use pulsarc_producer_close_async (or pulsarc_producer_free) there. */
PULSARC_API pulsarc_result pulsarc_producer_close(pulsarc_producer_t *producer);
/** pulsarc_producer_close without waiting: cb gets its result, on the loop thread. */
PULSARC_API pulsarc_result pulsarc_producer_close_async(pulsarc_producer_t *producer,
                                                        pulsarc_done_cb cb, void *ctx);
/** Closes the producer if still open (without waiting) and frees the handle. Safe from a
 * callback: the memory is released once the callback returns. May be called before or
 * after pulsarc_client_destroy (after it, only the handle's own memory is left to free),
 * but not while destroy runs on another thread. */
PULSARC_API void pulsarc_producer_free(pulsarc_producer_t *producer);

/* The accessors below may be called from any thread at any time until
 * pulsarc_producer_free, also while partitions are added and after the client was
 * destroyed. */
/** The producer's name (user-given or assigned by the broker; "" until known, e.g. with
 * lazyStartPartitionedProducers before partition 0 registered). Valid until free. */
PULSARC_API const char *pulsarc_producer_name(const pulsarc_producer_t *producer);
/** The normalised topic name. */
PULSARC_API const char *pulsarc_producer_topic(const pulsarc_producer_t *producer);
/** The highest sequence id the broker has confirmed (or reported at creation); -1 if none. */
PULSARC_API int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *producer);
/** The schema version the broker gave the producer's schema at its latest registration
 * (the 8-byte big-endian number the broker sends, as a number; the first version of a
 * topic is 0); -1 when the producer has no schema, has not registered yet, or the broker
 * sent a version of another size. Messages with their own schema carry their own
 * versions, which this does not report. */
PULSARC_API int64_t pulsarc_producer_schema_version(const pulsarc_producer_t *producer);
/** Messages accepted but not yet completed. */
PULSARC_API uint64_t pulsarc_producer_pending_count(const pulsarc_producer_t *producer);
/** Nonzero when the producer is open and every partition producer that has started is
 * registered with its broker now (with lazyStartPartitionedProducers, a partition that
 * has had no message yet does not count; as the C++ client's isConnected). 0 while it
 * reconnects, once it stopped after a terminal error, once closing or closed, and after
 * the client was destroyed. One atomic read: cheap enough for a health check. */
PULSARC_API int pulsarc_producer_is_connected(const pulsarc_producer_t *producer);
/** When the producer last lost its registration with a broker (its connection dropped,
 * or the broker closed the producer: an unload, a restart), in milliseconds since the
 * Unix epoch; with partitions, the latest of any partition. 0 when it never has (a
 * registration that failed before it succeeded does not count). As the Java client's
 * getLastDisconnectedTimestamp. One atomic read. */
PULSARC_API uint64_t
pulsarc_producer_last_disconnected_timestamp(const pulsarc_producer_t *producer);
/** The partitions messages are routed to (the Java client's getNumOfPartitions): 0 for a
 * topic without partitions; partitions the topic gained (autoUpdatePartitions) count once
 * messages go to them: when they have registered, or at once with lazy start. */
PULSARC_API int pulsarc_producer_partitions(const pulsarc_producer_t *producer);

/** @} */

/** @name Interceptors
 * The official clients' ProducerInterceptor (beforeSend, onSendAcknowledgement,
 * onPartitionsChange), as a table of functions added to a producer configuration. A
 * producer runs its interceptors in the order they were added, each hook of each
 * interceptor that has it (a NULL member is skipped).
 *
 * before_send runs on the thread that calls pulsarc_producer_send_async (or _send), once
 * the producer has found it may send at all (not closed, no terminal error) and before
 * the payload checks, the schema check, routing and admission, so what they judge and
 * route is what will be sent (the official clients route first). msg is the producer's
 * own copy of the caller's message, not the caller's (which the send never changes);
 * each interceptor sees what the ones before it made of it. It may change msg with the
 * message setters (payload, key, properties, ...), and must neither free it nor keep it
 * after returning. A payload it sets in copy mode must stay valid until the send call
 * returns; memory it allocates for a new payload is best handed over with
 * pulsarc_message_set_payload_borrowed (the library frees it through its callback, also
 * when the message is not accepted). A borrowed payload of the caller's that the
 * interceptors leave in place is taken over as usual once the message is accepted; one
 * they replace stays the caller's. Returning anything but PULSARC_OK rejects the message:
 * the send returns that result (the detail names the interceptor) and nothing else
 * happens: no callback, no on_ack, the later interceptors do not run. before_send may run
 * on several threads at once (sends are thread-safe) and must not block.
 *
 * on_ack runs on the loop thread once for every accepted message, failed or not, just
 * before its send callback, with the callback's result and message id (NULL on failure,
 * when pulsarc_last_error_detail() explains). msg is a read-only view of what was sent
 * (read it with pulsarc_message_key, _payload, _property), valid only during the call.
 * Messages refused by the send call itself (QUEUE_FULL, a rejection above, ...) were
 * never accepted and get no on_ack, as they get no callback.
 *
 * on_partitions_change runs on the loop thread when the producer found that its
 * partitioned topic has grown (autoUpdatePartitions) and the new partitions have joined:
 * partitions is the new count.
 *
 * ctx must stay valid while producers made with the configuration exist. An interceptor
 * must not call blocking functions from on_ack or on_partitions_change (they run on the
 * loop thread, see the top of this file).
 * @{ */
/** A producer interceptor (see above): three callbacks, each of which may be NULL. */
typedef struct pulsarc_interceptor {
    /** Before a send accepts its message: may change it, or reject it. */
    pulsarc_result (*before_send)(pulsarc_producer_t *producer, pulsarc_message_t *msg, void *ctx);
    /** Once per accepted message, just before its send callback. */
    void (*on_ack)(pulsarc_producer_t *producer, const pulsarc_message_t *msg, pulsarc_result res,
                   const pulsarc_message_id_t *id, void *ctx);
    /** When the producer's partitioned topic has grown. */
    void (*on_partitions_change)(pulsarc_producer_t *producer, const char *topic, int partitions,
                                 void *ctx);
} pulsarc_interceptor_t;

/** Adds an interceptor after those added before. ops is copied: pass sizeof *ops as
 * ops_size, so that a program built against this header keeps working with a later
 * library whose table has more members (they count as NULL). Fails with
 * PULSARC_ERR_INVALID_ARGUMENT for a NULL conf or ops, or an ops_size of 0 or above the
 * library's table. */
PULSARC_API pulsarc_result pulsarc_producer_config_add_interceptor(pulsarc_producer_config_t *conf,
                                                                   const pulsarc_interceptor_t *ops,
                                                                   size_t ops_size, void *ctx);

/** @} */

/** @name Statistics
 * Per producer and per client (docs/statistics.md describes every number and the JSON). A
 * snapshot is taken on the loop thread, where the counters live, and read with the
 * accessors below from any thread; it is the caller's until pulsarc_stats_free. The same
 * numbers come every statsIntervalSeconds as JSON through the client's statistics callback
 * (pulsarc_client_config_set_stats_cb).
 *
 * A client's snapshot covers every producer it has had, closed and freed ones included
 * (gauges, such as pending messages, only the open ones); a producer's covers that
 * producer. Numbers are kept per partition and added up.
 * @{ */
/** A statistics snapshot, opaque; the caller's until pulsarc_stats_free. */
typedef struct pulsarc_stats pulsarc_stats_t;

/** What pulsarc_stats_get reads. Counters grow from 0 for the life of the producer (or
 * client); gauges say how things are at the snapshot. Messages count once, also when
 * chunked; bytes are payload bytes as the application gave them, unless named otherwise.
 * New values may be added at the end; an unknown value reads 0. */
typedef enum pulsarc_stat {
    PULSARC_STAT_MSGS_ACCEPTED = 0,   /**< accepted sends the loop thread has taken over */
    PULSARC_STAT_MSGS_REFUSED,        /**< send calls that did not accept their message
                                      (pulsarc_stats_refused: by result) */
    PULSARC_STAT_MSGS_SENT,           /**< put into entries for the broker (written at once when
                                      connected, else on connecting) */
    PULSARC_STAT_BYTES_SENT,          /**< their payload bytes */
    PULSARC_STAT_MSGS_ACKED,          /**< completed with success (the broker's receipt) */
    PULSARC_STAT_BYTES_ACKED,         /**< their payload bytes */
    PULSARC_STAT_MSGS_FAILED,         /**< completed with an error (pulsarc_stats_failed: by
                                      result) */
    PULSARC_STAT_BYTES_FAILED,        /**< their payload bytes */
    PULSARC_STAT_MSGS_PENDING,        /**< gauge: accepted, callback not run yet */
    PULSARC_STAT_MEMORY_USED,         /**< gauge, client only: bytes memoryLimitBytes counts */
    PULSARC_STAT_MEMORY_LIMIT,        /**< client only: memoryLimitBytes */
    PULSARC_STAT_ENTRIES,             /**< entries built: batches, messages sent alone, chunks */
    PULSARC_STAT_ENTRY_RAW_BYTES,     /**< their payloads before compression */
    PULSARC_STAT_ENTRY_BYTES,         /**< ... as written (compressed, encrypted): the
                                      compression ratio is RAW_BYTES / ENTRY_BYTES */
    PULSARC_STAT_ENTRIES_RESENT,      /**< entries written again after a reconnect */
    PULSARC_STAT_BATCHES,             /**< batch entries */
    PULSARC_STAT_BATCHED_MSGS,        /**< messages in them: the mean batch is this / BATCHES */
    PULSARC_STAT_BATCH_MAX_MSGS,      /**< the most messages one batch held */
    PULSARC_STAT_RECONNECTS,          /**< registrations after each partition's first */
    PULSARC_STAT_DISCONNECTS,         /**< connections lost (or producers closed by the broker)
                                      while registered */
    PULSARC_STAT_PARTITIONS,          /**< gauge: partition producers (1 for a topic without
                                      partitions) */
    PULSARC_STAT_PRODUCERS,           /**< gauge: producers created and not freed yet, closed ones
                                      included (1 in a producer's snapshot) */
    PULSARC_STAT_LATENCY_COUNT,       /**< messages timed: every acknowledged one */
    PULSARC_STAT_TLS_DOWNGRADES,      /**< client only: switches of cluster from a pulsar+ssl://
                                      or https:// service URL to a plain-text one (each also
                                      logged at WARN; see "Cluster failover") */
    PULSARC_STAT_TLS_RELOADS,         /**< client only: TLS contexts built anew because the
                                      files changed (autoCertRefreshSeconds) */
    PULSARC_STAT_TLS_RELOAD_FAILURES, /**< client only: changed TLS files that could not be
                                        used (the previous ones stayed; logged at WARN) */
    PULSARC_STAT_TOPIC_MIGRATIONS,    /**< moves of a topic to another cluster the brokers told
                                      of (TOPIC_MIGRATED, blue-green migration) and the
                                      producer followed; each also logged at INFO */
} pulsarc_stat;

/** Take a snapshot of one producer's statistics, or of the whole client's. From a callback
 * it is taken at once; from another thread the call waits for the loop thread (a few
 * microseconds unless it is busy). PULSARC_ERR_ALREADY_CLOSED after
 * pulsarc_client_destroy; PULSARC_ERR_NO_MEMORY. */
PULSARC_API pulsarc_result pulsarc_producer_stats(pulsarc_producer_t *producer,
                                                  pulsarc_stats_t **out);
/** The same for the whole client (see pulsarc_producer_stats). */
PULSARC_API pulsarc_result pulsarc_client_stats(pulsarc_client_t *client, pulsarc_stats_t **out);
/** Frees a snapshot (NULL: nothing). */
PULSARC_API void pulsarc_stats_free(pulsarc_stats_t *stats);
/** The number which names; 0 for a value this library does not know. */
PULSARC_API uint64_t pulsarc_stats_get(const pulsarc_stats_t *stats, pulsarc_stat which);
/** Messages that completed with res (a failure), and send calls refused with res. */
PULSARC_API uint64_t pulsarc_stats_failed(const pulsarc_stats_t *stats, pulsarc_result res);
/** Send calls refused with res (see pulsarc_stats_failed). */
PULSARC_API uint64_t pulsarc_stats_refused(const pulsarc_stats_t *stats, pulsarc_result res);
/** Send-to-receipt latency of acknowledged messages, in microseconds, at percent (0..100:
 * 50 is the median, 99.9 the 99.9th percentile, 100 the maximum); 0 when none was timed.
 * Each message is timed from the loop turn that took it over from the send call (normally
 * microseconds after it; more while the loop is busy) to the loop turn that read its
 * receipt, into a log-linear histogram: a value is at most 1/32 (3.1 %) above the true
 * one. */
PULSARC_API uint64_t pulsarc_stats_latency_us(const pulsarc_stats_t *stats, double percent);
/** The snapshot as JSON (docs/statistics.md), NUL-terminated; owned by stats. */
PULSARC_API const char *pulsarc_stats_json(const pulsarc_stats_t *stats);

/** The client's statistics in the Prometheus text exposition format (version 0.0.4), named
 * as the Java client's OpenTelemetry metrics (PIP-342) are by OpenTelemetry's Prometheus
 * exporter: pulsar_client_producer_message_send_duration_seconds (a histogram with the
 * Java client's buckets), ..._send_size_bytes_total, ..._pending_count, and pulsarc's own
 * pulsarc_* series; labels pulsar_tenant, pulsar_namespace, pulsar_topic and, with the
 * client key metricsPerPartition, pulsar_partition. docs/statistics.md ("Prometheus")
 * lists every series and what PIP-342 names pulsarc does not provide. Serve it as
 * "text/plain; version=0.0.4". No secret is in it (topic names are).
 *
 * Taken on the loop thread as pulsarc_client_stats is: at once from a callback, else the
 * call waits for the loop thread; safe from any thread. Producers not freed yet count;
 * a freed producer's series end. *out: NUL-terminated text of *len bytes (len may be
 * NULL), the caller's until pulsarc_metrics_text_free. PULSARC_ERR_INVALID_ARGUMENT,
 * PULSARC_ERR_NO_MEMORY. Counting costs nothing more: the text is made only when asked
 * for. */
PULSARC_API pulsarc_result pulsarc_client_metrics_text(pulsarc_client_t *client, char **out,
                                                       size_t *len);
/** Frees text from pulsarc_client_metrics_text (NULL: nothing). */
PULSARC_API void pulsarc_metrics_text_free(char *text);

/** @} */

/** @name Transactions
 * Messages to several topics (and partitions) that become visible to consumers together, on
 * commit, or never, on abort. The client needs enableTransaction=true and the brokers
 * transactionCoordinatorEnabled=true.
 * @{ */
/** A transaction, opaque. Any thread may use it; pulsarc_txn_free lets it go. */
typedef struct pulsarc_txn pulsarc_txn_t;

/** Where a transaction is. */
typedef enum pulsarc_txn_state {
    PULSARC_TXN_OPEN = 0,       /**< sends may join it */
    PULSARC_TXN_COMMITTING = 1, /**< commit called: waiting for its sends, then the broker */
    PULSARC_TXN_ABORTING = 2,   /**< abort called (or a commit found a failed send) */
    PULSARC_TXN_COMMITTED = 3,  /**< every message of it is visible */
    PULSARC_TXN_ABORTED = 4,    /**< none of its messages will ever be visible */
    PULSARC_TXN_ERROR = 5,      /**< the broker did not confirm its end (it timed out
                                  * there, or the answer to a commit was lost and the retry
                                  * found it gone): its messages are all visible or none
                                  * is; see the commit's or abort's result */
} pulsarc_txn_state;

/** Called once when pulsarc_txn_begin_async is done: txn is the new transaction (the
 * caller owns it: pulsarc_txn_free) on PULSARC_OK, NULL otherwise. Runs on the loop
 * thread. */
typedef void (*pulsarc_txn_begin_cb)(pulsarc_result res, pulsarc_txn_t *txn, void *ctx);
/** Called once when a commit or abort is done. Runs on the loop thread. */
typedef void (*pulsarc_txn_done_cb)(pulsarc_txn_t *txn, pulsarc_result res, void *ctx);

/** Begins a transaction that the broker aborts by itself unless it ends within
 * timeout_ms milliseconds (1 .. 2^31; the broker's limit,
 * transactionCoordinatorMaxTimeoutMs or so, may be lower). The first begin finds the
 * transaction coordinators (a lookup of each); a coordinator that moves or is not ready
 * is looked up again and the request retried, for at most operationTimeoutMs.
 * Fails with PULSARC_ERR_TXN_DISABLED without enableTransaction, with
 * PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND when the brokers have no coordinator,
 * PULSARC_ERR_TIMEOUT, PULSARC_ERR_INVALID_ARGUMENT (NULL client or out, timeout_ms out
 * of range), PULSARC_ERR_ALREADY_CLOSED, PULSARC_ERR_NO_MEMORY, PULSARC_ERR_WOULD_BLOCK
 * on the loop thread; pulsarc_last_error_detail() says why. *out is the transaction on
 * PULSARC_OK (the caller owns it: pulsarc_txn_free), NULL otherwise. Any thread but the
 * loop's. */
PULSARC_API pulsarc_result pulsarc_txn_begin(pulsarc_client_t *client, uint64_t timeout_ms,
                                             pulsarc_txn_t **out);
/** The same without waiting: cb (not NULL) runs once, on the loop thread, with the
 * results above. Fails at once (and cb never runs) with PULSARC_ERR_TXN_DISABLED,
 * PULSARC_ERR_INVALID_ARGUMENT, PULSARC_ERR_ALREADY_CLOSED or PULSARC_ERR_NO_MEMORY. Any
 * thread, the loop's included. */
PULSARC_API pulsarc_result pulsarc_txn_begin_async(pulsarc_client_t *client, uint64_t timeout_ms,
                                                   pulsarc_txn_begin_cb cb, void *ctx);

/** Sends msg as part of txn (see pulsarc_producer_send_async for msg and cb). Before the
 * first message of txn to a topic partition, the partition is registered with the
 * transaction's coordinator (ADD_PARTITION_TO_TXN), and the messages wait for it, in
 * order. Messages of different transactions, or with and without one, never share a
 * batch. Consumers see the message only once txn commits. Refused with
 * PULSARC_ERR_TXN_STATE once txn's commit or abort has been called, and with
 * PULSARC_ERR_INVALID_ARGUMENT for a txn of another client or a producer with spoolDir
 * (a spool replays messages after a restart, outside any transaction), and as
 * pulsarc_producer_send_async refuses. A registration the coordinator refuses fails the
 * messages that waited for it with its error (PULSARC_ERR_BROKER_TXN_NOT_FOUND for a
 * transaction the broker timed out, for example), in their callbacks. A receipt is no
 * promise of delivery before the commit succeeds: the broker may store a message in a
 * transaction it already aborted (and never deliver it). A send that fails
 * (its callback's result) makes txn's commit abort and fail. An accepted send holds its
 * own reference to txn: the caller may pulsarc_txn_free it right after the call. cb runs
 * on the loop thread. Any thread. */
PULSARC_API pulsarc_result pulsarc_producer_send_txn_async(pulsarc_producer_t *producer,
                                                           pulsarc_txn_t *txn,
                                                           pulsarc_message_t *msg,
                                                           pulsarc_send_cb cb, void *ctx);

/** Commits txn: waits until every send made in it so far has its result, then asks the
 * coordinator to commit. When one of those sends failed, txn is aborted instead and the
 * commit fails with PULSARC_ERR_TXN_OPERATION_FAILED. A transaction the broker already
 * aborted (its timeout passed) fails with PULSARC_ERR_BROKER_INVALID_TXN_STATUS or
 * PULSARC_ERR_BROKER_TXN_NOT_FOUND (state PULSARC_TXN_ERROR). A coordinator that moved
 * is looked up again and the request retried, for at most operationTimeoutMs
 * (PULSARC_ERR_TIMEOUT). PULSARC_ERR_TXN_STATE when txn is not open (its commit or abort
 * was called already); PULSARC_ERR_INVALID_ARGUMENT for NULL; PULSARC_ERR_ALREADY_CLOSED
 * once the client is closing; PULSARC_ERR_WOULD_BLOCK on the loop thread.
 * pulsarc_last_error_detail() says why (for OPERATION_FAILED: which send failed, and
 * how). txn stays the caller's: free it afterwards. Any thread but the loop's. */
PULSARC_API pulsarc_result pulsarc_txn_commit(pulsarc_txn_t *txn);
/** The same without waiting: cb (may be NULL) runs once, on the loop thread, with the
 * detail in pulsarc_last_error_detail() there, unless this call fails (TXN_STATE,
 * INVALID_ARGUMENT, ALREADY_CLOSED, NO_MEMORY). The client holds txn until cb has run.
 * Any thread, the loop's included. */
PULSARC_API pulsarc_result pulsarc_txn_commit_async(pulsarc_txn_t *txn, pulsarc_txn_done_cb cb,
                                                    void *ctx);
/** Aborts txn: waits for the results of its sends, then asks the coordinator to abort;
 * none of its messages becomes visible. Results, threads and ownership as for
 * pulsarc_txn_commit (OPERATION_FAILED aside: a failed send changes nothing here). */
PULSARC_API pulsarc_result pulsarc_txn_abort(pulsarc_txn_t *txn);
/** The same without waiting, as pulsarc_txn_commit_async. */
PULSARC_API pulsarc_result pulsarc_txn_abort_async(pulsarc_txn_t *txn, pulsarc_txn_done_cb cb,
                                                   void *ctx);
/** Where txn is now (PULSARC_TXN_ERROR for NULL). Any thread. */
PULSARC_API pulsarc_txn_state pulsarc_txn_get_state(const pulsarc_txn_t *txn);
/** The transaction's id as the broker gave it (most and least significant bits), for
 * logs and the admin API (0 and 0 for NULL; either pointer may be NULL). Any thread. */
PULSARC_API void pulsarc_txn_id(const pulsarc_txn_t *txn, uint64_t *most_bits,
                                uint64_t *least_bits);
/** Lets txn go (NULL: nothing). Sends, a commit or an abort in progress finish anyway;
 * an open transaction that is freed is left to the broker, which aborts it at its
 * timeout. Any thread, also from txn's callbacks. */
PULSARC_API void pulsarc_txn_free(pulsarc_txn_t *txn);

/** @} */

#ifdef __cplusplus
}
#endif

#endif
