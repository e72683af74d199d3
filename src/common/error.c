#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/safe_text.h"

static _Thread_local char detail_buf[512];

struct result_text {
    pulsarc_result code;
    const char *name;
    const char *text;
};

static const struct result_text texts[] = {
    { PULSARC_OK, "OK", "success" },
    { PULSARC_ERR_INVALID_ARGUMENT, "INVALID_ARGUMENT", "invalid argument" },
    { PULSARC_ERR_INVALID_TOPIC, "INVALID_TOPIC", "invalid topic name" },
    { PULSARC_ERR_INVALID_URL, "INVALID_URL", "invalid service URL" },
    { PULSARC_ERR_INVALID_CONFIG, "INVALID_CONFIG", "invalid configuration" },
    { PULSARC_ERR_NO_MEMORY, "NO_MEMORY", "out of memory" },
    { PULSARC_ERR_CONNECT_FAILED, "CONNECT_FAILED", "could not connect to the broker" },
    { PULSARC_ERR_CONNECTION_CLOSED, "CONNECTION_CLOSED", "the connection was closed" },
    { PULSARC_ERR_TIMEOUT, "TIMEOUT", "operation timed out" },
    { PULSARC_ERR_SEND_TIMEOUT, "SEND_TIMEOUT",
      "send timed out: the message may or may not have been persisted" },
    { PULSARC_ERR_QUEUE_FULL, "QUEUE_FULL", "producer queue is full" },
    { PULSARC_ERR_MEMORY_LIMIT, "MEMORY_LIMIT", "client memory limit reached" },
    { PULSARC_ERR_MESSAGE_TOO_BIG, "MESSAGE_TOO_BIG", "message is larger than the broker accepts" },
    { PULSARC_ERR_ALREADY_CLOSED, "ALREADY_CLOSED", "already closed" },
    { PULSARC_ERR_PROTOCOL, "PROTOCOL",
      "protocol error: malformed or unexpected data from the peer" },
    { PULSARC_ERR_TOO_MANY_REDIRECTS, "TOO_MANY_REDIRECTS", "too many lookup redirects" },
    { PULSARC_ERR_WOULD_BLOCK, "WOULD_BLOCK",
      "blocking call on the client's loop thread (from a callback)" },
    { PULSARC_ERR_UNSUPPORTED, "UNSUPPORTED", "not supported by this build" },
    { PULSARC_ERR_DUPLICATE_DROPPED, "DUPLICATE_DROPPED",
      "the broker dropped this as a duplicate: it was not stored" },
    { PULSARC_ERR_TLS_HANDSHAKE, "TLS_HANDSHAKE", "TLS handshake failed" },
    { PULSARC_ERR_TLS_UNTRUSTED, "TLS_UNTRUSTED",
      "the broker's certificate is not trusted (unknown CA or self-signed)" },
    { PULSARC_ERR_TLS_HOSTNAME, "TLS_HOSTNAME",
      "the broker's certificate was not issued for this host name" },
    { PULSARC_ERR_TLS_EXPIRED, "TLS_EXPIRED", "a certificate is expired or not yet valid" },
    { PULSARC_ERR_TLS_CLIENT_CERT, "TLS_CLIENT_CERT",
      "the broker requires a client certificate it trusts" },
    { PULSARC_ERR_TLS_CONFIG, "TLS_CONFIG", "a TLS CA, certificate or key could not be loaded" },
    { PULSARC_ERR_AUTH_PROVIDER, "AUTH_PROVIDER",
      "the authentication provider could not produce credentials" },
    { PULSARC_ERR_CRYPTO, "CRYPTO",
      "end-to-end encryption failed: a public key could not be read or used" },
    { PULSARC_ERR_INVALID_PAYLOAD, "INVALID_PAYLOAD", "the payload does not match its schema" },
    { PULSARC_ERR_SPOOL, "SPOOL", "the producer's spool cannot be used or written" },
    { PULSARC_ERR_TXN_DISABLED, "TXN_DISABLED",
      "transactions are not enabled on this client (enableTransaction)" },
    { PULSARC_ERR_TXN_STATE, "TXN_STATE", "the transaction is not open" },
    { PULSARC_ERR_TXN_OPERATION_FAILED, "TXN_OPERATION_FAILED",
      "a send in the transaction failed: the transaction was aborted" },
    { PULSARC_ERR_BROKER_UNKNOWN, "BROKER_UNKNOWN", "broker: unknown error" },
    { PULSARC_ERR_BROKER_METADATA, "BROKER_METADATA", "broker: metadata error" },
    { PULSARC_ERR_BROKER_PERSISTENCE, "BROKER_PERSISTENCE", "broker: persistence error" },
    { PULSARC_ERR_BROKER_AUTHENTICATION, "BROKER_AUTHENTICATION", "broker: authentication failed" },
    { PULSARC_ERR_BROKER_AUTHORIZATION, "BROKER_AUTHORIZATION", "broker: not authorized" },
    { PULSARC_ERR_BROKER_CONSUMER_BUSY, "BROKER_CONSUMER_BUSY", "broker: consumer busy" },
    { PULSARC_ERR_BROKER_SERVICE_NOT_READY, "BROKER_SERVICE_NOT_READY",
      "broker: service not ready" },
    { PULSARC_ERR_BROKER_QUOTA_EXCEEDED_ERROR, "BROKER_QUOTA_EXCEEDED_ERROR",
      "broker: producer blocked, backlog quota exceeded" },
    { PULSARC_ERR_BROKER_QUOTA_EXCEEDED_EXCEPTION, "BROKER_QUOTA_EXCEEDED_EXCEPTION",
      "broker: backlog quota exceeded" },
    { PULSARC_ERR_BROKER_CHECKSUM, "BROKER_CHECKSUM", "broker: checksum error" },
    { PULSARC_ERR_BROKER_UNSUPPORTED_VERSION, "BROKER_UNSUPPORTED_VERSION",
      "broker: unsupported protocol version" },
    { PULSARC_ERR_BROKER_TOPIC_NOT_FOUND, "BROKER_TOPIC_NOT_FOUND", "broker: topic not found" },
    { PULSARC_ERR_BROKER_SUBSCRIPTION_NOT_FOUND, "BROKER_SUBSCRIPTION_NOT_FOUND",
      "broker: subscription not found" },
    { PULSARC_ERR_BROKER_CONSUMER_NOT_FOUND, "BROKER_CONSUMER_NOT_FOUND",
      "broker: consumer not found" },
    { PULSARC_ERR_BROKER_TOO_MANY_REQUESTS, "BROKER_TOO_MANY_REQUESTS",
      "broker: too many requests" },
    { PULSARC_ERR_BROKER_TOPIC_TERMINATED, "BROKER_TOPIC_TERMINATED", "broker: topic terminated" },
    { PULSARC_ERR_BROKER_PRODUCER_BUSY, "BROKER_PRODUCER_BUSY",
      "broker: producer busy (a producer of this name is connected, or another producer has "
      "the topic to itself)" },
    { PULSARC_ERR_BROKER_INVALID_TOPIC_NAME, "BROKER_INVALID_TOPIC_NAME",
      "broker: invalid topic name" },
    { PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA, "BROKER_INCOMPATIBLE_SCHEMA",
      "broker: incompatible schema" },
    { PULSARC_ERR_BROKER_CONSUMER_ASSIGN, "BROKER_CONSUMER_ASSIGN",
      "broker: consumer assign error" },
    { PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND, "BROKER_TXN_COORDINATOR_NOT_FOUND",
      "broker: transaction coordinator not found" },
    { PULSARC_ERR_BROKER_INVALID_TXN_STATUS, "BROKER_INVALID_TXN_STATUS",
      "broker: invalid transaction status" },
    { PULSARC_ERR_BROKER_NOT_ALLOWED, "BROKER_NOT_ALLOWED", "broker: operation not allowed" },
    { PULSARC_ERR_BROKER_TXN_CONFLICT, "BROKER_TXN_CONFLICT", "broker: transaction conflict" },
    { PULSARC_ERR_BROKER_TXN_NOT_FOUND, "BROKER_TXN_NOT_FOUND", "broker: transaction not found" },
    { PULSARC_ERR_BROKER_PRODUCER_FENCED, "BROKER_PRODUCER_FENCED",
      "broker: producer fenced (another producer has, or took, the topic to itself)" },
};

static const struct result_text *lookup(pulsarc_result res)
{
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i].code == res)
            return &texts[i];
    return NULL;
}

const char *pulsarc_strerror(pulsarc_result res)
{
    const struct result_text *t = lookup(res);
    return t ? t->text : "unknown result code";
}

const char *pulsarc_result_name(pulsarc_result res)
{
    const struct result_text *t = lookup(res);
    return t ? t->name : "UNKNOWN_RESULT";
}

const char *pulsarc_last_error_detail(void)
{
    return detail_buf;
}

void pc_set_detail(const char *detail)
{
    if (!detail) {
        detail_buf[0] = '\0';
        return;
    }
    snprintf(detail_buf, sizeof detail_buf, "%s", detail);
    pc_safe_text(detail_buf); /* details quote peers' words: see safe_text.h */
}

pulsarc_result pc_fail(pulsarc_result res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail_buf, sizeof detail_buf, fmt, ap);
    va_end(ap);
    pc_safe_text(detail_buf);
    return res;
}

pulsarc_result pc_result_from_server_error(int server_error)
{
    /* The broker's enum value is not range-checked by protobuf-c: compare before adding,
     * so a value near INT_MAX cannot overflow. */
    if (server_error < 0 || server_error > PULSARC_ERR_BROKER_LAST - PULSARC_ERR_BROKER_BASE)
        return PULSARC_ERR_BROKER_UNKNOWN;
    return (pulsarc_result)(PULSARC_ERR_BROKER_BASE + server_error);
}

/* One list, the one docs/delivery.md's guarantees name. After a producer was created, only
 * errors that no retry can change stop it; everything else (producer busy while the broker
 * has not yet noticed the old connection died, service not ready, quotas, a topic being
 * re-created) is retried with backoff, as the official clients do. */
int pulsarc_result_is_terminal(pulsarc_result res)
{
    switch (res) {
    case PULSARC_ERR_BROKER_TOPIC_TERMINATED:
    case PULSARC_ERR_BROKER_PRODUCER_FENCED:
    case PULSARC_ERR_BROKER_NOT_ALLOWED:
    case PULSARC_ERR_BROKER_AUTHORIZATION:
    case PULSARC_ERR_BROKER_AUTHENTICATION:
    case PULSARC_ERR_BROKER_INVALID_TOPIC_NAME:
    case PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA:
    case PULSARC_ERR_BROKER_UNSUPPORTED_VERSION:
    case PULSARC_ERR_INVALID_TOPIC:
    case PULSARC_ERR_INVALID_CONFIG: /* a listenerName the broker does not have */
    case PULSARC_ERR_UNSUPPORTED:
    case PULSARC_ERR_TLS_UNTRUSTED:
    case PULSARC_ERR_TLS_HOSTNAME:
    case PULSARC_ERR_TLS_EXPIRED:
    case PULSARC_ERR_TLS_CLIENT_CERT:
    case PULSARC_ERR_TLS_CONFIG:
        return 1;
    default:
        return 0;
    }
}

/* Creating a producer gives up on a few more: a name already in use or a topic that does
 * not exist is an answer the caller should hear at once (Java's isRetriableError). */
int pc_result_fails_creation(pulsarc_result res)
{
    return pulsarc_result_is_terminal(res) || res == PULSARC_ERR_BROKER_PRODUCER_BUSY ||
           res == PULSARC_ERR_BROKER_TOPIC_NOT_FOUND ||
           res == PULSARC_ERR_MESSAGE_TOO_BIG; /* a PRODUCER command above the frame limit */
}
