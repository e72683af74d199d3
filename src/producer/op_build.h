/* Turning messages into ops: metadata, compression, encryption, batch payloads and chunks.
 * Pure functions of their inputs (no connection, no queue). @locality loop thread. */
#ifndef PC_OP_BUILD_H
#define PC_OP_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/compression.h"
#include "producer/batch.h"
#include "producer/encryption.h"
#include "producer/op.h"
#include "producer/plan.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_op_params {
    uint64_t producer_id;
    const char *producer_name;
    size_t producer_name_len; /* its strlen when known; 0: measured where needed */
    pc_codec_t codec;
    pc_compress_level_t level;
    pc_compressor_t *compressor; /* the producer's reused contexts (NULL: none) */
    uint32_t max_message_size;   /* the connection's limit */
    bool chunking;
    size_t chunk_size;             /* 0 = derive from max_message_size */
    const uint8_t *schema_version; /* stamped on the op's metadata; NULL = none */
    size_t schema_version_len;
    pc_txn_ids_t txn; /* stamped on every SEND of the op; unset: none */
    /* Encrypt each entry (after compression; each chunk apart) with this data key and a
     * fresh IV (pc_data_key_iv); NULL = plaintext. */
    const pc_data_key_t *enc;
    /* Set apart the chunks of this attempt at a chunked message from those of any earlier
     * attempt (before a reconnect or a restart) in its uuid: a consumer assembles one
     * attempt from its first chunk and never sees a chunk of it twice. */
    uint64_t chunk_attempt;
    pc_freelist_t *op_cache; /* the ops' blocks (pc_op_new); NULL: malloc */
    /* A batch's: fetch its records ahead of the encoding (producer/records.h); NULL: not. */
    const pc_records_t *ahead;
} pc_op_params_t;

/* One message (its sequence id assigned; not sealed) → one op, or a chain of chunk ops
 * linked by op->next when chunking splits it. The ops take the message. On error the message is
 * untouched and the detail is set. */
pulsarc_result pc_op_build_message(const pc_op_params_t *p, pc_msg_t *msg, pc_op_t **first,
                                   pc_op_t **last);
/* A batch (its sequence ids assigned) → one op owning the batch's messages. The op's
 * sequence_id is the first message's, highest_sequence_id the largest in the batch. A
 * frame above the broker's limit fails with MESSAGE_TOO_BIG (the batch untouched). */
pulsarc_result pc_op_build_batch(const pc_op_params_t *p, pc_batch_t *batch, pc_op_t **out);
/* A sealed message (msg->sealed, producer/sealed.h), in place of pc_op_build_message: one
 * op, or one chunk op per piece, each carrying its piece as it is, with the
 * seal's codec, sizes, key list and the piece's IV in its metadata. A piece that does
 * not fit the connection's limit fails with MESSAGE_TOO_BIG. */
pulsarc_result pc_op_build_sealed(const pc_op_params_t *p, pc_msg_t *msg, pc_op_t **first,
                                  pc_op_t **last);
/* Before sealing msg on the sending thread: the plaintext bytes (compressed, before
 * encryption) each piece may carry so that pc_op_build_sealed can send it under p (p->enc:
 * the data key it is sealed with), *piece_len 0 when it goes whole. len: its compressed
 * size. MESSAGE_TOO_BIG when it cannot go at all, as pc_op_build_message says. */
pulsarc_result pc_op_sealed_piece_len(const pc_op_params_t *p, const pc_msg_t *msg, size_t len,
                                      size_t *piece_len);
/* How many chunks a payload of len bytes needs at chunk_size bytes each. */
size_t pc_chunk_count(size_t len, size_t chunk_size);

#endif
