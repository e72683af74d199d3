/** @file
 * pulsarc-compat's own additions to libpulsar's C API (not in libpulsar): pulsarc's
 * settings by key, for what libpulsar's setters do not reach (docs/configuration.md lists
 * the keys). The value is checked at once; the settings apply after those the libpulsar
 * setters make, so they win. */
#ifndef PULSARC_COMPAT_PULSAR_C_PULSARC_EXTENSIONS_H
#define PULSARC_COMPAT_PULSAR_C_PULSARC_EXTENSIONS_H

#include <pulsar/c/client_configuration.h>
#include <pulsar/c/producer_configuration.h>
#include <pulsar/c/result.h>
#include <pulsar/defines.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A pulsarc client key (pulsarc_client_config_set); pulsar_result_InvalidConfiguration
 * for an unknown key or a bad value. */
PULSAR_PUBLIC pulsar_result pulsarc_compat_client_configuration_set(
    pulsar_client_configuration_t *conf, const char *key, const char *value);
/** A pulsarc producer key (pulsarc_producer_config_set), e.g. hashingScheme=boost_1_80 for
 * keys on the partitions of a libpulsar built with Boost 1.80 or older;
 * pulsar_result_InvalidConfiguration for an unknown key or a bad value. */
PULSAR_PUBLIC pulsar_result pulsarc_compat_producer_configuration_set(
    pulsar_producer_configuration_t *conf, const char *key, const char *value);

#ifdef __cplusplus
}
#endif

#endif
