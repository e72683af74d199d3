/* MessageRouter: key hashing, rotation, single partition, custom routers. */
#include <criterion/criterion.h>
#include <string.h>

#include "config/config.h"
#include "routing/hash.h"
#include "routing/router.h"

/* A router set up the way a producer with this one setting would set it up. */
static pc_router_t router_with(const char *key, const char *value)
{
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    if (key)
        pulsarc_producer_config_set(&c, key, value);
    pc_router_settings_t set;
    pc_producer_config_router(&c, &set);
    pc_router_t r;
    pc_router_init(&r, &set);
    return r;
}

/* The router's view of an application's message. */
static int choose(pc_router_t *r, const pulsarc_message_t *m, int n)
{
    const char *key = pulsarc_message_key(m);
    pc_route_view_t v = { .key = key, .key_len = key ? strlen(key) : 0, .message = m };
    return pc_router_choose(r, &v, n);
}

Test(router, keys_go_where_the_java_client_sends_them)
{
    pc_router_t r = router_with(NULL, NULL);
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_key(m, "key-1");
    /* "key-1".hashCode() = 101943363 in Java; 101943363 % 7 = 4. */
    cr_assert_eq(choose(&r, m, 7), 4);
    cr_assert_eq(choose(&r, m, 1000), 101943363 % 1000);
    pulsarc_message_free(m);
}

Test(router, murmur3_scheme_uses_murmur3)
{
    pc_router_t r = router_with("hashingScheme", "murmur3");
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_key(m, "key-1");
    cr_assert_eq(choose(&r, m, 13), pc_hash_partition(pc_hash_murmur3_32("key-1", 5), 13));
    pulsarc_message_free(m);
}

Test(router, keyless_rotation_without_batching_visits_every_partition_in_turn)
{
    pc_router_t r = router_with("batchingEnabled", "false");
    pulsarc_message_t *m = pulsarc_message_new();
    int first = choose(&r, m, 5);
    for (int i = 1; i < 12; i++)
        cr_assert_eq(choose(&r, m, 5), (first + i) % 5);
    pulsarc_message_free(m);
}

Test(router, keyless_with_batching_stays_on_one_partition_within_a_delay)
{
    pc_router_t r = router_with("batchingMaxPublishDelayMs", "100000");
    pulsarc_message_t *m = pulsarc_message_new();
    int first = choose(&r, m, 5);
    for (int i = 0; i < 100; i++)
        cr_assert_eq(choose(&r, m, 5), first);
    pulsarc_message_free(m);
}

Test(router, single_mode_sticks_to_one_partition)
{
    pc_router_t r = router_with("messageRoutingMode", "single");
    pulsarc_message_t *m = pulsarc_message_new();
    int first = choose(&r, m, 9);
    cr_assert(first >= 0 && first < 9);
    for (int i = 0; i < 50; i++)
        cr_assert_eq(choose(&r, m, 9), first);
    pulsarc_message_free(m);
}

static int by_length(const pulsarc_message_t *msg, int n, void *ctx)
{
    size_t len;
    pulsarc_message_payload(msg, &len);
    *(int *)ctx += 1;
    return (int)len;
}

Test(router, custom_router_is_obeyed_and_checked)
{
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    int calls = 0;
    pulsarc_producer_config_set_router(&c, by_length, &calls);
    pc_router_settings_t set;
    pc_producer_config_router(&c, &set);
    pc_router_t r;
    pc_router_init(&r, &set);
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_key(m, "ignored by custom routers");
    pulsarc_message_set_payload(m, "abc", 3);
    cr_assert_eq(choose(&r, m, 4), 3);
    pulsarc_message_set_payload(m, "abcd", 4);
    cr_assert_eq(choose(&r, m, 4), -1, "out of range");
    cr_assert_eq(calls, 2);
    pulsarc_message_free(m);
}

/* The router's view of a keyless message with an explicit sequence id. */
static int choose_id(pc_router_t *r, int64_t id, int n)
{
    pc_route_view_t v = { .sequence_id = id };
    return pc_router_choose(r, &v, n);
}

/* By sequence id, a rerun that sends the same ids (a replay after a crash) puts each on the
 * partition the first run did, whatever either router's random start: deduplication is
 * per partition, so only then is a replayed id recognised. Runs of batchingMaxMessages
 * ids share a partition so batches fill. */
Test(router, sequence_id_mode_puts_each_id_where_a_first_run_did)
{
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    cr_assert_eq(pulsarc_producer_config_set(&c, "messageRoutingMode", "sequence_id"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_config_set(&c, "batchingMaxMessages", "100"), PULSARC_OK);
    pc_router_settings_t set;
    pc_producer_config_router(&c, &set);
    pc_router_t first, rerun;
    srand(1);
    pc_router_init(&first, &set);
    srand(2);
    pc_router_init(&rerun, &set);
    for (int64_t id = 0; id < 1000; id++) {
        int p = choose_id(&first, id, 4);
        cr_assert_eq(p, (int)((id / 100) % 4), "id %lld", (long long)id);
        cr_assert_eq(choose_id(&rerun, id, 4), p, "id %lld moved in the rerun", (long long)id);
    }
    /* Keys still go by their hash. */
    pulsarc_message_t *m = pulsarc_message_new();
    pulsarc_message_set_key(m, "key-1");
    cr_assert_eq(choose(&first, m, 7), 4);
    pulsarc_message_free(m);
    pc_producer_config_clear(&c);
}

Test(router, sequence_id_mode_without_batching_takes_ids_in_turn)
{
    pc_router_t r;
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    pulsarc_producer_config_set(&c, "batchingEnabled", "false");
    pulsarc_producer_config_set(&c, "messageRoutingMode", "sequence_id");
    pc_router_settings_t set;
    pc_producer_config_router(&c, &set);
    pc_router_init(&r, &set);
    for (int64_t id = 0; id < 20; id++)
        cr_assert_eq(choose_id(&r, id, 3), (int)(id % 3));
    pc_producer_config_clear(&c);
}
