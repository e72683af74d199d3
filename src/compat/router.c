/* A custom message router: libpulsar's callback behind pulsarc's. pulsarc calls its
 * router on the thread that sends, before the send returns, so the message the router is
 * shown is the one that send was given (message.c keeps it per thread). */
#include "compat/compat.h"

struct _pulsar_topic_metadata {
    int partitions;
};

int pulsar_topic_metadata_get_num_partitions(pulsar_topic_metadata_t *topicMetadata)
{
    return topicMetadata ? topicMetadata->partitions : 0;
}

int pc_compat_route(const pulsarc_message_t *msg, int n_partitions, void *ctx)
{
    (void)msg;
    const pc_compat_router *router = ctx;
    pulsar_topic_metadata_t meta = { .partitions = n_partitions };
    pulsar_message_t *sending = pc_compat_sending();
    if (!sending)
        return -1; /* out of range: pulsarc fails the send */
    return router->fn(sending, &meta, router->ctx);
}
