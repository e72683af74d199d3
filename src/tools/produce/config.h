/*
 * The library's configurations made from pulsarc-produce's arguments (config.c). A
 * setting the library refuses is a usage error: it ends the process (EXIT_USAGE) before
 * anything connects.
 */
#ifndef PULSARC_PRODUCE_CONFIG_H
#define PULSARC_PRODUCE_CONFIG_H

#include <stdbool.h>

#include <pulsarc/pulsarc.h>

#include "args.h"

/* --verbose, --memory-limit, --conf-file, the TLS and auth flags, then --client-conf:
 * each overrides what came before. --verbose prints the effective settings. */
pulsarc_client_config_t *make_client_config(const struct args *a);

/* The CLI's defaults, the dedicated flags, the schema and the encryption keys, then
 * --conf: the escape hatch wins. --verbose prints the effective settings. The library's
 * producer never blocks for room: *wait_for_room says whether the tool waits instead
 * (blockIfQueueFull, see room.h). */
pulsarc_producer_config_t *make_producer_config(const struct args *a, bool *wait_for_room);

/* A message builder with the -k key (unless it is a KeyValue key) and the properties;
 * only the payload changes per send. */
pulsarc_message_t *make_message(const struct args *a);

#endif
