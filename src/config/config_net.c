/* Where the client's connections go, from its configuration: the advertised listener,
 * connections per broker and an SNI proxy, checked against each other and against the
 * service URL before anything connects. */
#include "config/config.h"

#include <stdio.h>

#include "common/error.h"
#include "net/runtime.h"
#include "net/service_url.h"

/* proxyServiceUrl + proxyProtocol=SNI, as the Java and C++ clients take them: both or
 * neither, and only for TLS (the broker's name travels as TLS SNI: a plain connection has
 * nowhere to put it). The official clients ignore a proxy on a plain service URL; here it
 * is an error, since the user meant connections to go through it. */
static pulsarc_result sni_proxy(const pulsarc_client_config_t *c, const pc_service_url_t *url,
                                pc_net_settings_t *out)
{
    bool sni = c->proxy_protocol == PC_PROXY_PROTOCOL_SNI;
    if (!c->proxy_service_url && !sni)
        return PULSARC_OK;
    if (!c->proxy_service_url)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "proxyProtocol=SNI needs proxyServiceUrl "
                                                   "(the SNI proxy, pulsar+ssl://host:port)");
    if (!sni)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "proxyServiceUrl needs proxyProtocol=SNI "
                                                   "(the only proxy protocol)");
    bool tls = false;
    if (pc_broker_url_parse(c->proxy_service_url, &out->sni_proxy_addr, &tls) != 0 || !tls)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                       "proxyServiceUrl \"%.300s\" is not one "
                       "pulsar+ssl://host:port address",
                       c->proxy_service_url);
    if (!url->tls)
        return pc_fail(PULSARC_ERR_INVALID_CONFIG, "an SNI proxy (proxyServiceUrl) needs TLS: "
                                                   "a pulsar+ssl:// or https:// service URL");
    out->sni_proxy = true;
    return PULSARC_OK;
}

/* The description travels in CONNECT and ends up in the brokers' statistics and logs:
 * printable ASCII only, so it cannot forge a line there. */
static pulsarc_result client_version(const pulsarc_client_config_t *c, pc_net_settings_t *out)
{
    const char *d = c->description;
    if (!d) {
        snprintf(out->client_version, sizeof out->client_version, "%s", PC_CLIENT_VERSION);
        return PULSARC_OK;
    }
    for (const char *p = d; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            return pc_fail(PULSARC_ERR_INVALID_CONFIG,
                           "description: only printable ASCII characters (byte %zu is 0x%02x)",
                           (size_t)(p - d), (unsigned char)*p);
    snprintf(out->client_version, sizeof out->client_version, "%s-%s", PC_CLIENT_VERSION, d);
    return PULSARC_OK;
}

pulsarc_result pc_client_config_net(const pulsarc_client_config_t *c, const pc_service_url_t *url,
                                    pc_net_settings_t *out)
{
    *out = (pc_net_settings_t){
        .listener_name = c->listener_name,
        .connections_per_broker = (int)c->connections_per_broker,
    };
    pulsarc_result r = client_version(c, out);
    return r != PULSARC_OK ? r : sni_proxy(c, url, out);
}
