/* The checks stage: what a message must be for the producer to take it, judged before it
 * takes any permit (checks.c). @locality any thread. */
#ifndef PC_CHECKS_H
#define PC_CHECKS_H

#include "pulsarc/pulsarc.h"

struct pulsarc_producer;

/* PULSARC_OK, or why msg cannot be sent by p (the detail set): its size against the
 * protocol's and (uncompressed, without chunking) the broker's limits, an explicit id with
 * key-based batching, its payload against the schema, what a spool cannot keep. */
pulsarc_result pc_check_message(const struct pulsarc_producer *p, const pulsarc_message_t *msg);

#endif
