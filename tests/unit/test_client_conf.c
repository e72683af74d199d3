/* The command-line tools' reader of Pulsar's client.conf (src/tools/cli_common/client_conf.c):
 * the properties syntax, the mapping to pulsarc keys, and what it refuses. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_common/client_conf.h"
#include "cli_common/security_flags.h"

/* Collects the warnings, to check which keys were reported and that no value leaks. */
static char warnings[2048];

static void collect(void *ctx, int line, const char *key, const char *why)
{
    (void)ctx;
    size_t used = strlen(warnings);
    snprintf(warnings + used, sizeof warnings - used, "%d:%s:%s\n", line, key, why);
}

static int parse(const char *text, struct client_conf *out, char *err, size_t err_len)
{
    warnings[0] = '\0';
    return client_conf_parse(text, strlen(text), out, collect, NULL, err, err_len);
}

static const char *setting(const struct client_conf *c, const char *key)
{
    const char *found = NULL; /* the last one wins, as the tools apply them in order */
    for (size_t i = 0; i < c->n_settings; i++)
        if (strcmp(c->settings[i].key, key) == 0)
            found = c->settings[i].value;
    return found;
}

Test(client_conf, reads_pulsars_stock_file_without_warnings)
{
    /* The uncommented lines of apache-pulsar-4.0.8/conf/client.conf. */
    const char *text = "# comment\n\n"
                       "webServiceUrl=http://localhost:8080/\n"
                       "brokerServiceUrl=pulsar://localhost:6650/\n"
                       "authPlugin=\nauthParams=\n"
                       "tlsAllowInsecureConnection=false\n"
                       "tlsEnableHostnameVerification=false\n"
                       "tlsTrustCertsFilePath=\ntlsCertificateFilePath=\ntlsKeyFilePath=\n"
                       "useKeyStoreTls=false\ntlsTrustStoreType=JKS\ntlsTrustStorePath=\n"
                       "tlsTrustStorePassword=\ntlsKeyStoreType=JKS\ntlsKeyStorePath=\n"
                       "tlsKeyStorePassword=\nwebserviceTlsProvider=\nproxyServiceUrl=\n"
                       "proxyProtocol=\n";
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse(text, &c, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(warnings, "");
    cr_assert_str_eq(client_conf_service_url(&c, err, sizeof err), "pulsar://localhost:6650/");
    /* Empty values are "not set"; only the two booleans become settings. */
    cr_assert_eq(c.n_settings, 2);
    cr_assert_str_eq(setting(&c, "tlsAllowInsecureConnection"), "false");
    cr_assert_str_eq(setting(&c, "tlsEnableHostnameVerification"), "false");
    client_conf_free(&c);
}

Test(client_conf, maps_security_keys_and_the_java_field_name)
{
    const char
        *text = "brokerServiceUrl=pulsar+ssl://broker:6651\n"
                "authPluginClassName=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                "authParams=token:abc.def\n"
                "tlsTrustCertsFilePath=/etc/ca.pem\n"
                "tlsCertificateFilePath=/etc/client.pem\ntlsKeyFilePath=/etc/client.key\n"
                "tlsProtocols=TLSv1.3\ntlsCiphers=HIGH\n";
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse(text, &c, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(setting(&c, "authPlugin"),
                     "org.apache.pulsar.client.impl.auth.AuthenticationToken");
    cr_assert_str_eq(setting(&c, "authParams"), "token:abc.def");
    cr_assert_str_eq(setting(&c, "tlsTrustCertsFilePath"), "/etc/ca.pem");
    cr_assert_str_eq(setting(&c, "tlsCertificateFilePath"), "/etc/client.pem");
    cr_assert_str_eq(setting(&c, "tlsKeyFilePath"), "/etc/client.key");
    cr_assert_str_eq(setting(&c, "tlsProtocols"), "TLSv1.3");
    cr_assert_str_eq(setting(&c, "tlsCiphers"), "HIGH");
    cr_assert_eq(c.settings[1].line, 3, "settings remember their line");
    client_conf_free(&c);
}

Test(client_conf, properties_syntax)
{
    /* Separators '=', ':' and blanks with blanks around them; CRLF; a continued line
     * (leading blanks of the continuation dropped); escapes; '!' comments; a later
     * value wins; trailing blanks dropped. */
    const char *text = "  ! a comment\r\n"
                       "authPlugin : token\r\n"
                       "tlsKeyFilePath   /k.pem   \n"
                       "authParams={\"issuerUrl\":\"https://x\",\\\n"
                       "            \"audience\":\"a\\tb\\u00e9\"}\n"
                       "tlsCiphers=A\ntlsCiphers=B\n"
                       "tlsTrustCertsFilePath=/path\\\\\n"
                       "brokerServiceUrl\n";
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse(text, &c, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(setting(&c, "authPlugin"), "token");
    cr_assert_str_eq(setting(&c, "tlsKeyFilePath"), "/k.pem");
    cr_assert_str_eq(setting(&c, "authParams"),
                     "{\"issuerUrl\":\"https://x\",\"audience\":\"a\tb\xc3\xa9\"}");
    cr_assert_str_eq(setting(&c, "tlsCiphers"), "B");
    cr_assert_str_eq(setting(&c, "tlsTrustCertsFilePath"), "/path\\",
                     "an even run of '\\' does not continue");
    cr_assert_null(c.broker_service_url, "a key without a value is not set");
    cr_assert_str_eq(warnings, "");
    client_conf_free(&c);
}

Test(client_conf, unknown_and_unsupported_keys_warn_without_their_values)
{
    const char *text = "brokerServiceUrl=pulsar://b:6650\n"
                       "frobnicate=secret-1\n"
                       "useTls=true\n"
                       "tlsKeyStorePassword=secret-2\n";
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse(text, &c, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(warnings, "2:frobnicate:unknown key"), "%s", warnings);
    cr_assert(strstr(warnings, "3:useTls:"), "%s", warnings);
    cr_assert(strstr(warnings, "4:tlsKeyStorePassword:KeyStore TLS"), "%s", warnings);
    cr_assert_null(strstr(warnings, "secret"), "%s", warnings);
    cr_assert_eq(c.n_settings, 0);
    client_conf_free(&c);
}

Test(client_conf, refuses_keystore_tls_and_bad_escapes)
{
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse("# x\nuseKeyStoreTls=true\n", &c, err, sizeof err), -1);
    cr_assert(strstr(err, "line 2") && strstr(err, "KeyStore TLS is not supported"), "%s", err);
    client_conf_free(&c);
    cr_assert_eq(parse("authParams=\\u12\n", &c, err, sizeof err), -1);
    cr_assert(strstr(err, "line 1: malformed"), "%s", err);
    client_conf_free(&c);
    cr_assert_eq(parse("authParams=\\uzzzz\n", &c, err, sizeof err), -1);
    client_conf_free(&c);
}

Test(client_conf, service_url_prefers_the_binary_one)
{
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(parse("webServiceUrl=http://h:8080/\n", &c, err, sizeof err), 0);
    cr_assert_str_eq(client_conf_service_url(&c, err, sizeof err), "http://h:8080/",
                     "alone, the web service URL is used (lookup over HTTP)");
    client_conf_free(&c);

    cr_assert_eq(parse("serviceUrl=pulsar://a:1\nwebServiceUrl=http://h/\n", &c, err, sizeof err),
                 0);
    cr_assert_str_eq(client_conf_service_url(&c, err, sizeof err), "pulsar://a:1");
    client_conf_free(&c);

    cr_assert_eq(parse("", &c, err, sizeof err), 0);
    cr_assert_null(client_conf_service_url(&c, err, sizeof err));
    cr_assert(strstr(err, "neither brokerServiceUrl"), "%s", err);
    client_conf_free(&c);
}

Test(client_conf, loads_a_file_and_reports_a_missing_one)
{
    char path[] = "/tmp/pulsarc-client-conf-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *text = "brokerServiceUrl=pulsar://f:6650\nauthPlugin=token"; /* no final \n */
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct client_conf c;
    char err[256] = "";
    cr_assert_eq(client_conf_load(path, &c, collect, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(c.broker_service_url, "pulsar://f:6650");
    cr_assert_str_eq(setting(&c, "authPlugin"), "token");
    client_conf_free(&c);
    unlink(path);
    cr_assert_eq(client_conf_load(path, &c, collect, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot open"), "%s", err);
    client_conf_free(&c);
}

Test(security_flags, map_to_client_keys)
{
    const struct security_flag *f = security_flag_find("tls-no-hostname-verification");
    cr_assert_not_null(f);
    cr_assert_str_eq(f->key, "tlsEnableHostnameVerification");
    cr_assert_str_eq(f->fixed, "false");
    f = security_flag_find("auth-params");
    cr_assert_not_null(f);
    cr_assert_str_eq(f->key, "authParams");
    cr_assert_null(f->fixed);
    cr_assert_null(security_flag_find("tls"));
}
