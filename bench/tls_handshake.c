/*
 * pulsarc-tls-handshake — what one full TLS handshake costs this machine's OpenSSL, both
 * ends in one thread over memory, with no network and no Pulsar protocol.
 *
 *   pulsarc-tls-handshake [-n HANDSHAKES] [-v 1.2|1.3] [-r]
 *
 * The server has a P-256 certificate for "localhost", issued by a CA the client trusts
 * (the key type of the test PKI and of the TLS fuzz target); the client verifies the chain
 * and the host name, as pulsarc does. Each handshake is a full one, unless -r: then each
 * resumes the session (the newest ticket) of the one before, as a client that caches
 * sessions would (pulsarc does not). A full handshake is the floor under every reconnect
 * to a TLS broker, and under each input of fuzz_tls_session, which makes one or two such
 * connections (docs/testing.md, "How long it takes").
 *
 * Prints: TLS_HANDSHAKE version=V resumed=0|1 handshakes=N us_per_handshake=U openssl="..."
 */
#include <getopt.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "pulsarc-tls-handshake: %s\n", what);
    exit(1);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A certificate for cn with key, signed by issuer_key under issuer (NULL: self-signed). */
static X509 *certify(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key)
{
    X509 *cert = X509_new();
    if (!cert)
        die("out of memory");
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), issuer ? 2 : 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(issuer ? issuer : cert));
    X509_set_pubkey(cert, key);
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer ? issuer : cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3,
                                              issuer ? NID_subject_alt_name : NID_basic_constraints,
                                              issuer ? "DNS:localhost" : "critical,CA:TRUE");
    if (!ext || !X509_add_ext(cert, ext, -1))
        die("cannot add an extension");
    X509_EXTENSION_free(ext);
    if (X509_sign(cert, issuer_key, EVP_sha256()) <= 0)
        die("cannot sign");
    return cert;
}

/* With -r: the newest session the server handed the client (tickets come after the
 * handshake), offered on the next connection. */
static bool resume;
static SSL_SESSION *newest;

static int on_new_session(SSL *ssl, SSL_SESSION *session)
{
    SSL_SESSION_free(newest);
    newest = session;
    return 1; /* the reference is ours */
}

/* Both ends take turns until both are done; false if either failed (or, with -r, did not
 * resume when it could). */
static bool handshake(SSL_CTX *client_ctx, SSL_CTX *server_ctx)
{
    SSL *client = SSL_new(client_ctx), *server = SSL_new(server_ctx);
    BIO *client_end, *server_end;
    if (!client || !server || !BIO_new_bio_pair(&client_end, 0, &server_end, 0))
        die("out of memory");
    SSL_set_bio(client, client_end, client_end);
    SSL_set_bio(server, server_end, server_end);
    SSL_set_connect_state(client);
    SSL_set_accept_state(server);
    SSL_set_tlsext_host_name(client, "localhost");
    SSL_set1_host(client, "localhost");
    bool offered = resume && newest && SSL_set_session(client, newest) == 1;
    bool client_done = false, server_done = false;
    for (int turn = 0; turn < 16 && !(client_done && server_done); turn++) {
        client_done = client_done || SSL_do_handshake(client) == 1;
        server_done = server_done || SSL_do_handshake(server) == 1;
    }
    bool ok = client_done && server_done && SSL_get_verify_result(client) == X509_V_OK &&
              (!offered || SSL_session_reused(client));
    if (resume) {
        /* The client reads the server's tickets; a connection that ends without a clean
         * shutdown would leave its session unresumable. */
        uint8_t byte;
        SSL_read(client, &byte, 1);
        SSL_set_shutdown(client, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        SSL_set_shutdown(server, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
    SSL_free(client);
    SSL_free(server);
    return ok;
}

int main(int argc, char **argv)
{
    long n = 500;
    int version = TLS1_3_VERSION;
    int opt;
    while ((opt = getopt(argc, argv, "n:v:r")) != -1) {
        if (opt == 'n' && (n = strtol(optarg, NULL, 10)) > 0)
            continue;
        if (opt == 'r') {
            resume = true;
            continue;
        }
        if (opt == 'v' && (!strcmp(optarg, "1.2") || !strcmp(optarg, "1.3"))) {
            version = !strcmp(optarg, "1.2") ? TLS1_2_VERSION : TLS1_3_VERSION;
            continue;
        }
        fprintf(stderr, "usage: pulsarc-tls-handshake [-n HANDSHAKES] [-v 1.2|1.3] [-r]\n");
        return 2;
    }
    EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    EVP_PKEY *server_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!ca_key || !server_key)
        die("cannot make a key");
    X509 *ca = certify("bench CA", ca_key, NULL, ca_key);
    X509 *server_cert = certify("localhost", server_key, ca, ca_key);

    SSL_CTX *server_ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX *client_ctx = SSL_CTX_new(TLS_client_method());
    if (!server_ctx || !client_ctx || SSL_CTX_use_certificate(server_ctx, server_cert) != 1 ||
        SSL_CTX_use_PrivateKey(server_ctx, server_key) != 1 ||
        SSL_CTX_set_max_proto_version(server_ctx, version) != 1 ||
        SSL_CTX_set_num_tickets(server_ctx, resume ? 1 : 0) != 1 ||
        X509_STORE_add_cert(SSL_CTX_get_cert_store(client_ctx), ca) != 1)
        die("cannot set up the TLS contexts");
    SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, NULL);
    if (resume) {
        SSL_CTX_set_session_cache_mode(client_ctx,
                                       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(client_ctx, on_new_session);
    } else {
        SSL_CTX_set_session_cache_mode(client_ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(server_ctx, SSL_OP_NO_TICKET);
    }

    if (!handshake(client_ctx, server_ctx)) /* warm-up, and proof that it works */
        die("the handshake fails");
    double t0 = mono_s();
    for (long i = 0; i < n; i++)
        if (!handshake(client_ctx, server_ctx))
            die("a handshake failed");
    double us = (mono_s() - t0) * 1e6 / (double)n;
    printf("TLS_HANDSHAKE version=%s resumed=%d handshakes=%ld us_per_handshake=%.0f "
           "openssl=\"%s\"\n",
           version == TLS1_2_VERSION ? "1.2" : "1.3", resume, n, us,
           OpenSSL_version(OPENSSL_VERSION));
    SSL_SESSION_free(newest);

    SSL_CTX_free(client_ctx);
    SSL_CTX_free(server_ctx);
    X509_free(server_cert);
    X509_free(ca);
    EVP_PKEY_free(server_key);
    EVP_PKEY_free(ca_key);
    return 0;
}
