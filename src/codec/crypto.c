#include "codec/crypto.h"

#include <limits.h>
#include <string.h>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>

#include "common/error.h"

/* EVP takes int lengths: feed large inputs in pieces of at most this many bytes. */
#define GCM_STEP (1 << 30)

int pc_crypto_random(uint8_t *out, size_t len)
{
    if (len <= INT_MAX && RAND_bytes(out, (int)len) == 1)
        return 0;
    ERR_clear_error();
    return -1;
}

int pc_aes_gcm_seal(const uint8_t key[PC_AES_KEY_LEN], const uint8_t iv[PC_AES_IV_LEN],
                    const uint8_t *in, size_t len, pc_buf_t *out)
{
    if (pc_buf_reserve(out, len + PC_AES_TAG_LEN) != 0)
        return -1;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx)
        return -1;
    uint8_t *dst = out->data + out->len;
    size_t done = 0;
    int ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
             EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, PC_AES_IV_LEN, NULL) == 1 &&
             EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv) == 1;
    while (ok && done < len) {
        int step = len - done > GCM_STEP ? GCM_STEP : (int)(len - done), n = 0;
        ok = EVP_EncryptUpdate(ctx, dst + done, &n, in + done, step) == 1 && n == step;
        done += (size_t)step;
    }
    int tail = 0;
    ok = ok && EVP_EncryptFinal_ex(ctx, dst + done, &tail) == 1 && tail == 0 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, PC_AES_TAG_LEN, dst + len) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        ERR_clear_error(); /* the loop thread's TLS reads this queue: leave it clean */
        return -1;
    }
    out->len += len + PC_AES_TAG_LEN;
    return 0;
}

/* A public key in PEM: SubjectPublicKeyInfo ("BEGIN PUBLIC KEY", what openssl rsa -pubout
 * writes) or PKCS#1 ("BEGIN RSA PUBLIC KEY"). A private key is not taken for its public
 * half: a producer has no business holding one. */
static EVP_PKEY *read_pem(const uint8_t *pem, size_t len)
{
    if (!memmem(pem, len, "-----BEGIN PUBLIC KEY-----", 26) &&
        !memmem(pem, len, "-----BEGIN RSA PUBLIC KEY-----", 30))
        return NULL;
    EVP_PKEY *key = NULL;
    OSSL_DECODER_CTX *dctx = OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", NULL, NULL,
                                                           EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    if (!dctx)
        return NULL;
    const unsigned char *p = pem;
    size_t left = len;
    if (OSSL_DECODER_from_data(dctx, &p, &left) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    OSSL_DECODER_CTX_free(dctx);
    return key;
}

pulsarc_result pc_public_key_parse(const uint8_t *pem, size_t len, const char *what,
                                   pc_public_key_t **out)
{
    *out = NULL;
    if (len == 0 || len > INT_MAX)
        return pc_fail(PULSARC_ERR_CRYPTO, "public key \"%s\": the key reader returned %s", what,
                       len ? "too many bytes" : "no key");
    EVP_PKEY *key = read_pem(pem, len);
    ERR_clear_error(); /* the failed attempts leave entries nobody reads */
    if (!key)
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" is not a PEM public key (BEGIN PUBLIC KEY or BEGIN "
                       "RSA PUBLIC KEY)",
                       what);
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
        const char *type = OBJ_nid2sn(EVP_PKEY_get_base_id(key));
        EVP_PKEY_free(key);
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" is a %s key; only RSA keys are supported", what,
                       type ? type : "non-RSA");
    }
    if (EVP_PKEY_get_bits(key) < 1024) {
        int bits = EVP_PKEY_get_bits(key);
        EVP_PKEY_free(key);
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" has %d bits; RSA keys need at least 1024", what, bits);
    }
    *out = key;
    return PULSARC_OK;
}

void pc_public_key_free(pc_public_key_t *key)
{
    EVP_PKEY_free(key);
}

int pc_rsa_oaep_wrap(pc_public_key_t *key, const uint8_t *in, size_t len, pc_buf_t *out)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    if (!ctx)
        return -1;
    size_t n = 0;
    int ok = EVP_PKEY_encrypt_init(ctx) == 1 &&
             EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha1()) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha1()) == 1 &&
             EVP_PKEY_encrypt(ctx, NULL, &n, in, len) == 1;
    out->len = 0;
    ok = ok && pc_buf_reserve(out, n) == 0 && EVP_PKEY_encrypt(ctx, out->data, &n, in, len) == 1;
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    if (!ok)
        return -1;
    out->len = n;
    return 0;
}
