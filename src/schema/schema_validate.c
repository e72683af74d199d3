/* Payload checks at send: cheap, and only as deep as the schema type allows. */
#include "schema/schema.h"

#include <stdio.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"

bool pc_utf8_valid(const uint8_t *p, size_t len, size_t *bad)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            goto fail;
        }
        if (len - i - 1 < n)
            goto fail;
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                goto fail;
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            goto fail;
        i += n + 1;
    }
    return true;
fail:
    if (bad)
        *bad = i;
    return false;
}

static pulsarc_result check_json(const uint8_t *p, size_t len)
{
    json_error_t err;
    json_t *j = json_loadb((const char *)p, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!j)
        return pc_fail(PULSARC_ERR_INVALID_PAYLOAD, "the payload is not JSON: %s (at byte %d)",
                       err.text, err.position);
    json_decref(j);
    return PULSARC_OK;
}

/* KeyValue INLINE: [len][key][len][value], each part passing its own schema's check; a
 * part of length -1 is Java's null, which any schema allows. */
static pulsarc_result check_inline(const pc_schema_t *kv, const uint8_t *p, size_t len)
{
    size_t lens[2], at = 0;
    const uint8_t *parts[2];
    bool null[2];
    for (int i = 0; i < 2; i++) {
        if (len - at < 4)
            return pc_fail(PULSARC_ERR_INVALID_PAYLOAD,
                           "the KeyValue payload ends inside a length field");
        uint32_t raw = pc_read_u32be(p + at);
        at += 4;
        null[i] = raw == UINT32_MAX;
        lens[i] = null[i] ? 0 : raw;
        if (raw != UINT32_MAX && raw > len - at)
            return pc_fail(PULSARC_ERR_INVALID_PAYLOAD,
                           "the KeyValue payload's %s length %u runs past its end",
                           i ? "value" : "key", raw);
        parts[i] = p + at;
        at += lens[i];
    }
    if (at != len)
        return pc_fail(PULSARC_ERR_INVALID_PAYLOAD, "%zu bytes follow the KeyValue payload's value",
                       len - at);
    const pc_schema_t *schemas[2] = { kv->kv_key, kv->kv_value };
    for (int i = 0; i < 2; i++) {
        pulsarc_result res = null[i] ? PULSARC_OK : pc_schema_check(schemas[i], parts[i], lens[i]);
        if (res != PULSARC_OK) {
            char why[256]; /* the detail is rewritten below: copy it out first */
            snprintf(why, sizeof why, "%s", pulsarc_last_error_detail());
            return pc_fail(res, "KeyValue %s: %s", i ? "value" : "key", why);
        }
    }
    return PULSARC_OK;
}

pulsarc_result pc_schema_check(const pc_schema_t *s, const void *payload, size_t len)
{
    const uint8_t *p = payload;
    size_t bad, width = pc_schema_fixed_width(s->type);
    if (width)
        return len == width ? PULSARC_OK
                            : pc_fail(PULSARC_ERR_INVALID_PAYLOAD,
                                      "a %s value is %zu bytes, the payload has %zu",
                                      pulsarc_schema_type_name(s->type), width, len);
    switch (s->type) {
    case PULSARC_SCHEMA_STRING:
        if (!pc_utf8_valid(p, len, &bad))
            return pc_fail(PULSARC_ERR_INVALID_PAYLOAD,
                           "the payload is not valid UTF-8 (at byte %zu)", bad);
        return PULSARC_OK;
    case PULSARC_SCHEMA_JSON:
        return check_json(p, len);
    case PULSARC_SCHEMA_AVRO:
        return s->avro ? pc_avro_check_payload(s->avro, p, len) : PULSARC_OK;
    case PULSARC_SCHEMA_KEY_VALUE:
        if (!s->kv_key || !s->kv_value)
            return PULSARC_OK;
        if (s->kv_encoding == PULSARC_KV_SEPARATED)
            return pc_schema_check(s->kv_value, p, len);
        return check_inline(s, p, len);
    default:
        /* BYTES, PROTOBUF, PROTOBUF_NATIVE, AUTO_PRODUCE before its topic is known. */
        return PULSARC_OK;
    }
}
