/** @file
 * pulsarc-compat: message ids. */
#ifndef PULSARC_COMPAT_PULSAR_C_MESSAGE_ID_H
#define PULSARC_COMPAT_PULSAR_C_MESSAGE_ID_H

#include <pulsar/defines.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where a message is stored, opaque. */
typedef struct _pulsar_message_id pulsar_message_id_t;

/** The id before every message (ledger, entry, partition, batch index all -1); static, never
 * freed. */
PULSAR_PUBLIC const pulsar_message_id_t *pulsar_message_id_earliest(void);
/** The id after every message (ledger and entry INT64_MAX); static, never freed. */
PULSAR_PUBLIC const pulsar_message_id_t *pulsar_message_id_latest(void);
/** The id in the protocol's MessageIdData encoding, as every official client writes it;
 * *len gets its length. The bytes come from malloc(): release them with free(). NULL when
 * out of memory. */
PULSAR_PUBLIC void *pulsar_message_id_serialize(pulsar_message_id_t *messageId, int *len);
/** Reads that encoding; NULL when the bytes are not one (libpulsar aborts the program
 * there). Free the id with pulsar_message_id_free. */
PULSAR_PUBLIC pulsar_message_id_t *pulsar_message_id_deserialize(const void *buffer, uint32_t len);
/** "(ledger,entry,partition,batchIndex)"; a chunked message's id is its first chunk's and
 * its last chunk's, "(...);(...)". From malloc(): release it with free(). */
PULSAR_PUBLIC char *pulsar_message_id_str(pulsar_message_id_t *messageId);
/** Frees an id (NULL and the static ids: nothing). */
PULSAR_PUBLIC void pulsar_message_id_free(pulsar_message_id_t *messageId);

#ifdef __cplusplus
}
#endif

#endif
