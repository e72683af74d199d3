/* A producer's interceptors (pulsarc_interceptor_t): the runs of each hook over the chain
 * its configuration collected (config/interceptor_list.h), in the order added.
 * before_send works on a copy of the caller's message (the caller's is never changed);
 * on_ack sees a read-only view of the accepted message.
 * @locality any thread for the chain's copies and before_send (the caller's); loop
 * thread for on_ack and the partition count. */
#ifndef PC_INTERCEPTORS_H
#define PC_INTERCEPTORS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/interceptor_list.h"
#include "producer/message.h"
#include "pulsarc/pulsarc.h"

/* Run every before_send on a copy of msg, in order. PULSARC_OK: *out is the copy (its
 * copy_of is msg), to be sent instead of msg and then freed with pulsarc_message_free.
 * Otherwise an interceptor rejected it (or memory ran out): the result, with the detail
 * set, and nothing to free. */
pulsarc_result pc_interceptors_before_send(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                                           pulsarc_message_t *msg, pulsarc_message_t **out);
/* A borrowed payload of the caller's that copy still carries goes with copy into the send
 * being built: true when copy took it over for that (pc_interceptors_borrow_end must
 * follow). */
bool pc_interceptors_borrow_begin(pulsarc_message_t *copy, pulsarc_message_t *caller);
/* The send was built (sent: the payload is the send's now, the caller's message has none,
 * as after any accepted send of a borrowed payload) or not (it stays the caller's). */
void pc_interceptors_borrow_end(pulsarc_message_t *copy, pulsarc_message_t *caller, bool sent);

/* Run every on_ack for an accepted message that ended with res (id on success). The
 * detail of a failure is the same for each interceptor and after them. Loop thread. */
void pc_interceptors_on_ack(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                            const pc_msg_t *msg, pulsarc_result res,
                            const pulsarc_message_id_t *id);
/* Run every on_partitions_change. Loop thread. */
void pc_interceptors_partitions_change(const pc_interceptors_t *c, pulsarc_producer_t *producer,
                                       const char *topic, int partitions);

#endif
