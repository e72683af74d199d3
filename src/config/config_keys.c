/* The configuration tables' keys and enumerated values, for tools (pulsarc.h: a
 * command line that suggests the key a user meant, or lists the values a setting takes).
 * Read from the tables through the same accessors the documentation is generated with
 * (config.h), so the lists cannot drift from what set() accepts. */
#include <string.h>

#include "config/config.h"

typedef bool (*key_at_fn)(size_t i, pc_config_key_t *out);

static const char *key_name(key_at_fn at, size_t index)
{
    pc_config_key_t k;
    return at(index, &k) ? k.key : NULL;
}

static const char *key_value(key_at_fn at, const char *key, size_t index)
{
    pc_config_key_t k;
    for (size_t i = 0; key && at(i, &k); i++) {
        if (strcmp(k.key, key) != 0)
            continue;
        if (k.type != PC_CONF_ENUM)
            return NULL;
        for (size_t v = 0; k.names[v]; v++)
            if (v == index)
                return k.names[v];
        return NULL;
    }
    return NULL;
}

const char *pulsarc_client_config_key_name(size_t index)
{
    return key_name(pc_client_config_key, index);
}

const char *pulsarc_client_config_key_value(const char *key, size_t index)
{
    return key_value(pc_client_config_key, key, index);
}

const char *pulsarc_producer_config_key_name(size_t index)
{
    return key_name(pc_producer_config_key, index);
}

const char *pulsarc_producer_config_key_value(const char *key, size_t index)
{
    return key_value(pc_producer_config_key, key, index);
}
