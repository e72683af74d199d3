/* Configuration tables: defaults, validation, dump. */
#include <criterion/criterion.h>
#include <string.h>

#include "config/config.h"
#include "pulsarc/pulsarc.h"

Test(config, client_defaults_follow_the_documented_values)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    cr_assert_eq(c->operation_timeout_ms, 30000);
    cr_assert_eq(c->connection_timeout_ms, 10000);
    cr_assert_eq(c->keepalive_interval_s, 30);
    cr_assert_eq(c->max_lookup_redirects, 20);
    cr_assert_eq(c->memory_limit_bytes, 64 * 1024 * 1024);
    cr_assert_eq(c->log_level, PULSARC_LOG_WARN);
    pulsarc_client_config_free(c);
}

Test(config, producer_defaults_follow_the_documented_values)
{
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_null(p->producer_name);
    cr_assert_eq(p->send_timeout_ms, 30000);
    cr_assert_eq(p->max_pending_messages, 1000);
    cr_assert_eq(p->block_if_queue_full, false);
    cr_assert_eq(p->initial_sequence_id, -1);
    cr_assert_eq(p->compression, 0);
    pulsarc_producer_config_free(p);
}

Test(config, accepts_valid_values)
{
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set(p, "producerName", "abc"), PULSARC_OK);
    cr_assert_str_eq(p->producer_name, "abc");
    cr_assert_eq(pulsarc_producer_config_set(p, "producerName", "def"), PULSARC_OK);
    cr_assert_str_eq(p->producer_name, "def");
    cr_assert_eq(pulsarc_producer_config_set(p, "blockIfQueueFull", "true"), PULSARC_OK);
    cr_assert(p->block_if_queue_full);
    cr_assert_eq(pulsarc_producer_config_set(p, "compressionType", "ZSTD"), PULSARC_OK);
    cr_assert_eq(p->compression, 3);
    cr_assert_eq(pulsarc_producer_config_set(p, "sendTimeoutMs", "0"), PULSARC_OK);
    cr_assert_eq(p->send_timeout_ms, 0);
    pulsarc_producer_config_free(p);
}

Test(config, rejects_unknown_keys_and_bad_values_with_a_reason)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(c, "noSuchKey", "1"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "noSuchKey"));
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "abc"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "0"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "12x"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "logLevel", "loud"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(c->operation_timeout_ms, 30000, "a rejected value leaves the old one");
    cr_assert_eq(pulsarc_client_config_set(c, NULL, "1"), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_config_set(NULL, "logLevel", "info"), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_client_config_free(c);

    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set(p, "blockIfQueueFull", "maybe"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "producerName", ""), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "maxPendingMessages", "-1"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "compressionType", "brotli"),
                 PULSARC_ERR_INVALID_CONFIG);
    pulsarc_producer_config_free(p);
}

Test(config, dump_prints_every_effective_value)
{
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    pulsarc_producer_config_set(p, "compressionType", "lz4");
    char buf[1024];
    size_t n = pulsarc_producer_config_dump(p, buf, sizeof buf);
    cr_assert_lt(n, sizeof buf);
    cr_assert(strstr(buf, "compressionType=lz4\n"));
    cr_assert(strstr(buf, "sendTimeoutMs=30000\n"));
    cr_assert(strstr(buf, "blockIfQueueFull=false\n"));
    /* A short buffer gets the needed length back, like snprintf. */
    char small[8];
    cr_assert_eq(pulsarc_producer_config_dump(p, small, sizeof small), n);
    pulsarc_producer_config_free(p);
}

/* accessMode takes the four modes by name; an exclusive producer never starts lazily. */
Test(config, access_mode_values_and_lazy_start_for_shared_only)
{
    static const struct {
        const char *name;
        pc_access_mode mode;
    } modes[] = {
        { "shared", PC_ACCESS_SHARED },
        { "exclusive", PC_ACCESS_EXCLUSIVE },
        { "exclusive_with_fencing", PC_ACCESS_EXCLUSIVE_WITH_FENCING },
        { "WAIT_FOR_EXCLUSIVE", PC_ACCESS_WAIT_FOR_EXCLUSIVE },
    };
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_eq(p->access_mode, PC_ACCESS_SHARED);
    cr_assert_eq(pulsarc_producer_config_set(p, "lazyStartPartitionedProducers", "true"),
                 PULSARC_OK);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        cr_assert_eq(pulsarc_producer_config_set(p, "accessMode", modes[i].name), PULSARC_OK);
        cr_assert_eq(p->access_mode, modes[i].mode, "%s", modes[i].name);
        pc_pp_settings_t set;
        pc_producer_config_pp(p, &set);
        cr_assert_eq(set.access_mode, modes[i].mode);
        cr_assert_eq(set.lazy_start, modes[i].mode == PC_ACCESS_SHARED, "%s", modes[i].name);
    }
    cr_assert_eq(pulsarc_producer_config_set(p, "accessMode", "exclusive-with-fencing"),
                 PULSARC_ERR_INVALID_CONFIG);
    pulsarc_producer_config_free(p);
}

/* A producer's properties belong to its configuration: a copy keeps its own. */
Test(config, producer_properties_are_copied_with_the_configuration)
{
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set_property(p, "app", "billing"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set_property(p, "zone", "a"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set_property(p, "zone", "b"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set_property(NULL, "k", "v"),
                 PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_producer_config_t copy;
    cr_assert_eq(pc_producer_config_copy(&copy, p), 0);
    pulsarc_producer_config_free(p);
    cr_assert_eq(copy.n_properties, 2);
    cr_assert_str_eq(copy.properties[0].key, "app");
    cr_assert_str_eq(copy.properties[0].value, "billing");
    cr_assert_str_eq(copy.properties[1].key, "zone");
    cr_assert_str_eq(copy.properties[1].value, "b");
    pc_pp_settings_t set;
    pc_producer_config_pp(&copy, &set);
    cr_assert_eq(set.n_properties, 2);
    cr_assert_eq(set.properties, copy.properties);
    pc_producer_config_clear(&copy);
    cr_assert_eq(copy.n_properties, 0);
    cr_assert_null(copy.properties);
}

/* The key and value lists tools read (pulsarc-produce suggests keys from them): every key
 * each set() takes, each exactly once, and for an enumerated key the values set() takes. */
Test(config, key_names_and_values_are_what_set_takes)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    size_t n_client = 0, n_producer = 0;
    for (const char *k; (k = pulsarc_client_config_key_name(n_client)); n_client++) {
        /* A known key with an unusable value is refused for the value, not the key. */
        pulsarc_client_config_set(c, k, "\x01");
        cr_assert_null(strstr(pulsarc_last_error_detail(), "unknown configuration key"), "%s", k);
    }
    for (const char *k; (k = pulsarc_producer_config_key_name(n_producer)); n_producer++) {
        pulsarc_producer_config_set(p, k, "\x01");
        cr_assert_null(strstr(pulsarc_last_error_detail(), "unknown configuration key"), "%s", k);
    }
    pc_config_key_t row;
    cr_assert(pc_client_config_key(n_client - 1, &row) && !pc_client_config_key(n_client, &row));
    cr_assert(pc_producer_config_key(n_producer - 1, &row) &&
              !pc_producer_config_key(n_producer, &row));

    const char *codecs[] = { "none", "lz4", "zlib", "zstd", "snappy", NULL };
    for (size_t i = 0; i < 6; i++) {
        const char *v = pulsarc_producer_config_key_value("compressionType", i);
        cr_assert_str_eq(v ? v : "(null)", codecs[i] ? codecs[i] : "(null)");
        if (v)
            cr_assert_eq(pulsarc_producer_config_set(p, "compressionType", v), PULSARC_OK);
    }
    cr_assert_str_eq(pulsarc_client_config_key_value("logLevel", 0), "debug");
    /* Not enumerated, not this configuration's, not a key. */
    cr_assert_null(pulsarc_producer_config_key_value("sendTimeoutMs", 0));
    cr_assert_null(pulsarc_client_config_key_value("compressionType", 0));
    cr_assert_null(pulsarc_producer_config_key_value("nonsense", 0));
    cr_assert_null(pulsarc_producer_config_key_value(NULL, 0));
    pulsarc_producer_config_free(p);
    pulsarc_client_config_free(c);
}
