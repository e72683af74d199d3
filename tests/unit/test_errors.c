/* Result codes: names, texts, broker error mapping, per-thread detail. */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "common/error.h"
#include "pulsarc/pulsarc.h"

Test(errors, every_code_has_a_name_and_a_text)
{
    for (int code = PULSARC_ERR_TXN_OPERATION_FAILED; code <= 0; code++) {
        cr_assert_neq(strcmp(pulsarc_result_name((pulsarc_result)code), "UNKNOWN_RESULT"), 0,
                      "code %d", code);
        cr_assert_neq(strcmp(pulsarc_strerror((pulsarc_result)code), "unknown result code"), 0);
    }
    for (int code = PULSARC_ERR_BROKER_BASE; code <= PULSARC_ERR_BROKER_LAST; code++)
        cr_assert_neq(strcmp(pulsarc_result_name((pulsarc_result)code), "UNKNOWN_RESULT"), 0,
                      "code %d", code);
    cr_assert_str_eq(pulsarc_result_name((pulsarc_result)12345), "UNKNOWN_RESULT");
}

Test(errors, send_timeout_text_says_the_message_may_be_persisted)
{
    cr_assert(strstr(pulsarc_strerror(PULSARC_ERR_SEND_TIMEOUT), "may"));
}

Test(errors, broker_errors_map_by_protocol_value)
{
    cr_assert_eq(pc_result_from_server_error(PULSAR__PROTO__SERVER_ERROR__TopicNotFound),
                 PULSARC_ERR_BROKER_TOPIC_NOT_FOUND);
    cr_assert_eq(pc_result_from_server_error(PULSAR__PROTO__SERVER_ERROR__ProducerBusy),
                 PULSARC_ERR_BROKER_PRODUCER_BUSY);
    cr_assert_eq(pc_result_from_server_error(PULSAR__PROTO__SERVER_ERROR__ProducerFenced),
                 PULSARC_ERR_BROKER_PRODUCER_FENCED);
    cr_assert_eq(pc_result_from_server_error(PULSAR__PROTO__SERVER_ERROR__ServiceNotReady),
                 PULSARC_ERR_BROKER_SERVICE_NOT_READY);
    cr_assert_eq(pc_result_from_server_error(999), PULSARC_ERR_BROKER_UNKNOWN);
    cr_assert_eq(pc_result_from_server_error(-3), PULSARC_ERR_BROKER_UNKNOWN);
    /* Any int the broker sends, without overflow (UBSan checks the sum). */
    cr_assert_eq(pc_result_from_server_error(INT_MAX), PULSARC_ERR_BROKER_UNKNOWN);
    cr_assert_eq(pc_result_from_server_error(INT_MAX - 50), PULSARC_ERR_BROKER_UNKNOWN);
    cr_assert_eq(pc_result_from_server_error(INT_MIN), PULSARC_ERR_BROKER_UNKNOWN);
}

Test(errors, terminal_errors_stop_retries)
{
    cr_assert(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_TOPIC_TERMINATED));
    cr_assert(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_PRODUCER_FENCED));
    cr_assert(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_AUTHORIZATION));
    cr_assert(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_NOT_ALLOWED));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_SERVICE_NOT_READY));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_CONNECTION_CLOSED));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_TIMEOUT));
}

/* Once created, a producer keeps retrying what the broker will eventually let through:
 * its old registration lingering (ProducerBusy), quotas, a topic being re-created. */
Test(errors, transient_broker_errors_retry_after_creation)
{
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_PRODUCER_BUSY));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_QUOTA_EXCEEDED_ERROR));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_QUOTA_EXCEEDED_EXCEPTION));
    cr_assert_not(pulsarc_result_is_terminal(PULSARC_ERR_BROKER_TOPIC_NOT_FOUND));
    cr_assert(pc_result_fails_creation(PULSARC_ERR_BROKER_PRODUCER_BUSY));
    cr_assert(pc_result_fails_creation(PULSARC_ERR_BROKER_TOPIC_NOT_FOUND));
    cr_assert(pc_result_fails_creation(PULSARC_ERR_BROKER_TOPIC_TERMINATED));
    cr_assert_not(pc_result_fails_creation(PULSARC_ERR_BROKER_QUOTA_EXCEEDED_ERROR));
    cr_assert_not(pc_result_fails_creation(PULSARC_ERR_BROKER_SERVICE_NOT_READY));
}

Test(errors, detail_is_formatted_and_per_thread)
{
    cr_assert_eq(pc_fail(PULSARC_ERR_TIMEOUT, "waited %d ms", 42), PULSARC_ERR_TIMEOUT);
    cr_assert_str_eq(pulsarc_last_error_detail(), "waited 42 ms");
    pc_set_detail(NULL);
    cr_assert_str_eq(pulsarc_last_error_detail(), "");
}
