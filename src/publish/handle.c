/* The producer handle itself: whether it may be used, its memory, the posting of its work
 * to the loop thread, and what its accessors report. @locality as each function says. */
#include "publish/producer.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "publish/seal_stage.h"

pulsarc_result pc_producer_check_attached(const pulsarc_producer_t *p)
{
    if (!p)
        return pc_fail(PULSARC_ERR_INVALID_ARGUMENT, "producer must not be NULL");
    if (atomic_load(&p->state) == P_DETACHED)
        return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "the client was destroyed");
    return PULSARC_OK;
}

void pc_producer_release(pulsarc_producer_t *p)
{
    pc_partitioned_free(p->pt);
    pc_spool_close(p->spool); /* every message of it has completed */
    pc_seal_stage_close(p);
    pc_producer_config_clear(&p->conf);
    free(atomic_load(&p->name));
    free(p);
}

void pc_producer_post(pulsarc_producer_t *p, pc_task_t *task)
{
    if (p->spool)
        pc_client_post_in_order(p->client, task);
    else
        pc_client_post(p->client, task);
}

void pc_producer_publish(pulsarc_producer_t *p, int partition)
{
    pc_partition_status_t st;
    if (!pc_partitioned_status(p->pt, partition, &st))
        return; /* the partitions are gone (the client is closing) */
    if (st.last_sequence_id > atomic_load(&p->last_sequence_id))
        atomic_store(&p->last_sequence_id, st.last_sequence_id);
    if (st.schema_version >= 0)
        atomic_store(&p->schema_version, st.schema_version);
    /* The name is partition 0's, known once it has registered (later with lazy start). */
    if (!atomic_load(&p->name) && partition == 0 && *st.name) {
        char *name = strdup(st.name);
        if (name)
            atomic_store(&p->name, name);
    }
}

/* ---- accessors: any thread ------------------------------------------------------------ */

const char *pulsarc_producer_name(const pulsarc_producer_t *p)
{
    const char *name = p ? atomic_load(&p->name) : NULL;
    return name ? name : "";
}

const char *pulsarc_producer_topic(const pulsarc_producer_t *p)
{
    return p ? p->topic.full : "";
}

int64_t pulsarc_producer_schema_version(const pulsarc_producer_t *p)
{
    return p ? atomic_load(&p->schema_version) : -1;
}

int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *p)
{
    return p ? atomic_load(&p->last_sequence_id) : -1;
}

uint64_t pulsarc_producer_pending_count(const pulsarc_producer_t *p)
{
    return p ? (uint64_t)atomic_load(&p->permits.pending) : 0;
}

/* The handle outlives its partitioned producer's partitions but not the list itself, which
 * goes with the handle (pc_producer_release): reading its count is safe until free. */
int pulsarc_producer_is_connected(const pulsarc_producer_t *p)
{
    return p && atomic_load(&p->state) == P_OPEN && p->pt && pc_partitioned_connected(p->pt);
}

uint64_t pulsarc_producer_last_disconnected_timestamp(const pulsarc_producer_t *p)
{
    return p && p->pt ? pc_partitioned_disconnected_at(p->pt) : 0;
}

int pulsarc_producer_partitions(const pulsarc_producer_t *p)
{
    return p && p->pt ? pc_partitioned_count(p->pt) : 0;
}
