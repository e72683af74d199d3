/* The send plan: one decision, from the producer's settings and the message, of whether a
 * message is batched, what it charges against memoryLimitBytes and whether the sending
 * thread computes its CRCs. */
#include <criterion/criterion.h>

#include "publish/message.h"

#include "codec/crypto.h"
#include "producer/partition_producer.h"
#include "producer/plan.h"
#include "wire/crc32c_blocks.h"

static pc_plan_rules_t rules(bool batching, pc_codec_t codec, bool encrypted)
{
    pc_pp_settings_t set = { .batching_enabled = batching,
                             .compression = codec,
                             .batching_max_bytes = 1000 };
    set.encryption.key_names = encrypted ? "k" : NULL;
    return pc_pp_plan_rules(&set);
}

Test(plan, batched_below_batching_max_bytes_and_not_alone)
{
    pc_plan_rules_t r = rules(true, PC_CODEC_NONE, false);
    cr_assert(pc_plan(&r, 999, false).batched);
    cr_assert_not(pc_plan(&r, 1000, false).batched, "fills a batch alone");
    cr_assert_not(pc_plan(&r, 10, true).batched, "a message alone is not batched");
    r = rules(false, PC_CODEC_NONE, false);
    cr_assert_not(pc_plan(&r, 10, false).batched);
}

/* A second copy is counted when the loop thread makes one: a batch, a compressed copy, a
 * ciphertext with its tag. */
Test(plan, memory_charge_counts_the_copy_the_loop_makes)
{
    pc_plan_rules_t r = rules(true, PC_CODEC_NONE, false);
    cr_assert_eq(pc_plan(&r, 600, false).memory_charge, 1200, "batched");
    cr_assert_eq(pc_plan(&r, 6000, false).memory_charge, 6000, "alone, plain");
    r = rules(false, PC_CODEC_LZ4, false);
    cr_assert_eq(pc_plan(&r, 600, false).memory_charge, 1200, "compressed");
    r = rules(true, PC_CODEC_LZ4, true);
    cr_assert_eq(pc_plan(&r, 600, false).memory_charge, 1200 + PC_AES_TAG_LEN, "encrypted");
}

/* Only a large payload that travels as it is gets its CRCs on the sending thread. */
Test(plan, sender_crcs_only_for_large_unchanged_payloads)
{
    size_t large = PC_CRC32C_BLOCK;
    pc_plan_rules_t r = rules(false, PC_CODEC_NONE, false);
    cr_assert(pc_plan(&r, large, false).sender_crcs);
    cr_assert_not(pc_plan(&r, large - 1, false).sender_crcs);
    r = rules(false, PC_CODEC_ZSTD, false);
    cr_assert_not(pc_plan(&r, large, false).sender_crcs, "compressed");
    r = rules(false, PC_CODEC_NONE, true);
    cr_assert_not(pc_plan(&r, large, false).sender_crcs, "encrypted");
    r = rules(true, PC_CODEC_NONE, false);
    r.batching_max_bytes = 2 * large;
    cr_assert_not(pc_plan(&r, large, false).sender_crcs, "batched");
    cr_assert(pc_plan(&r, large, true).sender_crcs, "alone, so not batched");
}

/* Delayed delivery and replication clusters are applied to a whole entry by the broker: a
 * message with either is an entry of its own. */
Test(plan, delayed_or_replication_controlled_messages_go_alone)
{
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_not(pc_message_alone(m));
    pulsarc_message_set_deliver_at(m, 12345);
    cr_assert(pc_message_alone(m), "a delivery time");
    pulsarc_message_free(m);
    m = pulsarc_message_new();
    pulsarc_message_set_deliver_after(m, 100);
    cr_assert(pc_message_alone(m), "a delay");
    pulsarc_message_free(m);
    m = pulsarc_message_new();
    pulsarc_message_disable_replication(m, 1);
    cr_assert(pc_message_alone(m), "replication clusters");
    pulsarc_message_free(m);
}
