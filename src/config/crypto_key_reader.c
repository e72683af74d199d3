/* Where a producer's public keys come from: the ready-made readers (a PEM file, read
 * again each time it is asked, or PEM text in memory, per key name) and the
 * application's key reader callback; the public pulsarc_crypto_key_t it fills; and the
 * adapter that hands all of it to the producer layer as a pc_key_fetch_fn. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "codec/crypto.h"
#include "common/error.h"
#include "common/small_file.h"

/* A PEM public key is a few kilobytes; anything far larger is not one. */
#define MAX_KEY_FILE (1024 * 1024)

/* The public key of one key name: a file (path) or PEM text (pem). */
typedef struct pc_key_source {
    char *name;
    char *path;
    char *pem;
} pc_key_source_t;

/* What a key reader callback fills. */
struct pulsarc_crypto_key {
    pc_key_material_t *m;
    bool pem_set;
};

pulsarc_result pulsarc_crypto_key_set_pem(pulsarc_crypto_key_t *key, const void *pem, size_t len)
{
    if (!key || !pem || len == 0)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "key and a non-empty PEM are required");
    key->m->pem.len = 0;
    if (pc_buf_append(&key->m->pem, pem, len) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    key->pem_set = true;
    return PULSARC_OK;
}

pulsarc_result pulsarc_crypto_key_add_metadata(pulsarc_crypto_key_t *key, const char *name,
                                               const char *value)
{
    if (!key || !name || !value)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "key, name and value must not be NULL");
    if (pc_key_material_add_meta(key->m, name, value) != 0)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return PULSARC_OK;
}

static void source_clear(pc_key_source_t *s)
{
    free(s->name);
    free(s->path);
    free(s->pem);
}

void pc_producer_config_clear_keys(pulsarc_producer_config_t *c)
{
    for (size_t i = 0; i < c->n_key_sources; i++)
        source_clear(&c->key_sources[i]);
    free(c->key_sources);
    c->key_sources = NULL;
    c->n_key_sources = 0;
}

static char *dup_or_null(const char *s, bool *failed)
{
    char *d = s ? strdup(s) : NULL;
    *failed |= s && !d;
    return d;
}

int pc_producer_config_copy_keys(pulsarc_producer_config_t *dst,
                                 const pulsarc_producer_config_t *src)
{
    dst->key_sources = NULL;
    dst->n_key_sources = 0;
    if (src->n_key_sources == 0)
        return 0;
    pc_key_source_t *s = calloc(src->n_key_sources, sizeof *s);
    if (!s)
        return -1;
    bool failed = false;
    for (size_t i = 0; i < src->n_key_sources; i++) {
        s[i].name = dup_or_null(src->key_sources[i].name, &failed);
        s[i].path = dup_or_null(src->key_sources[i].path, &failed);
        s[i].pem = dup_or_null(src->key_sources[i].pem, &failed);
    }
    dst->key_sources = s;
    dst->n_key_sources = src->n_key_sources;
    return failed ? -1 : 0;
}

/* Is name in the comma-separated list? */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name), len;
    const char *item;
    while (list && pc_key_names_next(&list, &item, &len))
        if (len == n && memcmp(item, name, n) == 0)
            return true;
    return false;
}

/* Record where name's key comes from (replacing an earlier source of that name) and add
 * name to encryptionKeys. Takes path or pem. */
static pulsarc_result add_source(pulsarc_producer_config_t *c, const char *name, char *path,
                                 char *pem)
{
    pc_key_source_t *s = NULL;
    for (size_t i = 0; i < c->n_key_sources; i++)
        if (!strcmp(c->key_sources[i].name, name))
            s = &c->key_sources[i];
    if (!s) {
        pc_key_source_t *grown = realloc(c->key_sources, (c->n_key_sources + 1) * sizeof *grown);
        if (!grown)
            goto oom;
        c->key_sources = grown;
        char *copy = strdup(name);
        if (!copy)
            goto oom;
        s = &c->key_sources[c->n_key_sources++];
        *s = (pc_key_source_t){ .name = copy };
    }
    if (!listed(c->encryption_keys, name)) {
        size_t old = c->encryption_keys ? strlen(c->encryption_keys) : 0;
        char *names = malloc(old + strlen(name) + 2);
        if (!names)
            goto oom;
        sprintf(names, "%s%s%s", old ? c->encryption_keys : "", old ? "," : "", name);
        free(c->encryption_keys);
        c->encryption_keys = names;
    }
    free(s->path);
    free(s->pem);
    s->path = path;
    s->pem = pem;
    return PULSARC_OK;
oom:
    free(path);
    free(pem);
    return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
}

static pulsarc_result check_name(const pulsarc_producer_config_t *conf, const char *name,
                                 const void *key)
{
    if (!conf || !name || !key)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "conf, name and key must not be NULL");
    if (!*name || strchr(name, ',') || name[0] == ' ' || name[strlen(name) - 1] == ' ')
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "encryption key name \"%s\": must be non-empty, without ',' and without "
                       "blanks at either end",
                       name);
    return PULSARC_OK;
}

pulsarc_result pulsarc_producer_config_add_encryption_key_file(pulsarc_producer_config_t *conf,
                                                               const char *name,
                                                               const char *pem_path)
{
    pulsarc_result r = check_name(conf, name, pem_path);
    if (r != PULSARC_OK)
        return r;
    if (!*pem_path)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "encryption key \"%s\": empty file path", name);
    char *path = strdup(pem_path);
    if (!path)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return add_source(conf, name, path, NULL);
}

pulsarc_result pulsarc_producer_config_add_encryption_key_pem(pulsarc_producer_config_t *conf,
                                                              const char *name, const char *pem)
{
    pulsarc_result r = check_name(conf, name, pem);
    if (r != PULSARC_OK)
        return r;
    /* Check it now, so a bad key is reported by the call that gave it. */
    pc_public_key_t *key;
    r = pc_public_key_parse((const uint8_t *)pem, strlen(pem), name, &key);
    pc_public_key_free(key);
    if (r != PULSARC_OK) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "%s", detail);
    }
    char *copy = strdup(pem);
    if (!copy)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    return add_source(conf, name, NULL, copy);
}

pulsarc_result pulsarc_producer_config_set_crypto_key_reader(pulsarc_producer_config_t *conf,
                                                             pulsarc_crypto_key_reader_cb cb,
                                                             void *ctx)
{
    if (!conf)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "conf must not be NULL");
    conf->key_reader = cb;
    conf->key_reader_ctx = cb ? ctx : NULL;
    return PULSARC_OK;
}

static pulsarc_result read_key_file(const char *name, const char *path, pc_buf_t *out)
{
    char *text;
    size_t n;
    int err;
    switch (pc_read_small_file(path, MAX_KEY_FILE, &text, &n, &err)) {
    case PC_SMALL_FILE_OK:
        break;
    case PC_SMALL_FILE_CANNOT_OPEN:
        return pc_fail(PULSARC_ERR_CRYPTO, "cannot read the public key file %s of key \"%s\": %s",
                       path, name, strerror(err));
    case PC_SMALL_FILE_TOO_LARGE:
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "the public key file %s of key \"%s\" is larger "
                       "than %d bytes",
                       path, name, MAX_KEY_FILE);
    case PC_SMALL_FILE_NO_MEMORY:
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    default:
        return pc_fail(PULSARC_ERR_CRYPTO, "cannot read the public key file %s of key \"%s\"", path,
                       name);
    }
    int failed = pc_buf_append(out, text, n);
    free(text); /* a public key: nothing to wipe */
    return failed ? pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory") : PULSARC_OK;
}

pulsarc_result pc_producer_config_fetch_key(void *ctx, const char *name, pc_key_material_t *out)
{
    const pulsarc_producer_config_t *c = ctx;
    for (size_t i = 0; i < c->n_key_sources; i++) {
        const pc_key_source_t *s = &c->key_sources[i];
        if (strcmp(s->name, name) != 0)
            continue;
        if (s->path)
            return read_key_file(name, s->path, &out->pem);
        if (pc_buf_append(&out->pem, s->pem, strlen(s->pem)) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        return PULSARC_OK;
    }
    if (!c->key_reader)
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "no public key for key \"%s\": add one with "
                       "pulsarc_producer_config_add_encryption_key_file or _pem, or set a key "
                       "reader",
                       name);
    pulsarc_crypto_key_t key = { .m = out };
    pulsarc_result r = c->key_reader(name, &key, c->key_reader_ctx);
    if (r != PULSARC_OK)
        return r;
    if (!key.pem_set)
        return pc_fail(PULSARC_ERR_CRYPTO,
                       "the key reader gave no public key for key \"%s\" (it must call "
                       "pulsarc_crypto_key_set_pem)",
                       name);
    return PULSARC_OK;
}
