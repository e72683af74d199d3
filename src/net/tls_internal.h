/* Private to net/tls*.c: the shared TLS context as the session code sees it. */
#ifndef PC_TLS_INTERNAL_H
#define PC_TLS_INTERNAL_H

#include <openssl/ssl.h>
#include <stdbool.h>

struct pc_tls_ctx {
    SSL_CTX *ssl_ctx;
    bool verify_peer;     /* false only with allow_insecure */
    bool verify_hostname; /* meaningful only when verify_peer */
};

#endif
