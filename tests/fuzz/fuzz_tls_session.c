/* libFuzzer target: the broker session of fuzz_broker_session, over TLS.
 *
 * The client connects with a pulsar+ssl:// service URL and trusts a CA made once per
 * process; the fake broker wraps each in-memory connection in an OpenSSL server session
 * (memory BIOs, certificate for "localhost") and plays the same session program through
 * it, so every frame either side writes is encrypted. The input also damages the TLS
 * layer (format: tls_session_format.h): faults in the broker's handshake (a cut flight,
 * garbage, a silent hang-up), garbage and truncated records, a close_notify in the middle
 * of a frame, renegotiation or key updates, and tiny records.
 *
 * Checked, beyond what broker_session.c checks (no crash, no leak, every frame the client
 * writes parses once decrypted, one callback per accepted message): everything the client
 * writes is valid TLS, unless the broker broke the stream first. */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

#include "broker_session.h"
#include "fuzz_check.h"
#include "tls_session_format.h"

/* The broker lookups name (fake_broker.h): lookups and the producer share a connection. */
#define SERVICE_URL FB_BROKER_URL_TLS
#define DAY (24L * 3600)

#define CHECK(cond, ...) FUZZ_CHECK("fuzz_tls_session", cond, __VA_ARGS__)

/* ---- test PKI, made once per process ------------------------------------------------ */

typedef struct ident {
    EVP_PKEY *key;
    X509 *cert;
} ident_t;

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    CHECK(ext, "cannot make extension %d", nid);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

/* A certificate for cn valid for a month, signed by issuer (NULL: a self-signed CA). */
static ident_t make_ident(const char *cn, const ident_t *issuer, const char *san)
{
    static long serial = 1;
    ident_t id;
    id.key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    CHECK(id.key, "cannot make a key");
    id.cert = X509_new();
    X509_set_version(id.cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(id.cert), serial++);
    X509_gmtime_adj(X509_getm_notBefore(id.cert), -DAY);
    X509_gmtime_adj(X509_getm_notAfter(id.cert), 30 * DAY);
    X509_NAME *name = X509_get_subject_name(id.cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509 *issuer_cert = issuer ? issuer->cert : id.cert;
    X509_set_issuer_name(id.cert, X509_get_subject_name(issuer_cert));
    X509_set_pubkey(id.cert, id.key);
    add_ext(id.cert, issuer_cert, NID_basic_constraints, issuer ? "CA:FALSE" : "critical,CA:TRUE");
    if (!issuer)
        add_ext(id.cert, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (san)
        add_ext(id.cert, issuer_cert, NID_subject_alt_name, san);
    CHECK(X509_sign(id.cert, issuer ? issuer->key : id.key, EVP_sha256()) > 0, "cannot sign");
    return id;
}

static char *cert_pem(const ident_t *id)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, id->cert);
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *s = malloc((size_t)n + 1);
    CHECK(s, "out of memory");
    memcpy(s, data, (size_t)n);
    s[n] = '\0';
    BIO_free(bio);
    return s;
}

/* Kept for the life of the process: the trust PEM and the broker's four contexts. A
 * context's ticket keys and session ids outlive an input, but the client's cache does not
 * (each input's client has its own), so an input only resumes sessions it made itself. */
static char *ca_pem;
static SSL_CTX *server_ctx[2][2]; /* [TLS 1.2 only][no resumption] */

static SSL_CTX *new_server_ctx(const ident_t *id, int max_version, bool resumption)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    CHECK(ctx && SSL_CTX_use_certificate(ctx, id->cert) == 1 &&
              SSL_CTX_use_PrivateKey(ctx, id->key) == 1 &&
              SSL_CTX_set_max_proto_version(ctx, max_version) == 1 &&
              SSL_CTX_set_num_tickets(ctx, resumption ? 2 : 0) == 1,
          "cannot make the broker's TLS context");
    if (!resumption) {
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    return ctx;
}

static void make_pki(void)
{
    ident_t ca = make_ident("pulsarc fuzz CA", NULL, NULL);
    ident_t server = make_ident("localhost", &ca, "DNS:localhost");
    ca_pem = cert_pem(&ca);
    for (int no_resumption = 0; no_resumption < 2; no_resumption++) {
        server_ctx[0][no_resumption] = new_server_ctx(&server, TLS1_3_VERSION, !no_resumption);
        server_ctx[1][no_resumption] = new_server_ctx(&server, TLS1_2_VERSION, !no_resumption);
    }
    /* The contexts hold their own references. */
    X509_free(ca.cert);
    EVP_PKEY_free(ca.key);
    X509_free(server.cert);
    EVP_PKEY_free(server.key);
}

/* ---- the broker's TLS layer (fb_transport_t) ---------------------------------------- */

typedef struct tls_conn {
    SSL *ssl;          /* NULL until the client's first bytes */
    bool established;  /* the first handshake finished */
    bool damaged;      /* the broker broke the TLS stream or stirred it (renegotiation):
                             the client may then fail in ways we do not judge */
    ts_fault_t fault;  /* the handshake fault this connection gets */
    size_t record_max; /* plaintext per record; 0: as much as fits */
} tls_conn_t;

typedef struct tls_broker {
    SSL_CTX *ctx;
    bool tls12;
    ts_fault_t fault;
    bool fault_every;
    size_t fault_len;
    int sessions; /* made so far: the first one may be the only faulty one */
    tls_conn_t conns[FB_MAX_CONNS];
} tls_broker_t;

/* Whatever ciphertext the session made goes onto the socket, in order. */
static void flush_wire(fake_broker_t *fb, int i, SSL *ssl)
{
    BIO *out = SSL_get_wbio(ssl);
    char *data;
    long n = BIO_get_mem_data(out, &data);
    if (n > 0)
        fb_write_wire(fb, i, data, (size_t)n);
    (void)BIO_reset(out);
}

static tls_conn_t *session_for(tls_broker_t *tb, int i)
{
    tls_conn_t *t = &tb->conns[i];
    if (t->ssl)
        return t;
    memset(t, 0, sizeof *t);
    t->ssl = SSL_new(tb->ctx);
    BIO *in = BIO_new(BIO_s_mem()), *out = BIO_new(BIO_s_mem());
    CHECK(t->ssl && in && out, "out of memory for a TLS session");
    BIO_set_mem_eof_return(in, -1);
    SSL_set_bio(t->ssl, in, out);
    SSL_set_accept_state(t->ssl);
    if (tb->fault_every || tb->sessions == 0)
        t->fault = tb->fault;
    tb->sessions++;
    return t;
}

/* What the client writes is TLS we can read, or an alert: OpenSSL reports a received
 * alert as reason SSL_AD_REASON_OFFSET + its code. Anything else is a client bug, unless
 * the broker broke the stream first. */
static void check_client_tls(const tls_conn_t *t, int ssl_error)
{
    unsigned long e = ERR_peek_error();
    bool alert = ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET;
    if (ssl_error == SSL_ERROR_SSL && !alert && !t->damaged) {
        char why[256];
        ERR_error_string_n(e, why, sizeof why);
        CHECK(false, "the client wrote TLS that does not parse: %s", why);
    }
    ERR_clear_error();
}

/* The broker's side of the handshake, with the input's fault. True once established. */
static bool advance_handshake(tls_broker_t *tb, fake_broker_t *fb, int i, tls_conn_t *t)
{
    if (t->fault == TS_FAULT_SILENT) {
        fb_hang_up(fb, i);
        return false;
    }
    if (t->fault == TS_FAULT_GARBAGE) {
        /* A handshake record header announcing what follows, then noise. */
        uint8_t junk[5 + 8 * 255] = { 0x16, 0x03, 0x03 };
        size_t n = tb->fault_len;
        junk[3] = (uint8_t)(n >> 8);
        junk[4] = (uint8_t)n;
        for (size_t k = 5; k < 5 + n; k++)
            junk[k] = (uint8_t)(k * 37 + 11);
        fb_write_wire(fb, i, junk, 5 + n);
        t->fault = TS_FAULT_NONE;
        t->damaged = true;
        return false;
    }
    int rc = SSL_do_handshake(t->ssl);
    if (t->fault == TS_FAULT_CUT) {
        BIO *out = SSL_get_wbio(t->ssl);
        char *data;
        long n = BIO_get_mem_data(out, &data);
        fb_write_wire(fb, i, data, (size_t)n < tb->fault_len ? (size_t)n : tb->fault_len);
        fb_hang_up(fb, i);
        return false;
    }
    flush_wire(fb, i, t->ssl);
    if (rc == 1) {
        t->established = true;
        return true;
    }
    int err = SSL_get_error(t->ssl, rc);
    if (err == SSL_ERROR_WANT_READ)
        return false;
    check_client_tls(t, err);
    fb_hang_up(fb, i);
    return false;
}

/* The client's TLS runs on this thread too (lockstep.h), so its errors may still be on
 * the thread's OpenSSL error queue: each of the broker's own steps starts from an empty
 * one, or it would judge the client's errors as its own. */
static void tls_read(void *ctx, fake_broker_t *fb, int i, const uint8_t *wire, size_t len)
{
    tls_broker_t *tb = ctx;
    ERR_clear_error();
    tls_conn_t *t = session_for(tb, i);
    CHECK(BIO_write(SSL_get_rbio(t->ssl), wire, (int)len) == (int)len, "out of memory");
    if (!t->established && !advance_handshake(tb, fb, i, t))
        return;
    uint8_t buf[16384];
    for (;;) {
        int n = SSL_read(t->ssl, buf, sizeof buf);
        if (n > 0) {
            fb_deliver(fb, i, buf, (size_t)n);
            continue;
        }
        int err = SSL_get_error(t->ssl, n);
        flush_wire(fb, i, t->ssl); /* a renegotiation's next step, say */
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
            return;
        check_client_tls(t, err);
        fb_hang_up(fb, i);
        return;
    }
}

static void tls_write(void *ctx, fake_broker_t *fb, int i, const uint8_t *data, size_t len)
{
    tls_conn_t *t = &((tls_broker_t *)ctx)->conns[i];
    if (!t->ssl || !t->established)
        return;
    ERR_clear_error();
    size_t max = t->record_max ? t->record_max : len;
    while (len > 0) {
        int n = SSL_write(t->ssl, data, (int)(len < max ? len : max));
        if (n <= 0) {
            ERR_clear_error();
            flush_wire(fb, i, t->ssl);
            return;
        }
        data += n;
        len -= (size_t)n;
    }
    flush_wire(fb, i, t->ssl);
}

static void tls_closed(void *ctx, fake_broker_t *fb, int i)
{
    tls_conn_t *t = &((tls_broker_t *)ctx)->conns[i];
    SSL_free(t->ssl);
    memset(t, 0, sizeof *t);
}

static const fb_transport_t tls_transport = { tls_write, tls_read, tls_closed };

/* ---- operations on the TLS layer ---------------------------------------------------- */

static void ping_frame(pc_buf_t *b)
{
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__BaseCommand cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    pc_buf_init(b);
    CHECK(pc_frame_encode_command(b, &cmd) == 0, "out of memory");
}

/* An encrypted PING of which only the first cut % size bytes reach the client. */
static void truncated_record(fake_broker_t *fb, int i, tls_conn_t *t, uint8_t cut)
{
    pc_buf_t b;
    ping_frame(&b);
    if (SSL_write(t->ssl, b.data, (int)b.len) > 0) {
        BIO *out = SSL_get_wbio(t->ssl);
        char *data;
        long n = BIO_get_mem_data(out, &data);
        if (n > 0)
            fb_write_wire(fb, i, data, cut % (size_t)n);
        (void)BIO_reset(out);
    }
    ERR_clear_error();
    pc_buf_free(&b);
}

/* Part of a PING frame, properly encrypted, then the end of the TLS session. */
static void close_notify_mid_frame(fake_broker_t *fb, int i, tls_conn_t *t, uint8_t k)
{
    pc_buf_t b;
    ping_frame(&b);
    size_t part = k % b.len;
    if (part > 0)
        (void)SSL_write(t->ssl, b.data, (int)part);
    (void)SSL_shutdown(t->ssl);
    ERR_clear_error();
    flush_wire(fb, i, t->ssl);
    pc_buf_free(&b);
    if (k & 0x80)
        fb_hang_up(fb, i);
}

static void renegotiate(tls_broker_t *tb, fake_broker_t *fb, int i, tls_conn_t *t, uint8_t flag)
{
    /* pulsarc refuses renegotiation (SSL_OP_NO_RENEGOTIATION): an alert back is fine. */
    t->damaged = true;
    if (tb->tls12)
        (void)SSL_renegotiate(t->ssl);
    else
        (void)SSL_key_update(t->ssl,
                             flag & 1 ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED);
    (void)SSL_do_handshake(t->ssl);
    ERR_clear_error();
    flush_wire(fb, i, t->ssl);
}

static void run_tls_op(session_t *s, tls_broker_t *tb, ts_op_t op, input_t *in)
{
    ERR_clear_error();
    int i = bs_current(s);
    uint8_t arg = op == TS_OP_GARBAGE ? 0 : bs_next_byte(in);
    tls_conn_t *t = i >= 0 ? &tb->conns[i] : NULL;
    if (op == TS_OP_GARBAGE) {
        size_t len = bs_next_byte(in);
        len = len < in->n ? len : in->n;
        if (t) {
            fb_write_wire(s->fb, i, in->p, len);
            t->damaged = true;
        }
        in->p += len;
        in->n -= len;
        bs_settle(s);
        return;
    }
    if (!t || !t->established)
        return;
    switch (op) {
    case TS_OP_TRUNCATE:
        truncated_record(s->fb, i, t, arg);
        t->damaged = true;
        break;
    case TS_OP_CLOSE_NOTIFY:
        close_notify_mid_frame(s->fb, i, t, arg);
        break;
    case TS_OP_RENEGOTIATE:
        renegotiate(tb, s->fb, i, t, arg);
        break;
    default: /* TS_OP_RECORDS */
        t->record_max = arg % 17u;
        return;
    }
    /* The client handles what the operation wrote before the next one. */
    bs_settle(s);
}

/* ---- the target --------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The broker's TLS layer of the current input: static, as the session. */
static tls_broker_t tb;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    make_pki();
    const bs_options_t opt = { .service_url = SERVICE_URL,
                               .trust_pem = ca_pem,
                               .transport = &tls_transport,
                               .transport_ctx = &tb };
    bs_init(&opt);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Static: the session is large, and one runs at a time. */
    static session_t s;
    input_t in = { data, size };
    uint8_t t0 = bs_next_byte(&in), t1 = bs_next_byte(&in);
    memset(&tb, 0, sizeof tb);
    tb.tls12 = t0 & 1;
    tb.ctx = server_ctx[tb.tls12][(t0 >> 4) & 1];
    tb.fault = (ts_fault_t)((t0 >> 1) & 3);
    tb.fault_every = (t0 >> 3) & 1;
    tb.fault_len = (size_t)t1 * 8;
    if (bs_start(&s, &in)) {
        while (bs_running(&s, &in)) {
            unsigned op = bs_next_byte(&in) % (BS_OP_COUNT + TS_OP_COUNT);
            if (op < BS_OP_COUNT)
                bs_run_op(&s, (bs_op_t)op, &in);
            else
                run_tls_op(&s, &tb, (ts_op_t)(op - BS_OP_COUNT), &in);
        }
    }
    /* Frees every connection's TLS session through the transport. */
    bs_finish(&s);
    return 0;
}
