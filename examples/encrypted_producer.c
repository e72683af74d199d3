/*
 * encrypted_producer — end-to-end encryption: the broker stores only ciphertext, and only
 * consumers holding the private key read the messages.
 *
 *   encrypted_producer SERVICE_URL TOPIC KEY_NAME PUBLIC_KEY.pem [METADATA_VALUE]
 *
 * Make a key pair (the consumer keeps the private key; the producer needs only the public
 * one):
 *   openssl genrsa -traditional -out my_priv.pem 2048
 *   openssl rsa -in my_priv.pem -pubout -out my_pub.pem
 * and read with any official client's consumer given a key reader for my_priv.pem, e.g.
 * Python: client.subscribe(topic, "sub",
 *                          crypto_key_reader=pulsar.CryptoKeyReader("my_pub.pem", "my_priv.pem"))
 *
 * The public key file is read again when the producer needs it (at the first message,
 * and about once a minute): replacing it switches new messages to the new key. If it
 * cannot be read, each message fails with PULSARC_ERR_CRYPTO (cryptoFailureAction=fail,
 * the default); never does a message go out unencrypted unless you set
 * cryptoFailureAction=send. The optional METADATA_VALUE shows a key reader callback:
 * it travels, readable, with the wrapped key (e.g. a key version for the consumer's
 * key reader).
 *
 * Build: cc encrypted_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pulsarc/pulsarc.h>

static void print_error(const char *what, pulsarc_result res)
{
    char detail[512];
    snprintf(detail, sizeof detail, "%s", pulsarc_last_error_detail());
    fprintf(stderr, "%s: %s [%s]%s%s\n", what, pulsarc_strerror(res), pulsarc_result_name(res),
            detail[0] ? ": " : "", detail);
}

/* A key reader callback: runs on the client's loop thread each time the producer loads
 * its keys. It reads the PEM file itself and adds a metadata pair. */
struct reader_ctx {
    const char *pem_path;
    const char *version;
};

static pulsarc_result read_key(const char *key_name, pulsarc_crypto_key_t *key, void *ctx)
{
    const struct reader_ctx *r = ctx;
    char pem[16384];
    FILE *f = fopen(r->pem_path, "rb");
    if (!f)
        return PULSARC_ERR_CRYPTO; /* the producer tries again at the next message */
    size_t n = fread(pem, 1, sizeof pem, f);
    fclose(f);
    pulsarc_result res = pulsarc_crypto_key_set_pem(key, pem, n);
    if (res == PULSARC_OK)
        res = pulsarc_crypto_key_add_metadata(key, "version", r->version);
    (void)key_name; /* one key here; a real reader would look the name up */
    return res;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s SERVICE_URL TOPIC KEY_NAME PUBLIC_KEY.pem [METADATA_VALUE]\n",
                argv[0]);
        return 2;
    }
    const char *url = argv[1], *topic = argv[2], *key_name = argv[3], *pem_path = argv[4];
    struct reader_ctx reader = { pem_path, argc > 5 ? argv[5] : NULL };

    pulsarc_producer_config_t *conf = pulsarc_producer_config_new();
    pulsarc_result res;
    if (reader.version) {
        /* Name the key, and let the callback supply it. */
        res = pulsarc_producer_config_set(conf, "encryptionKeys", key_name);
        if (res == PULSARC_OK)
            res = pulsarc_producer_config_set_crypto_key_reader(conf, read_key, &reader);
    } else {
        /* The ready-made reader: key name and PEM file in one call. */
        res = pulsarc_producer_config_add_encryption_key_file(conf, key_name, pem_path);
    }
    /* A new data key every hour instead of every four. */
    if (res == PULSARC_OK)
        res = pulsarc_producer_config_set(conf, "dataKeyRotationMs", "3600000");
    if (res != PULSARC_OK) {
        print_error("configuration", res);
        pulsarc_producer_config_free(conf);
        return 1;
    }

    pulsarc_client_t *client = NULL;
    pulsarc_producer_t *producer = NULL;
    res = pulsarc_client_new(url, NULL, &client);
    if (res != PULSARC_OK) {
        print_error("client", res);
        pulsarc_producer_config_free(conf);
        return 1;
    }
    res = pulsarc_client_create_producer(client, topic, conf, &producer);
    pulsarc_producer_config_free(conf);
    if (res != PULSARC_OK) {
        print_error("create producer", res);
        pulsarc_client_destroy(client);
        return 1;
    }

    int failed = 0;
    pulsarc_message_t *msg = pulsarc_message_new();
    for (int i = 0; i < 5; i++) {
        char text[64];
        snprintf(text, sizeof text, "secret message %d", i);
        pulsarc_message_set_payload(msg, text, strlen(text));
        /* The key and properties stay readable by the broker; only the payload is
         * encrypted. */
        pulsarc_message_set_property(msg, "index", text + strlen("secret message "));
        pulsarc_message_id_t *id = NULL;
        res = pulsarc_producer_send(producer, msg, &id);
        if (res != PULSARC_OK) {
            print_error("send", res); /* PULSARC_ERR_CRYPTO if the key cannot be read */
            failed++;
            continue;
        }
        char id_text[96];
        pulsarc_message_id_str(id, id_text, sizeof id_text);
        printf("sent encrypted message %d as %s\n", i, id_text);
        pulsarc_message_id_free(id);
    }
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    return failed ? 1 : 0;
}
