#include "producer/encryption.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/error.h"

/* A failed rotation or re-read is tried again after this long, not at every entry. */
#define RETRY_MS 1000
/* Warnings about keys that cannot be loaded: at most one per this long. */
#define WARN_EVERY_MS 10000

struct pc_encryptor {
    pc_enc_settings_t set;
    char **names;
    size_t n_names;
    const pc_logger_t *log;
    char *topic;
    pc_data_key_t *current;  /* NULL until the keys load */
    pc_key_material_t *mats; /* what current was built from, one per name */
    int (*make_iv)(uint8_t iv[PC_AES_IV_LEN]);
    uint64_t used;    /* IVs drawn for current (pc_data_key_iv) */
    uint64_t max_ivs; /* used at which current rotates */
    uint64_t rotate_at, check_at, retry_at, warned_at;
    uint64_t unwarned; /* failures since the last warning */
};

void pc_key_material_init(pc_key_material_t *m)
{
    memset(m, 0, sizeof *m);
    pc_buf_init(&m->pem);
}

void pc_key_material_clear(pc_key_material_t *m)
{
    for (size_t i = 0; i < 2 * m->n_meta; i++)
        free(m->meta[i]);
    free(m->meta);
    pc_buf_free(&m->pem);
    pc_key_material_init(m);
}

int pc_key_material_add_meta(pc_key_material_t *m, const char *name, const char *value)
{
    char **grown = realloc(m->meta, (2 * m->n_meta + 2) * sizeof *grown);
    if (!grown)
        return -1;
    m->meta = grown;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return -1;
    }
    m->meta[2 * m->n_meta] = n;
    m->meta[2 * m->n_meta + 1] = v;
    m->n_meta++;
    return 0;
}

static bool material_equal(const pc_key_material_t *a, const pc_key_material_t *b)
{
    if (a->pem.len != b->pem.len || memcmp(a->pem.data, b->pem.data, a->pem.len) != 0 ||
        a->n_meta != b->n_meta)
        return false;
    for (size_t i = 0; i < 2 * a->n_meta; i++)
        if (strcmp(a->meta[i], b->meta[i]) != 0)
            return false;
    return true;
}

static void materials_free(pc_key_material_t *mats, size_t n)
{
    for (size_t i = 0; mats && i < n; i++)
        pc_key_material_clear(&mats[i]);
    free(mats);
}

static int random_iv(uint8_t iv[PC_AES_IV_LEN])
{
    return pc_crypto_random(iv, PC_AES_IV_LEN);
}

/* ----- data keys ----------------------------------------------------------------- */

static void entry_free(Pulsar__Proto__EncryptionKeys *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n_metadata; i++) {
        free(k->metadata[i]->key);
        free(k->metadata[i]->value);
        free(k->metadata[i]);
    }
    free(k->metadata);
    free(k->key);
    free(k->value.data);
    free(k);
}

static void data_key_free(pc_data_key_t *dk)
{
    if (!dk)
        return;
    for (size_t i = 0; i < dk->n_entries; i++)
        entry_free(dk->entries[i]);
    free(dk->entries);
    OPENSSL_cleanse(dk->key, sizeof dk->key);
    free(dk);
}

/* One encryption_keys entry: name, the data key wrapped with the name's public key, and
 * the reader's metadata. */
static pulsarc_result entry_new(const char *name, const pc_key_material_t *m,
                                const uint8_t key[PC_AES_KEY_LEN],
                                Pulsar__Proto__EncryptionKeys **out)
{
    pc_public_key_t *pub;
    pulsarc_result r = pc_public_key_parse(m->pem.data, m->pem.len, name, &pub);
    if (r != PULSARC_OK)
        return r;
    Pulsar__Proto__EncryptionKeys *k = calloc(1, sizeof *k);
    pc_buf_t wrapped;
    pc_buf_init(&wrapped);
    int wrap = pc_data_key_wrap(pub, key, PC_AES_KEY_LEN, &wrapped);
    pc_public_key_free(pub);
    if (!k || wrap != 0) {
        free(k);
        pc_buf_free(&wrapped);
        return pc_fail(PULSARC_ERR_CRYPTO, "cannot wrap the data key with public key \"%s\"", name);
    }
    pulsar__proto__encryption_keys__init(k);
    k->value.data = pc_buf_detach(&wrapped, &k->value.len);
    k->key = strdup(name);
    k->metadata = calloc(m->n_meta ? m->n_meta : 1, sizeof *k->metadata);
    bool ok = k->key && k->metadata;
    for (size_t i = 0; ok && i < m->n_meta; i++) {
        Pulsar__Proto__KeyValue *kv = malloc(sizeof *kv);
        if (!kv)
            break;
        pulsar__proto__key_value__init(kv);
        k->metadata[k->n_metadata++] = kv;
        kv->key = strdup(m->meta[2 * i]);
        kv->value = strdup(m->meta[2 * i + 1]);
        ok = kv->key && kv->value;
    }
    if (!ok || k->n_metadata != m->n_meta) {
        entry_free(k);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    *out = k;
    return PULSARC_OK;
}

/* A data key (key, or a random one when NULL) wrapped for every name. */
static pulsarc_result data_key_new(const pc_encryptor_t *e, const pc_key_material_t *mats,
                                   const uint8_t *key, pc_data_key_t **out)
{
    pc_data_key_t *dk = calloc(1, sizeof *dk);
    if (!dk || !(dk->entries = calloc(e->n_names, sizeof *dk->entries))) {
        free(dk);
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    }
    dk->make_iv = e->make_iv;
    dk->ivs_used = (uint64_t *)&e->used;
    if (key)
        memcpy(dk->key, key, PC_AES_KEY_LEN);
    else if (pc_crypto_random(dk->key, PC_AES_KEY_LEN) != 0) {
        data_key_free(dk);
        return pc_fail(PULSARC_ERR_CRYPTO, "no random bytes for a data key");
    }
    for (size_t i = 0; i < e->n_names; i++) {
        pulsarc_result r = entry_new(e->names[i], &mats[i], dk->key, &dk->entries[i]);
        if (r != PULSARC_OK) {
            data_key_free(dk);
            return r;
        }
        dk->n_entries++;
    }
    *out = dk;
    return PULSARC_OK;
}

/* ----- the encryptor ------------------------------------------------------------- */

/* Ask the reader for every name's material. */
static pulsarc_result fetch_all(const pc_encryptor_t *e, pc_key_material_t **out)
{
    pc_key_material_t *mats = calloc(e->n_names, sizeof *mats);
    if (!mats)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < e->n_names; i++)
        pc_key_material_init(&mats[i]);
    for (size_t i = 0; i < e->n_names; i++) {
        pc_set_detail("");
        pulsarc_result r = e->set.fetch(e->set.fetch_ctx, e->names[i], &mats[i]);
        if (r != PULSARC_OK) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
            materials_free(mats, e->n_names);
            if (r == PULSARC_ERR_CRYPTO && detail[0])
                return pc_fail(r, "%s", detail);
            return pc_fail(PULSARC_ERR_CRYPTO, "the key reader failed for key \"%s\" (%s)%s%s",
                           e->names[i], pulsarc_result_name(r), detail[0] ? ": " : "", detail);
        }
    }
    *out = mats;
    return PULSARC_OK;
}

static void install(pc_encryptor_t *e, pc_data_key_t *dk, pc_key_material_t *mats, uint64_t now)
{
    data_key_free(e->current);
    materials_free(e->mats, e->n_names);
    e->current = dk;
    e->mats = mats;
    e->used = 0;
    e->rotate_at = e->set.rotation_ms ? now + e->set.rotation_ms : UINT64_MAX;
    e->check_at = e->set.check_ms ? now + e->set.check_ms : UINT64_MAX;
    e->retry_at = 0;
}

/* A new data key from freshly read keys (or key, for tests). */
static pulsarc_result load(pc_encryptor_t *e, uint64_t now, const uint8_t *key)
{
    pc_key_material_t *mats;
    pulsarc_result r = fetch_all(e, &mats);
    if (r != PULSARC_OK)
        return r;
    pc_data_key_t *dk;
    r = data_key_new(e, mats, key, &dk);
    if (r != PULSARC_OK) {
        materials_free(mats, e->n_names);
        return r;
    }
    install(e, dk, mats, now);
    return PULSARC_OK;
}

static void warn_limited(pc_encryptor_t *e, uint64_t now, const char *what, const char *detail)
{
    e->unwarned++;
    if (e->warned_at && now < e->warned_at + WARN_EVERY_MS)
        return;
    PC_WARN(e->log, "%s: %s: %s (%llu such failure(s) since the last warning)", e->topic, what,
            detail, (unsigned long long)e->unwarned);
    e->warned_at = now ? now : 1;
    e->unwarned = 0;
}

static bool worn_out(const pc_encryptor_t *e)
{
    return e->used >= e->max_ivs;
}

/* Rotation is due (by time or by use), or the keys are to be read again: a new data key
 * when due or when a key changed; on failure the current key stays. */
static void refresh(pc_encryptor_t *e, uint64_t now)
{
    pc_key_material_t *mats;
    pulsarc_result r = fetch_all(e, &mats);
    if (r == PULSARC_OK) {
        bool changed = false;
        for (size_t i = 0; i < e->n_names; i++)
            changed |= !material_equal(&mats[i], &e->mats[i]);
        if (!changed && now < e->rotate_at && !worn_out(e)) {
            materials_free(mats, e->n_names);
            e->check_at = e->set.check_ms ? now + e->set.check_ms : UINT64_MAX;
            return;
        }
        pc_data_key_t *dk;
        r = data_key_new(e, mats, NULL, &dk);
        if (r == PULSARC_OK) {
            const char *why = changed               ? "a public key changed"
                              : now >= e->rotate_at ? "rotation period"
                                                    : "entries per key";
            install(e, dk, mats, now);
            PC_INFO(e->log, "%s: new data key (%s)", e->topic, why);
            return;
        }
        materials_free(mats, e->n_names);
    }
    e->retry_at = now + RETRY_MS;
    warn_limited(e, now, "keeping the current data key", pulsarc_last_error_detail());
}

pulsarc_result pc_encryptor_next(pc_encryptor_t *e, uint64_t now, const pc_data_key_t **out)
{
    if (e->current && now >= e->retry_at &&
        (worn_out(e) || now >= e->rotate_at || now >= e->check_at))
        refresh(e, now);
    if (e->current && e->used / 2 >= e->max_ivs) {
        /* Rotation kept failing: the key has had all the IVs it may have. */
        data_key_free(e->current);
        materials_free(e->mats, e->n_names);
        e->current = NULL;
        e->mats = NULL;
    }
    if (!e->current) {
        pulsarc_result r = load(e, now, NULL);
        if (r != PULSARC_OK) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
            if (e->set.failure_action == PC_CRYPTO_SEND) {
                warn_limited(e, now, "publishing unencrypted (cryptoFailureAction=send)", detail);
                *out = NULL;
                return PULSARC_OK;
            }
            warn_limited(e, now, "messages fail (cryptoFailureAction=fail)", detail);
            return pc_fail(PULSARC_ERR_CRYPTO, "%s", detail);
        }
    }
    *out = e->current;
    return PULSARC_OK;
}

int pc_data_key_iv(const pc_data_key_t *dk, uint8_t iv[PC_AES_IV_LEN])
{
    (*dk->ivs_used)++;
    return dk->make_iv(iv);
}

pulsarc_result pc_encryptor_seed(pc_encryptor_t *e, const uint8_t key[PC_AES_KEY_LEN],
                                 int (*make_iv)(uint8_t iv[PC_AES_IV_LEN]), uint64_t now)
{
    e->make_iv = make_iv ? make_iv : random_iv;
    return load(e, now, key);
}

bool pc_key_names_next(const char **cursor, const char **name, size_t *len)
{
    const char *p = *cursor;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *s = p, *end = p + n;
        p += n + (p[n] == ',');
        while (s < end && (*s == ' ' || *s == '\t'))
            s++;
        while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (end > s) {
            *cursor = p;
            *name = s;
            *len = (size_t)(end - s);
            return true;
        }
    }
    *cursor = p;
    return false;
}

static int split_names(pc_encryptor_t *e, const char *list)
{
    const char *name;
    size_t len;
    while (pc_key_names_next(&list, &name, &len)) {
        char **grown = realloc(e->names, (e->n_names + 1) * sizeof *grown);
        if (!grown)
            return -1;
        e->names = grown;
        if (!(e->names[e->n_names] = strndup(name, len)))
            return -1;
        e->n_names++;
    }
    return 0;
}

pc_encryptor_t *pc_encryptor_new(const pc_enc_settings_t *set, const pc_logger_t *log,
                                 const char *topic, bool *oom)
{
    *oom = false;
    if (!set->key_names || !set->fetch)
        return NULL;
    pc_encryptor_t *e = calloc(1, sizeof *e);
    if (!e || !(e->topic = strdup(topic)) || split_names(e, set->key_names) != 0) {
        pc_encryptor_free(e);
        *oom = true;
        return NULL;
    }
    if (e->n_names == 0) {
        pc_encryptor_free(e);
        return NULL;
    }
    e->set = *set;
    e->set.key_names = NULL; /* e->names is what lives */
    e->log = log;
    e->make_iv = random_iv;
    e->max_ivs = set->max_ivs ? set->max_ivs : PC_ENC_MAX_IVS_PER_KEY;
    return e;
}

void pc_encryptor_free(pc_encryptor_t *e)
{
    if (!e)
        return;
    data_key_free(e->current);
    materials_free(e->mats, e->n_names);
    for (size_t i = 0; i < e->n_names; i++)
        free(e->names[i]);
    free(e->names);
    free(e->topic);
    free(e);
}
