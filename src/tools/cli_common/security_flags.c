/*
 * security_flags — see the header. The names follow the CLI design; the
 * pulsar-client spellings (--tlsTrustCertsFilePath)
 * are accepted as well, so commands copied from Pulsar's documentation work.
 */
#include "security_flags.h"

#include <string.h>

const struct security_flag security_flags[] = {
    { "auth-plugin", "authPlugin", NULL, "PLUGIN",
      "token | tls | basic | oauth2, or the Java class name" },
    { "auth-params", "authParams", NULL, "PARAMS",
      "the plugin's parameters, in Pulsar's formats (never printed)" },
    { "tls-trust-certs", "tlsTrustCertsFilePath", NULL, "FILE",
      "PEM file of trusted CAs (default: the system's store)" },
    { "tlsTrustCertsFilePath", "tlsTrustCertsFilePath", NULL, "FILE",
      "the same, as pulsar-client spells it" },
    { "tls-cert", "tlsCertificateFilePath", NULL, "FILE", "client certificate (PEM), for mTLS" },
    { "tls-key", "tlsKeyFilePath", NULL, "FILE", "its private key (PEM)" },
    { "tls-allow-insecure", "tlsAllowInsecureConnection", "true", NULL,
      "accept any server certificate (testing only)" },
    { "tls-no-hostname-verification", "tlsEnableHostnameVerification", "false", NULL,
      "accept a certificate issued for another host name" },
    { "tls-enable-hostname-verification", "tlsEnableHostnameVerification", "true", NULL,
      "check the host name (already the default)" },
};

const size_t n_security_flags = sizeof security_flags / sizeof security_flags[0];

const struct security_flag *security_flag_find(const char *name)
{
    for (size_t i = 0; i < n_security_flags; i++)
        if (strcmp(security_flags[i].name, name) == 0)
            return &security_flags[i];
    return NULL;
}
