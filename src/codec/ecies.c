#include "codec/ecies.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

/* Largest field: P-521, 66 bytes; its uncompressed point is 133. */
#define MAX_FIELD 66
#define MAX_POINT (1 + 2 * MAX_FIELD)

/* z = the x coordinate of ECDH(ephemeral, pub), padded to the field size (what
 * BouncyCastle's ECDHBasicAgreement gives and asUnsignedByteArray pads). The peer is
 * checked (on the curve, not the identity) before use. */
static int ecdh(EVP_PKEY *ephemeral, EVP_PKEY *pub, uint8_t *z, size_t *zlen)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(ephemeral, NULL);
    int ok = ctx && EVP_PKEY_derive_init(ctx) == 1 &&
             EVP_PKEY_derive_set_peer_ex(ctx, pub, 1) == 1 &&
             EVP_PKEY_derive(ctx, NULL, zlen) == 1 && *zlen <= MAX_FIELD &&
             EVP_PKEY_derive(ctx, z, zlen) == 1;
    EVP_PKEY_CTX_free(ctx);
    return ok ? 0 : -1;
}

/* KDF2 of ISO 18033-2 = ANSI X9.63's KDF (BouncyCastle's KDF2BytesGenerator): blocks of
 * SHA-1(secret || counter, 32-bit big endian from 1), no shared info. */
static int kdf2_sha1(const uint8_t *secret, size_t len, uint8_t *out, size_t out_len)
{
    char digest[] = "SHA1";
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "X963KDF", NULL);
    EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, len),
        OSSL_PARAM_construct_end(),
    };
    int ok = ctx && EVP_KDF_derive(ctx, out, out_len, params) == 1;
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    return ok ? 0 : -1;
}

static int hmac_sha1(const uint8_t *key, size_t key_len, const uint8_t *a, size_t a_len,
                     const uint8_t *b, size_t b_len, uint8_t tag[PC_ECIES_TAG_LEN])
{
    char digest[] = "SHA1";
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    size_t n = 0;
    int ok = ctx && EVP_MAC_init(ctx, key, key_len, params) == 1 &&
             EVP_MAC_update(ctx, a, a_len) == 1 && EVP_MAC_update(ctx, b, b_len) == 1 &&
             EVP_MAC_final(ctx, tag, &n, PC_ECIES_TAG_LEN) == 1 && n == PC_ECIES_TAG_LEN;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    return ok ? 0 : -1;
}

int pc_ecies_wrap_with(pc_ec_key_t *pub, pc_ec_key_t *ephemeral, const uint8_t *in, size_t len,
                       pc_buf_t *out)
{
    /* vz: V (the ephemeral point, also the first part of the output) then Z. */
    uint8_t vz[MAX_POINT + MAX_FIELD], k[PC_ECIES_MAC_KEY_LEN + PC_ECIES_MAX_IN];
    uint8_t c[PC_ECIES_MAX_IN], tag[PC_ECIES_TAG_LEN];
    /* IESEngine's length tag of the (absent) encoding vector: 8 zero bytes. */
    static const uint8_t l2[8] = { 0 };
    size_t vlen = 0, zlen = 0;
    int ok = len > 0 && len <= PC_ECIES_MAX_IN &&
             EVP_PKEY_get_octet_string_param(ephemeral, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, vz,
                                             MAX_POINT, &vlen) == 1 &&
             vlen > 1 && vz[0] == 0x04 && ecdh(ephemeral, pub, vz + vlen, &zlen) == 0 &&
             vlen == 1 + 2 * zlen && kdf2_sha1(vz, vlen + zlen, k, PC_ECIES_MAC_KEY_LEN + len) == 0;
    if (ok) {
        /* With an ephemeral point, the MAC key comes first, then the stream. */
        for (size_t i = 0; i < len; i++)
            c[i] = in[i] ^ k[PC_ECIES_MAC_KEY_LEN + i];
        ok = hmac_sha1(k, PC_ECIES_MAC_KEY_LEN, c, len, l2, sizeof l2, tag) == 0;
    }
    out->len = 0;
    ok = ok && pc_buf_append(out, vz, vlen) == 0 && pc_buf_append(out, c, len) == 0 &&
         pc_buf_append(out, tag, sizeof tag) == 0;
    OPENSSL_cleanse(vz, sizeof vz);
    OPENSSL_cleanse(k, sizeof k);
    ERR_clear_error();
    if (!ok)
        out->len = 0;
    return ok ? 0 : -1;
}

int pc_ecies_wrap(pc_ec_key_t *pub, const uint8_t *in, size_t len, pc_buf_t *out)
{
    /* A key generated from pub as template is on pub's curve. */
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pub, NULL);
    EVP_PKEY *ephemeral = NULL;
    int ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &ephemeral) == 1;
    EVP_PKEY_CTX_free(ctx);
    ok = ok && pc_ecies_wrap_with(pub, ephemeral, in, len, out) == 0;
    EVP_PKEY_free(ephemeral);
    ERR_clear_error();
    return ok ? 0 : -1;
}
