/* A message encrypted before it reaches the loop thread: what a producer with both a
 * spool and encryption keys writes to its spool, so that no payload of it is ever on
 * disk in clear, and sends as it is, after a crash as well, with nothing but what the
 * record holds (no private key, no data key in clear).
 *
 * Sealing compresses the payload with the producer's codec, cuts the result into pieces
 * (one, or one per chunk when it needs chunks) and encrypts each piece with AES-256-GCM
 * under the data key and an IV of its own, exactly as the loop thread would encrypt the
 * message alone or each of its chunks (op_build.c): consumers cannot tell the two
 * apart. The data key travels wrapped for every key name (the EncryptionKeys list).
 *
 * The seal block, kept beside the ciphertext in a spool record (little-endian):
 *   u8 codec | u32 uncompressed size | u32 key count | u32 piece count |
 *   per key: u32 length, a packed EncryptionKeys |
 *   per piece: 12-byte IV, u32 length (ciphertext and tag)
 * The pieces' ciphertexts, one after the other, are the record's payload. A block read
 * back is checked like bytes from the network before any of it is used.
 * Pure functions and plain data: any thread. */
#ifndef PC_SEALED_H
#define PC_SEALED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "codec/compression.h"
#include "codec/crypto.h"
#include "common/buf.h"
#include "producer/encryption.h"
#include "pulsarc/pulsarc.h"

typedef struct pc_sealed_piece {
    uint8_t iv[PC_AES_IV_LEN];
    size_t len; /* its ciphertext with the tag */
} pc_sealed_piece_t;

typedef struct pc_sealed {
    pc_codec_t codec;                     /* what the plaintext was compressed with */
    size_t uncompressed;                  /* the payload's size as the application gave it */
    Pulsar__Proto__EncryptionKeys **keys; /* the data key wrapped for each key name */
    size_t n_keys;
    pc_sealed_piece_t *pieces;
    size_t n_pieces;       /* 1: sent whole; more: one chunk each */
    const uint8_t *cipher; /* the pieces' ciphertexts, in order */
    size_t cipher_len;
    pc_buf_t owned; /* cipher's bytes when sealing made them */
    uint8_t *block; /* the seal block (above) */
    size_t block_len;
    uint8_t key[PC_AES_KEY_LEN]; /* between begin and finish only; wiped */
} pc_sealed_t;

/* Sealing in two steps, so that the data key's lock is held only for the first:
 * begin takes what it needs of dk (a copy of the key, the wrapped copies, an IV for each
 * piece, drawn and counted against dk's limit) for len bytes (the payload compressed
 * with codec already; uncompressed: its size before) in pieces of piece_len bytes (0:
 * one piece). PULSARC_OK with *out, or NO_MEMORY / CRYPTO with the detail set. */
pulsarc_result pc_sealed_begin(const pc_data_key_t *dk, pc_codec_t codec, size_t uncompressed,
                               size_t len, size_t piece_len, pc_sealed_t **out);
/* ... and finish encrypts the len bytes of data (those begin was told of) piece by piece
 * and forgets the key. PULSARC_OK, or CRYPTO / NO_MEMORY (then free s). */
pulsarc_result pc_sealed_finish(pc_sealed_t *s, const uint8_t *data, size_t len);
/* A seal block read back (block_len bytes) over its ciphertext (cipher_len bytes, which
 * must stay valid while the result lives: it is not copied). PULSARC_OK with *out, or
 * PULSARC_ERR_SPOOL with a detail saying what is wrong with the block, or NO_MEMORY. */
pulsarc_result pc_sealed_decode(const uint8_t *block, size_t block_len, const uint8_t *cipher,
                                size_t cipher_len, pc_sealed_t **out);
/* The plaintext bytes (compressed) all pieces carry: what a chunked message's
 * total_chunk_msg_size says. */
size_t pc_sealed_plain_len(const pc_sealed_t *s);
void pc_sealed_free(pc_sealed_t *s);

#endif
