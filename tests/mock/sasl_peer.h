/* The broker's side of SASL GSSAPI for the mock tests (test_client_auth_sasl*.c): an MIT
 * KDC per test (scripts/kdc on a free loopback port, its krb5.conf in KRB5_CONFIG) and a
 * GSSAPI acceptor with the broker's keytab playing the broker's SaslServer: the client's
 * AP-REQ, the Kerberos reply (mutual authentication), the wrapped RFC 4752 security-layer
 * offer, the client's wrapped choice and authorization id. One sasl_peer_t per exchange
 * side (the mock broker's CONNECT, the HTTP server's headers), each with a context of its
 * own, and misbehaviour on demand. Included by one test file each (static functions). */
#ifndef PC_TEST_SASL_PEER_H
#define PC_TEST_SASL_PEER_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mock_broker.h"

static char kdc_dir[128];
static int kdc_port;

static inline void kdc(const char *what)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "PULSARC_KDC_DIR='%s' PULSARC_KDC_PORT=%d '%s/scripts/kdc' %s %s",
             kdc_dir, kdc_port, PC_SOURCE_DIR, what,
             getenv("PULSARC_TEST_LOG") ? "" : ">/dev/null 2>&1");
    cr_assert_eq(system(cmd), 0, "scripts/kdc %s failed (krb5-kdc installed? scripts/setup)", what);
}

static inline int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    close(s);
    return ntohs(sa.sin_port);
}

/* A fresh realm for the test; the client finds it through KRB5_CONFIG. */
static inline void kdc_start(void)
{
    snprintf(kdc_dir, sizeof kdc_dir, "/tmp/pulsarc-mock-kdc-%d", (int)getpid());
    kdc_port = free_port();
    kdc("start");
    char conf[256];
    snprintf(conf, sizeof conf, "%s/krb5.conf", kdc_dir);
    setenv("KRB5_CONFIG", conf, 1);
}

static inline void kdc_stop(void)
{
    kdc("stop");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kdc_dir);
    cr_assert_eq(system(cmd), 0);
}

/* The mock's host is 127.0.0.1: the service principal must be broker/127.0.0.1. */
static inline void add_service_for_mock(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "KRB5_CONFIG='%1$s/krb5.conf' KRB5_KDC_PROFILE='%1$s/kdc.conf' kadmin.local -q "
             "'addprinc -randkey broker/127.0.0.1@PULSARC.TEST' >/dev/null 2>&1 && "
             "KRB5_CONFIG='%1$s/krb5.conf' KRB5_KDC_PROFILE='%1$s/kdc.conf' kadmin.local -q "
             "'ktadd -k %1$s/broker.keytab broker/127.0.0.1@PULSARC.TEST' >/dev/null 2>&1",
             kdc_dir);
    cr_assert_eq(system(cmd), 0, "kadmin.local failed");
}

/* ---- the acceptor --------------------------------------------------------------------- */

typedef enum {
    MISBEHAVE_NONE,
    OFFER_NO_NONE,   /* an offer without "no security layer" */
    GARBAGE_TOKEN,   /* not a Kerberos reply */
    EXTRA_CHALLENGE, /* a challenge after the client's choice */
    REFUSE,          /* the broker says no */
} misbehave_t;

typedef struct sasl_peer {
    misbehave_t misbehave;
    gss_cred_id_t cred;
    gss_ctx_id_t ctx;
    int stage; /* 0 context, 1 awaiting the empty answer to the AP-REP, 2 awaiting the choice */
    int rounds;
    char authzid[256];
    char client[256];
} sasl_peer_t;

static inline void sasl_peer_acquire(sasl_peer_t *p)
{
    char keytab[256];
    snprintf(keytab, sizeof keytab, "%s/broker.keytab", kdc_dir);
    gss_key_value_element_desc el = { "keytab", keytab };
    gss_key_value_set_desc store = { 1, &el };
    OM_uint32 minor;
    cr_assert(
        !GSS_ERROR(gss_acquire_cred_from(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                         GSS_C_ACCEPT, &store, &p->cred, NULL, NULL)));
}

static inline mock_auth_verdict_t sasl_peer_put(gss_buffer_t b, uint8_t *out, size_t *out_len)
{
    OM_uint32 minor;
    cr_assert_leq(b->length, MOCK_AUTH_MAX);
    memcpy(out, b->value, b->length);
    *out_len = b->length;
    gss_release_buffer(&minor, b);
    return MOCK_AUTH_CHALLENGE;
}

/* The wrapped offer: layers, then a 3-byte maximum buffer size. */
static inline mock_auth_verdict_t sasl_peer_offer(sasl_peer_t *p, uint8_t *out, size_t *out_len)
{
    OM_uint32 minor;
    uint8_t layers[4] = { p->misbehave == OFFER_NO_NONE ? 0x02 : 0x07, 0x00, 0x10, 0x00 };
    gss_buffer_desc plain = { 4, layers }, sealed = GSS_C_EMPTY_BUFFER;
    cr_assert(!GSS_ERROR(gss_wrap(&minor, p->ctx, 0, GSS_C_QOP_DEFAULT, &plain, NULL, &sealed)));
    p->stage = 2;
    return sasl_peer_put(&sealed, out, out_len);
}

/* A mock_auth_server_cb; ctx is the sasl_peer_t. Round 0 starts a new context. */
static inline mock_auth_verdict_t sasl_peer_step(void *ctx, int conn, int round,
                                                 const uint8_t *data, size_t len, uint8_t *out,
                                                 size_t *out_len)
{
    sasl_peer_t *p = ctx;
    (void)conn;
    OM_uint32 major, minor;
    p->rounds = round + 1;
    if (round == 0) {
        if (p->ctx != GSS_C_NO_CONTEXT)
            gss_delete_sec_context(&minor, &p->ctx, GSS_C_NO_BUFFER);
        p->stage = 0;
    }
    if (p->misbehave == REFUSE)
        return MOCK_AUTH_REFUSE;
    if (p->misbehave == GARBAGE_TOKEN && round == 0) {
        static const char junk[] = "not a kerberos reply";
        memcpy(out, junk, sizeof junk - 1);
        *out_len = sizeof junk - 1;
        return MOCK_AUTH_CHALLENGE;
    }
    if (p->stage == 0) {
        gss_buffer_desc in = { len, (void *)data }, reply = GSS_C_EMPTY_BUFFER;
        gss_name_t src = GSS_C_NO_NAME;
        major = gss_accept_sec_context(&minor, &p->ctx, p->cred, &in, GSS_C_NO_CHANNEL_BINDINGS,
                                       &src, NULL, &reply, NULL, NULL, NULL);
        cr_assert(!GSS_ERROR(major), "gss_accept_sec_context failed: 0x%x/%u", major, minor);
        gss_buffer_desc name = GSS_C_EMPTY_BUFFER;
        gss_display_name(&minor, src, &name, NULL);
        snprintf(p->client, sizeof p->client, "%.*s", (int)name.length, (char *)name.value);
        gss_release_buffer(&minor, &name);
        gss_release_name(&minor, &src);
        cr_assert_eq(major & GSS_S_CONTINUE_NEEDED, 0);
        if (reply.length) { /* mutual authentication: the AP-REP first */
            p->stage = 1;
            return sasl_peer_put(&reply, out, out_len);
        }
        return sasl_peer_offer(p, out, out_len);
    }
    if (p->stage == 1) {
        cr_assert_eq(len, 0, "the answer to the AP-REP is not empty (%zu bytes)", len);
        return sasl_peer_offer(p, out, out_len);
    }
    /* The client's choice: layer, 3 bytes of size, the authorization id. */
    gss_buffer_desc sealed = { len, (void *)data }, plain = GSS_C_EMPTY_BUFFER;
    cr_assert(!GSS_ERROR(gss_unwrap(&minor, p->ctx, &sealed, &plain, NULL, NULL)));
    const uint8_t *c = plain.value;
    cr_assert_geq(plain.length, 4);
    cr_assert_eq(c[0], 0x01, "the client chose layers 0x%02x, not \"none\"", c[0]);
    snprintf(p->authzid, sizeof p->authzid, "%.*s", (int)plain.length - 4, (const char *)c + 4);
    gss_release_buffer(&minor, &plain);
    if (p->misbehave == EXTRA_CHALLENGE) {
        memcpy(out, "more", 4);
        *out_len = 4;
        return MOCK_AUTH_CHALLENGE;
    }
    return MOCK_AUTH_DONE;
}

#endif
