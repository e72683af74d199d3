/* Interceptors against the mock broker: before_send changes a copy that is what gets
 * sent (the caller's message stays as it was), rejects with a result of its choosing,
 * runs in the order added; on_ack sees every accepted message exactly once, failures
 * included, before its callback; on_partitions_change hears a partitioned topic grow. */
#include "client_harness.h"

TestSuite(client_interceptors, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(40));

/* What the interceptors saw, in order (loop thread and test thread: under a lock). */
static pthread_mutex_t ic_mu = PTHREAD_MUTEX_INITIALIZER;
static char ic_log[8192];
static int ic_acks[H_MAX_MSGS]; /* on_ack calls per message index */
static pulsarc_result ic_ack_res[H_MAX_MSGS];
static bool ic_ack_after_callback;    /* an on_ack came after its send callback */
static _Atomic int ic_partitions = 0; /* the last on_partitions_change count */
static char ic_partitions_topic[256];

static void ic_note(const char *what)
{
    pthread_mutex_lock(&ic_mu);
    size_t len = strlen(ic_log);
    snprintf(ic_log + len, sizeof ic_log - len, "%s;", what);
    pthread_mutex_unlock(&ic_mu);
}

static bool ic_log_has(const char *what)
{
    pthread_mutex_lock(&ic_mu);
    bool found = strstr(ic_log, what) != NULL;
    pthread_mutex_unlock(&ic_mu);
    return found;
}

/* The "i" property every message of these tests carries: its index. */
static pulsarc_message_t *indexed_message(int i)
{
    pulsarc_message_t *m = h_message(i, 0);
    char v[16];
    snprintf(v, sizeof v, "%d", i);
    cr_assert_eq(pulsarc_message_set_property(m, "i", v), PULSARC_OK);
    return m;
}

static pulsarc_result send_indexed(int i)
{
    T.slots[i].idx = i;
    pulsarc_message_t *m = indexed_message(i);
    pulsarc_result r = pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[i]);
    pulsarc_message_free(m);
    return r;
}

/* ---- the interceptors ----------------------------------------------------------------- */

static pulsarc_result stamp_a(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    ic_note("A.before");
    return pulsarc_message_set_property(msg, "a", ctx);
}

/* B sees what A did, and says so in a property of its own. */
static pulsarc_result stamp_b(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    ic_note("B.before");
    const char *a = pulsarc_message_property(msg, "a");
    return pulsarc_message_set_property(msg, "b", a ? a : "no a");
}

static void count_ack(pulsarc_producer_t *p, const pulsarc_message_t *msg, pulsarc_result res,
                      const pulsarc_message_id_t *id, void *ctx)
{
    const char *i = pulsarc_message_property(msg, "i");
    int idx = i ? atoi(i) : -1;
    pthread_mutex_lock(&T.mu);
    bool called_back = idx >= 0 && idx < H_MAX_MSGS && T.calls[idx] > 0;
    pthread_mutex_unlock(&T.mu);
    pthread_mutex_lock(&ic_mu);
    if (idx >= 0 && idx < H_MAX_MSGS) {
        ic_acks[idx]++;
        ic_ack_res[idx] = res;
        ic_ack_after_callback |= called_back;
    }
    size_t len = strlen(ic_log);
    snprintf(ic_log + len, sizeof ic_log - len, "%s.ack%d%s;", (const char *)ctx, idx,
             (res == PULSARC_OK) == (id != NULL) ? "" : "(id mismatch)");
    pthread_mutex_unlock(&ic_mu);
}

static void note_partitions(pulsarc_producer_t *p, const char *topic, int n, void *ctx)
{
    pthread_mutex_lock(&ic_mu);
    snprintf(ic_partitions_topic, sizeof ic_partitions_topic, "%s", topic);
    pthread_mutex_unlock(&ic_mu);
    atomic_store(&ic_partitions, n);
}

static pulsarc_producer_t *producer_with(pulsarc_producer_config_t *pc,
                                         const pulsarc_interceptor_t *a, const char *a_ctx,
                                         const pulsarc_interceptor_t *b, const char *b_ctx)
{
    cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, a, sizeof *a, (void *)a_ctx),
                 PULSARC_OK);
    if (b)
        cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, b, sizeof *b, (void *)b_ctx),
                     PULSARC_OK);
    return h_producer_ok(client, H_TOPIC, pc);
}

/* The property of name in recorded SEND i's metadata, or NULL. */
static const char *sent_property(const mock_send_t *s, const char *name)
{
    for (size_t k = 0; s->metadata && k < s->metadata->n_properties; k++)
        if (!strcmp(s->metadata->properties[k]->key, name))
            return s->metadata->properties[k]->value;
    return NULL;
}

/* ---- tests ---------------------------------------------------------------------------- */

Test(client_interceptors, chained_in_order_and_the_copy_is_what_is_sent)
{
    client = h_client(NULL);
    pulsarc_interceptor_t a = { .before_send = stamp_a, .on_ack = count_ack };
    pulsarc_interceptor_t b = { .before_send = stamp_b, .on_ack = count_ack };
    producer = producer_with(h_producer_conf(0, NULL), &a, "A", &b, "B");
    pulsarc_message_t *m = indexed_message(0);
    T.slots[0].idx = 0;
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    cr_assert_null(pulsarc_message_property(m, "a"), "the caller's message was changed");
    cr_assert(h_wait_calls(1, 3000));
    h_assert_each_once(1, PULSARC_OK);
    pthread_mutex_lock(&ic_mu);
    char log[sizeof ic_log];
    snprintf(log, sizeof log, "%s", ic_log);
    pthread_mutex_unlock(&ic_mu);
    cr_assert_str_eq(log, "A.before;B.before;A.ack0;B.ack0;", "order: %s", log);
    cr_assert_not(ic_ack_after_callback, "on_ack ran after the send callback");

    mock_send_t s = h_get_send(mb, 0);
    cr_assert_str_eq(sent_property(&s, "a") ? sent_property(&s, "a") : "", "A");
    cr_assert_str_eq(sent_property(&s, "b") ? sent_property(&s, "b") : "", "A",
                     "B did not see A's property");
    cr_assert_str_eq(sent_property(&s, "i") ? sent_property(&s, "i") : "", "0");
    mock_send_free(&s);
    pulsarc_message_free(m);
    h_finish();
}

static pulsarc_result reject_odd(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    const char *i = pulsarc_message_property(msg, "i");
    return i && atoi(i) % 2 ? PULSARC_ERR_INVALID_PAYLOAD : PULSARC_OK;
}

static pulsarc_result never_called(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    const char *i = pulsarc_message_property(msg, "i");
    if (i && atoi(i) % 2)
        ic_note("second interceptor saw a rejected message");
    return PULSARC_OK;
}

Test(client_interceptors, a_rejection_is_the_send_result_and_nothing_follows)
{
    client = h_client(NULL);
    pulsarc_interceptor_t a = { .before_send = reject_odd, .on_ack = count_ack };
    pulsarc_interceptor_t b = { .before_send = never_called };
    producer = producer_with(h_producer_conf(0, NULL), &a, "A", &b, NULL);
    for (int i = 0; i < 6; i++) {
        pulsarc_result r = send_indexed(i);
        cr_assert_eq(r, i % 2 ? PULSARC_ERR_INVALID_PAYLOAD : PULSARC_OK, "send %d: %s", i,
                     pulsarc_result_name(r));
        if (i % 2)
            cr_assert_not_null(strstr(pulsarc_last_error_detail(), "interceptor 1 of 2"),
                               "detail: %s", pulsarc_last_error_detail());
    }
    cr_assert(h_wait_calls(3, 3000));
    cr_assert(pulsarc_producer_flush(producer) == PULSARC_OK);
    h_let_time_pass(50); /* a callback for a rejected message would come now */
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(T.calls[i], i % 2 ? 0 : 1, "message %d: %d callbacks", i, T.calls[i]);
        cr_assert_eq(ic_acks[i], i % 2 ? 0 : 1, "message %d: %d on_ack", i, ic_acks[i]);
    }
    cr_assert_not(ic_log_has("second interceptor"), "the chain went on after a rejection");
    cr_assert_eq(h_count(mb, MOCK_SENDS), 3);

    pulsarc_stats_t *st = NULL;
    cr_assert_eq(pulsarc_producer_stats(producer, &st), PULSARC_OK);
    cr_assert_eq(pulsarc_stats_refused(st, PULSARC_ERR_INVALID_PAYLOAD), 3);
    cr_assert_eq(pulsarc_stats_get(st, PULSARC_STAT_MSGS_REFUSED), 3);
    cr_assert_eq(pulsarc_stats_get(st, PULSARC_STAT_MSGS_ACCEPTED), 3);
    pulsarc_stats_free(st);
    h_finish();
}

/* Successes, a send timeout and a message the broker refuses alone: each accepted message
 * reaches on_ack once, with the callback's result, and before the callback. */
Test(client_interceptors, on_ack_sees_every_accepted_message_once_failures_included)
{
    client = h_client(NULL);
    pulsarc_interceptor_t a = { .on_ack = count_ack };
    producer = producer_with(h_producer_conf(0, "sendTimeoutMs", "300", NULL), &a, "A", NULL, NULL);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(send_indexed(i), PULSARC_OK);
    cr_assert(h_wait_calls(3, 3000));
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    cr_assert_eq(send_indexed(3), PULSARC_OK);
    cr_assert(h_wait_calls(4, 3000));
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_SUPPRESS);
    for (int i = 4; i < 7; i++)
        cr_assert_eq(send_indexed(i), PULSARC_OK);
    cr_assert(h_wait_calls(7, 5000), "only %d of 7 callbacks", h_total());
    h_let_time_pass(50); /* a second on_ack would come now */
    for (int i = 0; i < 7; i++) {
        pulsarc_result want = i < 3    ? PULSARC_OK
                              : i == 3 ? PULSARC_ERR_BROKER_NOT_ALLOWED
                                       : PULSARC_ERR_SEND_TIMEOUT;
        cr_assert_eq(ic_acks[i], 1, "message %d: %d on_ack", i, ic_acks[i]);
        cr_assert_eq(ic_ack_res[i], want, "message %d: on_ack with %s", i,
                     pulsarc_result_name(ic_ack_res[i]));
        cr_assert_eq(T.res[i], want);
        cr_assert_eq(T.calls[i], 1, "message %d: %d callbacks", i, T.calls[i]);
    }
    cr_assert_not(ic_ack_after_callback, "on_ack ran after the send callback");
    h_finish();
}

/* The caller's borrowed payload is taken over as without interceptors (zero copy, freed
 * once after the callback); a payload an interceptor lends replaces it and is freed by
 * the library, also when the message is not accepted. */
static _Atomic int caller_frees, ic_frees;

static void caller_free(void *payload, size_t len, void *ctx)
{
    atomic_fetch_add(&caller_frees, 1);
}

static void ic_free(void *payload, size_t len, void *ctx)
{
    free(payload);
    atomic_fetch_add(&ic_frees, 1);
}

static pulsarc_result replace_marked(pulsarc_producer_t *p, pulsarc_message_t *msg, void *ctx)
{
    if (!pulsarc_message_property(msg, "replace"))
        return PULSARC_OK;
    char *repl = strdup("msg-replaced");
    pulsarc_result r = pulsarc_message_set_payload_borrowed(msg, repl, strlen(repl), ic_free, NULL);
    if (r != PULSARC_OK)
        return r;
    return pulsarc_message_property(msg, "reject") ? PULSARC_ERR_INVALID_ARGUMENT : PULSARC_OK;
}

Test(client_interceptors, payloads_borrowed_by_the_caller_or_an_interceptor)
{
    client = h_client(NULL);
    pulsarc_interceptor_t a = { .before_send = replace_marked };
    producer = producer_with(h_producer_conf(0, NULL), &a, NULL, NULL, NULL);
    static const char original[] = "msg-0 borrowed";
    pulsarc_message_t *m = pulsarc_message_new();
    cr_assert_eq(pulsarc_message_set_payload_borrowed(m, original, strlen(original), caller_free,
                                                      NULL),
                 PULSARC_OK);
    T.slots[0].idx = 0;
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[0]), PULSARC_OK);
    size_t len = 99;
    cr_assert_null(pulsarc_message_payload(m, &len), "the accepted send took the payload over");
    cr_assert_eq(len, 0);

    /* Replaced: the caller's borrowed payload stays the caller's. */
    cr_assert_eq(pulsarc_message_set_payload_borrowed(m, original, strlen(original), caller_free,
                                                      NULL),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_message_set_property(m, "replace", "1"), PULSARC_OK);
    T.slots[1].idx = 1;
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[1]), PULSARC_OK);
    cr_assert_eq(pulsarc_message_payload(m, &len), (const void *)original);
    /* Replaced, then rejected: the interceptor's payload is freed at once. */
    cr_assert_eq(pulsarc_message_set_property(m, "reject", "1"), PULSARC_OK);
    cr_assert_eq(pulsarc_producer_send_async(producer, m, h_on_sent, &T.slots[2]),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(atomic_load(&ic_frees), 1, "the rejected copy's payload was not freed");
    cr_assert_eq(pulsarc_message_payload(m, &len), (const void *)original);

    cr_assert(h_wait_calls(2, 3000));
    h_assert_each_once(2, PULSARC_OK);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    mock_send_t s0 = h_get_send(mb, 0), s1 = h_get_send(mb, 1);
    cr_assert_eq(s0.payload_len, strlen(original));
    cr_assert_eq(memcmp(s0.payload, original, s0.payload_len), 0);
    cr_assert_eq(s1.payload_len, strlen("msg-replaced"));
    cr_assert_eq(memcmp(s1.payload, "msg-replaced", s1.payload_len), 0);
    mock_send_free(&s0);
    mock_send_free(&s1);
    h_finish();
    cr_assert_eq(atomic_load(&caller_frees), 1, "the taken-over payload: freed once");
    cr_assert_eq(atomic_load(&ic_frees), 2, "each payload an interceptor lent: freed once");
    pulsarc_message_free(m); /* the caller's own borrowed payload, still set */
    cr_assert_eq(atomic_load(&caller_frees), 2);
}

Test(client_interceptors, on_partitions_change_hears_the_topic_grow)
{
    mock_broker_set_partitions(mb, 2);
    client = h_client(NULL);
    pulsarc_interceptor_t a = { .on_partitions_change = note_partitions };
    producer = producer_with(h_producer_conf(0, "autoUpdatePartitionsIntervalSeconds", "1", NULL),
                             &a, NULL, NULL, NULL);
    h_let_time_pass(50);
    cr_assert_eq(atomic_load(&ic_partitions), 0, "no change yet");
    mock_broker_set_partitions(mb, 3);
    cr_assert(h_let_time_pass_until_changed(&ic_partitions, 0, 5000),
              "on_partitions_change never came");
    cr_assert_eq(atomic_load(&ic_partitions), 3);
    pthread_mutex_lock(&ic_mu);
    cr_assert_str_eq(ic_partitions_topic, H_TOPIC);
    pthread_mutex_unlock(&ic_mu);
    /* The new partition is routable: round robin reaches it. */
    for (int i = 0; i < 3; i++)
        cr_assert_eq(h_send(producer, i), PULSARC_OK);
    cr_assert(h_wait_calls(3, 3000));
    bool third = false;
    for (int i = 0; i < 3; i++)
        third |= T.partition[i] == 2;
    cr_assert(third, "no message went to the new partition");
    h_finish();
}

Test(client_interceptors, a_table_of_an_unknown_size_is_refused)
{
    pulsarc_producer_config_t *pc = pulsarc_producer_config_new();
    pulsarc_interceptor_t a = { .before_send = stamp_a };
    cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, &a, sizeof a + 8, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, &a, 0, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, NULL, sizeof a, NULL),
                 PULSARC_ERR_INVALID_ARGUMENT);
    /* An older, shorter table: the members it lacks are NULL. */
    cr_assert_eq(pulsarc_producer_config_add_interceptor(pc, &a, sizeof a.before_send, NULL),
                 PULSARC_OK);
    pulsarc_producer_config_free(pc);
}
