/* A producer with both a spool and encryption keys: its messages are encrypted before
 * the spool stores them (no payload of it on disk in clear), and a producer opened on
 * the spool later resends them as they were sealed, each an entry of its own (or its
 * chunks), which a consumer holding the private key decrypts: decrypted here with
 * tests/support/test_decrypt.h. */
#include "client_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "../support/test_decrypt.h"
#include "../support/test_spool_dir.h"
#include "codec/compression.h"
#include "common/buf.h"

TestSuite(client_spool_encrypted, .init = h_setup, .fini = h_teardown,
          .timeout = H_SUITE_TIMEOUT(40));

#define PUB1 PC_TEST_KEYS_DIR "/test_rsa1_pub.pem"

static char spool_dir[64];

static pulsarc_producer_t *sealing_producer(const char *key_file, ...)
{
    pulsarc_producer_config_t *pc = h_producer_conf(0, "producerName", "app-1", "spoolDir",
                                                    spool_dir, "spoolFsync", "never",
                                                    "sendTimeoutMs", "0", NULL);
    va_list ap;
    va_start(ap, key_file);
    h_set_va(NULL, pc, ap);
    va_end(ap);
    cr_assert_eq(pulsarc_producer_config_add_encryption_key_file(pc, "k1", key_file), PULSARC_OK);
    return h_producer_ok(client, H_TOPIC, pc);
}

/* Whether any file of the spool holds needle. */
static bool spool_contains(const char *needle)
{
    DIR *d = opendir(spool_dir);
    cr_assert_not_null(d);
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", spool_dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        char *buf = malloc((size_t)st.st_size + 1);
        FILE *f = fopen(path, "rb");
        size_t n = f && buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
        if (f)
            fclose(f);
        found = buf && memmem(buf, n, needle, strlen(needle)) != NULL;
        free(buf);
    }
    closedir(d);
    return found;
}

/* Messages [0, n) of len bytes accepted while the broker is down, then the client goes
 * ("the process dies"): they are in the spool only. */
static void leave_in_spool(int n, size_t len, const char *codec)
{
    client = h_client(NULL);
    producer = sealing_producer(PUB1, "compressionType", codec, "batchingEnabled", "true",
                                "chunkingEnabled", "true", NULL);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range_len(producer, 0, n, len);
    pulsarc_client_destroy(client);
    client = NULL;
    cr_assert(h_wait_calls(n, 3000));
    pulsarc_producer_free(producer);
    producer = NULL;
    h_reset_tracker();
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
}

/* SEND i decrypted with the test private key: the plaintext before compression. */
static uint8_t *open_entry(const mock_send_t *s, size_t *len)
{
    const Pulsar__Proto__MessageMetadata *m = s->metadata;
    cr_assert_not_null(m);
    cr_assert_eq(m->n_encryption_keys, 1);
    cr_assert_str_eq(m->encryption_keys[0]->key, "k1");
    cr_assert(m->has_encryption_param && m->encryption_param.len == 12);
    uint8_t key[32];
    EVP_PKEY *priv = td_private_key("test_rsa1_priv.pem");
    cr_assert_eq(td_unwrap(priv, m->encryption_keys[0]->value.data,
                           m->encryption_keys[0]->value.len, key),
                 0);
    EVP_PKEY_free(priv);
    uint8_t *plain;
    cr_assert_eq(td_open(key, m->encryption_param.data, 12, s->payload, s->payload_len, &plain), 0,
                 "the entry does not decrypt");
    *len = s->payload_len - 16;
    return plain;
}

/* The expected payload of message idx (h_message's). */
static void assert_message(const uint8_t *data, size_t len, int idx, size_t want_len)
{
    char head[32];
    int n = snprintf(head, sizeof head, "msg-%d", idx);
    cr_assert_eq(len, want_len ? want_len : (size_t)n, "message %d's length", idx);
    cr_assert_eq(memcmp(data, head, (size_t)n), 0, "message %d", idx);
    for (size_t i = (size_t)n; i < len; i++)
        cr_assert_eq(data[i], (uint8_t)('a' + (i % 26)), "message %d, byte %zu", idx, i);
}

Test(client_spool_encrypted, the_spool_holds_ciphertext_and_the_resend_decrypts)
{
    cr_assert_eq(test_spool_dir_make(spool_dir, sizeof spool_dir), 0);
    mock_broker_set_deduplication(mb, true);
    mock_broker_set_last_sequence_id(mb, MOCK_LAST_SEQ_TRACKED);
    leave_in_spool(5, 300, "zlib");
    cr_assert_eq(test_spool_dir_count(spool_dir, ".seg"), 1);
    cr_assert(!spool_contains("msg-"), "a payload is in the spool in clear");
    cr_assert(!spool_contains("abcdefghijklmnopqrstuvwxyz"), "a payload is in the spool in clear");

    /* Another process: it needs nothing but the spool (no private key, no data key). */
    client = h_client(NULL);
    producer = sealing_producer(PUB1, "compressionType", "zlib", "batchingEnabled", "true", NULL);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 5, "each resent message is an entry of its own");
    for (size_t i = 0; i < 5; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert_eq(s.num_messages, 1);
        cr_assert_eq(s.sequence_id, i);
        cr_assert_eq(s.metadata->compression, PULSAR__PROTO__COMPRESSION_TYPE__ZLIB);
        cr_assert_eq(s.metadata->uncompressed_size, 300);
        size_t len;
        uint8_t *packed = open_entry(&s, &len);
        pc_buf_t plain;
        pc_buf_init(&plain);
        cr_assert_eq(pc_decompress(PC_CODEC_ZLIB, packed, len, 300, &plain), 0);
        assert_message(plain.data, plain.len, (int)i, 300);
        pc_buf_free(&plain);
        free(packed);
        mock_send_free(&s);
    }
    cr_assert_eq(pulsarc_producer_close(producer), PULSARC_OK);
    cr_assert_eq(test_spool_dir_count(spool_dir, ".seg"), 0);
    h_finish();
    test_spool_dir_remove(spool_dir);
}

/* A message larger than the broker's limit is sealed in pieces, one per chunk, each with
 * its own IV; resent, the chunks decrypt one by one and join into the message. */
Test(client_spool_encrypted, a_large_message_is_sealed_chunk_by_chunk)
{
    cr_assert_eq(test_spool_dir_make(spool_dir, sizeof spool_dir), 0);
    mock_broker_set_max_message_size(mb, 2000);
    leave_in_spool(1, 7000, "none");
    cr_assert(!spool_contains("abcdefghijklmnopqrstuvwxyz"), "a payload is in the spool in clear");
    client = h_client(NULL);
    producer = sealing_producer(PUB1, "chunkingEnabled", "true", NULL);
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    size_t n = (size_t)h_count(mb, MOCK_SENDS);
    cr_assert_geq(n, 4, "7000 bytes in chunks below 2000: at least 4");
    uint8_t *joined = malloc(7000);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        mock_send_t s = h_get_send(mb, i);
        cr_assert(s.is_chunk);
        cr_assert_eq(s.metadata->chunk_id, (int32_t)i);
        cr_assert_eq(s.metadata->num_chunks_from_msg, (int32_t)n);
        cr_assert_eq(s.metadata->total_chunk_msg_size, 7000);
        size_t len;
        uint8_t *plain = open_entry(&s, &len);
        cr_assert_leq(at + len, 7000);
        memcpy(joined + at, plain, len);
        at += len;
        free(plain);
        mock_send_free(&s);
    }
    assert_message(joined, at, 0, 7000);
    free(joined);
    h_finish();
    test_spool_dir_remove(spool_dir);
}

/* No data key (the key file is missing): the message is refused at the send whatever
 * cryptoFailureAction says, since sent unencrypted it would be on disk in clear. */
Test(client_spool_encrypted, a_message_that_cannot_be_encrypted_is_refused_not_spooled)
{
    cr_assert_eq(test_spool_dir_make(spool_dir, sizeof spool_dir), 0);
    client = h_client(NULL);
    producer = sealing_producer(PC_TEST_KEYS_DIR "/no_such_key.pem", "cryptoFailureAction", "send",
                                NULL);
    cr_assert_eq(h_send(producer, 0), PULSARC_ERR_CRYPTO);
    cr_assert(strstr(pulsarc_last_error_detail(), "k1"), "%s", pulsarc_last_error_detail());
    cr_assert_eq(pulsarc_producer_flush(producer), PULSARC_OK);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 0);
    cr_assert(!spool_contains("msg-"), "a payload is in the spool in clear");
    h_finish();
    test_spool_dir_remove(spool_dir);
}
