/* The provider-independent half of the interface: dispatch and secret hygiene. */
#include "auth/auth.h"

#include <stdlib.h>
#include <string.h>

const char *pc_auth_method(const pc_auth_t *a)
{
    return a->method ? a->method : a->ops->method;
}

pulsarc_result pc_auth_initial_data(pc_auth_t *a, pc_auth_data_t *out)
{
    memset(out, 0, sizeof *out);
    return a->ops->initial(a, out);
}

pulsarc_result pc_auth_challenge_data(pc_auth_t *a, const uint8_t *challenge, size_t len,
                                      pc_auth_data_t *out)
{
    memset(out, 0, sizeof *out);
    if (!a->ops->challenge)
        return a->ops->initial(a, out);
    return a->ops->challenge(a, challenge, len, out);
}

int pc_auth_is_refresh(const uint8_t *challenge, size_t len)
{
    static const char refresh[] = "PulsarAuthRefresh";
    return challenge && len == sizeof refresh - 1 && !memcmp(challenge, refresh, len);
}

pulsarc_result pc_auth_connect_data(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                                    pc_auth_data_t *out)
{
    memset(out, 0, sizeof *out);
    if (!a->ops->session_start)
        return a->ops->initial(a, out);
    pc_auth_session_end(a, s);
    return a->ops->session_start(a, host, s, out);
}

pulsarc_result pc_auth_connect_challenge(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                                         const uint8_t *challenge, size_t len, pc_auth_data_t *out)
{
    if (!a->ops->session_start)
        return pc_auth_challenge_data(a, challenge, len, out);
    if (!*s || pc_auth_is_refresh(challenge, len))
        return pc_auth_connect_data(a, host, s, out);
    memset(out, 0, sizeof *out);
    return a->ops->session_step(a, *s, challenge, len, out);
}

void pc_auth_session_end(pc_auth_t *a, pc_auth_session_t **s)
{
    if (a && *s && a->ops->session_end)
        a->ops->session_end(a, *s);
    *s = NULL;
}

void pc_auth_free(pc_auth_t *a)
{
    if (a)
        a->ops->destroy(a);
}

int pc_auth_has_http_header(const pc_auth_t *a)
{
    return a && a->ops->http_header != NULL;
}

pulsarc_result pc_auth_http_header(pc_auth_t *a, pc_auth_data_t *out)
{
    memset(out, 0, sizeof *out);
    return a->ops->http_header(a, out);
}

int pc_auth_has_http_exchange(const pc_auth_t *a)
{
    return a && a->ops->http_begin != NULL;
}

const char *const *pc_auth_http_reads(const pc_auth_t *a)
{
    return a->ops->http_reads;
}

pulsarc_result pc_auth_http_begin(pc_auth_t *a, const char *host, int port, uint64_t now_ms,
                                  pc_auth_http_xchg_t **x, pc_auth_data_t *lines)
{
    memset(lines, 0, sizeof *lines);
    *x = NULL;
    return a->ops->http_begin(a, host, port, now_ms, x, lines);
}

pulsarc_result pc_auth_http_step(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                 const pc_auth_http_reply_t *reply, uint64_t now_ms, int *again,
                                 pc_auth_data_t *lines)
{
    memset(lines, 0, sizeof *lines);
    *again = 0;
    return a->ops->http_step(a, x, reply, now_ms, again, lines);
}

void pc_auth_http_end(pc_auth_t *a, pc_auth_http_xchg_t **x)
{
    if (a && *x)
        a->ops->http_end(a, *x);
    *x = NULL;
}

void pc_auth_prepare(pc_auth_t *a, pc_auth_wait_t *w, pc_auth_ready_cb cb, void *ctx)
{
    w->next = NULL;
    w->cb = cb;
    w->ctx = ctx;
    w->pending = 1;
    if (a->ops->prepare)
        a->ops->prepare(a, w);
    else
        pc_auth_wait_done(w, PULSARC_OK);
}

void pc_auth_cancel(pc_auth_t *a, pc_auth_wait_t *w)
{
    if (!w->pending)
        return;
    if (a->ops->cancel)
        a->ops->cancel(a, w);
    w->pending = 0;
    w->next = NULL;
}

void pc_auth_wait_done(pc_auth_wait_t *w, pulsarc_result res)
{
    w->pending = 0;
    w->next = NULL;
    w->cb(w, res);
}

int pc_auth_wants_http(const pc_auth_t *a)
{
    return a && a->ops->use_http != NULL;
}

void pc_auth_use_http(pc_auth_t *a, const pc_auth_http_t *http)
{
    if (pc_auth_wants_http(a))
        a->ops->use_http(a, http);
}

const char *pc_auth_http_trust_file(const pc_auth_t *a)
{
    return a && a->ops->http_trust_file ? a->ops->http_trust_file(a) : NULL;
}

void pc_auth_warn_cleartext(const pc_auth_t *a, int tls, const pc_logger_t *log)
{
    if (!a)
        return;
    const char *method = pc_auth_method(a);
    const char *what = !strcmp(method, "token")   ? "the token"
                       : !strcmp(method, "basic") ? "the password"
                                                  : NULL;
    const char *own = a->ops->cleartext_risk ? a->ops->cleartext_risk(a) : NULL;
    if (what && !tls)
        PC_WARN(log,
                "%s goes to the broker unencrypted: the service URL is pulsar:// or "
                "http://, not pulsar+ssl:// or https://%s%s",
                what, own ? "; " : "", own ? own : "");
    else if (own)
        PC_WARN(log, "%s", own);
}

void pc_auth_data_free(pc_auth_data_t *d)
{
    if (d->bytes) {
        /* explicit_bzero: a plain memset before free may be optimised away. */
        explicit_bzero(d->bytes, d->len);
        free(d->bytes);
    }
    d->bytes = NULL;
    d->len = 0;
}

int pc_auth_data_append(pc_auth_data_t *d, const void *bytes, size_t n)
{
    if (n == 0)
        return 0;
    if (n > SIZE_MAX - d->len)
        return -1;
    /* Not realloc: a moved block would leave an unwiped copy behind. */
    uint8_t *grown = malloc(d->len + n);
    if (!grown)
        return -1;
    if (d->len)
        memcpy(grown, d->bytes, d->len);
    memcpy(grown + d->len, bytes, n);
    size_t len = d->len + n;
    pc_auth_data_free(d);
    d->bytes = grown;
    d->len = len;
    return 0;
}

int pc_auth_data_set(pc_auth_data_t *out, const char *s)
{
    size_t n = strlen(s);
    out->bytes = malloc(n ? n : 1);
    if (!out->bytes) {
        out->len = 0;
        return -1;
    }
    memcpy(out->bytes, s, n);
    out->len = n;
    return 0;
}

void pc_auth_secret_free(char *s)
{
    if (!s)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}
