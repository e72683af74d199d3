/** @file
 * pulsarc-compat: libpulsar's result codes, in libpulsar's order (the values are libpulsar's). */
#ifndef PULSARC_COMPAT_PULSAR_C_RESULT_H
#define PULSARC_COMPAT_PULSAR_C_RESULT_H

#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The outcome of a call or of a send; 0 is success. */
typedef enum {
    pulsar_result_Ok,                             /**< success */
    pulsar_result_UnknownError,                   /**< an error without a better code */
    pulsar_result_InvalidConfiguration,           /**< a setting pulsarc refuses */
    pulsar_result_Timeout,                        /**< an operation or a send timed out */
    pulsar_result_LookupError,                    /**< the topic's broker could not be found */
    pulsar_result_ConnectError,                   /**< no connection (TLS failures included) */
    pulsar_result_ReadError,                      /**< (not produced by pulsarc-compat) */
    pulsar_result_AuthenticationError,            /**< the broker refused the credentials */
    pulsar_result_AuthorizationError,             /**< the role may not produce there */
    pulsar_result_ErrorGettingAuthenticationData, /**< the credentials could not be had */
    pulsar_result_BrokerMetadataError,            /**< the broker's MetadataError */
    pulsar_result_BrokerPersistenceError,         /**< the broker's PersistenceError */
    pulsar_result_ChecksumError,                  /**< the broker's ChecksumError */
    pulsar_result_ConsumerBusy,                   /**< the broker's ConsumerBusy */
    pulsar_result_NotConnected,                   /**< (not produced by pulsarc-compat) */
    pulsar_result_AlreadyClosed,                  /**< the producer or client is closed */
    pulsar_result_InvalidMessage,                /**< a message sent already, or refused as built */
    pulsar_result_ConsumerNotInitialized,        /**< (consumers are not provided) */
    pulsar_result_ProducerNotInitialized,        /**< a NULL producer */
    pulsar_result_ProducerBusy,                  /**< the broker's ProducerBusy */
    pulsar_result_TooManyLookupRequestException, /**< the broker's TooManyRequests */
    pulsar_result_InvalidTopicName,              /**< the topic name does not parse */
    pulsar_result_InvalidUrl,                    /**< the service URL does not parse */
    pulsar_result_ServiceUnitNotReady,           /**< the broker's ServiceNotReady */
    pulsar_result_OperationNotSupported,         /**< not available here (see the guide) */
    pulsar_result_ProducerBlockedQuotaExceededError,     /**< backlog quota: blocked */
    pulsar_result_ProducerBlockedQuotaExceededException, /**< backlog quota: exception */
    pulsar_result_ProducerQueueIsFull,                   /**< maxPendingMessages reached */
    pulsar_result_MessageTooBig,           /**< above the broker's limit, chunking off */
    pulsar_result_TopicNotFound,           /**< the broker's TopicNotFound */
    pulsar_result_SubscriptionNotFound,    /**< the broker's SubscriptionNotFound */
    pulsar_result_ConsumerNotFound,        /**< the broker's ConsumerNotFound */
    pulsar_result_UnsupportedVersionError, /**< the broker's UnsupportedVersionError */
    pulsar_result_TopicTerminated,         /**< the topic was terminated */
    pulsar_result_CryptoError,             /**< end-to-end encryption failed */
    pulsar_result_IncompatibleSchema,      /**< the broker refused the schema */
    pulsar_result_ConsumerAssignError,     /**< the broker's ConsumerAssignError */
    pulsar_result_CumulativeAcknowledgementNotAllowedError, /**< (consumers only) */
    pulsar_result_TransactionCoordinatorNotFoundError,      /**< no transaction coordinator */
    pulsar_result_InvalidTxnStatusError,                    /**< the transaction is not open */
    pulsar_result_NotAllowedError,                          /**< the broker's NotAllowedError */
    pulsar_result_TransactionConflict,                      /**< the broker's TransactionConflict */
    pulsar_result_TransactionNotFound,                      /**< the broker's TransactionNotFound */
    pulsar_result_ProducerFenced,                           /**< another producer took the topic */
    pulsar_result_MemoryBufferIsFull, /**< the client's memory limit is reached */
    pulsar_result_Interrupted,        /**< a wait for room ended by a close */
    pulsar_result_Disconnected,       /**< the connection dropped */
} pulsar_result;

/** The code's name as libpulsar spells it ("Ok", "TimeOut", "ProducerQueueIsFull", ...),
 * a static string; "UnknownErrorCode" for a value outside the enum. */
PULSAR_PUBLIC const char *pulsar_result_str(pulsar_result result);

#ifdef __cplusplus
}
#endif

#endif
