/* Where connections go (client/config_net.c): listenerName, connectionsPerBroker and the
 * SNI proxy settings, as net/ gets them, and the combinations a client refuses; and the
 * client version CONNECT carries, with its description. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "net/runtime.h"
#include "net/service_url.h"
#include "pulsarc/pulsarc.h"

/* The settings of conf (key/value pairs, NULL-terminated) for a client of url. */
static pulsarc_result net_of(const char *url, pc_net_settings_t *out, ...)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    va_list ap;
    va_start(ap, out);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
        const char *v = va_arg(ap, const char *);
        cr_assert_eq(pulsarc_client_config_set(c, k, v), PULSARC_OK, "%s=%s", k, v);
    }
    va_end(ap);
    pc_service_url_t su;
    cr_assert_eq(pc_service_url_parse(url, &su, NULL, 0), 0);
    pulsarc_result r = pc_client_config_net(c, &su, out);
    /* The listener name points into c: keep a copy before freeing it. */
    static char listener[256];
    if (r == PULSARC_OK && out->listener_name) {
        snprintf(listener, sizeof listener, "%s", out->listener_name);
        out->listener_name = listener;
    }
    pulsarc_client_config_free(c);
    return r;
}

Test(config_net, defaults)
{
    pc_net_settings_t n;
    cr_assert_eq(net_of("pulsar://localhost:6650", &n, NULL), PULSARC_OK);
    cr_assert_null(n.listener_name);
    cr_assert_eq(n.connections_per_broker, 1);
    cr_assert_not(n.sni_proxy);
    cr_assert_str_eq(n.client_version, "pulsarc-" PULSARC_VERSION_STRING);
}

/* As the Java and C++ clients: VERSION-DESCRIPTION, 64 characters at most. */
Test(config_net, a_description_follows_the_version)
{
    pc_net_settings_t n;
    cr_assert_eq(net_of("pulsar://localhost:6650", &n, "description", "gateway-eu1 (v2)", NULL),
                 PULSARC_OK);
    cr_assert_str_eq(n.client_version, "pulsarc-" PULSARC_VERSION_STRING "-gateway-eu1 (v2)");
    char longest[65];
    memset(longest, 'd', 64);
    longest[64] = '\0';
    cr_assert_eq(net_of("pulsar://localhost:6650", &n, "description", longest, NULL), PULSARC_OK);
    cr_assert_eq(strlen(n.client_version), strlen("pulsarc-" PULSARC_VERSION_STRING) + 65);
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    char too_long[66];
    memset(too_long, 'd', 65);
    too_long[65] = '\0';
    cr_assert_eq(pulsarc_client_config_set(c, "description", too_long), PULSARC_ERR_INVALID_CONFIG);
    pulsarc_client_config_free(c);
}

/* It reaches the brokers' statistics and logs: no control characters, no other bytes. */
Test(config_net, a_description_with_control_characters_is_refused)
{
    static const char *const bad[] = { "line\nforged", "esc\x1b[2J", "tab\there", "caf\xc3\xa9" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pc_net_settings_t n;
        cr_assert_eq(net_of("pulsar://localhost:6650", &n, "description", bad[i], NULL),
                     PULSARC_ERR_INVALID_CONFIG, "%zu", i);
        cr_assert(strstr(pulsarc_last_error_detail(), "printable ASCII"), "%s",
                  pulsarc_last_error_detail());
    }
}

Test(config_net, listener_and_connections)
{
    pc_net_settings_t n;
    cr_assert_eq(net_of("pulsar://localhost:6650", &n, "listenerName", "external",
                        "connectionsPerBroker", "4", NULL),
                 PULSARC_OK);
    cr_assert_str_eq(n.listener_name, "external");
    cr_assert_eq(n.connections_per_broker, 4);
}

Test(config_net, sni_proxy)
{
    pc_net_settings_t n;
    cr_assert_eq(net_of("pulsar+ssl://broker1.example:6651", &n, "proxyServiceUrl",
                        "pulsar+ssl://proxy.example:4443", "proxyProtocol", "SNI", NULL),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(n.sni_proxy);
    cr_assert_str_eq(n.sni_proxy_addr.host, "proxy.example");
    cr_assert_eq(n.sni_proxy_addr.port, 4443);
    /* https:// looks up over HTTP and connects to the brokers over TLS: the proxy too. */
    cr_assert_eq(net_of("https://broker1.example:8443", &n, "proxyServiceUrl",
                        "pulsar+ssl://proxy.example:4443", "proxyProtocol", "sni", NULL),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert(n.sni_proxy);
}

/* Each refusal names what is wrong. */
static void refused(const char *url, const char *why, const char *k1, const char *v1,
                    const char *k2, const char *v2)
{
    pc_net_settings_t n;
    pulsarc_result r = net_of(url, &n, k1, v1, k2, v2, NULL);
    cr_assert_eq(r, PULSARC_ERR_INVALID_CONFIG, "%s %s=%s %s=%s: %s", url, k1, v1, k2 ? k2 : "",
                 v2 ? v2 : "", pulsarc_result_name(r));
    cr_assert(strstr(pulsarc_last_error_detail(), why), "detail: %s", pulsarc_last_error_detail());
}

Test(config_net, sni_proxy_refusals)
{
    refused("pulsar+ssl://b:6651", "needs proxyServiceUrl", "proxyProtocol", "SNI", NULL, NULL);
    refused("pulsar+ssl://b:6651", "needs proxyProtocol=SNI", "proxyServiceUrl",
            "pulsar+ssl://proxy:4443", NULL, NULL);
    refused("pulsar://b:6650", "needs TLS", "proxyServiceUrl", "pulsar+ssl://proxy:4443",
            "proxyProtocol", "SNI");
    refused("pulsar+ssl://b:6651", "is not one", "proxyServiceUrl", "pulsar://proxy:4443",
            "proxyProtocol", "SNI");
    refused("pulsar+ssl://b:6651", "is not one", "proxyServiceUrl", "pulsar+ssl://p1:4443,p2:4443",
            "proxyProtocol", "SNI");
}

/* The client refuses them too, before connecting anywhere. */
Test(config_net, client_new_refuses_an_sni_proxy_without_tls)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(c, "proxyServiceUrl", "pulsar+ssl://proxy:4443"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(c, "proxyProtocol", "SNI"), PULSARC_OK);
    pulsarc_client_t *client = NULL;
    cr_assert_eq(pulsarc_client_new("pulsar://localhost:6650", c, &client),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_null(client);
    pulsarc_client_config_free(c);
}

Test(config_net, dump_shows_the_settings)
{
    pulsarc_client_config_t *c = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(c, "proxyProtocol", "sni"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(c, "listenerName", "external"), PULSARC_OK);
    char buf[8192];
    pulsarc_client_config_dump(c, buf, sizeof buf);
    cr_assert(strstr(buf, "proxyProtocol=SNI\n"), "%s", buf);
    cr_assert(strstr(buf, "listenerName=external\n"), "%s", buf);
    cr_assert(strstr(buf, "connectionsPerBroker=1\n"), "%s", buf);
    pulsarc_client_config_free(c);
}
