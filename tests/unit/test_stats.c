/* Statistics' numbers: every result has a slot of its own, totals add up (the largest
 * batch is a maximum, not a sum), and the JSON names what docs/statistics.md names. */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

Test(stats, every_result_has_a_slot_of_its_own)
{
    int owner[PC_STATS_RESULTS] = { 0 };
    for (int r = PULSARC_ERR_INVALID_PAYLOAD; r <= PULSARC_ERR_BROKER_LAST; r++) {
        if ((r > PULSARC_OK && r < PULSARC_ERR_BROKER_BASE) || r == PULSARC_OK)
            continue;
        int slot = pc_stats_result_slot((pulsarc_result)r);
        cr_assert_gt(slot, 0, "%s has no slot", pulsarc_result_name((pulsarc_result)r));
        cr_assert_lt(slot, PC_STATS_RESULTS);
        cr_assert_eq(owner[slot], 0, "%s shares slot %d", pulsarc_result_name((pulsarc_result)r),
                     slot);
        owner[slot] = r;
        cr_assert_eq(pc_stats_slot_result(slot), (pulsarc_result)r);
    }
    cr_assert_eq(pc_stats_result_slot((pulsarc_result)12345), 0, "unknown codes: slot 0");
}

Test(stats, totals_add_up_and_serialise)
{
    pc_stats_totals_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    cr_assert(a && b);
    pc_stats_totals_init(a);
    pc_stats_totals_init(b);
    a->v[PULSARC_STAT_MSGS_ACKED] = 5;
    a->v[PULSARC_STAT_BATCH_MAX_MSGS] = 7;
    a->v[PULSARC_STAT_ENTRY_RAW_BYTES] = 300;
    a->v[PULSARC_STAT_ENTRY_BYTES] = 100;
    b->v[PULSARC_STAT_MSGS_ACKED] = 2;
    b->v[PULSARC_STAT_BATCH_MAX_MSGS] = 3;
    b->failed_by[pc_stats_result_slot(PULSARC_ERR_SEND_TIMEOUT)] = 4;
    pc_histogram_record_n(&b->latency_us, 250, 2);
    pc_stats_totals_add(a, b);
    cr_assert_eq(a->v[PULSARC_STAT_MSGS_ACKED], 7);
    cr_assert_eq(a->v[PULSARC_STAT_BATCH_MAX_MSGS], 7, "a maximum");
    cr_assert_eq(a->latency_us.total, 2);

    json_t *j = pc_stats_totals_json(a);
    cr_assert_not_null(j);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "messages"), "acked")), 7);
    cr_assert_eq(json_integer_value(
                     json_object_get(json_object_get(j, "failed_by_result"), "SEND_TIMEOUT")),
                 4);
    cr_assert_float_eq(json_real_value(
                           json_object_get(json_object_get(j, "entries"), "compression_ratio")),
                       3.0, 1e-9);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "latency_us"), "p50")), 250);
    cr_assert(json_is_null(json_object_get(json_object_get(j, "batches"), "mean_messages")),
              "no batches: no mean");
    pulsarc_stats_t *s = pc_stats_new(a, j);
    cr_assert_not_null(s);
    cr_assert_eq(pulsarc_stats_get(s, PULSARC_STAT_MSGS_ACKED), 7);
    cr_assert_eq(pulsarc_stats_get(s, (pulsarc_stat)999), 0, "an unknown stat reads 0");
    cr_assert_eq(pulsarc_stats_failed(s, PULSARC_ERR_SEND_TIMEOUT), 4);
    cr_assert_eq(pulsarc_stats_latency_us(s, 100), 250);
    cr_assert_not_null(strstr(pulsarc_stats_json(s), "\"acked\":7"));
    pulsarc_stats_free(s);
    free(a);
    free(b);
}

/* Text from a user or a broker (a topic, a producer name) that is not UTF-8 still makes a
 * JSON string, with U+FFFD for each stray byte; jansson alone refuses it. */
Test(stats, text_that_is_not_utf8_still_makes_a_json_string)
{
    cr_assert_null(json_string("prod\xff"), "jansson took ill-formed UTF-8 after all");
    json_t *s = pc_stats_json_text("prod\xff-\xc3\xa9");
    cr_assert_not_null(s);
    cr_assert_str_eq(json_string_value(s), "prod\xef\xbf\xbd-\xc3\xa9");
    char *dumped = json_dumps(s, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
    cr_assert_str_eq(dumped, "\"prod\\uFFFD-\\u00E9\"");
    free(dumped);
    json_decref(s);
    s = pc_stats_json_text(NULL);
    cr_assert_str_eq(json_string_value(s), "");
    json_decref(s);
}
