#include "codec/crypto.h"

#include <limits.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>

#include "codec/ecies.h"
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

static pulsarc_result check_rsa(EVP_PKEY *key, const char *what)
{
    int bits = EVP_PKEY_get_bits(key);
    if (bits < 1024)
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" has %d bits; RSA keys need at least 1024", what, bits);
    return PULSARC_OK;
}

/* An EC key on a named curve the Java client also reads (it takes any curve
 * BouncyCastle knows; these three are the ones worth using), its point on the curve. */
static pulsarc_result check_ec(EVP_PKEY *key, const char *what)
{
    char group[80] = "";
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                       NULL) != 1) {
        ERR_clear_error();
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" is an EC key with explicit curve parameters; use a "
                       "named curve (P-256, P-384 or P-521)",
                       what);
    }
    int nid = OBJ_txt2nid(group);
    if (nid != NID_X9_62_prime256v1 && nid != NID_secp384r1 && nid != NID_secp521r1)
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "public key \"%s\" is on curve %s; EC keys must be on P-256, P-384 or "
                       "P-521",
                       what, group);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    int valid = ctx && EVP_PKEY_public_check(ctx) == 1;
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    if (!valid)
        return pc_fail(PULSARC_ERR_CRYPTO, "public key \"%s\": its EC point is not valid", what);
    return PULSARC_OK;
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
    int type = EVP_PKEY_get_base_id(key);
    pulsarc_result r;
    if (type == EVP_PKEY_RSA) {
        r = check_rsa(key, what);
    } else if (type == EVP_PKEY_EC) {
        r = check_ec(key, what);
    } else {
        const char *name = OBJ_nid2sn(type);
        r = pc_fail(PULSARC_ERR_CRYPTO,
                    "public key \"%s\" is a %s key; only RSA and EC keys are supported", what,
                    name ? name : "non-RSA, non-EC");
    }
    if (r != PULSARC_OK) {
        EVP_PKEY_free(key);
        return r;
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

int pc_data_key_wrap(pc_public_key_t *key, const uint8_t *in, size_t len, pc_buf_t *out)
{
    if (EVP_PKEY_get_base_id(key) == EVP_PKEY_EC)
        return pc_ecies_wrap(key, in, len, out);
    return pc_rsa_oaep_wrap(key, in, len, out);
}
