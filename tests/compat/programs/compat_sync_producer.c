/* A producer written against libpulsar's C API as its examples write one, built with
 * pulsarc-compat (tests/interop/test_compat.py runs it): N synchronous sends of
 * "sync-<i>", then close.
 *   compat_sync_producer SERVICE_URL TOPIC COUNT */
#include <pulsar/c/client.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s SERVICE_URL TOPIC COUNT\n", argv[0]);
        return 2;
    }
    int count = atoi(argv[3]);
    pulsar_client_configuration_t *conf = pulsar_client_configuration_create();
    pulsar_client_t *client = pulsar_client_create(argv[1], conf);

    pulsar_producer_configuration_t *producer_conf = pulsar_producer_configuration_create();
    pulsar_producer_configuration_set_batching_enabled(producer_conf, 0);
    pulsar_producer_t *producer;
    pulsar_result err = pulsar_client_create_producer(client, argv[2], producer_conf, &producer);
    if (err != pulsar_result_Ok) {
        printf("Failed to create producer: %s\n", pulsar_result_str(err));
        return 1;
    }
    int failed = 0;
    for (int i = 0; i < count; i++) {
        char data[32];
        snprintf(data, sizeof data, "sync-%d", i);
        pulsar_message_t *message = pulsar_message_create();
        pulsar_message_set_content(message, data, strlen(data));
        err = pulsar_producer_send(producer, message);
        if (err != pulsar_result_Ok) {
            printf("Failed to publish message: %s\n", pulsar_result_str(err));
            failed++;
        }
        pulsar_message_free(message);
    }
    printf("sent %d failed %d producer %s\n", count - failed, failed,
           pulsar_producer_get_producer_name(producer));
    pulsar_producer_close(producer);
    pulsar_producer_free(producer);
    pulsar_producer_configuration_free(producer_conf);
    pulsar_client_close(client);
    pulsar_client_free(client);
    pulsar_client_configuration_free(conf);
    return failed ? 1 : 0;
}
