/* A producer written against libpulsar's C API with pulsarc-compat
 * (tests/interop/test_compat.py and test_compat_secure.py run it): COUNT asynchronous
 * sends of "async-<i>" with the property i=<i>, each callback printing where its message
 * went ("sent <i> <message id>", the id freed by the callback, which owns it).
 *   compat_async_producer SERVICE_URL TOPIC COUNT [options]
 *     --key-prefix P     the key of message i is P<i>
 *     --key-list a,b,c   the key of message i is the i-th of the list (COUNT is its length)
 *     --no-batching      batching off (it is on by default, as in libpulsar)
 *     --compression C    lz4 | zlib | zstd | snappy
 *     --token T          token authentication
 *     --trust FILE       the CA file for pulsar+ssl://
 *     --validate-hostname
 *     --encrypt NAME --public-key FILE   end-to-end encryption (the default key reader) */
#include <pulsar/c/authentication.h>
#include <pulsar/c/client.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done, failed;

static void on_sent(pulsar_result res, pulsar_message_id_t *id, void *ctx)
{
    int i = (int)(intptr_t)ctx;
    if (res == pulsar_result_Ok) {
        char *s = pulsar_message_id_str(id);
        printf("sent %d %s\n", i, s);
        free(s);
        pulsar_message_id_free(id);
    } else {
        printf("failed %d %s\n", i, pulsar_result_str(res));
    }
    pthread_mutex_lock(&mu);
    done++;
    failed += res != pulsar_result_Ok;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SERVICE_URL TOPIC COUNT [options]\n", argv[0]);
        return 2;
    }
    int count = atoi(argv[3]);
    const char *key_prefix = NULL, *token = NULL, *trust = NULL, *enc = NULL, *pub = NULL;
    char *key_list = NULL;
    int batching = 1, validate = 0;
    pulsar_compression_type codec = pulsar_CompressionNone;
    for (int a = 4; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "--key-prefix") && v)
            key_prefix = argv[++a];
        else if (!strcmp(argv[a], "--key-list") && v)
            key_list = argv[++a];
        else if (!strcmp(argv[a], "--no-batching"))
            batching = 0;
        else if (!strcmp(argv[a], "--compression") && v) {
            a++;
            codec = !strcmp(v, "lz4")      ? pulsar_CompressionLZ4
                    : !strcmp(v, "zlib")   ? pulsar_CompressionZLib
                    : !strcmp(v, "zstd")   ? pulsar_CompressionZSTD
                    : !strcmp(v, "snappy") ? pulsar_CompressionSNAPPY
                                           : pulsar_CompressionNone;
        } else if (!strcmp(argv[a], "--token") && v)
            token = argv[++a];
        else if (!strcmp(argv[a], "--trust") && v)
            trust = argv[++a];
        else if (!strcmp(argv[a], "--validate-hostname"))
            validate = 1;
        else if (!strcmp(argv[a], "--encrypt") && v)
            enc = argv[++a];
        else if (!strcmp(argv[a], "--public-key") && v)
            pub = argv[++a];
        else {
            fprintf(stderr, "unknown argument %s\n", argv[a]);
            return 2;
        }
    }
    char *keys[1024];
    int nkeys = 0;
    for (char *k = key_list ? strtok(key_list, ",") : NULL; k && nkeys < 1024;
         k = strtok(NULL, ","))
        keys[nkeys++] = k;
    if (key_list)
        count = nkeys;

    pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
    if (token) {
        pulsar_authentication_t *auth = pulsar_authentication_token_create(token);
        pulsar_client_configuration_set_auth(conf, auth);
        pulsar_authentication_free(auth);
    }
    if (trust)
        pulsar_client_configuration_set_tls_trust_certs_file_path(conf, trust);
    pulsar_client_configuration_set_validate_hostname(conf, validate);
    pulsar_client_t *client = pulsar_client_create(argv[1], conf);

    pulsar_producer_configuration_t *pconf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_batching_enabled(pconf, batching);
    pulsar_producer_configuration_set_compression_type(pconf, codec);
    if (enc && pub) {
        pulsar_producer_configuration_set_encryption_key(pconf, enc);
        pulsar_producer_configuration_set_default_crypto_key_reader(pconf, pub, NULL);
    }
    pulsar_producer_t *producer;
    pulsar_result err = pulsar_client_create_producer(client, argv[2], pconf, &producer);
    if (err != pulsar_result_Ok) {
        printf("create failed %s\n", pulsar_result_str(err));
        return 1;
    }
    for (int i = 0; i < count; i++) {
        char data[32], key[256], idx[16];
        snprintf(data, sizeof data, "async-%d", i);
        snprintf(idx, sizeof idx, "%d", i);
        pulsar_message_t *m = pulsar_message_create();
        pulsar_message_set_content(m, data, strlen(data));
        pulsar_message_set_property(m, "i", idx);
        if (key_list) {
            pulsar_message_set_partition_key(m, keys[i]);
        } else if (key_prefix) {
            snprintf(key, sizeof key, "%s%d", key_prefix, i);
            pulsar_message_set_partition_key(m, key);
        }
        pulsar_producer_send_async(producer, m, on_sent, (void *)(intptr_t)i);
        pulsar_message_free(m);
    }
    pulsar_producer_flush(producer);
    pthread_mutex_lock(&mu);
    while (done < count)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    printf("done ok=%d failed=%d\n", count - failed, failed);
    fflush(stdout);
    pulsar_producer_close(producer);
    pulsar_producer_free(producer);
    pulsar_producer_configuration_free(pconf);
    pulsar_client_close(client);
    pulsar_client_free(client);
    pulsar_client_configuration_free(conf);
    return failed ? 1 : 0;
}
