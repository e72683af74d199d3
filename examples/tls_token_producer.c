/*
 * tls_token_producer — publish to a cluster that requires TLS and a JWT token.
 *
 *   tls_token_producer SERVICE_URL CA_FILE TOKEN_FILE [TOPIC]
 *   e.g. tls_token_producer pulsar+ssl://localhost:6651 ca.cert.pem producer.token
 *   (TOPIC defaults to persistent://public/default/pulsarc-tls-example)
 *
 * With the project's secured test broker:
 *   scripts/broker-secure start && eval "$(scripts/broker-secure env)"
 *   build/bin/tls_token_producer "$PULSAR_SECURE_TLS_URL" "$PULSAR_SECURE_CA" \
 *       "$PULSAR_SECURE_PRODUCER_TOKEN_FILE"
 *
 * What it shows:
 *   - the broker's certificate is checked against CA_FILE, and its host name against
 *     the URL's host: both on by default, nothing to switch on;
 *   - the token is read from a file on every connect (so a rotated token is picked up)
 *     and never copied into the program's logs or error messages;
 *   - a refused connection says why: an untrusted certificate, a host name mismatch,
 *     an expired token and a missing permission are different results.
 *
 * Build: cc tls_token_producer.c $(pkg-config --cflags --libs pulsarc)
 */
#include <stdio.h>
#include <string.h>

#include <pulsarc/pulsarc.h>

static int fail(const char *what, pulsarc_result res)
{
    /* pulsarc_result_name gives the stable name (e.g. TLS_HOSTNAME) to act on;
     * the detail says what exactly went wrong. Neither ever contains the token. */
    fprintf(stderr, "%s: %s [%s]: %s\n", what, pulsarc_strerror(res), pulsarc_result_name(res),
            pulsarc_last_error_detail());
    switch (res) {
    case PULSARC_ERR_TLS_UNTRUSTED:
        fprintf(stderr, "hint: is CA_FILE the CA that signed the broker's certificate?\n");
        break;
    case PULSARC_ERR_TLS_HOSTNAME:
        fprintf(stderr, "hint: connect by the name in the broker's certificate\n");
        break;
    case PULSARC_ERR_BROKER_AUTHENTICATION:
        fprintf(stderr, "hint: the token is invalid or expired\n");
        break;
    case PULSARC_ERR_BROKER_AUTHORIZATION:
        fprintf(stderr, "hint: the token's role may not produce on this topic\n");
        break;
    default:
        break;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SERVICE_URL CA_FILE TOKEN_FILE [TOPIC]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *ca = argv[2], *token_file = argv[3];
    const char *topic = argc > 4 ? argv[4] : "persistent://public/default/pulsarc-tls-example";

    /* The five lines that matter: trust, token, client. */
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    pulsarc_client_config_set(conf, "tlsTrustCertsFilePath", ca);
    pulsarc_client_config_set_auth_token_file(conf, token_file);
    pulsarc_client_t *client;
    pulsarc_result res = pulsarc_client_new(url, conf, &client);
    pulsarc_client_config_free(conf);
    if (res != PULSARC_OK)
        return fail("client", res);

    /* TLS and authentication happen here, on the first connection: the handshake and
     * the certificate checks finish before the token is sent. */
    pulsarc_producer_t *producer;
    res = pulsarc_client_create_producer(client, topic, NULL, &producer);
    if (res != PULSARC_OK) {
        pulsarc_client_destroy(client);
        return fail("create producer", res);
    }

    pulsarc_message_t *msg = pulsarc_message_new();
    int failed = 0;
    for (int i = 0; i < 10; i++) {
        char text[64];
        int n = snprintf(text, sizeof text, "secured hello %d", i);
        pulsarc_message_clear(msg);
        pulsarc_message_set_payload(msg, text, (size_t)n);
        pulsarc_message_id_t *id = NULL;
        res = pulsarc_producer_send(producer, msg, &id);
        if (res != PULSARC_OK) {
            fail("send", res);
            failed++;
            continue;
        }
        char idstr[96];
        pulsarc_message_id_str(id, idstr, sizeof idstr);
        printf("sent \"%s\" as %s\n", text, idstr);
        pulsarc_message_id_free(id);
    }
    pulsarc_message_free(msg);
    pulsarc_producer_close(producer);
    pulsarc_producer_free(producer);
    pulsarc_client_destroy(client);
    return failed ? 1 : 0;
}
