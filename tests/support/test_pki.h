/* A test PKI made at test time (no files, no network): identities (EC P-256 key and a
 * certificate, self-signed or signed by another identity) and their PEM text. For the
 * Criterion suites: failures are cr_assert. */
#ifndef PC_TEST_PKI_H
#define PC_TEST_PKI_H

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ident {
    EVP_PKEY *key;
    X509 *cert;
} ident_t;

static inline void pki_add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    cr_assert_not_null(ext);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

/* A certificate for cn, valid from now+from_s to now+to_s, signed by issuer (NULL:
 * self-signed). san: subjectAltName, or NULL. */
static inline ident_t make_ident(const char *cn, const ident_t *issuer, bool ca, long from_s,
                                 long to_s, const char *san)
{
    static long serial = 1;
    ident_t id;
    id.key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    cr_assert_not_null(id.key);
    id.cert = X509_new();
    X509_set_version(id.cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(id.cert), serial++);
    X509_gmtime_adj(X509_getm_notBefore(id.cert), from_s);
    X509_gmtime_adj(X509_getm_notAfter(id.cert), to_s);
    X509_NAME *name = X509_get_subject_name(id.cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509 *issuer_cert = issuer ? issuer->cert : id.cert;
    X509_set_issuer_name(id.cert, X509_get_subject_name(issuer_cert));
    X509_set_pubkey(id.cert, id.key);
    pki_add_ext(id.cert, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (ca)
        pki_add_ext(id.cert, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (san)
        pki_add_ext(id.cert, issuer_cert, NID_subject_alt_name, san);
    cr_assert(X509_sign(id.cert, issuer ? issuer->key : id.key, EVP_sha256()) > 0);
    return id;
}

static inline void free_ident(ident_t *id)
{
    X509_free(id->cert);
    EVP_PKEY_free(id->key);
}

static inline char *pki_bio_string(BIO *bio)
{
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    char *s = malloc((size_t)n + 1);
    memcpy(s, data, (size_t)n);
    s[n] = '\0';
    BIO_free(bio);
    return s;
}

/* PEM text (malloc'ed). */
static inline char *cert_pem(const ident_t *id)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, id->cert);
    return pki_bio_string(bio);
}

static inline char *key_pem(const ident_t *id)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, id->key, NULL, NULL, 0, NULL, NULL);
    return pki_bio_string(bio);
}

/* Write text (malloc'ed, freed here) to path the way a deployment tool replaces a file: a
 * new file renamed over the old one. */
static inline void pki_write_file(const char *path, char *text)
{
    char tmp[4096 + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    cr_assert_not_null(f, "%s", tmp);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(rename(tmp, path), 0);
    free(text);
}

#define DAY (24L * 3600)

#endif
