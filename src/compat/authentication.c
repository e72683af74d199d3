/* Authentication objects: what each method needs, kept (secrets wiped when freed) until a
 * client is created, then handed to pulsarc's typed setters or authPlugin/authParams. */
#include <stdlib.h>

#include "compat/compat.h"

static pulsar_authentication_t *make(pc_compat_auth_kind kind, const char *a, const char *b)
{
    pulsar_authentication_t *auth = calloc(1, sizeof *auth);
    if (!auth)
        return NULL;
    auth->auth.kind = kind;
    auth->auth.a = pc_compat_strdup(a);
    auth->auth.b = pc_compat_strdup(b);
    if ((a && !auth->auth.a) || (b && !auth->auth.b)) {
        pulsar_authentication_free(auth);
        return NULL;
    }
    return auth;
}

pulsar_authentication_t *pulsar_authentication_create(const char *dynamicLibPath,
                                                      const char *authParamsString)
{
    return make(PC_COMPAT_AUTH_PLUGIN, dynamicLibPath ? dynamicLibPath : "",
                authParamsString ? authParamsString : "");
}

pulsar_authentication_t *pulsar_authentication_tls_create(const char *certificatePath,
                                                          const char *privateKeyPath)
{
    return make(PC_COMPAT_AUTH_TLS, certificatePath ? certificatePath : "",
                privateKeyPath ? privateKeyPath : "");
}

pulsar_authentication_t *pulsar_authentication_token_create(const char *token)
{
    return make(PC_COMPAT_AUTH_TOKEN, NULL, token ? token : "");
}

pulsar_authentication_t *
pulsar_authentication_token_create_with_supplier(token_supplier tokenSupplier, void *ctx)
{
    pulsar_authentication_t *auth = make(PC_COMPAT_AUTH_SUPPLIER, NULL, NULL);
    if (auth) {
        auth->auth.supplier = tokenSupplier;
        auth->auth.supplier_ctx = ctx;
    }
    return auth;
}

pulsar_authentication_t *pulsar_authentication_basic_create(const char *username,
                                                            const char *password)
{
    return make(PC_COMPAT_AUTH_BASIC, username ? username : "", password ? password : "");
}

pulsar_authentication_t *pulsar_authentication_oauth2_create(const char *authParamsString)
{
    return make(PC_COMPAT_AUTH_OAUTH2, NULL, authParamsString ? authParamsString : "");
}

void pulsar_authentication_free(pulsar_authentication_t *authentication)
{
    if (!authentication)
        return;
    pc_compat_auth_clear(&authentication->auth);
    free(authentication);
}

int pc_compat_auth_copy(pc_compat_auth *dst, const pc_compat_auth *src)
{
    *dst = *src;
    dst->a = pc_compat_strdup(src->a);
    dst->b = pc_compat_strdup(src->b);
    if ((src->a && !dst->a) || (src->b && !dst->b)) {
        pc_compat_auth_clear(dst);
        return -1;
    }
    return 0;
}

void pc_compat_auth_clear(pc_compat_auth *auth)
{
    pc_compat_wipe_free(auth->a); /* a user name or a path: wiped too, it costs nothing */
    pc_compat_wipe_free(auth->b);
    *auth = (pc_compat_auth){ 0 };
}

/* libpulsar's supplier returns a token from malloc() that the library frees; pulsarc's
 * does the same (and wipes it first), so the supplier is called as it is, marked as a
 * callback so that a blocking call inside it refuses to wait. */
static char *call_supplier(void *ctx)
{
    const pc_compat_auth *auth = ctx;
    pc_compat_enter_callback();
    char *token = auth->supplier(auth->supplier_ctx);
    pc_compat_leave_callback();
    return token;
}

pulsarc_result pc_compat_auth_apply(const pc_compat_auth *auth, pulsarc_client_config_t *conf)
{
    pulsarc_result res;
    switch (auth->kind) {
    case PC_COMPAT_AUTH_NONE:
        return PULSARC_OK;
    case PC_COMPAT_AUTH_TLS:
        return pulsarc_client_config_set_auth_tls(conf, auth->a, auth->b);
    case PC_COMPAT_AUTH_TOKEN:
        return pulsarc_client_config_set_auth_token(conf, auth->b);
    case PC_COMPAT_AUTH_SUPPLIER:
        if (!auth->supplier)
            return PULSARC_ERR_INVALID_CONFIG;
        /* auth is the client's own copy: it lives as long as the client (client.c). */
        return pulsarc_client_config_set_auth_token_supplier(conf, call_supplier, (void *)auth);
    case PC_COMPAT_AUTH_BASIC:
        return pulsarc_client_config_set_auth_basic(conf, auth->a, auth->b);
    case PC_COMPAT_AUTH_OAUTH2:
        res = pulsarc_client_config_set(conf, "authPlugin", "oauth2");
        return res == PULSARC_OK ? pulsarc_client_config_set(conf, "authParams", auth->b) : res;
    case PC_COMPAT_AUTH_PLUGIN:
        /* A plugin name or class name pulsarc knows; a path to a C++ plugin library is
         * refused here (pulsarc has no plugin loading). */
        res = pulsarc_client_config_set(conf, "authPlugin", auth->a);
        if (res == PULSARC_OK && auth->b && *auth->b)
            res = pulsarc_client_config_set(conf, "authParams", auth->b);
        return res;
    }
    return PULSARC_ERR_INVALID_CONFIG;
}
