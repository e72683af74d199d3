/* authParams of the oauth2 plugin, in the official clients' names: the C++ client's
 * issuer_url, private_key, client_id, client_secret, audience, scope, and the Java and Go
 * clients' issuerUrl, privateKey, audience, scope (JSON or key:value, auth_params.c), and
 * the Java client's trustCertsFilePath: the CAs the issuer's certificate is verified
 * against (unset: the system's store; the broker's tlsTrustCertsFilePath does not apply).
 *
 * private_key (privateKey) names the credentials file the issuer hands out, a JSON
 * object with client_id and client_secret (and perhaps issuer_url): a path,
 * file:///path, or the file itself inline as data:application/json;base64,<...>. It is
 * read once, when the client is created. */
#include "auth/auth_plugin.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth_params.h"
#include "auth/secret_json.h"
#include "common/error.h"
#include "common/small_file.h"

#define MAX_KEY_FILE (64 * 1024)
#define DATA_PREFIX "data:application/json;base64,"

/* The first of the names that is set. */
static const char *either(const pc_auth_params_t *kv, const char *a, const char *b)
{
    const char *v = pc_auth_params_get(kv, a);
    return v ? v : pc_auth_params_get(kv, b);
}

/* The credentials file's text into *text and its length (*len bytes and a NUL, a secret:
 * the caller wipes all *len bytes, past any NUL inside); errors name the file, never its
 * content. */
static pulsarc_result read_key_file(const char *path, char **text, size_t *len)
{
    int err;
    pc_small_file_status st = pc_read_small_file(path, MAX_KEY_FILE, text, len, &err);
    if (st == PC_SMALL_FILE_OK)
        return PULSARC_OK;
    if (st == PC_SMALL_FILE_NO_MEMORY)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (st == PC_SMALL_FILE_CANNOT_OPEN)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authParams for oauth2: cannot read private_key %s: %s", path,
                       strerror(err));
    return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                   "authParams for oauth2: cannot read private_key %s (or it is larger "
                   "than %d bytes)",
                   path, MAX_KEY_FILE);
}

/* The same for the inline form. A decode that fails has already written the blocks
 * before the bad one: the whole buffer is wiped, not only up to a NUL. */
static pulsarc_result decode_data_url(const char *b64, char **text, size_t *len)
{
    size_t n = strlen(b64);
    if (n > INT_MAX)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authParams for oauth2: the private_key data: URL is too long");
    size_t cap = n / 4 * 3 + 4;
    char *out = malloc(cap);
    if (!out)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    int got = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)b64, (int)n);
    if (got < 0) {
        OPENSSL_cleanse(out, cap);
        free(out);
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authParams for oauth2: the private_key data: URL is not valid base64");
    }
    out[got] = '\0'; /* padding decodes to NULs, which end the text early: harmless */
    *text = out;
    *len = (size_t)got;
    return PULSARC_OK;
}

static pulsarc_result key_text(const char *key, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    if (!strncmp(key, DATA_PREFIX, strlen(DATA_PREFIX)))
        return decode_data_url(key + strlen(DATA_PREFIX), text, len);
    if (!strncmp(key, "data:", 5))
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for oauth2: private_key data: "
                                                   "URLs must be " DATA_PREFIX "...");
    if (!strncmp(key, "file://", 7))
        return read_key_file(key + 7, text, len);
    if (!strncmp(key, "file:", 5))
        return read_key_file(key + 5, text, len);
    return read_key_file(key, text, len);
}

/* Copies of the credentials file's fields into owned strings (wiped by the caller). */
typedef struct key_fields {
    char *client_id, *client_secret, *issuer_url;
} key_fields_t;

static void key_fields_clear(key_fields_t *k)
{
    free(k->client_id);
    pc_auth_secret_free(k->client_secret);
    free(k->issuer_url);
    memset(k, 0, sizeof *k);
}

static pulsarc_result load_key(const char *key, key_fields_t *out)
{
    char *text;
    size_t len;
    pulsarc_result r = key_text(key, &text, &len);
    if (r != PULSARC_OK)
        return r;
    pc_secret_json_init(); /* jansson's copies of the secret are wiped */
    json_t *root = json_loads(text, 0, NULL);
    /* All of it: the parser stops at a NUL, the secret may go on after it. */
    OPENSSL_cleanse(text, len);
    free(text);
    const char *id = json_string_value(json_object_get(root, "client_id"));
    const char *secret = json_string_value(json_object_get(root, "client_secret"));
    const char *issuer = json_string_value(json_object_get(root, "issuer_url"));
    if (!json_is_object(root) || !id || !*id || !secret)
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for oauth2: private_key must be a "
                                                "JSON object with client_id and client_secret");
    else if (!(out->client_id = strdup(id)) || !(out->client_secret = strdup(secret)) ||
             (issuer && !(out->issuer_url = strdup(issuer))))
        r = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    json_decref(root);
    if (r != PULSARC_OK)
        key_fields_clear(out);
    return r;
}

static pulsarc_result check_options(const pc_auth_params_t *kv)
{
    const char *type = pc_auth_params_get(kv, "type");
    const char *method = pc_auth_params_get(kv, "tokenEndpointAuthMethod");
    if (type && *type && strcmp(type, "client_credentials"))
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authParams for oauth2: only type client_credentials is supported");
    if (method && *method && strcmp(method, "client_secret_post"))
        return pc_fail(PULSARC_ERR_UNSUPPORTED,
                       "authParams for oauth2: tokenEndpointAuthMethod %s is not supported "
                       "(client_secret_post is)",
                       method);
    return PULSARC_OK;
}

static pulsarc_result build(const pc_auth_params_t *kv, pc_auth_t **out)
{
    key_fields_t key = { 0 };
    const char *private_key = either(kv, "private_key", "privateKey");
    pulsarc_result r = check_options(kv);
    if (r == PULSARC_OK && private_key && *private_key)
        r = load_key(private_key, &key);
    if (r != PULSARC_OK)
        return r;
    pc_auth_oauth2_params_t p = {
        .issuer_url = either(kv, "issuer_url", "issuerUrl"),
        .client_id = key.client_id ? key.client_id : either(kv, "client_id", "clientId"),
        .client_secret = key.client_secret ? key.client_secret
                                           : either(kv, "client_secret", "clientSecret"),
        .audience = pc_auth_params_get(kv, "audience"),
        .scope = pc_auth_params_get(kv, "scope"),
        .trust_file = pc_auth_params_get(kv, "trustCertsFilePath"),
    };
    if (p.trust_file && !*p.trust_file)
        p.trust_file = NULL;
    if (!p.issuer_url || !*p.issuer_url)
        p.issuer_url = key.issuer_url;
    if (p.audience && !*p.audience)
        p.audience = NULL;
    if (p.scope && !*p.scope)
        p.scope = NULL;
    if (!p.issuer_url || !*p.issuer_url)
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams for oauth2: issuer_url (issuerUrl) "
                                                "is required");
    else if (!p.client_id || !*p.client_id || !p.client_secret)
        r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                    "authParams for oauth2: give private_key (privateKey), or client_id and "
                    "client_secret");
    else
        r = pc_auth_oauth2(&p, out);
    key_fields_clear(&key);
    return r;
}

pulsarc_result pc_auth_oauth2_from_params(const char *params, pc_auth_t **out)
{
    *out = NULL;
    if (!params || !*params)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authPlugin oauth2 needs authParams {\"issuer_url\":..,\"private_key\":..,"
                       "\"audience\":..} (or issuerUrl, privateKey, audience)");
    pc_auth_params_t kv;
    pulsarc_result r = pc_auth_params_parse(params, &kv);
    if (r != PULSARC_OK)
        return r;
    r = build(&kv, out);
    pc_auth_params_clear(&kv);
    return r;
}
