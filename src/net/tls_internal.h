/* Private to net/: the shared TLS context as the session code sees it, and the protocol
 * and cipher restrictions, which net/http_tls.c applies to curl's contexts too. */
#ifndef PC_TLS_INTERNAL_H
#define PC_TLS_INTERNAL_H

#include <openssl/ssl.h>
#include <stdbool.h>

#include "pulsarc/pulsarc.h"

struct pc_tls_ctx {
    SSL_CTX *ssl_ctx;
    bool verify_peer;     /* false only with allow_insecure */
    bool verify_hostname; /* meaningful only when verify_peer */
};

/* tlsProtocols and tlsCiphers on ctx (either may be NULL: unchanged), read as the binary
 * protocol reads them (net/tls.h). PULSARC_OK, or PULSARC_ERR_TLS_CONFIG / NO_MEMORY with
 * the detail set. */
pulsarc_result pc_tls_restrict(SSL_CTX *ctx, const char *protocols, const char *ciphers);

#endif
