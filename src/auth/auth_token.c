/* The token provider (method "token"): one token source, asked afresh on every connect
 * and every challenge, so that a rotated file, variable or supplier answer is what the
 * broker sees next (as the official clients re-read theirs). */
#include "auth/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/small_file.h"

/* A token file larger than this is not a token (a JWT is a few hundred bytes). */
#define MAX_TOKEN_FILE (64 * 1024)

typedef enum { SRC_LITERAL, SRC_FILE, SRC_ENV, SRC_SUPPLIER } token_source;

typedef struct token_auth {
    pc_auth_t base;
    token_source source;
    char *value; /* the token (literal), the path (file) or the variable's name (env) */
    pulsarc_token_supplier_cb supplier;
    void *supplier_ctx;
} token_auth_t;

/* Tokens are often written with a trailing newline (echo > file); the official clients
 * trim, and so do we, on both ends. */
static int set_trimmed(pc_auth_data_t *out, const char *s, size_t n)
{
    while (n > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    out->bytes = malloc(n ? n : 1);
    if (!out->bytes)
        return -1;
    memcpy(out->bytes, s, n);
    out->len = n;
    return 0;
}

static pulsarc_result read_token_file(const char *path, pc_auth_data_t *out)
{
    char *text;
    size_t n;
    int err;
    switch (pc_read_small_file(path, MAX_TOKEN_FILE, &text, &n, &err)) {
    case PC_SMALL_FILE_OK:
        break;
    case PC_SMALL_FILE_CANNOT_OPEN:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "cannot read the token file %s: %s", path,
                       strerror(err));
    case PC_SMALL_FILE_TOO_LARGE:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the token file %s is larger than %d bytes", path,
                       MAX_TOKEN_FILE);
    case PC_SMALL_FILE_NO_MEMORY:
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    default:
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "cannot read the token file %s", path);
    }
    pulsarc_result r = PULSARC_OK;
    if (set_trimmed(out, text, n) != 0)
        r = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    else if (out->len == 0)
        r = pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the token file %s is empty", path);
    explicit_bzero(text, n);
    free(text);
    if (r != PULSARC_OK)
        pc_auth_data_free(out);
    return r;
}

static pulsarc_result from_supplier(token_auth_t *t, pc_auth_data_t *out)
{
    char *token = t->supplier(t->supplier_ctx);
    if (!token)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the token supplier returned no token");
    int rc = set_trimmed(out, token, strlen(token));
    pc_auth_secret_free(token);
    if (rc != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    if (out->len == 0) {
        pc_auth_data_free(out);
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the token supplier returned an empty token");
    }
    return PULSARC_OK;
}

static pulsarc_result token_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    token_auth_t *t = (token_auth_t *)a;
    switch (t->source) {
    case SRC_LITERAL:
        if (pc_auth_data_set(out, t->value) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return PULSARC_OK;
    case SRC_FILE:
        return read_token_file(t->value, out);
    case SRC_ENV: {
        const char *v = getenv(t->value);
        if (!v || !*v)
            return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                           "the token's environment variable %s is not set or empty", t->value);
        if (set_trimmed(out, v, strlen(v)) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return PULSARC_OK;
    }
    case SRC_SUPPLIER:
        return from_supplier(t, out);
    }
    return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "unknown token source");
}

static void token_destroy(pc_auth_t *a)
{
    token_auth_t *t = (token_auth_t *)a;
    pc_auth_secret_free(t->value);
    free(t);
}

static const pc_auth_ops_t token_ops = { .method = "token",
                                         .initial = token_initial,
                                         .destroy = token_destroy };

static pulsarc_result make(token_source source, const char *value, pulsarc_token_supplier_cb cb,
                           void *ctx, pc_auth_t **out)
{
    *out = NULL;
    token_auth_t *t = calloc(1, sizeof *t);
    if (!t || (value && !(t->value = strdup(value)))) {
        free(t);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    t->base.ops = &token_ops;
    t->source = source;
    t->supplier = cb;
    t->supplier_ctx = ctx;
    *out = &t->base;
    return PULSARC_OK;
}

pulsarc_result pc_auth_token_literal(const char *token, pc_auth_t **out)
{
    return make(SRC_LITERAL, token, NULL, NULL, out);
}

pulsarc_result pc_auth_token_file(const char *path, pc_auth_t **out)
{
    return make(SRC_FILE, path, NULL, NULL, out);
}

pulsarc_result pc_auth_token_env(const char *name, pc_auth_t **out)
{
    return make(SRC_ENV, name, NULL, NULL, out);
}

pulsarc_result pc_auth_token_supplier(pulsarc_token_supplier_cb cb, void *ctx, pc_auth_t **out)
{
    return make(SRC_SUPPLIER, NULL, cb, ctx, out);
}
