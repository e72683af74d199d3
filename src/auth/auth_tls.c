/* The TLS provider (method "tls"): the broker takes the role from the client
 * certificate presented in the TLS handshake, so CONNECT carries no data. The
 * certificate and key themselves are TLS settings, filled by the client from the
 * plugin's parameters. */
#include "auth/auth.h"

#include <stdlib.h>

#include "common/error.h"

static pulsarc_result tls_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    /* Empty, but present: the broker's TLS provider ignores it. */
    if (pc_auth_data_set(out, "") != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

static void tls_destroy(pc_auth_t *a)
{
    free(a);
}

static const pc_auth_ops_t tls_ops = { .method = "tls", .initial = tls_initial,
                                       .destroy = tls_destroy };

pulsarc_result pc_auth_tls(pc_auth_t **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    (*out)->ops = &tls_ops;
    return PULSARC_OK;
}
