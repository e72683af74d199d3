/* End-to-end encryption against the mock broker: what the producer registers and sends,
 * decrypted here with the test private keys (tests/support/test_decrypt.h); failure
 * actions; rotation by time and by a changed key file; resend after a cut. */
#include "client_harness.h"

#include <unistd.h>

#include "../support/test_decrypt.h"
#include "config/test_seams.h"
#include "fake_clock.h"

TestSuite(client_encryption, .init = h_setup, .fini = h_teardown, .timeout = H_SUITE_TIMEOUT(30));

#define PUB1 PC_TEST_KEYS_DIR "/test_rsa1_pub.pem"
#define PUB2 PC_TEST_KEYS_DIR "/test_rsa2_pub.pem"

/* A producer encrypting for key k1 with the public key in file; pairs as h_producer. */
#define enc_producer(file, ...) h_producer_ok(client, H_TOPIC, enc_conf((file), __VA_ARGS__))

static pulsarc_producer_config_t *enc_conf(const char *file, ...)
{
    pulsarc_producer_config_t *pc = h_producer_conf(0, NULL);
    va_list ap;
    va_start(ap, file);
    h_set_va(NULL, pc, ap);
    va_end(ap);
    cr_assert_eq(pulsarc_producer_config_add_encryption_key_file(pc, "k1", file), PULSARC_OK);
    return pc;
}

/* SEND number i, checked to be an encrypted entry for key `name` alone; returns the data
 * key (unwrapped with the private key in priv_file, which must work) and the plaintext. */
static uint8_t *open_send_of(size_t i, const char *name, const char *priv_file, uint8_t key[32],
                             size_t *len)
{
    mock_send_t s;
    cr_assert(mock_broker_get_send(mb, i, &s), "send %zu", i);
    const Pulsar__Proto__MessageMetadata *m = s.metadata;
    cr_assert_not_null(m);
    cr_assert_eq(m->n_encryption_keys, 1, "send %zu", i);
    cr_assert_str_eq(m->encryption_keys[0]->key, name);
    cr_assert(m->has_encryption_param && m->encryption_param.len == 12);
    EVP_PKEY *priv = td_private_key(priv_file);
    cr_assert_eq(td_unwrap(priv, m->encryption_keys[0]->value.data,
                           m->encryption_keys[0]->value.len, key),
                 0, "send %zu: %s cannot unwrap its key", i, priv_file);
    EVP_PKEY_free(priv);
    uint8_t *plain;
    cr_assert_eq(td_open(key, m->encryption_param.data, 12, s.payload, s.payload_len, &plain), 0);
    *len = s.payload_len - 16;
    mock_send_free(&s);
    return plain;
}

static uint8_t *open_send(size_t i, const char *priv_file, uint8_t key[32], size_t *len)
{
    return open_send_of(i, "k1", priv_file, key, len);
}

static void assert_payload(const uint8_t *plain, size_t len, int idx)
{
    char want[32];
    int n = snprintf(want, sizeof want, "msg-%d", idx);
    cr_assert_eq(len, (size_t)n);
    cr_assert_eq(memcmp(plain, want, len), 0, "message %d", idx);
}

Test(client_encryption, registers_encrypted_and_every_message_decrypts)
{
    client = h_client(NULL);
    producer = enc_producer(PUB1, NULL);
    mock_producer_info_t info;
    cr_assert(mock_broker_last_producer(mb, &info));
    cr_assert(info.encrypted, "CommandProducer.encrypted");
    h_send_range(producer, 0, 3);
    cr_assert(h_wait_calls(3, 3000));
    h_assert_each_once(3, PULSARC_OK);
    uint8_t first[32], key[32];
    for (int i = 0; i < 3; i++) {
        size_t len;
        uint8_t *plain = open_send((size_t)i, "test_rsa1_priv.pem", i ? key : first, &len);
        assert_payload(plain, len, i);
        free(plain);
        if (i)
            cr_assert_eq(memcmp(key, first, 32), 0, "one data key until rotation");
    }
    h_finish();
}

Test(client_encryption, fail_action_fails_each_message_and_returns_permits_and_memory)
{
    client = h_client(NULL);
    producer = enc_producer("/nonexistent/k1.pem", "batchingEnabled", "true", NULL);
    h_send_range(producer, 0, 3); /* one batch */
    cr_assert(pulsarc_producer_flush(producer) == PULSARC_ERR_CRYPTO);
    h_send(producer, 3); /* and one more batch, alone */
    cr_assert(h_wait_calls(4, 3000));
    h_expect_no_more_callbacks();
    h_assert_each_once(4, PULSARC_ERR_CRYPTO);
    for (int i = 0; i < 4; i++) {
        cr_assert(strstr(T.detail[i], "\"k1\"") && strstr(T.detail[i], "/nonexistent/k1.pem"),
                  "detail: %s", T.detail[i]);
        cr_assert_null(strstr(T.detail[i], "BEGIN"));
    }
    cr_assert_eq(pulsarc_producer_pending_count(producer), 0);
    cr_assert_eq(pulsarc_client_memory_used(client), 0);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0, "nothing unencrypted went out");
    cr_assert(h_log_contains("cryptoFailureAction=fail"));
    h_finish();
}

Test(client_encryption, memory_limit_counts_the_ciphertext_too)
{
    client = h_client(NULL);
    producer = enc_producer(PUB1, NULL);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    h_send_range(producer, 0, 2); /* "msg-0", "msg-1": 5 bytes each */
    /* Payload and ciphertext (payload + 16-byte tag) are both held until the receipt,
     * with each message's record (512 bytes, docs/configuration.md). */
    cr_assert_eq(pulsarc_client_memory_used(client), 2 * (512 + 2 * 5 + 16));
    h_release_held_expect_freed(mb, client, 2);
    h_finish();
}

Test(client_encryption, send_action_publishes_plaintext_with_a_warning)
{
    client = h_client(NULL);
    producer = enc_producer("/nonexistent/k1.pem", "cryptoFailureAction", "send", NULL);
    h_send_range(producer, 0, 2);
    cr_assert(h_wait_calls(2, 3000));
    h_assert_each_once(2, PULSARC_OK);
    for (size_t i = 0; i < 2; i++) {
        mock_send_t s;
        cr_assert(mock_broker_get_send(mb, i, &s));
        cr_assert_eq(s.metadata->n_encryption_keys, 0);
        cr_assert_not(s.metadata->has_encryption_param);
        assert_payload(s.payload, s.payload_len, (int)i);
        mock_send_free(&s);
    }
    cr_assert(h_log_contains("publishing unencrypted"));
    cr_assert_eq(pulsarc_client_memory_used(client), 0);
    h_finish();
}

/* Send message idx and wait for its receipt; returns the data key it went with. */
static void send_one(int idx, const char *priv_file, uint8_t key[32], bool must_unwrap)
{
    cr_assert_eq(h_send(producer, idx), PULSARC_OK);
    cr_assert(h_wait_calls(idx + 1, 3000));
    cr_assert_eq(T.res[idx], PULSARC_OK);
    if (!must_unwrap) {
        /* Only say whether priv_file unwraps it (key untouched otherwise). */
        mock_send_t s;
        cr_assert(mock_broker_get_send(mb, (size_t)idx, &s));
        EVP_PKEY *priv = td_private_key(priv_file);
        if (td_unwrap(priv, s.metadata->encryption_keys[0]->value.data,
                      s.metadata->encryption_keys[0]->value.len, key) != 0)
            memset(key, 0, 32);
        EVP_PKEY_free(priv);
        mock_send_free(&s);
        return;
    }
    size_t len;
    uint8_t *plain = open_send((size_t)idx, priv_file, key, &len);
    assert_payload(plain, len, idx);
    free(plain);
}

/* The client's clock, moved by the tests below (the producers' key times read it). */
static h_fake_clock_t key_clock = H_FAKE_CLOCK_INIT;

static void with_fake_clock(pulsarc_client_config_t *cc)
{
    pc_client_config_set_clock(cc, &key_clock.base);
}

Test(client_encryption, rotation_gives_new_wrapped_keys_that_still_decrypt)
{
    h_client_setup = with_fake_clock;
    client = h_client(NULL);
    producer = enc_producer(PUB1, "dataKeyRotationMs", "100", NULL);
    uint8_t first[32], key[32];
    send_one(0, "test_rsa1_priv.pem", first, true);
    h_fake_clock_advance(&key_clock, 99);
    send_one(1, "test_rsa1_priv.pem", key, true);
    cr_assert_eq(memcmp(key, first, 32), 0, "rotated before dataKeyRotationMs");
    h_fake_clock_advance(&key_clock, 1);
    send_one(2, "test_rsa1_priv.pem", key, true);
    cr_assert_neq(memcmp(key, first, 32), 0, "no rotation at dataKeyRotationMs");
    int i = 3;
    mock_send_t a, b;
    cr_assert(mock_broker_get_send(mb, 0, &a) && mock_broker_get_send(mb, (size_t)i - 1, &b));
    cr_assert_neq(memcmp(a.metadata->encryption_keys[0]->value.data,
                         b.metadata->encryption_keys[0]->value.data, 256),
                  0);
    mock_send_free(&a);
    mock_send_free(&b);
    h_finish();
}

static void copy_file(const char *from, const char *to)
{
    size_t len = 0;
    char *pem = td_key_file(from, &len);
    cr_assert_not_null(pem);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *f = fopen(tmp, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(pem, 1, len, f), len);
    fclose(f);
    cr_assert_eq(rename(tmp, to), 0); /* replaced at once, as a deployment would */
    free(pem);
}

Test(client_encryption, a_changed_key_file_rotates_the_data_key)
{
    char path[] = "/tmp/pulsarc-enc-key-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    copy_file("test_rsa1_pub.pem", path);
    h_client_setup = with_fake_clock;
    client = h_client(NULL);
    producer = enc_producer(path, NULL);
    uint8_t key[32];
    send_one(0, "test_rsa1_priv.pem", key, true);
    copy_file("test_rsa2_pub.pem", path);
    /* The keys are read again once a minute: not yet, then at the minute. */
    h_fake_clock_advance(&key_clock, 59999);
    send_one(1, "test_rsa1_priv.pem", key, true);
    h_fake_clock_advance(&key_clock, 1);
    send_one(2, "test_rsa2_priv.pem", key, false);
    static const uint8_t zero[32];
    cr_assert_neq(memcmp(key, zero, 32), 0, "the new public key was not used at the minute");
    size_t len;
    uint8_t *plain = open_send(2, "test_rsa2_priv.pem", key, &len);
    assert_payload(plain, len, 2);
    free(plain);
    unlink(path);
    h_finish();
}

Test(client_encryption, resend_after_a_cut_repeats_the_same_ciphertext)
{
    client = h_client(NULL);
    producer = enc_producer(PUB1, NULL);
    h_pending_unanswered(2);
    mock_broker_cut_now(mb);
    cr_assert(h_wait_calls(2, 5000));
    h_assert_each_once(2, PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 4);
    for (size_t i = 0; i < 2; i++) {
        mock_send_t first, again;
        cr_assert(mock_broker_get_send(mb, i, &first) && mock_broker_get_send(mb, i + 2, &again));
        cr_assert_neq(first.connection, again.connection);
        cr_assert_eq(first.metadata_raw_len, again.metadata_raw_len);
        cr_assert_eq(memcmp(first.metadata_raw, again.metadata_raw, first.metadata_raw_len), 0,
                     "same IV, same wrapped key, same metadata");
        cr_assert_eq(first.payload_len, again.payload_len);
        cr_assert_eq(memcmp(first.payload, again.payload, first.payload_len), 0, "same ciphertext");
        mock_send_free(&first);
        mock_send_free(&again);
        uint8_t key[32];
        size_t len;
        uint8_t *plain = open_send(i + 2, "test_rsa1_priv.pem", key, &len);
        assert_payload(plain, len, (int)i);
        free(plain);
    }
    h_finish();
}

/* The application's key reader: the public key and a version, counted per call. */
static atomic_int reader_calls;

static pulsarc_result versioned_reader(const char *name, pulsarc_crypto_key_t *key, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&reader_calls, 1);
    cr_assert_str_eq(name, "app-key");
    size_t len = 0;
    char *pem = td_key_file("test_rsa1_pub.pem", &len);
    pulsarc_result r = pulsarc_crypto_key_set_pem(key, pem, len);
    free(pem);
    return r == PULSARC_OK ? pulsarc_crypto_key_add_metadata(key, "version", "3") : r;
}

Test(client_encryption, partitions_use_the_callback_reader_and_its_metadata)
{
    mock_broker_set_partitions(mb, 3);
    client = h_client(NULL);
    pulsarc_producer_config_t *pc = h_producer_conf(0, "encryptionKeys", "app-key", NULL);
    cr_assert_eq(pulsarc_producer_config_set_crypto_key_reader(pc, versioned_reader, NULL),
                 PULSARC_OK);
    producer = h_producer_ok(client, H_TOPIC, pc);
    h_send_range(producer, 0, 6);
    cr_assert(h_wait_calls(6, 3000));
    h_assert_each_once(6, PULSARC_OK);
    cr_assert_eq(atomic_load(&reader_calls), 3, "one load per partition");
    bool seen[6] = { false };
    for (size_t i = 0; i < 6; i++) {
        mock_send_t s;
        cr_assert(mock_broker_get_send(mb, i, &s));
        cr_assert_eq(s.metadata->encryption_keys[0]->n_metadata, 1);
        cr_assert_str_eq(s.metadata->encryption_keys[0]->metadata[0]->key, "version");
        cr_assert_str_eq(s.metadata->encryption_keys[0]->metadata[0]->value, "3");
        mock_send_free(&s);
        uint8_t key[32];
        size_t len;
        uint8_t *plain = open_send_of(i, "app-key", "test_rsa1_priv.pem", key, &len);
        char text[32];
        snprintf(text, sizeof text, "%.*s", (int)len, (const char *)plain);
        int idx = -1;
        cr_assert_eq(sscanf(text, "msg-%d", &idx), 1);
        cr_assert(idx >= 0 && idx < 6 && !seen[idx]);
        seen[idx] = true;
        assert_payload(plain, len, idx);
        free(plain);
    }
    h_finish();
}
