/* Secrets are wiped before their memory is freed: this binary is linked with
 * -Wl,--wrap=free, so every free() made by the library's objects (and these tests) passes
 * through __wrap_free below, which looks into the block while it is still allocated. While
 * a secret is watched, a freed block that still holds it in clear is counted: a copy
 * somebody forgot to wipe. (Frees inside shared libraries, jansson's say, are not seen.)
 *
 * Its own binary, so that the wrap touches no other test. */
#include <criterion/criterion.h>

#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "client/client.h"
#include "net/http.h"
#include "pulsarc/pulsarc.h"

void __real_free(void *p);
void __wrap_free(void *p);

/* The secret looked for (NULL: free() as usual); the client's loop thread frees too. */
static const char *_Atomic watched;
static atomic_int freed_in_clear; /* blocks freed while still holding it */
static atomic_int freed_watched;  /* frees seen while watching (the wrap works) */

void __wrap_free(void *p)
{
    const char *secret = atomic_load(&watched);
    if (p && secret) {
        /* malloc_usable_size: the whole block (under ASan, the bytes asked for). */
        size_t n = malloc_usable_size(p);
        atomic_fetch_add(&freed_watched, 1);
        if (memmem(p, n, secret, strlen(secret)))
            atomic_fetch_add(&freed_in_clear, 1);
    }
    __real_free(p);
}

static void watch(const char *secret)
{
    atomic_store(&freed_in_clear, 0);
    atomic_store(&freed_watched, 0);
    atomic_store(&watched, secret);
}

/* Stop watching; returns how many freed blocks held the secret. */
static int unwatch(void)
{
    atomic_store(&watched, NULL);
    cr_assert_gt(atomic_load(&freed_watched), 0, "no free() was seen: is free wrapped?");
    return atomic_load(&freed_in_clear);
}

Test(secret_wipe, the_wrap_sees_a_secret_freed_in_clear)
{
    /* The check itself: a copy freed without wiping is caught. */
    char *copy = strdup("control-secret-123");
    watch("control-secret-123");
    free(copy);
    cr_assert_eq(unwatch(), 1);
}

Test(secret_wipe, auth_params_set_twice_wipes_the_old_value)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", "token:first-secret-456"), PULSARC_OK);
    watch("first-secret-456");
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", "token:second-secret"), PULSARC_OK);
    cr_assert_eq(unwatch(), 0, "the replaced authParams was freed in clear");
    watch("second-secret");
    pulsarc_client_config_free(cc);
    cr_assert_eq(unwatch(), 0, "authParams was freed in clear with its configuration");
}

Test(secret_wipe, typed_setters_wipe_what_they_replace)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set_auth_token(cc, "typed-secret-789"), PULSARC_OK);
    watch("typed-secret-789");
    cr_assert_eq(pulsarc_client_config_set_auth_basic(cc, "u", "pw-secret-000"), PULSARC_OK);
    cr_assert_eq(unwatch(), 0, "the replaced token was freed in clear");
    watch("pw-secret-000");
    pulsarc_client_config_free(cc);
    cr_assert_eq(unwatch(), 0, "the password was freed in clear");
}

/* A client holds the credentials once, in its provider: its copy of the configuration
 * drops authParams (wiped) as soon as the provider is built, and the user's configuration
 * keeps its own, so that it can create another client. No connection is made. */
static void client_keeps_secret_in_provider_only(const char *plugin, const char *params,
                                                 const char *secret)
{
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", plugin), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", params), PULSARC_OK);
    pulsarc_client_config_set_logger(cc, NULL, NULL);
    for (int round = 0; round < 2; round++) {
        pulsarc_client_t *c = NULL;
        watch(secret);
        cr_assert_eq(pulsarc_client_new("pulsar://127.0.0.1:1", cc, &c), PULSARC_OK, "%s: %s",
                     plugin, pulsarc_last_error_detail());
        cr_assert_null(c->conf.auth_params,
                       "%s: the client keeps authParams beside its provider's copy", plugin);
        cr_assert_str_eq(c->conf.auth_plugin, plugin);
        cr_assert_eq(pulsarc_client_destroy(c), PULSARC_OK);
        cr_assert_eq(unwatch(), 0, "%s, client %d: a copy of the secret was freed in clear", plugin,
                     round + 1);
    }
    char dump[4096];
    pulsarc_client_config_dump(cc, dump, sizeof dump);
    cr_assert(strstr(dump, "authParams=<set, not shown>\n"),
              "the user's configuration lost "
              "authParams: %s",
              dump);
    cr_assert_null(strstr(dump, secret), "%s", dump);
    pulsarc_client_config_free(cc);
}

Test(secret_wipe, a_client_keeps_the_secret_only_in_its_provider)
{
    client_keeps_secret_in_provider_only("token", "token:client-secret-321", "client-secret-321");
    client_keeps_secret_in_provider_only("basic", "userId:bob,password:basic-secret-654",
                                         "basic-secret-654");
}

/* A failover cluster's own credentials (pulsarc_client_config_add_failover_cluster):
 * wiped like authParams in the client's copy and in the user's configuration. */
Test(secret_wipe, a_failover_clusters_secret_is_wiped_too)
{
    const char *secret = "cluster-secret-777";
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_add_failover_cluster(cc, "pulsar://127.0.0.1:2", "token",
                                                            "token:cluster-secret-777", NULL),
                 PULSARC_OK);
    pulsarc_client_t *c = NULL;
    watch(secret);
    cr_assert_eq(pulsarc_client_new("pulsar://127.0.0.1:1", cc, &c), PULSARC_OK, "%s",
                 pulsarc_last_error_detail());
    cr_assert_null(c->conf.failover_clusters[0].auth_params,
                   "the client keeps the cluster's params beside its provider's copy");
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_OK);
    cr_assert_eq(unwatch(), 0, "a copy of the cluster's secret was freed in clear");
    watch(secret);
    pulsarc_client_config_free(cc);
    cr_assert_eq(unwatch(), 0, "the configuration freed the cluster's secret in clear");
}

/* ---- OAuth2's credentials file inline (private_key as a data: URL) ---------------------- */

#include <openssl/evp.h>

/* authParams for oauth2 whose private_key is data:application/json;base64,<json> followed
 * by `tail`; json's length must be a multiple of 3 (no padding inside). */
static pulsarc_result oauth2_client_with_key(const char *json, size_t json_len, const char *tail)
{
    cr_assert_eq(json_len % 3, 0, "pad the JSON to a multiple of 3 bytes");
    char b64[512];
    cr_assert_lt(json_len / 3 * 4, sizeof b64);
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)json, (int)json_len);
    char params[1024];
    snprintf(params, sizeof params,
             "{\"issuer_url\":\"http://127.0.0.1:1\",\"audience\":\"urn:test\","
             "\"private_key\":\"data:application/json;base64,%s%s\"}",
             b64, tail);
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "oauth2"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", params), PULSARC_OK);
    pulsarc_client_config_set_logger(cc, NULL, NULL);
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new("pulsar://127.0.0.1:1", cc, &c);
    if (c)
        pulsarc_client_destroy(c);
    pulsarc_client_config_free(cc);
    return r;
}

/* Base64 that goes bad after the secret: the decoder has written the secret's bytes before
 * it finds the bad block, and the partial result is wiped with the rest. */
Test(secret_wipe, a_data_url_that_fails_to_decode_is_wiped)
{
    static const char json[] = "{\"client_id\":\"cid\",\"client_secret\":\"data-secret-963\"} ";
    watch("data-secret-963");
    cr_assert_eq(oauth2_client_with_key(json, sizeof json - 1, "!!!!"), PULSARC_ERR_INVALID_CONFIG,
                 "%s", pulsarc_last_error_detail());
    cr_assert(strstr(pulsarc_last_error_detail(), "not valid base64"), "%s",
              pulsarc_last_error_detail());
    cr_assert_eq(unwatch(), 0, "the partly decoded credentials were freed in clear");
}

/* A NUL in the decoded text ends it for the JSON parser, not for the wipe. */
Test(secret_wipe, a_data_url_is_wiped_past_a_nul)
{
    static const char json[] = "{\"client_id\":\"cid\"}\0\"client_secret\":\"nul-secret-741\"  ";
    watch("nul-secret-741");
    cr_assert_eq(oauth2_client_with_key(json, sizeof json - 1, ""), PULSARC_ERR_INVALID_CONFIG,
                 "%s", pulsarc_last_error_detail());
    cr_assert_eq(unwatch(), 0, "the credentials after the NUL were freed in clear");
}

/* ---- the CONNECT frame ------------------------------------------------------------ */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

/* A server that accepts one connection and reads until the token has arrived (so the
 * client's CONNECT was written), then reads on without answering until the client
 * gives up. */
typedef struct silent_server {
    int listen_fd;
    int port;
    const char *token;
    atomic_bool token_seen;
    pthread_t thread;
} silent_server_t;

static void *silent_serve(void *arg)
{
    silent_server_t *s = arg;
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char buf[8192];
    size_t have = 0;
    ssize_t n;
    while ((n = read(fd, buf + have, sizeof buf - have)) > 0) {
        have += (size_t)n;
        if (memmem(buf, have, s->token, strlen(s->token)))
            atomic_store(&s->token_seen, true);
        if (have == sizeof buf)
            have = 0;
    }
    close(fd);
    return NULL;
}

static void silent_start(silent_server_t *s, const char *token)
{
    s->token = token;
    atomic_store(&s->token_seen, false);
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(s->listen_fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    cr_assert_eq(bind(s->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->listen_fd, 1), 0);
    cr_assert_eq(getsockname(s->listen_fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&s->thread, NULL, silent_serve, s), 0);
}

static void silent_stop(silent_server_t *s)
{
    shutdown(s->listen_fd, SHUT_RDWR);
    close(s->listen_fd);
    pthread_join(s->thread, NULL);
}

/* The encoded CONNECT carries the token: once written (or dropped) its bytes are wiped,
 * not freed in clear. */
Test(secret_wipe, the_written_connect_frame_is_wiped)
{
    const char *token = "connect-frame-secret-852";
    silent_server_t s;
    silent_start(&s, token);
    char url[64];
    snprintf(url, sizeof url, "pulsar://127.0.0.1:%d", s.port);
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "token"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams", "token:connect-frame-secret-852"),
                 PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "connectionTimeoutMs", "300"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "operationTimeoutMs", "300"), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    cr_assert_eq(pulsarc_client_new(url, cc, &c), PULSARC_OK, "%s", pulsarc_last_error_detail());
    watch(token);
    pulsarc_producer_t *p = NULL;
    cr_assert_neq(pulsarc_client_create_producer(c, "t", NULL, &p), PULSARC_OK,
                  "a server that never answers CONNECT");
    cr_assert(atomic_load(&s.token_seen), "the CONNECT frame never reached the server");
    cr_assert_eq(pulsarc_client_destroy(c), PULSARC_OK);
    cr_assert_eq(unwatch(), 0, "the CONNECT frame was freed with the token in clear");
    silent_stop(&s);
    pulsarc_client_config_free(cc);
}

Test(secret_wipe, kept_answer_headers_are_wiped)
{
    /* A role token or SASL token an answer carried (net/http_kept.c): wiped when the
     * next answer begins, when refused as repeated, and when the request ends. */
    static const char *const names[] = { "SaslAuthRoleToken", "SASL-Token", NULL };
    static const char role[] = "SaslAuthRoleToken: u=client&e=1&s=kept-secret-789\r\n";
    static const char tok[] = "SASL-Token: kept-token-secret\r\n";
    pc_http_kept_t k = { 0 };
    watch("kept-secret-789");
    cr_assert_eq(pc_http_keep_line(&k, names, role, sizeof role - 1), 0);
    cr_assert_eq(pc_http_keep_line(&k, names, "HTTP/1.1 200 OK\r\n", 17), 0);
    cr_assert_null(k.values[0]);
    cr_assert_eq(pc_http_keep_line(&k, names, role, sizeof role - 1), 0);
    cr_assert_eq(pc_http_keep_line(&k, names, role, sizeof role - 1), 0);
    cr_assert_eq(k.bad, 1u, "the repeated header was kept");
    cr_assert_eq(unwatch(), 0, "a kept role token was freed in clear");
    watch("kept-token-secret");
    cr_assert_eq(pc_http_keep_line(&k, names, tok, sizeof tok - 1), 0);
    cr_assert_not_null(k.values[1]);
    pc_http_kept_clear(&k);
    cr_assert_eq(unwatch(), 0, "a kept SASL token was freed in clear");
}
