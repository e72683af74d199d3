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

void pc_message_id_init(pulsarc_message_id_t *id, int64_t ledger, int64_t entry,
                        int32_t partition);

#endif
