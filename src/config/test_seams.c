/* The test seams' setters (see test_seams.h). */
#include "config/test_seams.h"

#include "config/config.h"

void pc_client_config_set_transport(pulsarc_client_config_t *conf, const pc_transport_t *transport)
{
    conf->transport = transport;
}

void pc_client_config_set_clock(pulsarc_client_config_t *conf, const pc_clock_t *clock)
{
    conf->clock = clock;
}

void pc_client_config_set_tls_ctx(pulsarc_client_config_t *conf, const struct pc_tls_ctx *tls)
{
    conf->tls_ctx = tls;
}
