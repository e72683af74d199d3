#include "config/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "config/properties.h"
#include "common/error.h"
#include "schema/schema.h"

/* Short names for the tables below. */
#define T_INT PC_CONF_INT
#define T_BOOL PC_CONF_BOOL
#define T_STR PC_CONF_STR
#define T_SECRET PC_CONF_SECRET
#define T_ENUM PC_CONF_ENUM

/* One setting. doc is its description: docs/configuration.md carries every row's key,
 * default, values and doc word for word, and the header's list every key with its
 * default (tests/unit/test_config_docs.c fails otherwise). */
typedef struct conf_row {
    const char *key;
    pc_conf_type_t type;
    size_t offset;
    int64_t min, max;         /* T_INT: the range; T_STR, T_SECRET: the length's */
    const char *def;          /* NULL: unset */
    const char *const *names; /* T_ENUM: value i is names[i], NULL-terminated */
    const char *doc;
} conf_row;

static const char *const log_levels[] = { "debug", "info", "warn", "error", "off", NULL };
static const char *const codecs[] = { "none", "lz4", "zlib", "zstd", "snappy", NULL };
static const char *const compression_levels[] = { "default", "faster", "better", NULL };
static const char *const batchers[] = { "default", "key_based", NULL };
static const char *const routing_modes[] = { "round_robin", "single", "custom", "sequence_id",
                                             NULL };
/* In pc_hash_scheme's order (routing/router.h). */
static const char *const hashings[] = { "java",       "murmur3",          "boost", "boost_1_81",
                                        "boost_1_80", "boost_1_80_arm64", NULL };
static const char *const crypto_actions[] = { "fail", "send", NULL };
static const char *const proxy_protocols[] = { "none", "SNI", NULL };
static const char *const access_modes[] = { "shared", "exclusive", "exclusive_with_fencing",
                                            "wait_for_exclusive", NULL };
static const char *const spool_fsyncs[] = { "always", "interval", "never", NULL };

#define CC(field) offsetof(struct pulsarc_client_config, field)
static const conf_row client_rows[] = {
    { "operationTimeoutMs", T_INT, CC(operation_timeout_ms), 1, 3600000, "30000", NULL,
      "Lookups, producer creation and close fail after this many milliseconds." },
    { "connectionTimeoutMs", T_INT, CC(connection_timeout_ms), 1, 3600000, "10000", NULL,
      "The TCP connect and the CONNECT handshake must finish within this many "
      "milliseconds." },
    { "keepAliveIntervalSeconds", T_INT, CC(keepalive_interval_s), 1, 3600, "30", NULL,
      "A PING after this much silence; the connection is dropped after twice this long "
      "without any answer." },
    { "lookupTimeoutMs", T_INT, CC(lookup_timeout_ms), 0, 3600000, "0", NULL,
      "A lookup or partition metadata request (binary or HTTP) fails after this many "
      "milliseconds without an answer, and is tried again (a producer's creation within "
      "operationTimeoutMs, a reconnect until it succeeds); 0: operationTimeoutMs. As the "
      "Java client's lookupTimeout: lookups can go to any broker and are harmless to "
      "repeat, so a short one gets past a broker that does not answer." },
    { "maxLookupRedirects", T_INT, CC(max_lookup_redirects), 0, 1000, "20", NULL,
      "A lookup redirected more often fails with PULSARC_ERR_TOO_MANY_REDIRECTS." },
    { "httpLookupAuthAllowRedirect", T_BOOL, CC(http_lookup_auth_allow_redirect), 0, 1, "false",
      NULL,
      "Send the lookup's credentials on an HTTP redirect to a host outside the service URL "
      "(off: credentials go only to the service URL's hosts)." },
    { "listenerName", T_STR, CC(listener_name), 1, 255, NULL, NULL,
      "The brokers' advertised listener (advertisedListeners) to use: lookups ask for it "
      "and producers connect to its address; unset: the brokers' internal listener. A "
      "name the broker does not have fails producer creation with "
      "PULSARC_ERR_INVALID_CONFIG." },
    { "description", T_STR, CC(description), 1, 64, NULL, NULL,
      "Appended to the client version CONNECT carries, which the brokers show in their "
      "statistics (publishers[].clientVersion): pulsarc-VERSION-DESCRIPTION, as the Java and "
      "C++ clients' description; printable ASCII, at most 64 characters." },
    { "connectionMaxIdleSeconds", T_INT, CC(connection_max_idle_s), -1, 86400, "60", NULL,
      "Close a connection that has had no producer, transaction coordinator or request for "
      "this many seconds (one that lookups used, or whose producers moved or closed); a new "
      "one is opened when needed. -1 or 0: connections stay open. As the Java client's "
      "(default 60)." },
    { "connectionsPerBroker", T_INT, CC(connections_per_broker), 1, 1024, "1", NULL,
      "Connections to each broker; the producers on a broker take them in turn (the "
      "official clients pick one at random per producer)." },
    { "proxyServiceUrl", T_STR, CC(proxy_service_url), 1, 4096, NULL, NULL,
      "An SNI proxy in front of the brokers' TLS ports, pulsar+ssl://host:port; needs "
      "proxyProtocol=SNI and a TLS service URL." },
    { "proxyProtocol", T_ENUM, CC(proxy_protocol), 0, 1, "none", proxy_protocols,
      "SNI: every connection opens TCP and TLS to proxyServiceUrl, with the host name of "
      "the broker it is for (from the lookup) as TLS SNI; hostname verification checks "
      "the certificate against that name." },
    { "memoryLimitBytes", T_INT, CC(memory_limit_bytes), 0, INT64_MAX, "67108864", NULL,
      "Pending payload bytes across all producers, and per pending message its record: 512 "
      "bytes, or for a copied payload of about 150 to 1,700 bytes and no key or properties, its 2 "
      "KiB block less the payload; 0 = no limit. A copy the producer holds until the receipt (a "
      "batch, compressed or encrypted bytes) counts too." },
    { "initialBackoffIntervalMs", T_INT, CC(initial_backoff_ms), 1, 3600000, "100", NULL,
      "The first reconnect delay; it doubles, with jitter, up to maxBackoffIntervalMs." },
    { "maxBackoffIntervalMs", T_INT, CC(max_backoff_ms), 1, 86400000, "60000", NULL,
      "The longest reconnect delay." },
    { "logLevel", T_ENUM, CC(log_level), 0, 4, "warn", log_levels,
      "The least severe level that is logged." },
    { "tlsTrustCertsFilePath", T_STR, CC(tls_trust_certs_file), 1, 4096, NULL, NULL,
      "A PEM file of trusted CAs; unset: the system's trust store." },
    { "tlsAllowInsecureConnection", T_BOOL, CC(tls_allow_insecure), 0, 1, "false", NULL,
      "Accept any broker certificate (for testing only)." },
    { "tlsEnableHostnameVerification", T_BOOL, CC(tls_hostname_verification), 0, 1, "true", NULL,
      "The broker's certificate must name the host connected to (the official clients "
      "default to false)." },
    { "tlsEnableSessionResumption", T_BOOL, CC(tls_session_resumption), 0, 1, "true", NULL,
      "Keep the TLS sessions brokers hand out (per host and port, one for each of "
      "connectionsPerBroker, at least 8) and resume one when reconnecting, each TLS 1.3 "
      "ticket once: a reconnect skips the certificate exchange and checks. The host name "
      "must match as on a full handshake." },
    { "tlsCertificateFilePath", T_STR, CC(tls_cert_file), 1, 4096, NULL, NULL,
      "The client certificate (PEM), for mTLS." },
    { "tlsKeyFilePath", T_STR, CC(tls_key_file), 1, 4096, NULL, NULL,
      "The client certificate's private key (PEM)." },
    { "autoCertRefreshSeconds", T_INT, CC(auto_cert_refresh_s), 0, 86400, "300", NULL,
      "Look at tlsTrustCertsFilePath, tlsCertificateFilePath and tlsKeyFilePath (or the tls "
      "authPlugin's files) again when a connection starts, at most once in this many seconds, "
      "and read them anew when one changed (its inode, size or times): new connections and "
      "reconnects use them, open connections keep theirs, and no TLS session made before "
      "is resumed. A change that cannot be used (half written, a key not matching its "
      "certificate) is logged at WARN and tried again; the previous files stay in use. PEM "
      "given in memory is never re-read. 0: the files are read once. As the Java client's "
      "(default 300)." },
    { "tlsProtocols", T_STR, CC(tls_protocols), 1, 256, NULL, NULL,
      "TLS versions, e.g. TLSv1.2,TLSv1.3; never below TLS 1.2; unset: TLS 1.2 and newer." },
    { "tlsCiphers", T_STR, CC(tls_ciphers), 1, 4096, NULL, NULL,
      "An OpenSSL cipher list; unset: OpenSSL's defaults." },
    { "authPlugin", T_STR, CC(auth_plugin), 1, 256, NULL, NULL,
      "token, tls, basic, oauth2 or sasl (Kerberos), or the official clients' class names "
      "(org.apache.pulsar.client.impl.auth.AuthenticationToken, ...); custom:METHOD once "
      "pulsarc_client_config_set_auth_provider has set your own of method METHOD." },
    { "authParams", T_SECRET, CC(auth_params), 1, 65536, NULL, NULL,
      "The plugin's parameters, in the official formats. A secret: never logged or dumped, "
      "wiped from memory when replaced or freed; a client keeps it only inside its "
      "authentication provider." },
    { "failoverSecondaryUrls", T_STR, CC(failover_secondary_urls), 1, 65536, NULL, NULL,
      "Cluster failover: the service URLs of the secondary clusters, comma-separated in "
      "order of preference (a piece without a scheme adds a host to the URL before it); "
      "they use the client's authentication and TLS settings." },
    { "failoverDelayMs", T_INT, CC(failover_delay_ms), 0, 86400000, "30000", NULL,
      "The active cluster must fail every probe for this long before the client switches "
      "to the first reachable other cluster (the primary first)." },
    { "switchBackDelayMs", T_INT, CC(switch_back_delay_ms), 0, 86400000, "60000", NULL,
      "While a secondary is active, the primary must pass every probe for this long before "
      "the client switches back to it." },
    { "failoverCheckIntervalMs", T_INT, CC(failover_check_interval_ms), 10, 3600000, "5000", NULL,
      "How often the probes run (a TCP connect to the service URL's hosts, bounded by "
      "connectionTimeoutMs), and how often a service URL provider is asked." },
    { "statsIntervalSeconds", T_INT, CC(stats_interval_s), 0, 86400, "0", NULL,
      "Call the statistics callback (pulsarc_client_config_set_stats_cb) this often with the "
      "client's statistics as JSON (docs/statistics.md); 0 = never." },
    { "metricsPerPartition", T_BOOL, CC(metrics_per_partition), 0, 1, "false", NULL,
      "In the Prometheus text of pulsarc_client_metrics_text (docs/statistics.md): the "
      "counters of a partitioned topic as one series per partition (label "
      "pulsar_partition) rather than one per topic." },
    { "enableTransaction", T_BOOL, CC(enable_transaction), 0, 1, "false", NULL,
      "Allow transactions (pulsarc_txn_begin): the client finds the brokers' transaction "
      "coordinators when the first transaction begins. Off: pulsarc_txn_begin fails with "
      "PULSARC_ERR_TXN_DISABLED." },
};
#undef CC

#define PC(field) offsetof(struct pulsarc_producer_config, field)
static const conf_row producer_rows[] = {
    { "producerName", T_STR, PC(producer_name), 1, 255, NULL, NULL,
      "A fixed producer name, needed to resume deduplication; unset: the broker assigns "
      "one." },
    { "sendTimeoutMs", T_INT, PC(send_timeout_ms), 0, INT64_MAX / 2, "30000", NULL,
      "A message without a receipt after this many milliseconds fails with "
      "PULSARC_ERR_SEND_TIMEOUT; 0 = wait for ever." },
    { "maxPendingMessages", T_INT, PC(max_pending_messages), 0, INT32_MAX, "1000", NULL,
      "Messages waiting for a receipt, per partition; 0 = no limit." },
    { "blockIfQueueFull", T_BOOL, PC(block_if_queue_full), 0, 1, "false", NULL,
      "true: a send waits for room; false: it fails at once when the queue or the memory "
      "limit is full." },
    { "initialSequenceId", T_INT, PC(initial_sequence_id), -1, INT64_MAX - 1, "-1", NULL,
      "The first automatic sequence id is this + 1; -1 = continue from the broker's "
      "last_sequence_id." },
    { "compressionType", T_ENUM, PC(compression), 0, 4, "none", codecs,
      "How each entry's payload is compressed." },
    { "compressionLevel", T_ENUM, PC(compression_level), 0, 2, "default", compression_levels,
      "How hard lz4, zlib and zstd compress, in the same formats (every reader decodes any "
      "level), as the Go client's: faster is lz4 with acceleration 8, zlib 1, zstd 1; "
      "better is LZ4 HC level 9, zlib 9, zstd 9; default is lz4's acceleration 1, zlib's 6, "
      "zstd 3, as the official clients. snappy has no levels." },
    { "batchingEnabled", T_BOOL, PC(batching_enabled), 0, 1, "true", NULL,
      "Group messages into batches (one entry, one receipt)." },
    { "batchingMaxMessages", T_INT, PC(batching_max_messages), 1, 1000000, "1000", NULL,
      "A batch is sent when it holds this many messages (or half of maxPendingMessages, if "
      "that is fewer)." },
    { "batchingMaxBytes", T_INT, PC(batching_max_bytes), 1, 64 * 1024 * 1024, "131072", NULL,
      "A batch is sent when it holds this many payload bytes." },
    { "batchingMaxPublishDelayMs", T_INT, PC(batching_max_delay_ms), 0, 3600000, "10", NULL,
      "A batch is sent this many milliseconds after its first message." },
    { "batcherType", T_ENUM, PC(batcher), 0, 1, "default", batchers,
      "key_based: one batch per key, for Key_Shared consumers." },
    { "chunkingEnabled", T_BOOL, PC(chunking_enabled), 0, 1, "false", NULL,
      "Split payloads above the broker's limit into chunks." },
    { "chunkMaxMessageSize", T_INT, PC(chunk_max_size), 0, INT32_MAX, "0", NULL,
      "The chunk size; 0 = the broker's max message size." },
    { "messageRoutingMode", T_ENUM, PC(routing_mode), 0, 3, "round_robin", routing_modes,
      "The partition of a message without a key: round_robin, single (one partition for "
      "every such message), custom (pulsarc_producer_config_set_router) or sequence_id (one "
      "with an explicit sequence id goes to partition (id / batchingMaxMessages) mod the "
      "partition count, id mod the count without batching, so that a rerun sending the same "
      "ids puts each message where the first run did, as per-partition deduplication needs; "
      "one without an id goes round robin)." },
    { "hashingScheme", T_ENUM, PC(hashing), 0, 5, "java", hashings,
      "The hash that maps a key to its partition: java (String.hashCode, as the Java "
      "client), murmur3, or the C++ client's BoostHash (boost::hash of a 64-bit build) as "
      "the Boost it was built with computes it: boost (Boost 1.82 and later: libpulsar's "
      "packages from 3.5.0 on), boost_1_81, boost_1_80 (Boost 1.56 to 1.80 on x86-64: "
      "libpulsar's packages up to 3.4, or libpulsar built with Debian 12's Boost 1.74) or "
      "boost_1_80_arm64 (the same where char is unsigned, as on Linux on arm64)." },
    { "maxPendingMessagesAcrossPartitions", T_INT, PC(max_pending_across_partitions), 0, INT32_MAX,
      "0", NULL, "A limit over all partitions together; 0 = none." },
    { "lazyStartPartitionedProducers", T_BOOL, PC(lazy_start), 0, 1, "false", NULL,
      "Connect a partition on its first message rather than at creation." },
    { "autoUpdatePartitions", T_BOOL, PC(auto_update_partitions), 0, 1, "true", NULL,
      "Watch for partitions added to the topic." },
    { "autoUpdatePartitionsIntervalSeconds", T_INT, PC(partitions_update_interval_s), 1, 86400,
      "60", NULL, "How often the partition count is looked up." },
    { "schemaValidationEnabled", T_BOOL, PC(schema_validation), 0, 1, "true", NULL,
      "Check payloads against their schema at send; false: send them unchecked." },
    { "encryptionKeys", T_STR, PC(encryption_keys), 1, 65536, NULL, NULL,
      "Comma-separated key names; set: every message is encrypted, with the data key "
      "wrapped for each name." },
    { "cryptoFailureAction", T_ENUM, PC(crypto_failure_action), 0, 1, "fail", crypto_actions,
      "fail: a message whose encryption fails ends with PULSARC_ERR_CRYPTO; send: it is "
      "published unencrypted, with a warning in the log." },
    { "dataKeyRotationMs", T_INT, PC(data_key_rotation_ms), 0, INT64_MAX / 2, "14400000", NULL,
      "A new data key this often (4 h, as the Java client); 0 = only when a public key "
      "changes." },
    { "accessMode", T_ENUM, PC(access_mode), 0, 3, "shared", access_modes,
      "shared: any number of producers; exclusive: creation fails while the topic has "
      "another producer; exclusive_with_fencing: the others are fenced out; "
      "wait_for_exclusive: creation waits (up to operationTimeoutMs) until the others have "
      "left. A producer fenced out stops with PULSARC_ERR_BROKER_PRODUCER_FENCED. "
      "lazyStartPartitionedProducers applies to shared producers only." },
    { "initialSubscriptionName", T_STR, PC(initial_subscription), 1, 255, NULL, NULL,
      "A subscription the broker creates with the producer (at the earliest message) when "
      "the topic has none of that name, so that nothing is lost before the first consumer "
      "comes; unset: none." },
    { "spoolDir", T_STR, PC(spool_dir), 1, 4096, NULL, NULL,
      "A directory of this producer's own (created, with missing parents, mode 0700; one "
      "that exists must be owned by the process's user and not writable by its group or "
      "others, and not a symbolic link; needs producerName): every "
      "accepted message is written there before its send returns and stays until its "
      "receipt, and a producer opened on it later (after a crash) resends what is left "
      "before any new message. With encryptionKeys, each message is encrypted before it is "
      "written (the spool holds ciphertext only). Unset: no spool." },
    { "spoolFsync", T_ENUM, PC(spool_fsync), 0, 2, "interval", spool_fsyncs,
      "When spooled messages reach the disk: always (a send returns once its message is on "
      "disk; concurrent sends share one fsync), interval (every spoolFsyncIntervalMs) or "
      "never (when the system writes them). A crash of the process loses no accepted "
      "message under any of them; a crash of the machine loses none only with always." },
    { "spoolFsyncIntervalMs", T_INT, PC(spool_fsync_interval_ms), 1, 3600000, "1000", NULL,
      "How often spoolFsync=interval syncs the spool." },
    { "spoolMaxBytes", T_INT, PC(spool_max_bytes), 65536, INT64_MAX, "1073741824", NULL,
      "The spool's size on disk; when it is full a send waits (blockIfQueueFull) or fails "
      "with PULSARC_ERR_QUEUE_FULL, until receipts free a whole segment." },
};
#undef PC

#define NROWS(t) (sizeof(t) / sizeof((t)[0]))

static int parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes")) {
        *out = true;
        return 0;
    }
    if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no")) {
        *out = false;
        return 0;
    }
    return -1;
}

/* Free a string field; a secret is wiped first, so that no freed memory keeps it. */
static void free_string(const conf_row *r, char **field)
{
    if (*field && r->type == T_SECRET)
        OPENSSL_cleanse(*field, strlen(*field));
    free(*field);
    *field = NULL;
}

static pulsarc_result set_row(const conf_row *r, void *base, const char *value)
{
    char *field = (char *)base + r->offset;
    switch (r->type) {
    case T_INT: {
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end || v < r->min || v > r->max)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                           "%s: \"%s\" is not an integer in [%" PRId64 ", %" PRId64 "]", r->key,
                           value, r->min, r->max);
        *(int64_t *)field = v;
        return PULSARC_OK;
    }
    case T_BOOL:
        if (parse_bool(value, (bool *)field) != 0)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG, "%s: \"%s\" is not true or false", r->key,
                           value);
        return PULSARC_OK;
    case T_STR:
    case T_SECRET: {
        size_t n = strlen(value);
        if ((int64_t)n < r->min || (int64_t)n > r->max)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG, "%s: length must be %" PRId64 "..%" PRId64,
                           r->key, r->min, r->max);
        char *copy = strdup(value);
        if (!copy)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        free_string(r, (char **)field); /* a secret set twice: the old value is wiped */
        *(char **)field = copy;
        return PULSARC_OK;
    }
    case T_ENUM:
        for (int64_t i = 0; r->names[i]; i++) {
            if (!strcasecmp(r->names[i], value)) {
                *(int *)field = (int)i; /* every enum field is int-sized */
                return PULSARC_OK;
            }
        }
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "%s: \"%s\" is not a known value", r->key,
                       value);
    }
    return PULSARC_ERR_INVALID_CONFIG;
}

static pulsarc_result set_key(const conf_row *rows, size_t n, void *base, const char *key,
                              const char *value)
{
    if (!base || !key || !value)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config, key and value must not be NULL");
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, key))
            return set_row(&rows[i], base, value);
    return pc_fail(PULSARC_ERR_INVALID_CONFIG, "unknown configuration key \"%s\"", key);
}

static void fill_defaults(const conf_row *rows, size_t n, void *base)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].def)
            set_row(&rows[i], base, rows[i].def);
}

static size_t dump(const conf_row *rows, size_t n, const void *base, char *buf, size_t len)
{
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *field = (const char *)base + rows[i].offset;
        char val[64];
        const char *v = val;
        switch (rows[i].type) {
        case T_INT:
            snprintf(val, sizeof val, "%" PRId64, *(const int64_t *)field);
            break;
        case T_BOOL:
            v = *(const bool *)field ? "true" : "false";
            break;
        case T_STR:
            v = *(char *const *)field ? *(char *const *)field : "";
            break;
        case T_SECRET:
            v = *(char *const *)field ? "<set, not shown>" : "";
            break;
        case T_ENUM:
            v = rows[i].names[*(const int *)field];
            break;
        }
        int w = snprintf(buf ? buf + (used < len ? used : len) : NULL, used < len ? len - used : 0,
                         "%s=%s\n", rows[i].key, v);
        if (w > 0)
            used += (size_t)w;
    }
    return used;
}

/* The string fields of a struct described by rows: freed, or deep-copied. */
static void clear_strings(const conf_row *rows, size_t n, void *base)
{
    for (size_t i = 0; i < n; i++) {
        if (rows[i].type != T_STR && rows[i].type != T_SECRET)
            continue;
        free_string(&rows[i], (char **)((char *)base + rows[i].offset));
    }
}

static int copy_strings(const conf_row *rows, size_t n, void *dst)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].type != T_STR && rows[i].type != T_SECRET)
            continue;
        char **field = (char **)((char *)dst + rows[i].offset);
        if (*field && !(*field = strdup(*field)))
            rc = -1; /* the rest still become copies or NULL, so clearing stays safe */
    }
    return rc;
}

static bool describe(const conf_row *rows, size_t n, size_t i, pc_config_key_t *out)
{
    if (i >= n)
        return false;
    *out = (pc_config_key_t){
        .key = rows[i].key,
        .type = rows[i].type,
        .min = rows[i].min,
        .max = rows[i].max,
        .def = rows[i].def,
        .names = rows[i].names,
        .doc = rows[i].doc,
    };
    return true;
}

bool pc_client_config_key(size_t i, pc_config_key_t *out)
{
    return describe(client_rows, NROWS(client_rows), i, out);
}

bool pc_producer_config_key(size_t i, pc_config_key_t *out)
{
    return describe(producer_rows, NROWS(producer_rows), i, out);
}

void pc_client_config_defaults(pulsarc_client_config_t *c)
{
    memset(c, 0, sizeof *c);
    fill_defaults(client_rows, NROWS(client_rows), c);
}

void pc_producer_config_defaults(pulsarc_producer_config_t *c)
{
    memset(c, 0, sizeof *c);
    fill_defaults(producer_rows, NROWS(producer_rows), c);
}

pulsarc_client_config_t *pulsarc_client_config_new(void)
{
    pulsarc_client_config_t *c = malloc(sizeof *c);
    if (c)
        pc_client_config_defaults(c);
    return c;
}

void pulsarc_client_config_free(pulsarc_client_config_t *conf)
{
    if (!conf)
        return;
    pc_client_config_clear(conf);
    free(conf);
}

pulsarc_result pulsarc_client_config_set(pulsarc_client_config_t *conf, const char *key,
                                         const char *value)
{
    return set_key(client_rows, NROWS(client_rows), conf, key, value);
}

void pulsarc_client_config_set_logger(pulsarc_client_config_t *conf, pulsarc_log_cb cb, void *ctx)
{
    if (!conf)
        return;
    conf->log_cb = cb;
    conf->log_ctx = ctx;
    /* Remember that the user chose, so NULL means silence rather than the default. */
    if (!cb)
        conf->log_level = PULSARC_LOG_OFF;
}

size_t pulsarc_client_config_dump(const pulsarc_client_config_t *conf, char *buf, size_t len)
{
    if (!conf)
        return 0;
    size_t used = dump(client_rows, NROWS(client_rows), conf, buf, len);
    return used + pc_client_config_dump_failover(conf, buf ? buf + (used < len ? used : len) : NULL,
                                                 used < len ? len - used : 0);
}

pulsarc_producer_config_t *pulsarc_producer_config_new(void)
{
    pulsarc_producer_config_t *c = malloc(sizeof *c);
    if (c)
        pc_producer_config_defaults(c);
    return c;
}

void pc_producer_config_clear(pulsarc_producer_config_t *c)
{
    pc_interceptors_clear(&c->interceptors);
    pc_producer_config_clear_keys(c);
    pc_props_clear(&c->properties, &c->n_properties, &c->cap_properties);
    clear_strings(producer_rows, NROWS(producer_rows), c);
    pc_schema_unref(c->schema);
    c->schema = NULL;
}

void pulsarc_producer_config_free(pulsarc_producer_config_t *conf)
{
    if (!conf)
        return;
    pc_producer_config_clear(conf);
    free(conf);
}

pulsarc_result pulsarc_producer_config_set(pulsarc_producer_config_t *conf, const char *key,
                                           const char *value)
{
    return set_key(producer_rows, NROWS(producer_rows), conf, key, value);
}

size_t pulsarc_producer_config_dump(const pulsarc_producer_config_t *conf, char *buf, size_t len)
{
    return conf ? dump(producer_rows, NROWS(producer_rows), conf, buf, len) : 0;
}

int pc_producer_config_copy(pulsarc_producer_config_t *dst, const pulsarc_producer_config_t *src)
{
    *dst = *src;
    pc_schema_ref(dst->schema);
    int rc_keys = pc_producer_config_copy_keys(dst, src);
    int rc_props = pc_props_copy(&dst->properties, &dst->n_properties, &dst->cap_properties);
    int rc_interceptors = pc_interceptors_copy(&dst->interceptors, &src->interceptors);
    return copy_strings(producer_rows, NROWS(producer_rows), dst) | rc_keys | rc_props |
           rc_interceptors;
}

int pc_client_config_copy(pulsarc_client_config_t *dst, const pulsarc_client_config_t *src)
{
    *dst = *src;
    pc_auth_custom_ref(dst->auth_custom);
    int rc_pem = pc_client_config_copy_tls_pem(dst, src);
    int rc_failover = pc_client_config_copy_failover(dst, src);
    return copy_strings(client_rows, NROWS(client_rows), dst) | rc_pem | rc_failover;
}

void pc_client_config_clear(pulsarc_client_config_t *c)
{
    pc_client_config_clear_tls_pem(c);
    pc_client_config_clear_failover(c);
    pc_auth_custom_unref(c->auth_custom);
    c->auth_custom = NULL;
    clear_strings(client_rows, NROWS(client_rows), c);
}

pulsarc_result pulsarc_producer_config_set_router(pulsarc_producer_config_t *conf,
                                                  pulsarc_router_cb cb, void *ctx)
{
    if (!conf || !cb)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config and router must not be NULL");
    conf->router = cb;
    conf->router_ctx = ctx;
    conf->routing_mode = PC_ROUTE_CUSTOM;
    return PULSARC_OK;
}

pulsarc_result pulsarc_producer_config_set_room_cb(pulsarc_producer_config_t *conf,
                                                   pulsarc_room_cb cb, void *ctx)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    conf->room_cb = cb;
    conf->room_ctx = cb ? ctx : NULL;
    return PULSARC_OK;
}

pulsarc_result pulsarc_producer_config_set_property(pulsarc_producer_config_t *conf,
                                                    const char *key, const char *value)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    return pc_props_set(&conf->properties, &conf->n_properties, &conf->cap_properties, key, value);
}

pulsarc_result pulsarc_producer_config_add_interceptor(pulsarc_producer_config_t *conf,
                                                       const pulsarc_interceptor_t *ops,
                                                       size_t ops_size, void *ctx)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    return pc_interceptors_add(&conf->interceptors, ops, ops_size, ctx);
}

pulsarc_result pulsarc_client_config_set_stats_cb(pulsarc_client_config_t *conf,
                                                  pulsarc_stats_cb cb, void *ctx)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    conf->stats_cb = cb;
    conf->stats_ctx = cb ? ctx : NULL;
    return PULSARC_OK;
}

pulsarc_result pulsarc_producer_config_set_schema(pulsarc_producer_config_t *conf,
                                                  const pulsarc_schema_t *schema)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "config must not be NULL");
    pulsarc_schema_t *ref = pc_schema_ref(schema);
    pc_schema_unref(conf->schema);
    conf->schema = ref;
    return PULSARC_OK;
}
