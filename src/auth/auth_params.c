/* Parsing authParams (see auth_params.h). JSON goes through jansson; only its line and
 * column are reported, since jansson's own messages quote the text near the error. */
#include "auth/auth_params.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "auth/secret_json.h"
#include "common/error.h"

static int add(pc_auth_params_t *p, const char *key, size_t klen, const char *value, size_t vlen)
{
    pc_auth_param_t *v = realloc(p->v, (p->n + 1) * sizeof *v);
    if (!v)
        return -1;
    p->v = v;
    char *k = strndup(key, klen), *val = strndup(value, vlen);
    if (!k || !val) {
        free(k);
        pc_auth_secret_free(val);
        return -1;
    }
    p->v[p->n++] = (pc_auth_param_t){ k, val };
    return 0;
}

int pc_auth_params_is_json(const char *text)
{
    text += strspn(text, " \t\r\n");
    return *text == '{';
}

/* A JSON value as text: strings as they are, numbers and booleans as JSON writes them. */
static char *json_value_text(json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_number(v) || json_is_boolean(v))
        return json_dumps(v, JSON_ENCODE_ANY);
    return NULL;
}

static pulsarc_result parse_json(const char *text, pc_auth_params_t *out)
{
    json_error_t err;
    pc_secret_json_init(); /* the values are secrets: jansson's copies are wiped */
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "authParams: not valid JSON (line %d, column %d)", err.line, err.column);
    if (!json_is_object(root)) {
        json_decref(root);
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "authParams: JSON must be an object");
    }
    pulsarc_result r = PULSARC_OK;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        char *s = json_value_text(v);
        if (!s) {
            r = pc_fail(PULSARC_ERR_INVALID_CONFIG,
                        "authParams: the value of \"%s\" is not a string, number or boolean", key);
            break;
        }
        int rc = add(out, key, strlen(key), s, strlen(s));
        pc_auth_secret_free(s);
        if (rc != 0) {
            r = pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            break;
        }
    }
    json_decref(root);
    return r;
}

static size_t trimmed_len(const char *s, size_t n, const char **start)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *start = s;
    return n;
}

/* "k:v,k:v": the first colon of each pair ends the key. */
static pulsarc_result parse_pairs(const char *text, pc_auth_params_t *out)
{
    int index = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        index++;
        const char *k, *v;
        size_t klen = colon ? trimmed_len(p, (size_t)(colon - p), &k) : 0;
        if (!colon || klen == 0)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                           "authParams: item %d is not key:value (expected a JSON object or "
                           "key:value pairs separated by commas)",
                           index);
        size_t vlen = trimmed_len(colon + 1, len - (size_t)(colon + 1 - p), &v);
        if (add(out, k, klen, v, vlen) != 0)
            return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
        p += len;
        if (*p == ',')
            p++;
    }
    return PULSARC_OK;
}

pulsarc_result pc_auth_params_parse(const char *text, pc_auth_params_t *out)
{
    memset(out, 0, sizeof *out);
    pulsarc_result r = pc_auth_params_is_json(text) ? parse_json(text, out)
                                                    : parse_pairs(text, out);
    if (r != PULSARC_OK)
        pc_auth_params_clear(out);
    return r;
}

const char *pc_auth_params_get(const pc_auth_params_t *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].key, key))
            return p->v[i].value;
    return NULL;
}

void pc_auth_params_clear(pc_auth_params_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].key);
        pc_auth_secret_free(p->v[i].value);
    }
    free(p->v);
    p->v = NULL;
    p->n = 0;
}
