/* Configuration tables: defaults, validation, dump. */
#include <criterion/criterion.h>
#include <string.h>

#include "client/config.h"
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
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "abc"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "0"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "operationTimeoutMs", "12x"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_client_config_set(c, "logLevel", "loud"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(c->operation_timeout_ms, 30000, "a rejected value leaves the old one");
    cr_assert_eq(pulsarc_client_config_set(c, NULL, "1"), PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_client_config_set(NULL, "logLevel", "info"), PULSARC_ERR_INVALID_ARGUMENT);
    pulsarc_client_config_free(c);

    pulsarc_producer_config_t *p = pulsarc_producer_config_new();
    cr_assert_eq(pulsarc_producer_config_set(p, "blockIfQueueFull", "maybe"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "producerName", ""), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "maxPendingMessages", "-1"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(p, "compressionType", "brotli"), PULSARC_ERR_INVALID_CONFIG);
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
