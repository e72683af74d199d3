/* pulsarc-compat: client and producer configurations. Every getter's default is
 * libpulsar's (lib/ClientConfigurationImpl.h, lib/ProducerConfigurationImpl.h of
 * pulsar-client-cpp 4.2), every setter is read back, and what libpulsar refuses by
 * throwing leaves the value as it was. */
#include <criterion/criterion.h>
#include <pulsar/c/authentication.h>
#include <pulsar/c/client_configuration.h>
#include <pulsar/c/producer_configuration.h>
#include <pulsar/c/pulsarc_extensions.h>
#include <string.h>

Test(compat_client_conf, defaults_are_libpulsars)
{
    pulsar_client_configuration_t *c = pulsar_client_configuration_create();
    cr_assert(c);
    cr_expect_eq(pulsar_client_configuration_get_memory_limit(c), 0);
    cr_expect_eq(pulsar_client_configuration_get_operation_timeout_seconds(c), 30);
    cr_expect_eq(pulsar_client_configuration_get_io_threads(c), 1);
    cr_expect_eq(pulsar_client_configuration_get_message_listener_threads(c), 1);
    cr_expect_eq(pulsar_client_configuration_get_concurrent_lookup_request(c), 50000);
    cr_expect_str_eq(pulsar_client_configuration_get_tls_private_key_file_path(c), "");
    cr_expect_str_eq(pulsar_client_configuration_get_tls_certificate_file_path(c), "");
    cr_expect_eq(pulsar_client_configuration_is_tls_allow_insecure_connection(c), 0);
    cr_expect_eq(pulsar_client_configuration_get_stats_interval_in_seconds(c), 600);
    cr_expect_eq(pulsar_client_configuration_is_validate_hostname(c), 0);
    cr_expect_str_eq(pulsar_client_configuration_get_listener_name(c), "");
    cr_expect_eq(pulsar_client_configuration_get_partitions_update_interval(c), 60);
    cr_expect_eq(pulsar_client_configuration_get_keep_alive_interval_in_seconds(c), 30);
    cr_expect_eq(pulsar_client_configuration_is_http_lookup_auth_allow_redirect(c), 0);
    pulsar_client_configuration_free(c);
    pulsar_client_configuration_free(NULL);
}

static void quiet(pulsar_logger_level_t level, const char *file, int line, const char *message,
                  void *ctx)
{
    (void)level, (void)file, (void)line, (void)message, (void)ctx;
}

static bool errors_only(pulsar_logger_level_t level, void *ctx)
{
    (void)ctx;
    return level >= pulsar_ERROR;
}

Test(compat_client_conf, setters_are_read_back)
{
    pulsar_client_configuration_t *c = pulsar_client_configuration_create();
    pulsar_client_configuration_set_memory_limit(c, 1ull << 30);
    cr_expect_eq(pulsar_client_configuration_get_memory_limit(c), 1ull << 30);
    pulsar_client_configuration_set_operation_timeout_seconds(c, 7);
    cr_expect_eq(pulsar_client_configuration_get_operation_timeout_seconds(c), 7);
    pulsar_client_configuration_set_operation_timeout_seconds(c, 0); /* ignored */
    cr_expect_eq(pulsar_client_configuration_get_operation_timeout_seconds(c), 7);
    pulsar_client_configuration_set_io_threads(c, 4);
    cr_expect_eq(pulsar_client_configuration_get_io_threads(c), 4);
    pulsar_client_configuration_set_message_listener_threads(c, 3);
    cr_expect_eq(pulsar_client_configuration_get_message_listener_threads(c), 3);
    pulsar_client_configuration_set_concurrent_lookup_request(c, 12);
    cr_expect_eq(pulsar_client_configuration_get_concurrent_lookup_request(c), 12);
    pulsar_client_configuration_set_tls_trust_certs_file_path(c, "/ca.pem");
    pulsar_client_configuration_set_tls_allow_insecure_connection(c, 5);
    cr_expect_eq(pulsar_client_configuration_is_tls_allow_insecure_connection(c), 1);
    pulsar_client_configuration_set_tls_private_key_file_path(c, "/k.pem");
    cr_expect_str_eq(pulsar_client_configuration_get_tls_private_key_file_path(c), "/k.pem");
    pulsar_client_configuration_set_tls_certificate_file_path(c, "/c.pem");
    cr_expect_str_eq(pulsar_client_configuration_get_tls_certificate_file_path(c), "/c.pem");
    pulsar_client_configuration_set_stats_interval_in_seconds(c, 0);
    cr_expect_eq(pulsar_client_configuration_get_stats_interval_in_seconds(c), 0);
    pulsar_client_configuration_set_validate_hostname(c, 1);
    cr_expect_eq(pulsar_client_configuration_is_validate_hostname(c), 1);
    pulsar_client_configuration_set_listener_name(c, "external");
    cr_expect_str_eq(pulsar_client_configuration_get_listener_name(c), "external");
    pulsar_client_configuration_set_partitions_update_interval(c, 5);
    cr_expect_eq(pulsar_client_configuration_get_partitions_update_interval(c), 5);
    pulsar_client_configuration_set_keep_alive_interval_in_seconds(c, 9);
    cr_expect_eq(pulsar_client_configuration_get_keep_alive_interval_in_seconds(c), 9);
    pulsar_client_configuration_set_http_lookup_auth_allow_redirect(c, 1);
    cr_expect_eq(pulsar_client_configuration_is_http_lookup_auth_allow_redirect(c), 1);
    pulsar_client_configuration_set_logger(c, quiet, NULL);
    pulsar_logger_t full = { .ctx = NULL, .is_enabled = errors_only, .log = quiet };
    pulsar_client_configuration_set_logger_t(c, full);
    pulsar_authentication_t *auth = pulsar_authentication_token_create("secret-token");
    pulsar_client_configuration_set_auth(c, auth);
    pulsar_authentication_free(auth); /* the configuration keeps its own copy */
    pulsar_client_configuration_free(c);
}

Test(compat_client_conf, pulsarc_keys_are_checked_at_once)
{
    pulsar_client_configuration_t *c = pulsar_client_configuration_create();
    cr_expect_eq(pulsarc_compat_client_configuration_set(c, "connectionTimeoutMs", "2500"),
                 pulsar_result_Ok);
    cr_expect_eq(pulsarc_compat_client_configuration_set(c, "noSuchKey", "1"),
                 pulsar_result_InvalidConfiguration);
    cr_expect_eq(pulsarc_compat_client_configuration_set(c, "connectionTimeoutMs", "soon"),
                 pulsar_result_InvalidConfiguration);
    cr_expect_eq(pulsarc_compat_client_configuration_set(NULL, "a", "b"),
                 pulsar_result_InvalidConfiguration);
    pulsar_client_configuration_free(c);
}

Test(compat_producer_conf, defaults_are_libpulsars)
{
    pulsar_producer_configuration_t *p = pulsar_producer_configuration_create();
    cr_assert(p);
    cr_expect_str_eq(pulsar_producer_configuration_get_producer_name(p), "");
    cr_expect_eq(pulsar_producer_configuration_get_send_timeout(p), 30000);
    cr_expect_eq(pulsar_producer_configuration_get_initial_sequence_id(p), -1);
    cr_expect_eq(pulsar_producer_configuration_get_compression_type(p), pulsar_CompressionNone);
    cr_expect_eq(pulsar_producer_configuration_get_max_pending_messages(p), 1000);
    cr_expect_eq(pulsar_producer_configuration_get_max_pending_messages_across_partitions(p),
                 50000);
    cr_expect_eq(pulsar_producer_configuration_get_partitions_routing_mode(p),
                 pulsar_RoundRobinDistribution);
    cr_expect_eq(pulsar_producer_configuration_get_hashing_scheme(p), pulsar_BoostHash);
    cr_expect_eq(pulsar_producer_configuration_get_lazy_start_partitioned_producers(p), 0);
    cr_expect_eq(pulsar_producer_configuration_get_block_if_queue_full(p), 0);
    cr_expect_eq(pulsar_producer_configuration_get_batching_enabled(p), 1);
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_messages(p), 1000);
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_allowed_size_in_bytes(p),
                 128 * 1024);
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_publish_delay_ms(p), 10);
    cr_expect_eq(pulsar_producer_is_encryption_enabled(p), 0);
    cr_expect_eq(pulsar_producer_configuration_get_crypto_failure_action(p), pulsar_ProducerFail);
    cr_expect_eq(pulsar_producer_configuration_is_chunking_enabled(p), 0);
    cr_expect_eq(pulsar_producer_configuration_get_access_mode(p), pulsar_ProducerAccessModeShared);
    pulsar_producer_configuration_free(p);
    pulsar_producer_configuration_free(NULL);
}

static int route_to_zero(pulsar_message_t *msg, pulsar_topic_metadata_t *meta, void *ctx)
{
    (void)msg, (void)meta, (void)ctx;
    return 0;
}

Test(compat_producer_conf, setters_are_read_back)
{
    pulsar_producer_configuration_t *p = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_producer_name(p, "telemetry-1");
    cr_expect_str_eq(pulsar_producer_configuration_get_producer_name(p), "telemetry-1");
    pulsar_producer_configuration_set_send_timeout(p, 1500);
    cr_expect_eq(pulsar_producer_configuration_get_send_timeout(p), 1500);
    pulsar_producer_configuration_set_initial_sequence_id(p, 41);
    cr_expect_eq(pulsar_producer_configuration_get_initial_sequence_id(p), 41);
    pulsar_producer_configuration_set_compression_type(p, pulsar_CompressionZSTD);
    cr_expect_eq(pulsar_producer_configuration_get_compression_type(p), pulsar_CompressionZSTD);
    pulsar_producer_configuration_set_max_pending_messages(p, 10);
    pulsar_producer_configuration_set_max_pending_messages(p, -1); /* libpulsar throws */
    cr_expect_eq(pulsar_producer_configuration_get_max_pending_messages(p), 10);
    pulsar_producer_configuration_set_max_pending_messages_across_partitions(p, 20);
    pulsar_producer_configuration_set_max_pending_messages_across_partitions(p, -5);
    cr_expect_eq(pulsar_producer_configuration_get_max_pending_messages_across_partitions(p), 20);
    pulsar_producer_configuration_set_partitions_routing_mode(p, pulsar_UseSinglePartition);
    cr_expect_eq(pulsar_producer_configuration_get_partitions_routing_mode(p),
                 pulsar_UseSinglePartition);
    pulsar_producer_configuration_set_hashing_scheme(p, pulsar_JavaStringHash);
    cr_expect_eq(pulsar_producer_configuration_get_hashing_scheme(p), pulsar_JavaStringHash);
    pulsar_producer_configuration_set_hashing_scheme(p, pulsar_Murmur3_32Hash);
    cr_expect_eq(pulsar_producer_configuration_get_hashing_scheme(p), pulsar_Murmur3_32Hash);
    pulsar_producer_configuration_set_message_router(p, route_to_zero, NULL);
    cr_expect_eq(pulsar_producer_configuration_get_partitions_routing_mode(p),
                 pulsar_CustomPartition, "a router switches the mode to custom, as in libpulsar");
    pulsar_producer_configuration_set_lazy_start_partitioned_producers(p, 1);
    cr_expect_eq(pulsar_producer_configuration_get_lazy_start_partitioned_producers(p), 1);
    pulsar_producer_configuration_set_block_if_queue_full(p, 1);
    cr_expect_eq(pulsar_producer_configuration_get_block_if_queue_full(p), 1);
    pulsar_producer_configuration_set_batching_enabled(p, 0);
    cr_expect_eq(pulsar_producer_configuration_get_batching_enabled(p), 0);
    pulsar_producer_configuration_set_batching_max_messages(p, 50);
    pulsar_producer_configuration_set_batching_max_messages(p, 1); /* libpulsar throws */
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_messages(p), 50);
    pulsar_producer_configuration_set_batching_max_allowed_size_in_bytes(p, 4096);
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_allowed_size_in_bytes(p), 4096);
    pulsar_producer_configuration_set_batching_max_publish_delay_ms(p, 3);
    cr_expect_eq(pulsar_producer_configuration_get_batching_max_publish_delay_ms(p), 3);
    pulsar_producer_configuration_set_property(p, "app", "telemetry");
    pulsar_producer_configuration_set_encryption_key(p, "k1");
    cr_expect_eq(pulsar_producer_is_encryption_enabled(p), 0, "no key reader yet");
    pulsar_producer_configuration_set_default_crypto_key_reader(p, "/pub.pem", "/priv.pem");
    cr_expect_eq(pulsar_producer_is_encryption_enabled(p), 1);
    pulsar_producer_configuration_set_crypto_failure_action(p, pulsar_ProducerSend);
    cr_expect_eq(pulsar_producer_configuration_get_crypto_failure_action(p), pulsar_ProducerSend);
    pulsar_producer_configuration_set_chunking_enabled(p, 1);
    cr_expect_eq(pulsar_producer_configuration_is_chunking_enabled(p), 1);
    pulsar_producer_configuration_set_access_mode(p, pulsar_ProducerAccessModeExclusiveWithFencing);
    cr_expect_eq(pulsar_producer_configuration_get_access_mode(p),
                 pulsar_ProducerAccessModeExclusiveWithFencing);
    pulsar_string_map_t *props = pulsar_string_map_create();
    pulsar_string_map_put(props, "owner", "ops");
    pulsar_producer_configuration_set_schema_info(p, pulsar_String, "text", "", props);
    pulsar_string_map_free(props); /* copied */
    pulsar_producer_configuration_free(p);
}

Test(compat_producer_conf, pulsarc_keys_are_checked_at_once)
{
    pulsar_producer_configuration_t *p = pulsar_producer_configuration_create();
    cr_expect_eq(pulsarc_compat_producer_configuration_set(p, "hashingScheme", "boost_1_80"),
                 pulsar_result_Ok);
    cr_expect_eq(pulsarc_compat_producer_configuration_set(p, "hashingScheme", "boost_2_0"),
                 pulsar_result_InvalidConfiguration);
    cr_expect_eq(pulsarc_compat_producer_configuration_set(p, "noSuchKey", "x"),
                 pulsar_result_InvalidConfiguration);
    pulsar_producer_configuration_free(p);
}
