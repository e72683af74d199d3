/* The user's own authentication method (the public pulsarc_auth_provider_t): a reference-
 * counted holder of the callbacks and ctx, and a provider that adapts them to
 * pc_auth_ops_t. The callbacks fill the same wiped buffer the built-ins fill
 * (pulsarc_auth_data_t is pc_auth_data_t). @locality the holder: any thread; the
 * provider: loop thread. */
#include "auth/auth.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define MAX_METHOD 63

struct pc_auth_custom {
    atomic_int refs;
    pulsarc_auth_provider_t p; /* the caller's, completed with NULLs */
    void *ctx;
    char method[MAX_METHOD + 1];
};

typedef struct custom_auth {
    pc_auth_t base;
    pc_auth_custom_t *cu;
} custom_auth_t;

pulsarc_result pulsarc_auth_data_set(pulsarc_auth_data_t *out, const void *bytes, size_t len)
{
    if (!out || (!bytes && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the buffer and bytes must be given");
    pc_auth_data_free(out);
    return pulsarc_auth_data_append(out, bytes, len);
}

pulsarc_result pulsarc_auth_data_append(pulsarc_auth_data_t *out, const void *bytes, size_t len)
{
    if (!out || (!bytes && len))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the buffer and bytes must be given");
    if (pc_auth_data_append(out, bytes, len) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

/* ---- the holder --------------------------------------------------------------------- */

static bool method_ok(const char *m)
{
    size_t n = m ? strlen(m) : 0;
    if (n == 0 || n > MAX_METHOD)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = m[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

/* The layout rule of pulsarc.h: at least up to initial_data; past what this library
 * knows, zeros only. */
static pulsarc_result check_layout(const pulsarc_auth_provider_t *p, size_t size)
{
    size_t least = offsetof(pulsarc_auth_provider_t, initial_data) + sizeof p->initial_data;
    if (size < least)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the provider's size %zu is too small (at least %zu: pass "
                       "sizeof(pulsarc_auth_provider_t))",
                       size, least);
    const unsigned char *bytes = (const unsigned char *)p;
    for (size_t i = sizeof *p; i < size; i++) {
        if (bytes[i])
            return pc_fail(PULSARC_ERR_UNSUPPORTED,
                           "the provider sets members this library does not know (size %zu, "
                           "known %zu)",
                           size, sizeof *p);
    }
    return PULSARC_OK;
}

static pulsarc_result validate(const pulsarc_auth_provider_t *p, size_t size)
{
    pulsarc_result r = check_layout(p, size);
    if (r != PULSARC_OK)
        return r;
    if (!p->initial_data)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "the provider has no initial_data callback");
    if (!method_ok(p->method_name))
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                       "the provider's method_name must be 1 to %d characters out of "
                       "A-Z a-z 0-9 . _ -",
                       MAX_METHOD);
    return PULSARC_OK;
}

/* Handed over either way: on failure the caller has nothing left to free ctx with. Its
 * free member is read only when the layout says it is there. */
static pulsarc_result refuse(const pulsarc_auth_provider_t *p, size_t size, void *ctx,
                             pulsarc_result r)
{
    size_t has_free = offsetof(pulsarc_auth_provider_t, free) + sizeof p->free;
    if (size >= has_free && p->free)
        p->free(ctx);
    return r;
}

pulsarc_result pc_auth_custom_new(const pulsarc_auth_provider_t *p, size_t size, void *ctx,
                                  pc_auth_custom_t **out)
{
    *out = NULL;
    pulsarc_result r = validate(p, size);
    if (r != PULSARC_OK)
        return refuse(p, size, ctx, r);
    pc_auth_custom_t *cu = calloc(1, sizeof *cu);
    if (!cu)
        return refuse(p, size, ctx, pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory"));
    memcpy(&cu->p, p, size < sizeof cu->p ? size : sizeof cu->p);
    size_t n = strlen(p->method_name); /* checked: at most MAX_METHOD characters */
    memcpy(cu->method, p->method_name, n + 1);
    cu->p.method_name = cu->method;
    cu->ctx = ctx;
    atomic_init(&cu->refs, 1);
    *out = cu;
    return PULSARC_OK;
}

void pc_auth_custom_ref(pc_auth_custom_t *cu)
{
    if (cu)
        atomic_fetch_add_explicit(&cu->refs, 1, memory_order_relaxed);
}

void pc_auth_custom_unref(pc_auth_custom_t *cu)
{
    if (!cu || atomic_fetch_sub_explicit(&cu->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (cu->p.free)
        cu->p.free(cu->ctx);
    free(cu);
}

const char *pc_auth_custom_method(const pc_auth_custom_t *cu)
{
    return cu->method;
}

/* ---- the provider ------------------------------------------------------------------- */

/* A callback's failure: its data dropped, and a detail that names the method and the
 * callback (never anything the callback wrote). */
static pulsarc_result ask(pc_auth_custom_t *cu, const char *what, pulsarc_result r,
                          pc_auth_data_t *out)
{
    if (r == PULSARC_OK)
        return PULSARC_OK;
    pc_auth_data_free(out);
    return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "the custom provider of method \"%s\" failed %s (%s)",
                   cu->method, what, pulsarc_result_name(r));
}

static pulsarc_result custom_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    pc_auth_custom_t *cu = ((custom_auth_t *)a)->cu;
    return ask(cu, "its initial data", cu->p.initial_data(cu->ctx, out), out);
}

static pulsarc_result custom_challenge(pc_auth_t *a, const uint8_t *challenge, size_t len,
                                       pc_auth_data_t *out)
{
    pc_auth_custom_t *cu = ((custom_auth_t *)a)->cu;
    bool refresh = pc_auth_is_refresh(challenge, len);
    if (cu->p.challenge && !refresh)
        return ask(cu, "a challenge", cu->p.challenge(cu->ctx, challenge, len, out), out);
    if (cu->p.refresh)
        cu->p.refresh(cu->ctx);
    return ask(cu, "its data for a refresh", cu->p.initial_data(cu->ctx, out), out);
}

/* "Name: value" lines with "\r\n" between them, and no other control character: a stray
 * line break would let the data forge a request of its own. */
static bool header_lines_ok(const pc_auth_data_t *d)
{
    if (d->len == 0)
        return false;
    for (size_t i = 0; i < d->len; i++) {
        uint8_t ch = d->bytes[i];
        if (ch == '\r' && i + 2 < d->len && d->bytes[i + 1] == '\n' && i > 0 &&
            d->bytes[i - 1] != '\n') {
            i++;
            continue;
        }
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return false;
    }
    return true;
}

static pulsarc_result custom_http_header(pc_auth_t *a, pc_auth_data_t *out)
{
    pc_auth_custom_t *cu = ((custom_auth_t *)a)->cu;
    pulsarc_result r = ask(cu, "its HTTP headers", cu->p.http_headers(cu->ctx, out), out);
    if (r == PULSARC_OK && !header_lines_ok(out)) {
        pc_auth_data_free(out);
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "the custom provider of method \"%s\" gave HTTP headers that are empty "
                       "or hold a control character other than \"\\r\\n\" between lines",
                       cu->method);
    }
    return r;
}

static void custom_destroy(pc_auth_t *a)
{
    custom_auth_t *c = (custom_auth_t *)a;
    pc_auth_custom_unref(c->cu);
    free(c);
}

static const pc_auth_ops_t custom_ops = {
    .method = "custom",
    .initial = custom_initial,
    .challenge = custom_challenge,
    .destroy = custom_destroy,
};

static const pc_auth_ops_t custom_ops_http = {
    .method = "custom",
    .initial = custom_initial,
    .challenge = custom_challenge,
    .destroy = custom_destroy,
    .http_header = custom_http_header,
};

pulsarc_result pc_auth_custom(pc_auth_custom_t *cu, pc_auth_t **out)
{
    custom_auth_t *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    c->base.ops = cu->p.http_headers ? &custom_ops_http : &custom_ops;
    c->base.method = cu->method;
    pc_auth_custom_ref(cu);
    c->cu = cu;
    *out = &c->base;
    return PULSARC_OK;
}
