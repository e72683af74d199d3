/** @file
 * pulsarc-compat: PULSAR_VERSION and PULSAR_VERSION_STR (pulsar/Version.h). */
#ifndef PULSARC_COMPAT_PULSAR_C_VERSION_H
#define PULSARC_COMPAT_PULSAR_C_VERSION_H

#include <pulsar/Version.h>

#endif
