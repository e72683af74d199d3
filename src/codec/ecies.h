/* ECIES wrapping of a data key for an EC public key, byte for byte what the Java client
 * (MessageCryptoBc) does with BouncyCastle's "ECIES" cipher and IESParameterSpec(null,
 * null, 128): an ephemeral key on the recipient's curve, ECDH, KDF2 (X9.63) with SHA-1
 * over ephemeral point || shared x, XOR stream, HMAC-SHA1 tag. docs/encryption.md, "EC
 * keys", has the layout and the sources. Pure functions, any thread. */
#ifndef PC_ECIES_H
#define PC_ECIES_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct evp_pkey_st pc_ec_key_t;

#define PC_ECIES_MAC_KEY_LEN 16 /* IESParameterSpec's macKeySize 128 */
#define PC_ECIES_TAG_LEN 20     /* HMAC-SHA1 */
#define PC_ECIES_MAX_IN 64      /* data keys only */

/* Wrap in[0..len) (len <= PC_ECIES_MAX_IN) for the EC public key pub, with a fresh
 * ephemeral key; the result replaces out's contents: the ephemeral public point
 * (uncompressed, 0x04 || X || Y), the XORed input, the 20-byte tag. Returns 0, or -1. */
int pc_ecies_wrap(pc_ec_key_t *pub, const uint8_t *in, size_t len, pc_buf_t *out);

/* The same with the given ephemeral key pair (on pub's curve), for fixed test vectors. */
int pc_ecies_wrap_with(pc_ec_key_t *pub, pc_ec_key_t *ephemeral, const uint8_t *in, size_t len,
                       pc_buf_t *out);

#endif
