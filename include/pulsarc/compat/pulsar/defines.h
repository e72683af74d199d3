/** @file
 * pulsarc-compat: the export macro of libpulsar's C headers. pulsarc-compat is libpulsar's
 * C API (producer side) implemented on pulsarc; see docs/porting-from-libpulsar.md. */
#ifndef PULSARC_COMPAT_PULSAR_DEFINES_H
#define PULSARC_COMPAT_PULSAR_DEFINES_H

#if defined(PULSARC_COMPAT_BUILDING)
#define PULSAR_PUBLIC __attribute__((visibility("default")))
#else
#define PULSAR_PUBLIC
#endif

#endif
