/* The message id a send completes with: a plain value the partition producer fills from
 * the broker's receipt. message_id.c has its public accessors and its serialised form
 * (MessageIdData, as the official clients write it). */
#ifndef PC_MESSAGE_ID_H
#define PC_MESSAGE_ID_H

#include <stdbool.h>
#include <stdint.h>

#include "pulsarc/pulsarc.h"

struct pulsarc_message_id {
    int64_t ledger;
    int64_t entry;
    int32_t partition;   /* -1: no partition */
    int32_t batch_index; /* -1: not batched */
    int32_t batch_size;  /* 0: not batched */
    /* A chunked message is named by its first and last chunk; for others first == last. */
    bool chunked;
    int64_t first_ledger;
    int64_t first_entry;
};

/* An id for one entry: not batched, not chunked. */
static inline void pc_message_id_init(pulsarc_message_id_t *id, int64_t ledger, int64_t entry,
                                      int32_t partition)
{
    id->ledger = ledger;
    id->entry = entry;
    id->partition = partition;
    id->batch_index = -1;
    id->batch_size = 0;
    id->chunked = false;
    id->first_ledger = ledger;
    id->first_entry = entry;
}

#endif
