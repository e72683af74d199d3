/* The cryptography of end-to-end encryption, as the official Pulsar clients do it, with
 * OpenSSL EVP: AES-256-GCM over a buffer with a given key and IV, wrapping of a data key
 * (RSA-OAEP with SHA-1 and MGF1-SHA-1 for an RSA key, ECIES as the Java client for an EC
 * key: codec/ecies.h), RSA and EC public keys from PEM, random bytes.
 * Pure functions: no state, no network, no producer. Any thread. */
#ifndef PC_CRYPTO_H
#define PC_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "pulsarc/pulsarc.h"

#define PC_AES_KEY_LEN 32 /* AES-256 */
#define PC_AES_IV_LEN 12  /* GCM's standard nonce */
#define PC_AES_TAG_LEN 16 /* appended after the ciphertext */

/* An RSA or EC public key (OpenSSL's EVP_PKEY). */
typedef struct evp_pkey_st pc_public_key_t;

/* Fill out with len bytes from OpenSSL's CSPRNG. Returns 0, or -1 when it fails. */
int pc_crypto_random(uint8_t *out, size_t len);

/* Encrypt in[0..len) with AES-256-GCM under key and iv, no AAD, and append the
 * ciphertext followed by the 16-byte tag to out (len + PC_AES_TAG_LEN bytes). Returns 0,
 * or -1 (out unchanged). */
int pc_aes_gcm_seal(const uint8_t key[PC_AES_KEY_LEN], const uint8_t iv[PC_AES_IV_LEN],
                    const uint8_t *in, size_t len, pc_buf_t *out);

/* Parse a PEM public key ("BEGIN PUBLIC KEY" or "BEGIN RSA PUBLIC KEY"). RSA keys of at
 * least 1024 bits and EC keys on a named curve P-256, P-384 or P-521 (the point checked)
 * are accepted. On failure returns PULSARC_ERR_CRYPTO with a detail naming `what` (a key
 * name) and the reason, never the key's bytes. */
pulsarc_result pc_public_key_parse(const uint8_t *pem, size_t len, const char *what,
                                   pc_public_key_t **out);
void pc_public_key_free(pc_public_key_t *key);

/* Wrap in[0..len) (a data key) with RSA-OAEP, SHA-1 and MGF1-SHA-1, empty label; the
 * result replaces out's contents. Randomised: two calls give different bytes. Returns 0,
 * or -1. */
int pc_rsa_oaep_wrap(pc_public_key_t *key, const uint8_t *in, size_t len, pc_buf_t *out);

/* Wrap a data key as the key's type asks: RSA-OAEP for an RSA key, ECIES for an EC key.
 * The result replaces out's contents. Randomised. Returns 0, or -1. */
int pc_data_key_wrap(pc_public_key_t *key, const uint8_t *in, size_t len, pc_buf_t *out);

#endif
