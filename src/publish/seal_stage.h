/* The seal stage, for a producer with both spoolDir and encryptionKeys: each message is
 * compressed and encrypted on the sending thread, before the spool stores it, so that the
 * spool never holds its payload in clear (seal_stage.c). @locality as each function says. */
#ifndef PC_SEAL_STAGE_H
#define PC_SEAL_STAGE_H

#include "publish/send.h"
#include "pulsarc/pulsarc.h"

struct pulsarc_producer;

/* The producer's sealer, when its spool is open and encryption keys are named (PULSARC_OK
 * and nothing otherwise). Creating thread. */
pulsarc_result pc_seal_stage_open(struct pulsarc_producer *p);
void pc_seal_stage_close(struct pulsarc_producer *p);
/* Compress and encrypt s's message into s->msg.sealed (its plaintext stays in memory only,
 * for the interceptors and the callback). PULSARC_ERR_CRYPTO when no data key can be had,
 * MESSAGE_TOO_BIG when it cannot be framed, NO_MEMORY. Any thread. */
pulsarc_result pc_seal_stage_seal(struct pulsarc_producer *p, pc_send_t *s);

#endif
