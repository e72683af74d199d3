#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "net/service_url.h"

static pc_service_url_t parse_ok(const char *url)
{
    pc_service_url_t u;
    char err[256] = "";
    int rc = pc_service_url_parse(url, &u, err, sizeof err);
    cr_assert_eq(rc, 0, "'%s' rejected: %s", url, err);
    return u;
}

static void expect_reject(const char *url, const char *why_contains)
{
    pc_service_url_t u;
    char err[256];
    memset(err, 0, sizeof err);
    cr_expect_eq(pc_service_url_parse(url, &u, err, sizeof err), -1, "'%s' was accepted",
                 url ? url : "(null)");
    cr_expect_neq(err[0], '\0', "no reason for '%s'", url ? url : "(null)");
    if (why_contains)
        cr_expect(strstr(err, why_contains) != NULL, "reason for '%s' was: %s",
                  url ? url : "(null)", err);
}

static void expect_host(const pc_service_url_t *u, int i, const char *host, int port)
{
    cr_assert_lt(i, u->n_hosts);
    cr_expect_str_eq(u->hosts[i].host, host);
    cr_expect_eq(u->hosts[i].port, port, "host %d port %d, want %d", i, u->hosts[i].port, port);
}

Test(service_url, single_host)
{
    pc_service_url_t u = parse_ok("pulsar://localhost:6650");
    cr_expect_not(u.tls);
    cr_expect_eq(u.n_hosts, 1);
    expect_host(&u, 0, "localhost", 6650);

    u = parse_ok("pulsar://broker.example.com:1234");
    expect_host(&u, 0, "broker.example.com", 1234);

    u = parse_ok("pulsar://10.0.0.7:6650");
    expect_host(&u, 0, "10.0.0.7", 6650);
}

Test(service_url, default_ports)
{
    pc_service_url_t u = parse_ok("pulsar://localhost");
    cr_expect_not(u.tls);
    expect_host(&u, 0, "localhost", 6650);

    u = parse_ok("pulsar+ssl://localhost");
    cr_expect(u.tls);
    expect_host(&u, 0, "localhost", 6651);

    u = parse_ok("pulsar+ssl://localhost:7000");
    expect_host(&u, 0, "localhost", 7000);
}

Test(service_url, scheme_is_case_insensitive)
{
    pc_service_url_t u = parse_ok("PULSAR://h:1");
    cr_expect_not(u.tls);
    u = parse_ok("Pulsar+SSL://h");
    cr_expect(u.tls);
    expect_host(&u, 0, "h", 6651);
}

Test(service_url, multiple_hosts)
{
    pc_service_url_t u = parse_ok("pulsar://host1:6650,host2:6651,host3");
    cr_expect_eq(u.n_hosts, 3);
    expect_host(&u, 0, "host1", 6650);
    expect_host(&u, 1, "host2", 6651);
    expect_host(&u, 2, "host3", 6650);

    u = parse_ok("pulsar+ssl://a,b:1,[::1]");
    cr_expect_eq(u.n_hosts, 3);
    expect_host(&u, 0, "a", 6651);
    expect_host(&u, 1, "b", 1);
    expect_host(&u, 2, "::1", 6651);
}

Test(service_url, ipv6_in_brackets)
{
    pc_service_url_t u = parse_ok("pulsar://[::1]:6650");
    expect_host(&u, 0, "::1", 6650);
    u = parse_ok("pulsar://[2001:db8::42]");
    expect_host(&u, 0, "2001:db8::42", 6650);
    u = parse_ok("pulsar+ssl://[fe80::1%eth0]:7");
    expect_host(&u, 0, "fe80::1%eth0", 7);
    u = parse_ok("pulsar://[::ffff:10.0.0.1]:1");
    expect_host(&u, 0, "::ffff:10.0.0.1", 1);

    expect_reject("pulsar://::1:6650", "IPv6");
    expect_reject("pulsar://[::1", "unterminated");
    expect_reject("pulsar://[]:6650", "IPv6");
    expect_reject("pulsar://[localhost]:6650", "IPv6");
    expect_reject("pulsar://[::1]6650", "unexpected");
    expect_reject("pulsar://[::1%]", "zone");
}

Test(service_url, trailing_slash_and_path_are_ignored)
{
    pc_service_url_t u = parse_ok("pulsar://localhost:6650/");
    cr_expect_eq(u.n_hosts, 1);
    expect_host(&u, 0, "localhost", 6650);
    u = parse_ok("pulsar://host1,host2:7/path/to/ns");
    cr_expect_eq(u.n_hosts, 2);
    expect_host(&u, 1, "host2", 7);
    u = parse_ok("pulsar://[::1]/");
    expect_host(&u, 0, "::1", 6650);
}

Test(service_url, http_lookup_urls)
{
    pc_service_url_t u = parse_ok("http://localhost:8080");
    cr_expect(u.http);
    cr_expect_not(u.tls);
    expect_host(&u, 0, "localhost", 8080);

    u = parse_ok("HTTP://localhost");
    cr_expect(u.http);
    expect_host(&u, 0, "localhost", 8080);

    u = parse_ok("https://broker.example.com");
    cr_expect(u.http);
    cr_expect(u.tls);
    expect_host(&u, 0, "broker.example.com", 8443);

    u = parse_ok("https://a:9443,b,[::1]:8444/");
    cr_expect_eq(u.n_hosts, 3);
    expect_host(&u, 0, "a", 9443);
    expect_host(&u, 1, "b", 8443);
    expect_host(&u, 2, "::1", 8444);

    /* The binary schemes are not web service URLs. */
    u = parse_ok("pulsar+ssl://localhost");
    cr_expect_not(u.http);
    u = parse_ok("pulsar://localhost");
    cr_expect_not(u.http);

    expect_reject("http://", "no host");
    expect_reject("https://h:0", "invalid port");
    expect_reject("http+ssl://h", "unknown scheme");
}

Test(service_url, rejects_other_schemes)
{
    expect_reject("ftp://localhost:8080", "unknown scheme");
    expect_reject("pulsar+tls://localhost", "unknown scheme");
    expect_reject("localhost:6650", "no scheme");
    expect_reject("://localhost:6650", "unknown scheme");
    expect_reject("pulsar:/localhost", "no scheme");
}

Test(service_url, rejects_empty_hosts)
{
    expect_reject(NULL, "empty");
    expect_reject("", "empty");
    expect_reject("pulsar://", "no host");
    expect_reject("pulsar:///", "no host");
    expect_reject("pulsar://:6650", "empty host");
    expect_reject("pulsar://h1,,h2", "empty host");
    expect_reject("pulsar://h1,", "empty host");
    expect_reject("pulsar://,h1", "empty host");
}

Test(service_url, rejects_bad_ports)
{
    expect_reject("pulsar://h:0", "port");
    expect_reject("pulsar://h:65536", "port");
    expect_reject("pulsar://h:99999999999", "port");
    expect_reject("pulsar://h:-1", "port");
    expect_reject("pulsar://h:+1", "port");
    expect_reject("pulsar://h:abc", "port");
    expect_reject("pulsar://h:66a", "port");
    expect_reject("pulsar://h:", "port");
    expect_reject("pulsar://h: 1", "port");
    expect_reject("pulsar://h:1:2", "too many ':'");
    expect_reject("pulsar://[::1]:", "port");

    pc_service_url_t u = parse_ok("pulsar://h:65535,g:1,k:00080");
    expect_host(&u, 0, "h", 65535);
    expect_host(&u, 1, "g", 1);
    expect_host(&u, 2, "k", 80);
}

Test(service_url, rejects_bad_host_characters)
{
    expect_reject("pulsar://user@host:6650", "invalid character '@'");
    expect_reject("pulsar://ho st", "invalid character");
    expect_reject("pulsar://host?x=1", "invalid character");
    expect_reject("pulsar://h1, h2", "invalid character");
}

Test(service_url, host_limits)
{
    char url[2048];
    int n = snprintf(url, sizeof url, "pulsar://");
    for (int i = 0; i < PC_SERVICE_URL_MAX_HOSTS; i++)
        n += snprintf(url + n, sizeof url - (size_t)n, "%sh%d:%d", i ? "," : "", i, 1000 + i);
    pc_service_url_t u = parse_ok(url);
    cr_expect_eq(u.n_hosts, PC_SERVICE_URL_MAX_HOSTS);
    expect_host(&u, PC_SERVICE_URL_MAX_HOSTS - 1, "h15", 1015);

    snprintf(url + n, sizeof url - (size_t)n, ",one-more");
    expect_reject(url, "too many hosts");

    char host[300];
    memset(host, 'a', 255);
    host[255] = '\0';
    snprintf(url, sizeof url, "pulsar://%s:1", host);
    u = parse_ok(url);
    cr_expect_eq(strlen(u.hosts[0].host), 255);
    memset(host, 'a', 256);
    host[256] = '\0';
    snprintf(url, sizeof url, "pulsar://%s:1", host);
    expect_reject(url, "longer");
}

Test(service_url, error_buffer_is_optional)
{
    pc_service_url_t u;
    char small[5];
    cr_expect_eq(pc_service_url_parse("ftp://x", &u, NULL, 0), -1);
    cr_expect_eq(pc_service_url_parse("ftp://x", &u, small, sizeof small), -1);
    cr_expect_eq(strlen(small), sizeof small - 1);
    cr_expect_eq(pc_service_url_parse("pulsar://x", NULL, small, sizeof small), -1);
}

Test(service_url, broker_url_from_lookup)
{
    pc_host_port_t hp;
    bool tls = true;
    cr_assert_eq(pc_broker_url_parse("pulsar://broker-1.pulsar.svc:6650", &hp, &tls), 0);
    cr_expect_str_eq(hp.host, "broker-1.pulsar.svc");
    cr_expect_eq(hp.port, 6650);
    cr_expect_not(tls);

    cr_assert_eq(pc_broker_url_parse("pulsar+ssl://broker-1:6651", &hp, &tls), 0);
    cr_expect_str_eq(hp.host, "broker-1");
    cr_expect_eq(hp.port, 6651);
    cr_expect(tls);

    cr_assert_eq(pc_broker_url_parse("pulsar://[fd00::5]:6650/", &hp, NULL), 0);
    cr_expect_str_eq(hp.host, "fd00::5");

    cr_assert_eq(pc_broker_url_parse("pulsar://b", &hp, NULL), 0);
    cr_expect_eq(hp.port, 6650);

    cr_expect_eq(pc_broker_url_parse("pulsar://a:1,b:2", &hp, &tls), -1);
    cr_expect_eq(pc_broker_url_parse("http://b:8080", &hp, &tls), -1);
    cr_expect_eq(pc_broker_url_parse("https://b:8443", &hp, &tls), -1);
    cr_expect_eq(pc_broker_url_parse("", &hp, &tls), -1);
    cr_expect_eq(pc_broker_url_parse(NULL, &hp, &tls), -1);
    cr_expect_eq(pc_broker_url_parse("pulsar://b:1", NULL, &tls), -1);
}

/* TOPIC_MIGRATED: which of the two URLs counts, and that it is checked as a service URL. */
static void migration_rejects(const char *plain, const char *tls_url, bool tls, const char *why)
{
    pc_service_url_t u;
    char err[640] = "";
    cr_expect_eq(pc_migration_url_parse(plain, tls_url, tls, &u, err, sizeof err), -1,
                 "accepted plain '%s' tls '%s' on a %s connection", plain ? plain : "(null)",
                 tls_url ? tls_url : "(null)", tls ? "TLS" : "plain");
    cr_expect(strstr(err, why) != NULL, "reason: %s (want %s)", err, why);
}

Test(service_url, migration_url_plain_connection_takes_broker_service_url)
{
    pc_service_url_t u;
    char err[640] = "";
    cr_assert_eq(pc_migration_url_parse("pulsar://green-1:6650,green-2:6660",
                                        "pulsar+ssl://green-1:6651", false, &u, err, sizeof err),
                 0, "%s", err);
    cr_expect_not(u.tls);
    cr_expect_eq(u.n_hosts, 2);
    expect_host(&u, 0, "green-1", 6650);
    expect_host(&u, 1, "green-2", 6660);
}

Test(service_url, migration_url_tls_connection_takes_broker_service_url_tls)
{
    pc_service_url_t u;
    char err[640] = "";
    cr_assert_eq(pc_migration_url_parse("pulsar://green:6650", "pulsar+ssl://green:6651", true, &u,
                                        err, sizeof err),
                 0, "%s", err);
    cr_expect(u.tls);
    cr_expect_eq(u.n_hosts, 1);
    expect_host(&u, 0, "green", 6651);
}

Test(service_url, migration_url_missing_or_malformed_is_refused)
{
    /* The one the connection needs is absent: the other one is never taken instead. */
    migration_rejects(NULL, "pulsar+ssl://green:6651", false, "names no brokerServiceUrl");
    migration_rejects("", "pulsar+ssl://green:6651", false, "names no brokerServiceUrl");
    migration_rejects("pulsar://green:6650", NULL, true, "names no brokerServiceUrlTls");
    /* Each field must match the connection's kind: no downgrade to plain text. */
    migration_rejects("pulsar://green:6650", "pulsar://green:6650", true, "not a pulsar+ssl://");
    migration_rejects("pulsar+ssl://green:6651", NULL, false, "not a pulsar://");
    /* Checked as any service URL: scheme, host, port. */
    migration_rejects("http://green:8080", NULL, false, "web service URL");
    migration_rejects("ftp://green:6650", NULL, false, "not a service URL");
    migration_rejects("pulsar://green:0", NULL, false, "not a service URL");
    migration_rejects("pulsar://green:99999", NULL, false, "not a service URL");
    migration_rejects("pulsar://gr\x1b[2Jeen:6650", NULL, false, "not a service URL");
    migration_rejects("pulsar://user:secret@green:6650", NULL, false, "not a service URL");
    pc_service_url_t u;
    char err[640] = "";
    pc_migration_url_parse("pulsar://user:secret@green:6650", NULL, false, &u, err, sizeof err);
    cr_expect(strstr(err, "secret") == NULL, "a password went into the reason: %s", err);
    migration_rejects("pulsar://", NULL, false, "not a service URL");
}
