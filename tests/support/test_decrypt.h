/* What a consumer does with pulsarc's encrypted entries, for the tests only (the library
 * never decrypts): unwrap the data key with an RSA private key (RSA-OAEP, SHA-1,
 * MGF1-SHA-1) or an EC private key (ECIES as BouncyCastle's IESEngine, written here
 * independently of src/codec/ecies.c: own KDF2 loop over EVP_Digest, one-shot HMAC) and open AES-256-GCM (the last 16 bytes are the tag), checking the tag.
 * The test key pairs are under tests/keys (PC_TEST_KEYS_DIR). */
#ifndef PC_TEST_DECRYPT_H
#define PC_TEST_DECRYPT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

/* The bytes of tests/keys/<name>, NUL-terminated; NULL if unreadable. */
static inline char *td_key_file(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PC_TEST_KEYS_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(65536);
    size_t n = buf ? fread(buf, 1, 65535, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static inline EVP_PKEY *td_private_key(const char *name)
{
    char *pem = td_key_file(name, NULL);
    if (!pem)
        return NULL;
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    free(pem);
    return key;
}

/* ECIES (BouncyCastle "ECIES", macKeySize 128): in = V (uncompressed ephemeral point) ||
 * C || T (HMAC-SHA1, 20 bytes). K = KDF2-SHA1(V || Z), Z = ECDH x; K2 = K[0..16) is the MAC
 * key, K1 = K[16..) the stream; T = HMAC(K2, C || 8 zero bytes). The n-byte plaintext to
 * out, or -1 (MAC, point or length wrong). */
static inline int td_ecies_unwrap(EVP_PKEY *priv, const uint8_t *in, size_t len, uint8_t *out,
                                  size_t n)
{
    size_t fbytes = ((size_t)EVP_PKEY_get_bits(priv) + 7) / 8, vlen = 1 + 2 * fbytes;
    if (len != vlen + n + 20 || in[0] != 0x04 || n > 64)
        return -1;
    EVP_PKEY *eph = EVP_PKEY_new();
    int ok = eph && EVP_PKEY_copy_parameters(eph, priv) == 1 &&
             EVP_PKEY_set1_encoded_public_key(eph, in, vlen) == 1;
    uint8_t vz[133 + 66], k[16 + 64 + 20], tag[20];
    size_t zlen = sizeof vz - vlen;
    EVP_PKEY_CTX *ctx = ok ? EVP_PKEY_CTX_new(priv, NULL) : NULL;
    ok = ctx && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer_ex(ctx, eph, 1) == 1 &&
         EVP_PKEY_derive(ctx, vz + vlen, &zlen) == 1 && zlen == fbytes;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(eph);
    memcpy(vz, in, vlen);
    /* KDF2: SHA-1(VZ || counter) for counter = 1, 2, ... */
    for (uint32_t ctr = 1; ok && (ctr - 1) * 20 < 16 + n; ctr++) {
        uint8_t block[sizeof vz + 4], *p = block;
        memcpy(p, vz, vlen + zlen);
        p += vlen + zlen;
        p[0] = (uint8_t)(ctr >> 24), p[1] = (uint8_t)(ctr >> 16), p[2] = (uint8_t)(ctr >> 8);
        p[3] = (uint8_t)ctr;
        ok = EVP_Digest(block, vlen + zlen + 4, k + (ctr - 1) * 20, NULL, EVP_sha1(), NULL) == 1;
    }
    uint8_t mac_in[64 + 8] = { 0 };
    memcpy(mac_in, in + vlen, n);
    unsigned int tlen = 0;
    ok = ok && HMAC(EVP_sha1(), k, 16, mac_in, n + 8, tag, &tlen) && tlen == 20 &&
         CRYPTO_memcmp(tag, in + vlen + n, 20) == 0;
    for (size_t i = 0; ok && i < n; i++)
        out[i] = in[vlen + i] ^ k[16 + i];
    return ok ? 0 : -1;
}

/* The 32-byte data key, or -1 when priv cannot unwrap it. */
static inline int td_unwrap(EVP_PKEY *priv, const uint8_t *wrapped, size_t len, uint8_t key[32])
{
    if (EVP_PKEY_get_base_id(priv) == EVP_PKEY_EC)
        return len > 20 + 32 ? td_ecies_unwrap(priv, wrapped, len, key, 32) : -1;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(priv, NULL);
    uint8_t out[1024];
    size_t n = sizeof out;
    int ok = ctx && EVP_PKEY_decrypt_init(ctx) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha1()) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha1()) == 1 &&
             EVP_PKEY_decrypt(ctx, out, &n, wrapped, len) == 1 && n == 32;
    EVP_PKEY_CTX_free(ctx);
    if (ok)
        memcpy(key, out, 32);
    return ok ? 0 : -1;
}

/* Open ct[0..len) (ciphertext + 16-byte tag) into a malloc'ed buffer of len - 16 bytes
 * (*out; at least 1 byte allocated). -1 when the tag does not verify. */
static inline int td_open(const uint8_t key[32], const uint8_t *iv, size_t iv_len,
                          const uint8_t *ct, size_t len, uint8_t **out)
{
    *out = NULL;
    if (len < 16)
        return -1;
    size_t n = len - 16;
    uint8_t *pt = malloc(n ? n : 1);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int got = 0, fin = 0;
    int ok = pt && ctx && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)iv_len, NULL) == 1 &&
             EVP_DecryptInit_ex(ctx, NULL, NULL, key, iv) == 1 &&
             (n == 0 || EVP_DecryptUpdate(ctx, pt, &got, ct, (int)n) == 1) &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)(ct + n)) == 1 &&
             EVP_DecryptFinal_ex(ctx, pt + got, &fin) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        free(pt);
        return -1;
    }
    *out = pt;
    return 0;
}

#endif
