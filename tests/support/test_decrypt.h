/* What a consumer does with pulsarc's encrypted entries, for the tests only (the library
 * never decrypts): unwrap the data key with an RSA private key (RSA-OAEP, SHA-1,
 * MGF1-SHA-1) and open AES-256-GCM (the last 16 bytes are the tag), checking the tag.
 * The test key pairs are under tests/keys (PC_TEST_KEYS_DIR). */
#ifndef PC_TEST_DECRYPT_H
#define PC_TEST_DECRYPT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
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

/* The 32-byte data key, or -1 when priv cannot unwrap it. */
static inline int td_unwrap(EVP_PKEY *priv, const uint8_t *wrapped, size_t len, uint8_t key[32])
{
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
