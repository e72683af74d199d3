/* From the configuration the way Pulsar users write it (authPlugin + authParams, or a
 * token supplier callback) to a provider. Plugin names are the official clients' class
 * names or the short names token, tls, basic and oauth2.
 *
 * authParams per plugin:
 *   token   "token:<jwt>", "file:///path" (re-read on every connect and challenge),
 *           "env:NAME" (the variable, read on every connect and challenge), JSON
 *           {"token":"<jwt>"} or {"file":"/path"}, or the bare token
 *   basic   JSON {"userId":"u","password":"p"} or "userId:u,password:p"
 *   tls     JSON {"tlsCertFile":"/c.pem","tlsKeyFile":"/k.pem"} or
 *           "tlsCertFile:/c.pem,tlsKeyFile:/k.pem"; may be empty when the client
 *           certificate is configured as a TLS setting
 *   oauth2  JSON or key:value with the C++ client's names {"issuer_url":..,
 *           "private_key":"file:///creds.json" (or a path, or
 *           data:application/json;base64,..; a JSON file with client_id and
 *           client_secret), "audience":.., "scope":..}, or client_id + client_secret
 *           instead of private_key; or the Java/Go names issuerUrl, privateKey, audience,
 *           scope. The provider needs the client's HTTP client (pc_auth_use_http).
 *   sasl    JSON or key:value {"keytab":"/client.keytab","principal":"client@EXAMPLE.COM",
 *           "serverType":"broker"}: Kerberos through GSSAPI; all optional (no keytab: the
 *           default ticket cache; serverType "broker", or "proxy" through a Pulsar proxy).
 *           The Java client's JAAS parameters (saslJaasClientSectionName) have no meaning
 *           here and are ignored. */
#ifndef PC_AUTH_PLUGIN_H
#define PC_AUTH_PLUGIN_H

#include "auth/auth.h"
#include "common/clock.h"
#include "pulsarc/pulsarc.h"

typedef enum pc_auth_kind {
    PC_AUTH_TOKEN,
    PC_AUTH_TLS,
    PC_AUTH_BASIC,
    PC_AUTH_OAUTH2,
    PC_AUTH_SASL,
} pc_auth_kind_t;

/* PULSARC_ERR_INVALID_CONFIG (with a detail) for a name no official client knows. */
pulsarc_result pc_auth_kind_from_name(const char *name, pc_auth_kind_t *out);

typedef struct pc_auth_config {
    const char *plugin;                 /* NULL: no authentication */
    const char *params;                 /* NULL or the plugin's parameters */
    pulsarc_token_supplier_cb supplier; /* set: a token plugin fed by this callback */
    void *supplier_ctx;
    /* The TLS settings' client certificate and key files (NULL: unset). A tls plugin's
     * identity is these when either is set, else the files of its parameters. */
    const char *tls_cert_file;
    const char *tls_key_file;
    const pc_clock_t *clock; /* what a cached token's lifetime is counted on
                                           (oauth2); NULL: the monotonic clock */
} pc_auth_config_t;

/* The client certificate named by a tls plugin's parameters: owned copies, or NULL. */
typedef struct pc_auth_tls_files {
    char *cert_file;
    char *key_file;
} pc_auth_tls_files_t;

/* Build the provider; *out is NULL when no plugin is configured. tls (zeroed first)
 * receives the certificate files of a tls plugin. Errors: INVALID_CONFIG (unknown plugin,
 * bad or missing parameters, an unreadable oauth2 private_key), AUTH_PROVIDER (a tls
 * plugin's certificate or key file that cannot be read), UNSUPPORTED (an oauth2
 * tokenEndpointAuthMethod other than client_secret_post), NO_MEMORY; details never quote
 * parameter values. */
pulsarc_result pc_auth_from_config(const pc_auth_config_t *in, pc_auth_t **out,
                                   pc_auth_tls_files_t *tls);
void pc_auth_tls_files_clear(pc_auth_tls_files_t *f);

/* The oauth2 plugin's parameters to a provider (auth_oauth2_params.c). */
pulsarc_result pc_auth_oauth2_from_params(const char *params, pc_auth_t **out);

#endif
