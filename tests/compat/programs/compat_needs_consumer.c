/* A program that needs a consumer: it compiles against pulsarc-compat's headers and must
 * fail to link, naming pulsar_client_subscribe (tests/install/check_install.sh builds it). */
#include <pulsar/c/client.h>

int main(void)
{
    pulsar_client_t *client = pulsar_client_create("pulsar://localhost:6650", NULL);
    pulsar_consumer_t *consumer = 0;
    return pulsar_client_subscribe(client, "t", "s", NULL, &consumer) == pulsar_result_Ok;
}
