/* A message sent whole and unencrypted has its metadata written straight from its fields
 * (pc_ob_fill_alone_fields, pc_pb_alone_t); every other message's goes through a
 * MessageMetadata (pc_ob_fill_alone). Both must give the broker the same bytes, for every
 * field a message and its producer can set. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "producer/op_build_internal.h"
#include "../support/test_rng.h"

static const char *const words[] = {
    "", "k", "key-1", "a much longer value with spaces", "ümlaut", "__local__", "eu-west"
};

static const char *any_word(void)
{
    return words[rnd() % (sizeof words / sizeof *words)];
}

Test(op_build_alone, the_written_metadata_is_the_message_metadatas)
{
    static const uint8_t version[] = { 0, 0, 0, 0, 0, 0, 0, 3 };
    static const uint8_t ordering[] = { 'o', 0, 'k' };
    pc_property_t props[6];
    const char *clusters[3];
    for (int round = 0; round < 2000; round++) {
        pc_msg_t msg = { .sequence_id = (int64_t)(rnd() >> 1), .payload_len = rnd() % 100000 };
        msg.n_props = coin() ? 0 : rnd() % 6;
        for (size_t i = 0; i < msg.n_props; i++)
            props[i] = (pc_property_t){ (char *)any_word(), (char *)any_word() };
        msg.props = props;
        if (coin())
            msg.key = any_word();
        if (coin()) {
            msg.ordering_key = ordering;
            msg.ordering_key_len = sizeof ordering;
        }
        msg.event_time = coin() ? rnd() >> 20 : 0;
        msg.deliver_at = coin() ? rnd() >> 22 : 0;
        msg.n_replicate_to = rnd() % 4 == 0 ? rnd() % 3 + 1 : 0;
        for (size_t i = 0; i < msg.n_replicate_to; i++)
            clusters[i] = any_word();
        msg.replicate_to = msg.n_replicate_to ? clusters : NULL;
        msg.key_b64 = coin();
        msg.null_key = coin();
        msg.null_value = coin();

        pc_op_params_t p = { .producer_id = rnd() % 1000,
                             .producer_name = coin() ? "standalone-0-7" : NULL,
                             .codec = (pc_codec_t)(rnd() % 5) };
        if (coin()) {
            p.schema_version = version;
            p.schema_version_len = sizeof version;
        }
        if (coin())
            p.txn = (pc_txn_ids_t){ .set = true, .most = rnd(), .least = rnd() };

        Pulsar__Proto__MessageMetadata meta = PULSAR__PROTO__MESSAGE_METADATA__INIT;
        pc_ob_kv_t kv = { 0 };
        cr_assert_eq(pc_ob_kv_fill(&kv, &msg), 0);
        pc_ob_fill_alone(&meta, &p, &msg, &kv);
        pc_pb_alone_t alone;
        pc_ob_fill_alone_fields(&alone, &p, &msg);
        alone.publish_time = meta.publish_time; /* the clock may have moved between them */

        size_t size = pc_pb_message_metadata_size(&meta);
        cr_assert_eq(pc_pb_alone_metadata_size(&alone), size, "round %d", round);
        uint8_t *want = malloc(size + 1), *got = malloc(size + 1);
        cr_assert(want && got);
        cr_assert_eq(pc_pb_message_metadata_pack(&meta, want), size);
        cr_assert_eq(pc_pb_alone_metadata_pack(&alone, got), size);
        cr_assert_arr_eq(got, want, size, "round %d: the two metadata differ", round);
        free(want);
        free(got);
        pc_ob_kv_free(&kv);
    }
}
