/* The basic provider (method "basic"): "user:password", as the broker's
 * AuthenticationProviderBasic reads it. */
#include "auth/auth.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

typedef struct basic_auth {
    pc_auth_t base;
    char *credentials; /* "user:password" */
} basic_auth_t;

static pulsarc_result basic_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    if (pc_auth_data_set(out, ((basic_auth_t *)a)->credentials) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

static void basic_destroy(pc_auth_t *a)
{
    basic_auth_t *b = (basic_auth_t *)a;
    pc_auth_secret_free(b->credentials);
    free(b);
}

static const pc_auth_ops_t basic_ops = { .method = "basic",
                                         .initial = basic_initial,
                                         .destroy = basic_destroy };

pulsarc_result pc_auth_basic(const char *user, const char *password, pc_auth_t **out)
{
    *out = NULL;
    size_t nu = strlen(user), np = strlen(password);
    basic_auth_t *b = calloc(1, sizeof *b);
    if (!b || !(b->credentials = malloc(nu + np + 2))) {
        free(b);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(b->credentials, user, nu);
    b->credentials[nu] = ':';
    memcpy(b->credentials + nu + 1, password, np + 1);
    b->base.ops = &basic_ops;
    *out = &b->base;
    return PULSARC_OK;
}
