/** @file
 * pulsarc-compat produces only: reader configurations are not provided. This header names the type so
 * that pulsar/c/client.h compiles; no function of libpulsar's reader_configuration.h is declared or defined.
 * docs/porting-from-libpulsar.md says what the compat layer does not cover. */
#ifndef PULSARC_COMPAT_PULSAR_C_READER_CONFIGURATION_H
#define PULSARC_COMPAT_PULSAR_C_READER_CONFIGURATION_H

#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Not provided by pulsarc-compat (see the file's comment). */
typedef struct _pulsar_reader_configuration pulsar_reader_configuration_t;

#ifdef __cplusplus
}
#endif

#endif
