/* An in-process OpenSSL server for the TLS suites, through memory only: a pulsarc
 * session (net/tls.h) and a server SSL handing each other their bytes. For the Criterion
 * suites: failures are cr_assert. */
#ifndef PC_TLS_PEER_H
#define PC_TLS_PEER_H

#include <openssl/ssl.h>
#include <stdlib.h>

#include "net/tls.h"
#include "test_pki.h"

typedef struct server_opts {
    const ident_t *id;
    const ident_t *client_ca; /* require a client certificate issued by it; NULL: none */
    int max_version;          /* 0: OpenSSL's default */
} server_opts_t;

static inline SSL_CTX *new_server_ctx(server_opts_t o)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    cr_assert(SSL_CTX_use_certificate(ctx, o.id->cert) == 1);
    cr_assert(SSL_CTX_use_PrivateKey(ctx, o.id->key) == 1);
    if (o.client_ca) {
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), o.client_ca->cert);
        /* OpenSSL resumes a verified client's session only within a named context. */
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"pulsarc-test", 12);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    if (o.max_version) {
        SSL_CTX_set_security_level(ctx, 0); /* let the old protocol be offered at all */
        SSL_CTX_set_min_proto_version(ctx, 0);
        SSL_CTX_set_max_proto_version(ctx, o.max_version);
    }
    return ctx;
}

/* A server connection on ctx: connections on one context share its ticket keys and
 * session cache, as a broker's do, so they can resume each other's sessions. */
static inline SSL *server_on(SSL_CTX *ctx)
{
    SSL *ssl = SSL_new(ctx);
    SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    BIO_set_mem_eof_return(SSL_get_rbio(ssl), -1);
    SSL_set_accept_state(ssl);
    return ssl;
}

static inline SSL *new_server(server_opts_t o)
{
    SSL_CTX *ctx = new_server_ctx(o);
    SSL *ssl = server_on(ctx);
    SSL_CTX_free(ctx);
    return ssl;
}

static inline void client_to_server(pc_tls_session_t *cl, SSL *srv)
{
    size_t n;
    uint8_t *out = pc_tls_take_output(cl, &n);
    if (out)
        BIO_write(SSL_get_rbio(srv), out, (int)n);
    free(out);
}

static inline void server_to_client(SSL *srv, pc_tls_session_t *cl)
{
    uint8_t buf[16384];
    int n;
    while ((n = BIO_read(SSL_get_wbio(srv), buf, sizeof buf)) > 0)
        cr_assert_eq(pc_tls_feed(cl, buf, (size_t)n), 0);
}

/* Run both ends until the client is done or failed; then read once, since a TLS 1.3
 * server judges the client's certificate after the client has finished. */
static inline pulsarc_result handshake(pc_tls_session_t *cl, SSL *srv)
{
    pc_tls_status_t st = PC_TLS_WANT_MORE;
    for (int round = 0; round < 10 && st == PC_TLS_WANT_MORE; round++) {
        st = pc_tls_handshake(cl);
        client_to_server(cl, srv);
        SSL_do_handshake(srv);
        server_to_client(srv, cl);
    }
    if (st == PC_TLS_DONE) {
        uint8_t buf[64];
        st = pc_tls_read(cl, buf, sizeof buf) < 0 ? PC_TLS_FAILED : PC_TLS_DONE;
    }
    cr_assert_neq(st, PC_TLS_WANT_MORE, "handshake did not finish");
    return st == PC_TLS_DONE ? PULSARC_OK : pc_tls_result(cl);
}

#endif
