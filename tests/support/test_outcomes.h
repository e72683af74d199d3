/* What the unit tests record of an asynchronous outcome: an HTTP request's (pc_http's
 * done callback) and an authentication provider's prepare (pc_auth_wait_t). */
#ifndef PC_TEST_OUTCOMES_H
#define PC_TEST_OUTCOMES_H

#include <stdio.h>

#include "auth/auth.h"
#include "pulsarc/pulsarc.h"

typedef struct outcome {
    int calls;
    pulsarc_result res;
    long status;
    char body[256];
    char detail[512];
} outcome_t;

/* A pc_http_done_cb; ctx is an outcome_t. */
static inline void on_done(pulsarc_result res, long status, const char *body, size_t len, void *ctx)
{
    outcome_t *o = ctx;
    o->calls++;
    o->res = res;
    o->status = status;
    snprintf(o->body, sizeof o->body, "%.*s", (int)len, body ? body : "");
    snprintf(o->detail, sizeof o->detail, "%s", res ? pulsarc_last_error_detail() : "");
}

typedef struct waiter {
    pc_auth_wait_t w;
    int calls;
    pulsarc_result res;
    char detail[512];
} waiter_t;

/* A pc_auth_ready_cb; pc_auth_prepare's ctx is the waiter_t. */
static inline void on_ready(pc_auth_wait_t *w, pulsarc_result res)
{
    waiter_t *x = w->ctx;
    x->calls++;
    x->res = res;
    snprintf(x->detail, sizeof x->detail, "%s", res ? pulsarc_last_error_detail() : "");
}

#endif
