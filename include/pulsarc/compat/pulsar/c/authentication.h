/** @file
 * pulsarc-compat: authentication for pulsar_client_configuration_set_auth. An object keeps
 * copies of its secrets (wiped when freed); the configuration keeps its own, so the
 * object may be freed once set. */
#ifndef PULSARC_COMPAT_PULSAR_C_AUTHENTICATION_H
#define PULSARC_COMPAT_PULSAR_C_AUTHENTICATION_H

#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An authentication method with its parameters, opaque. */
typedef struct _pulsar_authentication pulsar_authentication_t;

/** Supplies a token (NUL-terminated, from malloc(); the library frees it with free()), on
 * each connect and each challenge from the broker; NULL: none now. */
typedef char *(*token_supplier)(void *);

/** A method by name with its parameter string: the plugin names and class names pulsarc's
 * authPlugin takes ("token", "tls", "basic", "oauth2", org.apache.pulsar.client.impl.auth.
 * AuthenticationToken, ...). A path to a shared library of C++ plugins is not supported:
 * creating a client with it gives producers pulsar_result_InvalidConfiguration. */
PULSAR_PUBLIC pulsar_authentication_t *pulsar_authentication_create(const char *dynamicLibPath,
                                                                    const char *authParamsString);
/** Mutual TLS with this certificate and private key (PEM files). */
PULSAR_PUBLIC pulsar_authentication_t *pulsar_authentication_tls_create(const char *certificatePath,
                                                                        const char *privateKeyPath);
/** A token (JWT). */
PULSAR_PUBLIC pulsar_authentication_t *pulsar_authentication_token_create(const char *token);
/** A token from tokenSupplier(ctx), asked on each connect and challenge (on the client's
 * loop thread: keep it quick). */
PULSAR_PUBLIC pulsar_authentication_t *
pulsar_authentication_token_create_with_supplier(token_supplier tokenSupplier, void *ctx);
/** User and password (method "basic"). */
PULSAR_PUBLIC pulsar_authentication_t *pulsar_authentication_basic_create(const char *username,
                                                                          const char *password);
/** Not provided by pulsarc-compat: declared so that a program using it fails to link with
 * this name. */
PULSAR_PUBLIC pulsar_authentication_t *
pulsar_authentication_athenz_create(const char *authParamsString);
/** OAuth2 client credentials: the JSON parameters libpulsar takes (issuer_url,
 * private_key or client_id and client_secret, audience, scope). */
PULSAR_PUBLIC pulsar_authentication_t *
pulsar_authentication_oauth2_create(const char *authParamsString);
/** Frees it, wiping its secrets (NULL: nothing). */
PULSAR_PUBLIC void pulsar_authentication_free(pulsar_authentication_t *authentication);

#ifdef __cplusplus
}
#endif

#endif
