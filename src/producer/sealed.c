#include "producer/sealed.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/error.h"
#include "producer/plan.h"

/* Bounds a block read back is held to before anything is allocated for it. */
#define MAX_KEYS 64 /* key names of one producer */
#define MAX_KEY_BYTES \
    (64 * 1024)  /* one packed EncryptionKeys: name, wrapped key,
                                          metadata */
#define FIXED 13 /* codec, uncompressed size, two counts */
#define PIECE_BYTES (PC_AES_IV_LEN + 4)

static const char OUT_OF_MEMORY[] = "out of memory";

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t pc_sealed_plain_len(const pc_sealed_t *s)
{
    return s->cipher_len - s->n_pieces * PC_AES_TAG_LEN;
}

void pc_sealed_free(pc_sealed_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->keys && i < s->n_keys; i++)
        if (s->keys[i]) /* a decode that failed half way leaves the rest NULL */
            pulsar__proto__encryption_keys__free_unpacked(s->keys[i], NULL);
    free(s->keys);
    free(s->pieces);
    pc_buf_free(&s->owned);
    free(s->block);
    OPENSSL_cleanse(s->key, sizeof s->key);
    free(s);
}

/* The block for s's counts and pieces, with dk's key list packed into it. */
static int encode_block(pc_sealed_t *s, const pc_data_key_t *dk)
{
    size_t len = FIXED + s->n_pieces * PIECE_BYTES;
    for (size_t i = 0; i < dk->n_entries; i++)
        len += 4 + pulsar__proto__encryption_keys__get_packed_size(dk->entries[i]);
    uint8_t *b = malloc(len), *at = b;
    if (!b)
        return -1;
    *at++ = (uint8_t)s->codec;
    put32(at, (uint32_t)s->uncompressed);
    put32(at + 4, (uint32_t)dk->n_entries);
    put32(at + 8, (uint32_t)s->n_pieces);
    at += 12;
    for (size_t i = 0; i < dk->n_entries; i++) {
        size_t n = pulsar__proto__encryption_keys__pack(dk->entries[i], at + 4);
        put32(at, (uint32_t)n);
        at += 4 + n;
    }
    for (size_t i = 0; i < s->n_pieces; i++) {
        memcpy(at, s->pieces[i].iv, PC_AES_IV_LEN);
        put32(at + PC_AES_IV_LEN, (uint32_t)s->pieces[i].len);
        at += PIECE_BYTES;
    }
    s->block = b;
    s->block_len = len;
    return 0;
}

/* Unpack the key list of a block (at, n keys, up to end) into s->keys; NULL on success,
 * else what is wrong. *next: where the pieces start. */
static const char *decode_keys(pc_sealed_t *s, const uint8_t *at, const uint8_t *end,
                               const uint8_t **next)
{
    if (!(s->keys = calloc(s->n_keys, sizeof *s->keys)))
        return OUT_OF_MEMORY;
    for (size_t i = 0; i < s->n_keys; i++) {
        if (end - at < 4)
            return "the key list runs past the block";
        uint32_t n = get32(at);
        at += 4;
        if (n == 0 || n > MAX_KEY_BYTES || (size_t)(end - at) < n)
            return "a key's length is out of bounds";
        Pulsar__Proto__EncryptionKeys *k = pulsar__proto__encryption_keys__unpack(NULL, n, at);
        if (!k)
            return "a key does not parse";
        s->keys[i] = k;
        if (!k->key || !k->key[0] || k->value.len == 0)
            return "a key has no name or no wrapped data key";
        at += n;
    }
    *next = at;
    return NULL;
}

/* Check and read a block into s (counts, keys, pieces); NULL or what is wrong. */
static const char *decode_block(pc_sealed_t *s, const uint8_t *b, size_t len, size_t cipher_len)
{
    if (len < FIXED)
        return "shorter than its fixed fields";
    pc_codec_t codec = (pc_codec_t)b[0];
    if (codec != PC_CODEC_NONE && codec != PC_CODEC_LZ4 && codec != PC_CODEC_ZLIB &&
        codec != PC_CODEC_ZSTD && codec != PC_CODEC_SNAPPY)
        return "an unknown codec";
    s->codec = codec;
    s->uncompressed = get32(b + 1);
    s->n_keys = get32(b + 5);
    s->n_pieces = get32(b + 9);
    if (s->uncompressed > PC_MAX_PAYLOAD)
        return "the uncompressed size is above the protocol's limit";
    if (s->n_keys == 0 || s->n_keys > MAX_KEYS)
        return "the key count is out of bounds";
    /* Each piece holds a tag at least: no more pieces than the ciphertext can hold. */
    if (s->n_pieces == 0 || s->n_pieces > cipher_len / PC_AES_TAG_LEN)
        return "the piece count does not fit the ciphertext";
    const uint8_t *end = b + len, *at;
    const char *why = decode_keys(s, b + FIXED, end, &at);
    if (why)
        return why;
    if ((size_t)(end - at) != s->n_pieces * PIECE_BYTES)
        return "the pieces do not fill the rest of the block";
    if (!(s->pieces = calloc(s->n_pieces, sizeof *s->pieces)))
        return OUT_OF_MEMORY;
    size_t total = 0;
    for (size_t i = 0; i < s->n_pieces; i++, at += PIECE_BYTES) {
        memcpy(s->pieces[i].iv, at, PC_AES_IV_LEN);
        s->pieces[i].len = get32(at + PC_AES_IV_LEN);
        if (s->pieces[i].len < PC_AES_TAG_LEN || s->pieces[i].len > cipher_len - total)
            return "a piece's length does not fit the ciphertext";
        total += s->pieces[i].len;
    }
    return total == cipher_len ? NULL : "the pieces do not cover the ciphertext";
}

pulsarc_result pc_sealed_decode(const uint8_t *block, size_t block_len, const uint8_t *cipher,
                                size_t cipher_len, pc_sealed_t **out)
{
    *out = NULL;
    pc_sealed_t *s = calloc(1, sizeof *s);
    if (!s)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_buf_init(&s->owned);
    const char *why = decode_block(s, block, block_len, cipher_len);
    if (why) {
        pulsarc_result r = why == OUT_OF_MEMORY
                               ? pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory")
                               : pc_fail(PULSARC_ERR_SPOOL, "a sealed message's block: %s", why);
        pc_sealed_free(s);
        return r;
    }
    if (!(s->block = malloc(block_len))) {
        pc_sealed_free(s);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(s->block, block, block_len);
    s->block_len = block_len;
    s->cipher = cipher;
    s->cipher_len = cipher_len;
    *out = s;
    return PULSARC_OK;
}

/* The pieces len bytes make at piece_len each (0: one), with their ciphertext sizes. */
static int cut_pieces(pc_sealed_t *s, size_t len, size_t piece_len)
{
    s->n_pieces = piece_len && len > piece_len ? (len + piece_len - 1) / piece_len : 1;
    if (!(s->pieces = calloc(s->n_pieces, sizeof *s->pieces)))
        return -1;
    for (size_t i = 0; i < s->n_pieces; i++) {
        size_t plain = s->n_pieces == 1      ? len
                       : i + 1 < s->n_pieces ? piece_len
                                             : len - i * piece_len;
        s->pieces[i].len = plain + PC_AES_TAG_LEN;
        s->cipher_len += s->pieces[i].len;
    }
    return 0;
}

pulsarc_result pc_sealed_begin(const pc_data_key_t *dk, pc_codec_t codec, size_t uncompressed,
                               size_t len, size_t piece_len, pc_sealed_t **out)
{
    *out = NULL;
    pc_sealed_t *s = calloc(1, sizeof *s);
    if (!s)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_buf_init(&s->owned);
    s->codec = codec;
    s->uncompressed = uncompressed;
    if (cut_pieces(s, len, piece_len) != 0) {
        pc_sealed_free(s);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < s->n_pieces; i++) {
        if (pc_data_key_iv(dk, s->pieces[i].iv) != 0) {
            pc_sealed_free(s);
            return pc_fail(PULSARC_ERR_CRYPTO, "no random bytes for an IV");
        }
    }
    memcpy(s->key, dk->key, sizeof s->key);
    /* The key list the block carries is also what the metadata carries: decoded back
     * from the block, it is the message's own, whatever becomes of dk. */
    const uint8_t *pieces;
    s->n_keys = dk->n_entries;
    if (encode_block(s, dk) != 0 ||
        decode_keys(s, s->block + FIXED, s->block + s->block_len, &pieces) != NULL) {
        pc_sealed_free(s);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    *out = s;
    return PULSARC_OK;
}

pulsarc_result pc_sealed_finish(pc_sealed_t *s, const uint8_t *data, size_t len)
{
    pulsarc_result res = PULSARC_OK;
    if (pc_buf_reserve(&s->owned, s->cipher_len) != 0)
        res = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    size_t at = 0;
    for (size_t i = 0; res == PULSARC_OK && i < s->n_pieces; i++) {
        size_t plain = s->pieces[i].len - PC_AES_TAG_LEN;
        if (at + plain > len ||
            pc_aes_gcm_seal(s->key, s->pieces[i].iv, data + at, plain, &s->owned) != 0)
            res = pc_fail(PULSARC_ERR_CRYPTO, "encrypting the message failed");
        at += plain;
    }
    OPENSSL_cleanse(s->key, sizeof s->key);
    if (res == PULSARC_OK && (at != len || s->owned.len != s->cipher_len))
        res = pc_fail(PULSARC_ERR_CRYPTO, "the sealed pieces do not match the payload");
    s->cipher = s->owned.data;
    return res;
}
