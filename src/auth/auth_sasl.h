/* What the SASL provider's two halves share: auth_sasl.c (credentials and the GSSAPI
 * security contexts, one per connection or HTTP exchange, behind auth.h's session calls)
 * and auth_sasl_http.c (the broker's SASL exchange in HTTP headers, and the role tokens
 * it hands out, kept per web service host). The HTTP half runs its GSSAPI through the
 * session calls (pc_auth_connect_data / pc_auth_connect_challenge / pc_auth_session_end),
 * so both halves share one implementation of the exchange. Nothing outside
 * src/auth/auth_sasl*.c includes this, except the fuzz target of the answer reader.
 * @locality loop thread. */
#ifndef PC_AUTH_SASL_H
#define PC_AUTH_SASL_H

#include <stddef.h>
#include <stdint.h>

#include "auth/auth.h"

/* The role tokens brokers handed out, per web service host and port (auth_sasl_http.c). */
typedef struct pc_sasl_tokens pc_sasl_tokens_t;

/* auth_sasl.c: the provider's token store (NULL until the first is kept), and the
 * principal its credentials are for (NULL until they were acquired), for details. */
pc_sasl_tokens_t **pc_sasl_tokens_of(pc_auth_t *a);
const char *pc_sasl_principal(const pc_auth_t *a);

/* auth_sasl_http.c: the auth.h HTTP exchange of the provider, and the store's end (wipes
 * every token; NULL is a no-op). */
extern const char *const pc_sasl_http_reads[];
pulsarc_result pc_sasl_http_begin(pc_auth_t *a, const char *host, int port, uint64_t now_ms,
                                  pc_auth_http_xchg_t **x, pc_auth_data_t *lines);
pulsarc_result pc_sasl_http_step(pc_auth_t *a, pc_auth_http_xchg_t *x,
                                 const pc_auth_http_reply_t *reply, uint64_t now_ms, int *again,
                                 pc_auth_data_t *lines);
void pc_sasl_http_end(pc_auth_t *a, pc_auth_http_xchg_t *x);
void pc_sasl_tokens_free(pc_sasl_tokens_t *t);

/* ---- reading an answer (pure: the fuzz target feeds it) ----------------------------- */

/* The largest GSSAPI token an answer may carry (decoded), and role token (as sent). */
#define PC_SASL_HTTP_TOKEN_MAX 8192
#define PC_SASL_HTTP_ROLE_TOKEN_MAX 4096

typedef enum pc_sasl_http_kind {
    PC_SASL_HTTP_OTHER,     /* no SASL state: the answer is the request's own */
    PC_SASL_HTTP_CONTINUE,  /* 401, State ING: the broker's token and its exchange's id */
    PC_SASL_HTTP_DONE,      /* 200, State Done: the role token */
    PC_SASL_HTTP_EXPIRED,   /* 401, State SaslAuthRoleTokenExpired */
    PC_SASL_HTTP_REFUSED,   /* 401 without a SASL state: the broker said no */
    PC_SASL_HTTP_MALFORMED, /* breaks the exchange's rules: why says how */
} pc_sasl_http_kind_t;

typedef struct pc_sasl_http_answer {
    pc_sasl_http_kind_t kind;
    uint8_t token[PC_SASL_HTTP_TOKEN_MAX]; /* CONTINUE: decoded SASL-Token (wipe after use) */
    size_t token_len;
    const char *server_id;  /* CONTINUE: SASL-Server-ID (a decimal long), in the reply */
    const char *role_token; /* DONE: SaslAuthRoleToken (printable ASCII), in the reply */
    char why[160];          /* MALFORMED: the rule broken (quotes no value) */
} pc_sasl_http_answer_t;

/* Read reply (whose values follow pc_sasl_http_reads) into out. Every value is checked
 * as untrusted: base64 strictly (RFC 4648 alphabet and padding), the server id as a
 * decimal long, the role token as printable ASCII, each within its maximum. */
void pc_sasl_http_read(const pc_auth_http_reply_t *reply, pc_sasl_http_answer_t *out);

/* The expiry a role token states ("e=<ms since the epoch>" among its '&'-separated
 * fields, as the broker's SaslRoleToken writes it), or 0 when it states none readable. */
uint64_t pc_sasl_role_token_expiry(const char *token);

#endif
