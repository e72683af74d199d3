/* libpulsar's result codes: their names (pulsar_result_str) and the code for each pulsarc
 * result; and the small helpers the layer's files share. */
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

const char *pulsar_result_str(pulsar_result result)
{
    /* libpulsar's own spellings, including its inconsistencies ("TimeOut", the "Result"
     * prefix on the later ones), which programs may compare against. */
    static const char *const names[] = {
        "Ok",
        "UnknownError",
        "InvalidConfiguration",
        "TimeOut",
        "LookupError",
        "ConnectError",
        "ReadError",
        "AuthenticationError",
        "AuthorizationError",
        "ErrorGettingAuthenticationData",
        "BrokerMetadataError",
        "BrokerPersistenceError",
        "ChecksumError",
        "ConsumerBusy",
        "NotConnected",
        "AlreadyClosed",
        "InvalidMessage",
        "ConsumerNotInitialized",
        "ProducerNotInitialized",
        "ProducerBusy",
        "TooManyLookupRequestException",
        "InvalidTopicName",
        "InvalidUrl",
        "ServiceUnitNotReady",
        "OperationNotSupported",
        "ProducerBlockedQuotaExceededError",
        "ProducerBlockedQuotaExceededException",
        "ProducerQueueIsFull",
        "MessageTooBig",
        "TopicNotFound",
        "SubscriptionNotFound",
        "ConsumerNotFound",
        "UnsupportedVersionError",
        "TopicTerminated",
        "CryptoError",
        "IncompatibleSchema",
        "ResultConsumerAssignError",
        "ResultCumulativeAcknowledgementNotAllowedError",
        "ResultTransactionCoordinatorNotFoundError",
        "ResultInvalidTxnStatusError",
        "ResultNotAllowedError",
        "ResultTransactionConflict",
        "ResultTransactionNotFound",
        "ResultProducerFenced",
        "ResultMemoryBufferIsFull",
        "ResultInterrupted",
        "ResultDisconnected",
    };
    if ((int)result < 0 || (size_t)result >= sizeof names / sizeof names[0])
        return "UnknownErrorCode";
    return names[result];
}

pulsar_result pc_compat_result(pulsarc_result res)
{
    switch (res) {
    case PULSARC_OK:
        return pulsar_result_Ok;
    case PULSARC_ERR_INVALID_ARGUMENT:
    case PULSARC_ERR_INVALID_CONFIG:
    case PULSARC_ERR_SPOOL:
        return pulsar_result_InvalidConfiguration;
    case PULSARC_ERR_INVALID_TOPIC:
    case PULSARC_ERR_BROKER_INVALID_TOPIC_NAME:
        return pulsar_result_InvalidTopicName;
    case PULSARC_ERR_INVALID_URL:
        return pulsar_result_InvalidUrl;
    case PULSARC_ERR_CONNECT_FAILED:
    case PULSARC_ERR_TLS_HANDSHAKE:
    case PULSARC_ERR_TLS_UNTRUSTED:
    case PULSARC_ERR_TLS_HOSTNAME:
    case PULSARC_ERR_TLS_EXPIRED:
    case PULSARC_ERR_TLS_CLIENT_CERT:
    case PULSARC_ERR_TLS_CONFIG:
        return pulsar_result_ConnectError;
    case PULSARC_ERR_CONNECTION_CLOSED:
        return pulsar_result_Disconnected;
    case PULSARC_ERR_TIMEOUT:
    case PULSARC_ERR_SEND_TIMEOUT:
        return pulsar_result_Timeout;
    case PULSARC_ERR_QUEUE_FULL:
        return pulsar_result_ProducerQueueIsFull;
    case PULSARC_ERR_MEMORY_LIMIT:
        return pulsar_result_MemoryBufferIsFull;
    case PULSARC_ERR_MESSAGE_TOO_BIG:
        return pulsar_result_MessageTooBig;
    case PULSARC_ERR_ALREADY_CLOSED:
        return pulsar_result_AlreadyClosed;
    case PULSARC_ERR_TOO_MANY_REDIRECTS:
        return pulsar_result_LookupError;
    case PULSARC_ERR_WOULD_BLOCK:
    case PULSARC_ERR_UNSUPPORTED:
        return pulsar_result_OperationNotSupported;
    case PULSARC_ERR_AUTH_PROVIDER:
        return pulsar_result_ErrorGettingAuthenticationData;
    case PULSARC_ERR_CRYPTO:
        return pulsar_result_CryptoError;
    case PULSARC_ERR_INVALID_PAYLOAD:
        return pulsar_result_InvalidMessage;
    case PULSARC_ERR_TXN_DISABLED:
    case PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND:
        return pulsar_result_TransactionCoordinatorNotFoundError;
    case PULSARC_ERR_TXN_STATE:
    case PULSARC_ERR_TXN_OPERATION_FAILED:
    case PULSARC_ERR_BROKER_INVALID_TXN_STATUS:
        return pulsar_result_InvalidTxnStatusError;
    case PULSARC_ERR_BROKER_METADATA:
        return pulsar_result_BrokerMetadataError;
    case PULSARC_ERR_BROKER_PERSISTENCE:
        return pulsar_result_BrokerPersistenceError;
    case PULSARC_ERR_BROKER_AUTHENTICATION:
        return pulsar_result_AuthenticationError;
    case PULSARC_ERR_BROKER_AUTHORIZATION:
        return pulsar_result_AuthorizationError;
    case PULSARC_ERR_BROKER_CONSUMER_BUSY:
        return pulsar_result_ConsumerBusy;
    case PULSARC_ERR_BROKER_SERVICE_NOT_READY:
        return pulsar_result_ServiceUnitNotReady;
    case PULSARC_ERR_BROKER_QUOTA_EXCEEDED_ERROR:
        return pulsar_result_ProducerBlockedQuotaExceededError;
    case PULSARC_ERR_BROKER_QUOTA_EXCEEDED_EXCEPTION:
        return pulsar_result_ProducerBlockedQuotaExceededException;
    case PULSARC_ERR_BROKER_CHECKSUM:
        return pulsar_result_ChecksumError;
    case PULSARC_ERR_BROKER_UNSUPPORTED_VERSION:
        return pulsar_result_UnsupportedVersionError;
    case PULSARC_ERR_BROKER_TOPIC_NOT_FOUND:
        return pulsar_result_TopicNotFound;
    case PULSARC_ERR_BROKER_SUBSCRIPTION_NOT_FOUND:
        return pulsar_result_SubscriptionNotFound;
    case PULSARC_ERR_BROKER_CONSUMER_NOT_FOUND:
        return pulsar_result_ConsumerNotFound;
    case PULSARC_ERR_BROKER_TOO_MANY_REQUESTS:
        return pulsar_result_TooManyLookupRequestException;
    case PULSARC_ERR_BROKER_TOPIC_TERMINATED:
        return pulsar_result_TopicTerminated;
    case PULSARC_ERR_BROKER_PRODUCER_BUSY:
        return pulsar_result_ProducerBusy;
    case PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA:
        return pulsar_result_IncompatibleSchema;
    case PULSARC_ERR_BROKER_CONSUMER_ASSIGN:
        return pulsar_result_ConsumerAssignError;
    case PULSARC_ERR_BROKER_NOT_ALLOWED:
        return pulsar_result_NotAllowedError;
    case PULSARC_ERR_BROKER_TXN_CONFLICT:
        return pulsar_result_TransactionConflict;
    case PULSARC_ERR_BROKER_TXN_NOT_FOUND:
        return pulsar_result_TransactionNotFound;
    case PULSARC_ERR_BROKER_PRODUCER_FENCED:
        return pulsar_result_ProducerFenced;
    default:
        return pulsar_result_UnknownError;
    }
}

char *pc_compat_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

void pc_compat_wipe_free(char *s)
{
    if (!s)
        return;
    volatile char *v = s;
    while (*v)
        *v++ = 0;
    free(s);
}

int pc_compat_set_str(char **slot, const char *s)
{
    char *c = NULL;
    if (s && !(c = pc_compat_strdup(s)))
        return -1;
    free(*slot);
    *slot = c;
    return 0;
}

static _Thread_local int in_callback;

int pc_compat_in_callback(void)
{
    return in_callback;
}

void pc_compat_enter_callback(void)
{
    in_callback++;
}

void pc_compat_leave_callback(void)
{
    in_callback--;
}

int pc_compat_kvs_put(pc_compat_kvs *kvs, const char *key, const char *value)
{
    if (kvs->n == kvs->cap) {
        size_t cap = kvs->cap ? 2 * kvs->cap : 4;
        char **k = realloc(kvs->keys, cap * sizeof *k);
        if (!k)
            return -1;
        kvs->keys = k;
        char **v = realloc(kvs->values, cap * sizeof *v);
        if (!v)
            return -1;
        kvs->values = v;
        kvs->cap = cap;
    }
    char *k = pc_compat_strdup(key), *v = pc_compat_strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    kvs->keys[kvs->n] = k;
    kvs->values[kvs->n++] = v;
    return 0;
}

int pc_compat_kvs_copy(pc_compat_kvs *dst, const pc_compat_kvs *src)
{
    *dst = (pc_compat_kvs){ 0 };
    for (size_t i = 0; i < src->n; i++) {
        if (pc_compat_kvs_put(dst, src->keys[i], src->values[i]) != 0) {
            pc_compat_kvs_clear(dst);
            return -1;
        }
    }
    return 0;
}

void pc_compat_kvs_clear(pc_compat_kvs *kvs)
{
    for (size_t i = 0; i < kvs->n; i++) {
        free(kvs->keys[i]);
        pc_compat_wipe_free(kvs->values[i]); /* a value may be authParams */
    }
    free(kvs->keys);
    free(kvs->values);
    *kvs = (pc_compat_kvs){ 0 };
}
