/* Error codes: names, descriptions and the per-thread detail message. */
#ifndef PC_ERROR_H
#define PC_ERROR_H

#include "pulsarc/pulsarc.h"

/* Record a detail message for the calling thread and return res, so that failures read
 * `return pc_fail(PULSARC_ERR_X, "what went wrong: %s", why);`. */
pulsarc_result pc_fail(pulsarc_result res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Set the detail without formatting (NULL clears it). */
void pc_set_detail(const char *detail);
/* Map a protocol ServerError value to a result code. */
pulsarc_result pc_result_from_server_error(int server_error);
/* Errors that fail the first registration at once instead of retrying until
 * operationTimeoutMs (a superset of pulsarc_result_is_terminal). */
int pc_result_fails_creation(pulsarc_result res);

#endif
