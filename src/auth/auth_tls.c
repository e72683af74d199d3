/* The TLS provider (method "tls"): the broker takes the role from the client
 * certificate presented in the TLS handshake, so CONNECT carries no data. The
 * certificate and key themselves are TLS settings, filled by the client from the
 * plugin's parameters. */
#include "auth/auth.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/small_file.h"

/* A certificate chain or a key is a few KiB: a file above this is not one. */
#define MAX_IDENTITY_FILE (1024 * 1024)

/* The files are read here only to be sure they can be: on pulsar+ssl:// the TLS context
 * loads them, but on pulsar:// nothing else would, and a missing identity would pass
 * unnoticed where a missing token file fails. The contents (a private key) are wiped. */
static pulsarc_result check_readable(const char *what, const char *path)
{
    if (!path)
        return PULSARC_OK; /* given another way (PEM in memory), or no client certificate */
    char *text;
    size_t n;
    int err;
    switch (pc_read_small_file(path, MAX_IDENTITY_FILE, &text, &n, &err)) {
    case PC_SMALL_FILE_OK:
        explicit_bzero(text, n);
        free(text);
        return PULSARC_OK;
    case PC_SMALL_FILE_CANNOT_OPEN:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "cannot read the TLS %s file %s: %s", what, path,
                       strerror(err));
    case PC_SMALL_FILE_TOO_LARGE:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the TLS %s file %s is larger than %d bytes",
                       what, path, MAX_IDENTITY_FILE);
    case PC_SMALL_FILE_NO_MEMORY:
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    default:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "cannot read the TLS %s file %s", what, path);
    }
}

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

static const pc_auth_ops_t tls_ops = { .method = "tls",
                                       .initial = tls_initial,
                                       .destroy = tls_destroy };

pulsarc_result pc_auth_tls(const char *cert_file, const char *key_file, pc_auth_t **out)
{
    *out = NULL;
    pulsarc_result r = check_readable("certificate", cert_file);
    if (r == PULSARC_OK)
        r = check_readable("key", key_file);
    if (r != PULSARC_OK)
        return r;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    (*out)->ops = &tls_ops;
    return PULSARC_OK;
}
