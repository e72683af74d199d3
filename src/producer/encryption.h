/* A producer's end-to-end encryption state: the current data key, wrapped with the
 * public key of every configured key name, and when to change it. The public keys come
 * from the layer above through a fetch function (the key readers live in client/).
 *
 * The state survives reconnects: entries already built keep their bytes (a resend
 * writes them again unchanged), and new entries use the same data key until it rotates:
 * every rotation_ms, after max_ivs IVs (each entry, and so each chunk of a chunked
 * message, gets a random 96-bit IV, and AES-GCM allows 2^32 of them per key: an
 * unbatched producer reaches that in hours), and when a re-read (every check_ms) returns
 * a different public key or metadata. Keys are loaded lazily, at the first entry, and a failed load is retried
 * at the next entry (as the Java client does); a failed rotation keeps the current key
 * and is retried a second later. Rotation only swaps the key the next entry uses: it
 * never waits for or touches ops in flight.
 * @locality loop thread. */
#ifndef PC_ENCRYPTION_H
#define PC_ENCRYPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "codec/crypto.h"
#include "common/buf.h"
#include "common/log.h"
#include "pulsarc/pulsarc.h"

/* What a key reader gave for one key name: the PEM text of its public key and the
 * metadata that travels with the wrapped data key. */
typedef struct pc_key_material {
    pc_buf_t pem;
    char **meta;   /* name, value, name, value, ... (owned) */
    size_t n_meta; /* pairs */
} pc_key_material_t;

void pc_key_material_init(pc_key_material_t *m);
void pc_key_material_clear(pc_key_material_t *m);
/* Append a metadata pair (copied). Returns 0, or -1 when out of memory. */
int pc_key_material_add_meta(pc_key_material_t *m, const char *name, const char *value);

/* Fill out (initialised and empty) with the material of key name. Returns PULSARC_OK, or
 * an error with the detail set (the material is then discarded). */
typedef pulsarc_result (*pc_key_fetch_fn)(void *ctx, const char *name, pc_key_material_t *out);

/* cryptoFailureAction: what happens to an entry when no data key can be had. */
typedef enum pc_crypto_failure_action {
    PC_CRYPTO_FAIL = 0, /* its messages fail with PULSARC_ERR_CRYPTO */
    PC_CRYPTO_SEND = 1, /* it is published unencrypted */
} pc_crypto_failure_action;

/* Step through a comma-separated key-name list ("a, b,c"): each call gives the next name,
 * trimmed of blanks (empty names skipped), as a pointer into the list and a length.
 * *cursor starts at the list; returns false at its end. */
bool pc_key_names_next(const char **cursor, const char **name, size_t *len);

typedef struct pc_enc_settings {
    const char *key_names; /* comma-separated; NULL or "": no encryption (borrowed) */
    pc_key_fetch_fn fetch;
    void *fetch_ctx; /* outlives the producer */
    pc_crypto_failure_action failure_action;
    uint64_t rotation_ms; /* a new data key this often; 0 = not by time */
    uint64_t check_ms;    /* re-read the public keys this often; 0 = never */
    uint64_t max_ivs;     /* a new data key after this many IVs; 0 = 2^31 */
} pc_enc_settings_t;

/* IVs drawn for one data key before it rotates (max_ivs 0): half of the 2^32 random IVs
 * NIST SP 800-38D allows per key, so that a rotation which keeps failing (the key reader
 * is down) has room to be retried. A key that reaches twice its limit is not used any
 * more: the next entries go as cryptoFailureAction says until a new key loads. It counts
 * IVs, not messages: a chunked message takes one per chunk. */
#define PC_ENC_MAX_IVS_PER_KEY (1ull << 31)

/* What an encrypted entry carries: the data key (never on the wire) and the metadata's
 * encryption_keys, one entry per key name, built once per data key. */
typedef struct pc_data_key {
    uint8_t key[PC_AES_KEY_LEN];
    Pulsar__Proto__EncryptionKeys **entries;
    size_t n_entries;
    /* A fresh IV for each entry: pc_crypto_random, or a fixed sequence in unit tests.
     * Drawn through pc_data_key_iv, which counts it. */
    int (*make_iv)(uint8_t iv[PC_AES_IV_LEN]);
    uint64_t *ivs_used; /* the encryptor's count of IVs drawn for this key */
} pc_data_key_t;

/* A fresh IV for one entry (a message, a batch, a chunk) encrypted with dk, counted
 * against dk's limit. 0, or -1 when no random bytes could be had. */
int pc_data_key_iv(const pc_data_key_t *dk, uint8_t iv[PC_AES_IV_LEN]);

typedef struct pc_encryptor pc_encryptor_t;

/* NULL when set->key_names names no key (encryption off) or out of memory (*oom set). */
pc_encryptor_t *pc_encryptor_new(const pc_enc_settings_t *set, const pc_logger_t *log,
                                 const char *topic, bool *oom);
void pc_encryptor_free(pc_encryptor_t *e);

/* The data key for the next entry at now_ms (monotonic), loading or rotating it first
 * when due (each IV drawn with it, pc_data_key_iv, counts towards its rotation). PULSARC_OK
 * with *out set; PULSARC_OK with *out NULL when no key can be had and the entry goes
 * unencrypted (PC_CRYPTO_SEND; a rate-limited warning is logged); else PULSARC_ERR_CRYPTO
 * with the detail set (naming the key, never its bytes). */
pulsarc_result pc_encryptor_next(pc_encryptor_t *e, uint64_t now_ms, const pc_data_key_t **out);

/* For unit tests: replace the data key with key (wrapped again with the keys the reader
 * gives) and draw IVs from make_iv (NULL: random). */
pulsarc_result pc_encryptor_seed(pc_encryptor_t *e, const uint8_t key[PC_AES_KEY_LEN],
                                 int (*make_iv)(uint8_t iv[PC_AES_IV_LEN]), uint64_t now_ms);

#endif
