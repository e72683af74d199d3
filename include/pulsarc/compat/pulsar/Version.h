/** @file
 * pulsarc-compat: the libpulsar version whose C API (producer side) this layer follows,
 * counted as libpulsar counts it (major * 1000000 + minor * 1000 + patch). */
#ifndef PULSARC_COMPAT_PULSAR_VERSION_H
#define PULSARC_COMPAT_PULSAR_VERSION_H

#define PULSAR_VERSION 4002000
#define PULSAR_VERSION_STR "4.2.0"

#endif
