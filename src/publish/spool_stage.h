/* The spool stage (spoolDir): a send is appended to the producer's spool before it is
 * accepted, and handed over by the spool in sequence-id order once the spool's policy is
 * met; its record goes when the message completes (spool_stage.c).
 * @locality as each function says. */
#ifndef PC_SPOOL_STAGE_H
#define PC_SPOOL_STAGE_H

#include "publish/send.h"
#include "pulsarc/pulsarc.h"

struct pulsarc_producer;

/* Open the spool the configuration names (PULSARC_OK without spoolDir), before the
 * producer registers. Fails with INVALID_CONFIG on settings a spool cannot work with, or
 * with pc_spool_open's errors. Creating thread. */
pulsarc_result pc_spool_stage_open(struct pulsarc_producer *p);
/* Whether msg may be spooled by a send on this thread (checked before admission). */
pulsarc_result pc_spool_stage_check(const struct pulsarc_producer *p, const pulsarc_message_t *msg);
/* Append s (admitted, its task set, sealed first when the producer seals) and hand it over
 * in sequence-id order once the spool's policy is met. On failure s is untouched (the
 * caller undoes it). Sending thread. */
pulsarc_result pc_spool_stage_append(struct pulsarc_producer *p, pc_send_t *s);
/* s completed with res: let its record go, unless res is ALREADY_CLOSED (the client or
 * producer closed before its receipt: the next producer on the spool sends it). Loop
 * thread. */
void pc_spool_stage_release(pc_send_t *s, pulsarc_result res);

#endif
