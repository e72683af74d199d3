/* Service URLs: pulsar://host1:6650,host2:6650, pulsar+ssl://..., http://... or https://... */
#ifndef PC_SERVICE_URL_H
#define PC_SERVICE_URL_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>

#define PC_SERVICE_URL_MAX_HOSTS 16

typedef struct pc_host_port {
    char host[256];
    int port;
} pc_host_port_t;

typedef struct pc_service_url {
    bool tls;  /* pulsar+ssl:// or https:// */
    bool http; /* http:// or https://: lookups go over the admin REST API */
    int n_hosts;
    pc_host_port_t hosts[PC_SERVICE_URL_MAX_HOSTS];
} pc_service_url_t;

/* Accepts "pulsar://h[:p][,h[:p]...]" (default port 6650), "pulsar+ssl://..." (6651),
 * "http://..." (8080) and "https://..." (8443). IPv6 hosts in brackets (stored without
 * them). A trailing "/" or path is ignored, as the official clients ignore it. Returns 0,
 * or -1 with a reason in err (err may be NULL). */
int pc_service_url_parse(const char *url, pc_service_url_t *out, char *err, size_t errlen);
/* Parse one "pulsar://host:port" or "pulsar+ssl://host:port" address as a lookup answers
 * it (exactly one host; http(s):// is refused). Returns 0 or -1; tls may be NULL. */
int pc_broker_url_parse(const char *url, pc_host_port_t *out, bool *tls);
/* The service URL of the cluster a topic moved to, from a broker's TOPIC_MIGRATED: its
 * brokerServiceUrlTls (url_tls) on a TLS connection (tls), its brokerServiceUrl (url)
 * otherwise, as the C++ and Go clients choose; the other one is never looked at. Checked
 * exactly as a configured service URL is (pc_service_url_parse), and it must be a binary
 * one, "pulsar+ssl://" on TLS and "pulsar://" otherwise, since the client's TLS settings,
 * credentials and connections carry over to that cluster. NULL or empty is refused.
 * Returns 0, or -1 with a reason in err (err may be NULL). */
int pc_migration_url_parse(const char *url, const char *url_tls, bool tls, pc_service_url_t *out,
                           char *err, size_t errlen);

/* The address to connect to among those a host name resolved to: the first IPv4 one, as
 * "localhost" often lists ::1 first while brokers commonly bind 127.0.0.1; else the first. */
static inline const struct addrinfo *pc_preferred_address(const struct addrinfo *res)
{
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET)
            return ai;
    return res;
}

#endif
