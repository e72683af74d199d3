/* pulsarc-compat: messages, message ids, string maps and lists, result names and
 * authentication objects, without a broker. */
#include <criterion/criterion.h>
#include <pulsar/c/authentication.h>
#include <pulsar/c/message.h>
#include <pulsar/c/message_id.h>
#include <pulsar/c/result.h>
#include <pulsar/c/string_list.h>
#include <pulsar/c/string_map.h>
#include <pulsar/c/version.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

Test(compat_result, names_are_libpulsars)
{
    cr_expect_str_eq(pulsar_result_str(pulsar_result_Ok), "Ok");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_Timeout), "TimeOut");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_ProducerQueueIsFull), "ProducerQueueIsFull");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_AlreadyClosed), "AlreadyClosed");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_ConsumerAssignError),
                     "ResultConsumerAssignError");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_MemoryBufferIsFull),
                     "ResultMemoryBufferIsFull");
    cr_expect_str_eq(pulsar_result_str(pulsar_result_Disconnected), "ResultDisconnected");
    cr_expect_str_eq(pulsar_result_str((pulsar_result)999), "UnknownErrorCode");
    cr_expect_str_eq(pulsar_result_str((pulsar_result)-1), "UnknownErrorCode");
    /* The enum's values are libpulsar's: the last is 46. */
    cr_expect_eq((int)pulsar_result_Disconnected, 46);
    cr_expect_eq((int)pulsar_result_ProducerQueueIsFull, 27);
    cr_expect_eq(PULSAR_VERSION, 4002000);
}

Test(compat_string_map, sorted_by_key_and_copied)
{
    pulsar_string_map_t *m = pulsar_string_map_create();
    cr_expect_eq(pulsar_string_map_size(m), 0);
    char key[8] = "b", value[8] = "2";
    pulsar_string_map_put(m, key, value);
    key[0] = 'x'; /* the map holds copies */
    pulsar_string_map_put(m, "a", "1");
    pulsar_string_map_put(m, "c", "3");
    pulsar_string_map_put(m, "a", "one");
    cr_expect_eq(pulsar_string_map_size(m), 3);
    cr_expect_str_eq(pulsar_string_map_get(m, "a"), "one");
    cr_expect_str_eq(pulsar_string_map_get(m, "b"), "2");
    cr_expect_null(pulsar_string_map_get(m, "x"));
    cr_expect_str_eq(pulsar_string_map_get_key(m, 0), "a");
    cr_expect_str_eq(pulsar_string_map_get_key(m, 1), "b");
    cr_expect_str_eq(pulsar_string_map_get_value(m, 2), "3");
    cr_expect_null(pulsar_string_map_get_key(m, 3));
    cr_expect_null(pulsar_string_map_get_value(m, -1));
    pulsar_string_map_free(m);
    pulsar_string_map_free(NULL);
}

Test(compat_string_list, in_order)
{
    pulsar_string_list_t *l = pulsar_string_list_create();
    pulsar_string_list_append(l, "x");
    pulsar_string_list_append(l, "y");
    cr_expect_eq(pulsar_string_list_size(l), 2);
    cr_expect_str_eq(pulsar_string_list_get(l, 1), "y");
    cr_expect_null(pulsar_string_list_get(l, 2));
    pulsar_string_list_free(l);
    pulsar_string_list_free(NULL);
}

Test(compat_message, setters_and_getters)
{
    pulsar_message_t *m = pulsar_message_create();
    cr_expect_eq(pulsar_message_has_partition_key(m), 0);
    cr_expect_str_eq(pulsar_message_get_partitionKey(m), "");
    cr_expect_eq(pulsar_message_get_length(m), 0);
    pulsar_message_set_content(m, "hello", 5);
    cr_expect_eq(pulsar_message_get_length(m), 5);
    cr_expect_eq(memcmp(pulsar_message_get_data(m), "hello", 5), 0);
    pulsar_message_set_partition_key(m, "user-42");
    cr_expect_eq(pulsar_message_has_partition_key(m), 1);
    cr_expect_str_eq(pulsar_message_get_partitionKey(m), "user-42");
    pulsar_message_set_ordering_key(m, "ok");
    cr_expect_eq(pulsar_message_has_ordering_key(m), 1);
    cr_expect_str_eq(pulsar_message_get_orderingKey(m), "ok");
    pulsar_message_set_property(m, "p", "v");
    cr_expect_eq(pulsar_message_has_property(m, "p"), 1);
    cr_expect_eq(pulsar_message_has_property(m, "q"), 0);
    cr_expect_str_eq(pulsar_message_get_property(m, "p"), "v");
    cr_expect_str_eq(pulsar_message_get_property(m, "q"), "");
    pulsar_string_map_t *props = pulsar_message_get_properties(m);
    cr_expect_eq(pulsar_string_map_size(props), 1);
    pulsar_string_map_free(props);
    pulsar_message_set_event_timestamp(m, 1234);
    cr_expect_eq(pulsar_message_get_event_timestamp(m), 1234);
    pulsar_message_set_sequence_id(m, 7);
    pulsar_message_set_sequence_id(m, -3); /* ignored: libpulsar throws */
    pulsar_message_set_deliver_at(m, 99);
    pulsar_message_set_deliver_after(m, 1000);
    const char *clusters[] = { "east", "west" };
    pulsar_message_set_replication_clusters(m, clusters, 2);
    pulsar_message_disable_replication(m, 1);
    cr_expect_eq(pulsar_message_has_schema_version(m), 0);
    pulsar_message_set_schema_version(m, "v1");
    cr_expect_eq(pulsar_message_has_schema_version(m), 1);
    cr_expect_str_eq(pulsar_message_get_schemaVersion(m), "v1");
    /* Received messages' accessors answer as for a message never received. */
    cr_expect_eq(pulsar_message_get_publish_timestamp(m), 0);
    cr_expect_str_eq(pulsar_message_get_topic_name(m), "");
    cr_expect_eq(pulsar_message_get_redelivery_count(m), 0);
    cr_expect_str_eq(pulsar_message_get_producer_name(m), "");
    cr_expect_null(pulsar_message_get_replicated_from(m));
    pulsar_message_id_t *id = pulsar_message_get_message_id(m);
    char *s = pulsar_message_id_str(id);
    cr_expect_str_eq(s, "(-1,-1,-1,-1)");
    free(s);
    pulsar_message_id_free(id);
    pulsar_message_set_null_value(m);
    cr_expect_eq(pulsar_message_has_null_value(m), 1);
    cr_expect_eq(pulsar_message_get_length(m), 0);
    pulsar_message_set_content(m, "x", 1);
    cr_expect_eq(pulsar_message_has_null_value(m), 0);

    pulsar_message_t *c = pulsar_message_create();
    pulsar_message_set_content(c, "old", 3);
    pulsar_message_copy(m, c);
    cr_expect_str_eq(pulsar_message_get_partitionKey(c), "user-42");
    cr_expect_str_eq(pulsar_message_get_property(c, "p"), "v");
    cr_expect_eq(pulsar_message_get_length(c), 1);
    pulsar_message_free(m); /* the copy stands alone */
    cr_expect_str_eq(pulsar_message_get_orderingKey(c), "ok");
    pulsar_message_free(c);
    pulsar_message_free(NULL);
}

Test(compat_message, allocated_content_is_not_copied)
{
    static char buf[] = "borrowed";
    pulsar_message_t *m = pulsar_message_create();
    pulsar_message_set_allocated_content(m, buf, 8);
    cr_expect_eq(pulsar_message_get_data(m), buf);
    pulsar_message_free(m);
}

Test(compat_message_id, earliest_latest_and_strings)
{
    const pulsar_message_id_t *e = pulsar_message_id_earliest();
    const pulsar_message_id_t *l = pulsar_message_id_latest();
    cr_assert(e && l);
    char *s = pulsar_message_id_str((pulsar_message_id_t *)e);
    cr_expect_str_eq(s, "(-1,-1,-1,-1)");
    free(s);
    s = pulsar_message_id_str((pulsar_message_id_t *)l);
    cr_expect_str_eq(s, "(9223372036854775807,9223372036854775807,-1,-1)");
    free(s);
    pulsar_message_id_free((pulsar_message_id_t *)e); /* static: nothing happens */
    cr_expect_eq(pulsar_message_id_earliest(), e);
}

Test(compat_message_id, serialize_round_trip)
{
    /* MessageIdData { ledgerId 12, entryId 34, partition 3, batch_index 5, batch_size 9 },
     * as the official clients write it. */
    static const uint8_t wire[] = { 0x08, 12, 0x10, 34, 0x18, 3, 0x20, 5, 0x30, 9 };
    pulsar_message_id_t *id = pulsar_message_id_deserialize(wire, sizeof wire);
    cr_assert(id);
    char *s = pulsar_message_id_str(id);
    cr_expect_str_eq(s, "(12,34,3,5)");
    free(s);
    int len = 0;
    void *bytes = pulsar_message_id_serialize(id, &len);
    cr_assert(bytes);
    cr_expect_eq(len, (int)sizeof wire);
    cr_expect_eq(memcmp(bytes, wire, sizeof wire), 0);
    free(bytes); /* the caller's, from malloc() */
    pulsar_message_id_free(id);
    cr_expect_null(pulsar_message_id_deserialize("\xff\xff", 2), "garbage is refused, not fatal");
    cr_expect_null(pulsar_message_id_deserialize(NULL, 0));
    pulsar_message_id_free(NULL);
}

Test(compat_message_id, chunked_ids_print_both_chunks)
{
    /* ledger 7 entry 9 partition 1, first chunk ledger 7 entry 5 (field 7). */
    static const uint8_t wire[] = { 0x08, 7, 0x10, 9, 0x18, 1, 0x3a, 6, 0x08, 7, 0x10, 5, 0x18, 1 };
    pulsar_message_id_t *id = pulsar_message_id_deserialize(wire, sizeof wire);
    cr_assert(id);
    char *s = pulsar_message_id_str(id);
    cr_expect_str_eq(s, "(7,5,1,-1);(7,9,1,-1)");
    free(s);
    pulsar_message_id_free(id);
}

static char *supply(void *ctx)
{
    (void)ctx;
    return strdup("t");
}

Test(compat_auth, every_kind_is_created_and_freed)
{
    pulsar_authentication_t *a[] = {
        pulsar_authentication_create("token", "token:abc"),
        pulsar_authentication_tls_create("/c.pem", "/k.pem"),
        pulsar_authentication_token_create("abc"),
        pulsar_authentication_token_create_with_supplier(supply, NULL),
        pulsar_authentication_basic_create("u", "p"),
        pulsar_authentication_oauth2_create("{\"issuer_url\":\"https://issuer\"}"),
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        cr_expect(a[i], "kind %zu", i);
        pulsar_authentication_free(a[i]);
    }
    pulsar_authentication_free(NULL);
}
