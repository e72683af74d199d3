/* What the files that build ops share (op_build.c: single messages and chunks;
 * op_build_batch.c: batches; op_build_sealed.c: messages sealed before the loop thread):
 * the metadata every entry carries, encryption of an entry, frame planning and the head
 * of a SEND frame. Nothing outside src/producer/ includes this. @locality any thread:
 * pure functions of their inputs. */
#ifndef PC_OP_BUILD_INTERNAL_H
#define PC_OP_BUILD_INTERNAL_H

#include "PulsarApi.pb-c.h"
#include "producer/op_build.h"
#include "wire/pb_encode.h"

/* Room left in a frame for the command and chunk fields beyond the metadata we measure. */
#define CHUNK_METADATA_MARGIN 512
/* A chunk uuid: the producer name (at most 255 bytes), the sequence id, the attempt. */
#define PC_OB_UUID_MAX 320

/* A message's properties as the metadata's KeyValue list. */
typedef struct pc_ob_kv {
    Pulsar__Proto__KeyValue *kvs;
    Pulsar__Proto__KeyValue **ptrs;
} pc_ob_kv_t;

/* 0, or -1 when out of memory. */
int pc_ob_kv_fill(pc_ob_kv_t *a, const pc_msg_t *m);
void pc_ob_kv_free(pc_ob_kv_t *a);

/* Fields every op's metadata carries (first: the entry's first message). */
void pc_ob_fill_common(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                       const pc_msg_t *first, size_t uncompressed);
/* The metadata of a message sent alone (whole or in chunks): the common fields and the
 * message's own (properties from kv, keys, times, replication). */
void pc_ob_fill_alone(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                      const pc_msg_t *msg, const pc_ob_kv_t *kv);
/* The same fields, for the metadata written straight from them (wire/pb_encode.h) when
 * nothing else goes into it (no encryption, no chunks): pc_ob_fill_alone's MessageMetadata
 * packs to the same bytes (tests/unit/test_op_build_alone.c). */
void pc_ob_fill_alone_fields(pc_pb_alone_t *a, const pc_op_params_t *p, const pc_msg_t *msg);
/* The chunk fields of a message in n chunks of total bytes; uuid is its storage. */
void pc_ob_chunk_fields(Pulsar__Proto__MessageMetadata *meta, char uuid[PC_OB_UUID_MAX],
                        const pc_op_params_t *p, const pc_msg_t *msg, size_t n, size_t total);
/* op is chunk i of n, slicing (or holding a reference to) sh; meta says so. */
void pc_ob_mark_chunk(pc_op_t *op, Pulsar__Proto__MessageMetadata *meta, pc_shared_payload_t *sh,
                      size_t i, size_t n);
/* Bytes encryption adds to each entry's payload: the GCM tag (0 without p->enc). */
size_t pc_ob_tag_len(const pc_op_params_t *p);
/* The encryption fields of an entry encrypted with p->enc (nothing without): the key list
 * and the IV, whose bytes pc_ob_seal writes into iv. */
void pc_ob_fill_encryption(Pulsar__Proto__MessageMetadata *meta, const pc_op_params_t *p,
                           uint8_t iv[PC_AES_IV_LEN]);
/* Encrypt one entry's bytes under a fresh IV (into meta's encryption_param) and append
 * ciphertext and tag to out. 0 or -1. */
int pc_ob_seal(const pc_op_params_t *p, Pulsar__Proto__MessageMetadata *meta, const uint8_t *data,
               size_t len, pc_buf_t *out);
/* Encode the SEND frame's head (command, metadata) of op into op->head. meta_size: meta's
 * encoded size if measured already and meta unchanged since, else 0. 0 or -1. */
int pc_ob_encode_head(const pc_op_params_t *p, pc_op_t *op,
                      const Pulsar__Proto__MessageMetadata *meta, size_t meta_size, bool is_chunk);
/* Whether a payload of len bytes beside metadata of meta_size bytes goes whole or in
 * chunks (*split; of *chunk_size bytes before encryption, set only then), or
 * MESSAGE_TOO_BIG. */
pulsarc_result pc_ob_plan_frames(const pc_op_params_t *p, size_t meta_size, size_t len,
                                 size_t *chunk_size, bool *split);
void pc_ob_release_chain(pc_op_t *head);

#endif
