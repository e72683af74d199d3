/* SASL GSSAPI (Kerberos) as Pulsar's Java client speaks it (AuthenticationSasl,
 * PulsarSaslClient): method "sasl"; CONNECT carries the first GSSAPI token for the
 * service principal <serverType>/<host>@<the client's realm>; each AUTH_CHALLENGE is
 * answered with the next token until the context is established; then the broker's
 * SaslServer offers its security layers in a wrapped 4-byte token (RFC 4752 section
 * 3.1) and the client answers, wrapped, "no security layer, no buffer" followed by the
 * authorization id, which must be the client's own principal (the broker refuses any
 * other). The broker sends CONNECTED when its SaslServer is complete. HTTP lookups run
 * the same exchange in headers (auth_sasl_http.c), each with a security context of its
 * own made through the same session calls.
 *
 * Credentials come from a keytab (the cred store's client_keytab, tickets kept in a
 * memory cache of this provider, never in the user's ticket cache) or, without one,
 * from wherever the GSSAPI library finds them (the default ticket cache). They are
 * acquired at the first connect and again after a failure; MIT's library renews
 * keytab-based tickets by itself.
 *
 * GSSAPI calls block while the library asks the KDC for a service ticket (once per
 * broker host while the ticket lasts): the loop waits for that round trip, as the Java
 * client's event loop does.
 *
 * The GSSAPI library is loaded when credentials are first acquired (gss_lib.h), and
 * called through its table, pc_gss: nothing here calls it before. Without it, every
 * connect or HTTP exchange fails with PULSARC_ERR_AUTH_PROVIDER, naming the library.
 * @locality loop thread. */
#include "auth/auth_sasl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/gss_lib.h"
#include "common/error.h"

typedef struct sasl_auth {
    pc_auth_t base;
    char *keytab;    /* NULL: the library's default credentials */
    char *principal; /* NULL: the keytab's or cache's own */
    char *server_type;
    char ccache[64];  /* MEMORY:pulsarc-sasl-<address>: tickets from the keytab */
    bool ccache_used; /* credentials were acquired into it (the library is loaded) */
    gss_cred_id_t cred;
    char *client_name;        /* the credentials' principal, e.g. client@EXAMPLE.COM */
    const char *realm;        /* in client_name, after '@' */
    pc_sasl_tokens_t *tokens; /* role tokens for HTTP (auth_sasl_http.c) */
} sasl_auth_t;

typedef enum { SASL_CONTEXT, SASL_LAYER, SASL_DONE } sasl_phase_t;

struct pc_auth_session {
    gss_ctx_id_t ctx;
    gss_name_t target;
    char target_text[300];
    sasl_phase_t phase;
};

/* RFC 4752: bit 1 of the first byte is "no security layer". */
#define SASL_LAYER_NONE 0x01

/* ---- errors ------------------------------------------------------------------------- */

static void status_text(OM_uint32 code, int type, char *out, size_t cap)
{
    OM_uint32 minor, ctx = 0;
    size_t used = 0;
    out[0] = '\0';
    do {
        gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
        if (GSS_ERROR(pc_gss.display_status(&minor, code, type, GSS_C_NO_OID, &ctx, &msg)))
            break;
        int n = snprintf(out + used, cap - used, "%s%.*s", used ? "; " : "", (int)msg.length,
                         (const char *)msg.value);
        pc_gss.release_buffer(&minor, &msg);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    } while (ctx != 0);
}

/* GSSAPI's own words for what failed: the minor status (Kerberos's, e.g. "Server
 * broker/h@R not found in Kerberos database") first, then the major (the GSS-API's).
 * Neither holds a key. */
static pulsarc_result gss_fail(const char *what, const char *whom, OM_uint32 major, OM_uint32 minor)
{
    char maj[200], min[300];
    status_text(major, GSS_C_GSS_CODE, maj, sizeof maj);
    status_text(minor, GSS_C_MECH_CODE, min, sizeof min);
    return pc_fail(PULSARC_ERR_AUTH_PROVIDER, "sasl: %s%s%s failed: %s (GSSAPI major 0x%x: %s)",
                   what, whom ? " " : "", whom ? whom : "", minor && min[0] ? min : maj,
                   (unsigned)major, maj);
}

/* ---- credentials -------------------------------------------------------------------- */

static pulsarc_result name_of(gss_name_t name, char **out)
{
    OM_uint32 major, minor;
    gss_buffer_desc text = GSS_C_EMPTY_BUFFER;
    major = pc_gss.display_name(&minor, name, &text, NULL);
    if (GSS_ERROR(major))
        return gss_fail("gss_display_name", NULL, major, minor);
    *out = malloc(text.length + 1);
    if (*out) {
        memcpy(*out, text.value, text.length);
        (*out)[text.length] = '\0';
    }
    pc_gss.release_buffer(&minor, &text);
    return *out ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

static void drop_cred(sasl_auth_t *s)
{
    OM_uint32 minor;
    if (s->cred != GSS_C_NO_CREDENTIAL)
        pc_gss.release_cred(&minor, &s->cred);
    s->cred = GSS_C_NO_CREDENTIAL;
    free(s->client_name);
    s->client_name = NULL;
    s->realm = NULL;
}

static pulsarc_result acquire_cred(sasl_auth_t *s)
{
    OM_uint32 major, minor;
    gss_name_t desired = GSS_C_NO_NAME;
    if (s->cred != GSS_C_NO_CREDENTIAL)
        return PULSARC_OK;
    if (!pc_gss_lib())
        return PULSARC_ERR_AUTH_PROVIDER; /* the detail names the library and why */
    if (s->principal) {
        gss_buffer_desc text = { strlen(s->principal), s->principal };
        major = pc_gss.import_name(&minor, &text, pc_gss.nt_krb5_principal, &desired);
        if (GSS_ERROR(major))
            return gss_fail("the principal", s->principal, major, minor);
    }
    gss_key_value_element_desc elems[2] = {
        { "client_keytab", s->keytab },
        { "ccache", s->ccache },
    };
    gss_key_value_set_desc store = { 2, elems };
    gss_OID_set_desc mechs = { 1, pc_gss.mech_krb5 };
    s->ccache_used |= s->keytab != NULL;
    if (s->keytab)
        major = pc_gss.acquire_cred_from(&minor, desired, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                                         &store, &s->cred, NULL, NULL);
    else
        major = pc_gss.acquire_cred(&minor, desired, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
                                    &s->cred, NULL, NULL);
    if (desired != GSS_C_NO_NAME) {
        OM_uint32 ignored;
        pc_gss.release_name(&ignored, &desired);
    }
    if (GSS_ERROR(major)) {
        s->cred = GSS_C_NO_CREDENTIAL;
        char whom[600];
        snprintf(whom, sizeof whom, "for %s%s%s",
                 s->principal ? s->principal : "the default principal",
                 s->keytab ? " from keytab " : " (no keytab)", s->keytab ? s->keytab : "");
        return gss_fail("acquiring credentials", whom, major, minor);
    }
    gss_name_t mine = GSS_C_NO_NAME;
    major = pc_gss.inquire_cred(&minor, s->cred, &mine, NULL, NULL, NULL);
    if (GSS_ERROR(major)) {
        drop_cred(s);
        return gss_fail("gss_inquire_cred", NULL, major, minor);
    }
    pulsarc_result r = name_of(mine, &s->client_name);
    pc_gss.release_name(&minor, &mine);
    if (r != PULSARC_OK) {
        drop_cred(s);
        return r;
    }
    const char *at = strrchr(s->client_name, '@');
    s->realm = at ? at + 1 : "";
    return PULSARC_OK;
}

/* ---- the exchange ------------------------------------------------------------------- */

static void session_free(pc_auth_session_t *ss)
{
    OM_uint32 minor;
    if (!ss)
        return;
    if (ss->ctx != GSS_C_NO_CONTEXT)
        pc_gss.delete_sec_context(&minor, &ss->ctx, GSS_C_NO_BUFFER);
    if (ss->target != GSS_C_NO_NAME)
        pc_gss.release_name(&minor, &ss->target);
    free(ss);
}

static pulsarc_result copy_out(gss_buffer_t b, pc_auth_data_t *out)
{
    OM_uint32 minor;
    int rc = b->length ? pc_auth_data_append(out, b->value, b->length) : 0;
    if (b->length)
        explicit_bzero(b->value, b->length);
    pc_gss.release_buffer(&minor, b);
    /* An empty answer still goes out as data (the Java client sends empty bytes). */
    if (rc == 0 && !out->bytes)
        rc = pc_auth_data_set(out, "");
    return rc == 0 ? PULSARC_OK : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

/* One gss_init_sec_context round: in is empty for the first. */
static pulsarc_result context_step(sasl_auth_t *s, pc_auth_session_t *ss, const uint8_t *in,
                                   size_t len, pc_auth_data_t *out)
{
    OM_uint32 major, minor, flags = 0;
    gss_buffer_desc input = { len, (void *)in };
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    major = pc_gss.init_sec_context(&minor, s->cred, &ss->ctx, ss->target, pc_gss.mech_krb5,
                                    GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0,
                                    GSS_C_NO_CHANNEL_BINDINGS, len ? &input : GSS_C_NO_BUFFER, NULL,
                                    &output, &flags, NULL);
    if (GSS_ERROR(major)) {
        OM_uint32 ignored;
        pc_gss.release_buffer(&ignored, &output);
        /* The next connect acquires afresh (a keytab replaced, a cache that expired). */
        drop_cred(s);
        return gss_fail("gss_init_sec_context for", ss->target_text, major, minor);
    }
    if (!(major & GSS_S_CONTINUE_NEEDED))
        ss->phase = SASL_LAYER;
    return copy_out(&output, out);
}

/* The broker's offer, unwrapped, must allow "no security layer"; the answer (wrapped,
 * integrity only) chooses it, with no buffer size, and names the client's principal as
 * the authorization id. */
static pulsarc_result layer_step(sasl_auth_t *s, pc_auth_session_t *ss, const uint8_t *in,
                                 size_t len, pc_auth_data_t *out)
{
    OM_uint32 major, minor;
    gss_buffer_desc wrapped = { len, (void *)in };
    gss_buffer_desc offer = GSS_C_EMPTY_BUFFER;
    major = pc_gss.unwrap(&minor, ss->ctx, &wrapped, &offer, NULL, NULL);
    if (GSS_ERROR(major))
        return gss_fail("unwrapping the security layer offer of", ss->target_text, major, minor);
    bool ok = offer.length == 4 && (((const uint8_t *)offer.value)[0] & SASL_LAYER_NONE);
    size_t offered = offer.length;
    pc_gss.release_buffer(&minor, &offer);
    if (!ok)
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "sasl: %s offers security layers without \"none\" (%zu bytes), which "
                       "this client does not support",
                       ss->target_text, offered);
    size_t id_len = strlen(s->client_name);
    uint8_t *answer = malloc(4 + id_len);
    if (!answer)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    answer[0] = SASL_LAYER_NONE;
    answer[1] = answer[2] = answer[3] = 0;
    memcpy(answer + 4, s->client_name, id_len);
    gss_buffer_desc plain = { 4 + id_len, answer };
    gss_buffer_desc sealed = GSS_C_EMPTY_BUFFER;
    major = pc_gss.wrap(&minor, ss->ctx, 0, GSS_C_QOP_DEFAULT, &plain, NULL, &sealed);
    free(answer);
    if (GSS_ERROR(major))
        return gss_fail("wrapping the security layer answer to", ss->target_text, major, minor);
    ss->phase = SASL_DONE;
    return copy_out(&sealed, out);
}

static pulsarc_result sasl_session_start(pc_auth_t *a, const char *host, pc_auth_session_t **out,
                                         pc_auth_data_t *data)
{
    sasl_auth_t *s = (sasl_auth_t *)a;
    OM_uint32 major, minor;
    *out = NULL;
    pulsarc_result r = acquire_cred(s);
    if (r != PULSARC_OK)
        return r;
    pc_auth_session_t *ss = calloc(1, sizeof *ss);
    if (!ss)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    ss->ctx = GSS_C_NO_CONTEXT;
    ss->target = GSS_C_NO_NAME;
    /* As PulsarSaslClient: serverType/host in the client's realm, not one the library
     * would guess from the host name. */
    int n = snprintf(ss->target_text, sizeof ss->target_text, "%s/%s@%s", s->server_type, host,
                     s->realm);
    if (n < 0 || (size_t)n >= sizeof ss->target_text) {
        session_free(ss);
        return pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                       "sasl: the service principal for %.100s is too long", host);
    }
    gss_buffer_desc text = { (size_t)n, ss->target_text };
    major = pc_gss.import_name(&minor, &text, pc_gss.nt_krb5_principal, &ss->target);
    if (GSS_ERROR(major)) {
        r = gss_fail("the service principal", ss->target_text, major, minor);
        session_free(ss);
        return r;
    }
    r = context_step(s, ss, NULL, 0, data);
    if (r != PULSARC_OK) {
        pc_auth_data_free(data);
        session_free(ss);
        return r;
    }
    *out = ss;
    return PULSARC_OK;
}

static pulsarc_result sasl_session_step(pc_auth_t *a, pc_auth_session_t *ss,
                                        const uint8_t *challenge, size_t len, pc_auth_data_t *out)
{
    sasl_auth_t *s = (sasl_auth_t *)a;
    pulsarc_result r;
    switch (ss->phase) {
    case SASL_CONTEXT:
        r = context_step(s, ss, challenge, len, out);
        break;
    case SASL_LAYER:
        /* An empty challenge after the context is established asks for an empty answer
         * (the server's SaslServer sends its offer next). */
        r = len == 0
                ? (pc_auth_data_set(out, "") == 0 ? PULSARC_OK
                                                  : pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory"))
                : layer_step(s, ss, challenge, len, out);
        break;
    default:
        r = pc_fail(PULSARC_ERR_AUTH_PROVIDER,
                    "sasl: %s sent another challenge after the exchange was complete",
                    ss->target_text);
        break;
    }
    if (r != PULSARC_OK)
        pc_auth_data_free(out);
    return r;
}

static void sasl_session_end(pc_auth_t *a, pc_auth_session_t *ss)
{
    (void)a;
    session_free(ss);
}

/* Not used: connections run sessions, HTTP requests the exchange of auth_sasl_http.c. */
static pulsarc_result sasl_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    (void)a;
    (void)out;
    return pc_fail(PULSARC_ERR_UNSUPPORTED,
                   "sasl: authentication data exists only within a connection's exchange");
}

static void sasl_destroy(pc_auth_t *a)
{
    sasl_auth_t *s = (sasl_auth_t *)a;
    drop_cred(s);
    pc_sasl_tokens_free(s->tokens);
    krb5_context k = NULL;
    krb5_ccache cc = NULL;
    /* The memory cache holds the tickets the keytab got: they go with the provider. */
    if (s->ccache_used && pc_gss.krb5_init_context(&k) == 0) {
        if (pc_gss.krb5_cc_resolve(k, s->ccache, &cc) == 0)
            pc_gss.krb5_cc_destroy(k, cc);
        pc_gss.krb5_free_context(k);
    }
    free(s->keytab);
    free(s->principal);
    free(s->server_type);
    free(s);
}

static const pc_auth_ops_t sasl_ops = {
    .method = "sasl",
    .initial = sasl_initial,
    .destroy = sasl_destroy,
    .session_start = sasl_session_start,
    .session_step = sasl_session_step,
    .session_end = sasl_session_end,
    .http_reads = pc_sasl_http_reads,
    .http_begin = pc_sasl_http_begin,
    .http_step = pc_sasl_http_step,
    .http_end = pc_sasl_http_end,
};

pc_sasl_tokens_t **pc_sasl_tokens_of(pc_auth_t *a)
{
    return &((sasl_auth_t *)a)->tokens;
}

const char *pc_sasl_principal(const pc_auth_t *a)
{
    return ((const sasl_auth_t *)a)->client_name;
}

static char *dup_or_null(const char *v, bool *oom)
{
    if (!v || !*v)
        return NULL;
    char *d = strdup(v);
    if (!d)
        *oom = true;
    return d;
}

pulsarc_result pc_auth_sasl(const pc_auth_sasl_params_t *p, pc_auth_t **out)
{
    *out = NULL;
    sasl_auth_t *s = calloc(1, sizeof *s);
    if (!s)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    bool oom = false;
    s->base.ops = &sasl_ops;
    s->keytab = dup_or_null(p->keytab, &oom);
    s->principal = dup_or_null(p->principal, &oom);
    s->server_type = dup_or_null(p->server_type ? p->server_type : "broker", &oom);
    s->cred = GSS_C_NO_CREDENTIAL;
    snprintf(s->ccache, sizeof s->ccache, "MEMORY:pulsarc-sasl-%p", (void *)s);
    if (oom || !s->server_type) {
        sasl_destroy(&s->base);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    *out = &s->base;
    return PULSARC_OK;
}
