/* authParams in the two forms the official clients accept: a JSON object
 * ({"userId":"u","password":"p"}) or "key:value" pairs separated by commas
 * ("tlsCertFile:/a.pem,tlsKeyFile:/b.pem"; a value keeps any further colons).
 *
 * Values may be secrets: errors report where the text is wrong, never what it says. */
#ifndef PC_AUTH_PARAMS_H
#define PC_AUTH_PARAMS_H

#include <stddef.h>

#include "pulsarc/pulsarc.h"

typedef struct pc_auth_param {
    char *key;
    char *value;
} pc_auth_param_t;

typedef struct pc_auth_params {
    pc_auth_param_t *v;
    size_t n;
} pc_auth_params_t;

/* Parse text into out (cleared first). A JSON object's values must be strings, numbers
 * or booleans (written as JSON writes them). PULSARC_ERR_INVALID_CONFIG with a detail on
 * bad text. */
pulsarc_result pc_auth_params_parse(const char *text, pc_auth_params_t *out);
/* The value of key, or NULL. */
const char *pc_auth_params_get(const pc_auth_params_t *p, const char *key);
/* Wipes the values and frees everything. */
void pc_auth_params_clear(pc_auth_params_t *p);

/* True when text (after leading blanks) is a JSON object. */
int pc_auth_params_is_json(const char *text);

#endif
