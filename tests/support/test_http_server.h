/* A small HTTP(S) server on a thread of its own, for tests of the HTTP client: it accepts
 * one connection at a time, speaks TLS when given an SSL_CTX (blocking OpenSSL on the
 * accepted socket), reads one request (headers, and a body of Content-Length bytes),
 * records it, writes the fixed answer (or what its respond function makes of the request)
 * and closes. Because it runs beside the test's libuv
 * loop rather than on it, a test drives the client's loop as usual and reads what the
 * server saw afterwards (ts_requests, ts_last_request).
 *
 *   test_server_t s = { .ctx = ctx_or_NULL, .answer = "HTTP/1.1 200 OK\r\n..." };
 *   ts_start(&s);  ... s.port ...  ts_stop(&s);
 */
#ifndef PC_TEST_HTTP_SERVER_H
#define PC_TEST_HTTP_SERVER_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct test_server {
    SSL_CTX *ctx;       /* NULL: plain HTTP */
    const char *answer; /* the whole response, written to every request */
    /* Or, when set, the response to each request, made on the server's thread: *len
     * bytes (which may hold a NUL), valid until the next call. */
    const char *(*respond)(void *ctx, const char *request, size_t *len);
    void *respond_ctx;
    int port; /* set by ts_start */
    /* private */
    int listen_fd, stop_pipe[2];
    pthread_t thread;
    pthread_mutex_t mu;
    int requests;       /* requests read and answered */
    int tls_failures;   /* connections whose handshake failed */
    char request[8192]; /* the last request, NUL-terminated */
} test_server_t;

/* Enough of a request: the headers, and the body Content-Length announces. */
static inline bool ts_request_complete(const char *req, size_t len)
{
    const char *end = strstr(req, "\r\n\r\n");
    if (!end)
        return false;
    const char *cl = strstr(req, "\r\nContent-Length: ");
    size_t want = cl && cl < end ? strtoul(cl + 18, NULL, 10) : 0;
    return len >= (size_t)(end + 4 - req) + want;
}

static inline void ts_serve(test_server_t *s, int fd)
{
    /* A safety net for a broken test, not a timing: no request waits this long. */
    struct timeval tv = { .tv_sec = 20 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL *ssl = NULL;
    if (s->ctx) {
        ssl = SSL_new(s->ctx);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) != 1) {
            pthread_mutex_lock(&s->mu);
            s->tls_failures++;
            pthread_mutex_unlock(&s->mu);
            SSL_free(ssl);
            close(fd);
            return;
        }
    }
    char req[8192];
    size_t len = 0;
    while (len < sizeof req - 1) {
        int n = ssl ? SSL_read(ssl, req + len, (int)(sizeof req - 1 - len))
                    : (int)read(fd, req + len, sizeof req - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        req[len] = '\0';
        if (ts_request_complete(req, len))
            break;
    }
    req[len] = '\0';
    if (len > 0) {
        pthread_mutex_lock(&s->mu);
        memcpy(s->request, req, len + 1);
        s->requests++;
        pthread_mutex_unlock(&s->mu);
        size_t alen;
        const char *answer = s->respond ? s->respond(s->respond_ctx, req, &alen) : s->answer;
        if (!s->respond)
            alen = strlen(answer);
        if (ssl)
            SSL_write(ssl, answer, (int)alen);
        else
            (void)!write(fd, answer, alen);
    }
    if (ssl) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
    }
    close(fd);
}

static inline void *ts_main(void *arg)
{
    test_server_t *s = arg;
    for (;;) {
        struct pollfd p[2] = { { .fd = s->listen_fd, .events = POLLIN },
                               { .fd = s->stop_pipe[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0 || (p[1].revents & POLLIN))
            return NULL;
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd >= 0)
            ts_serve(s, fd);
    }
}

static inline void ts_start(test_server_t *s)
{
    pthread_mutex_init(&s->mu, NULL);
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(s->listen_fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    cr_assert_eq(bind(s->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->listen_fd, 8), 0);
    socklen_t alen = sizeof a;
    getsockname(s->listen_fd, (struct sockaddr *)&a, &alen);
    s->port = ntohs(a.sin_port);
    cr_assert_eq(pipe(s->stop_pipe), 0);
    cr_assert_eq(pthread_create(&s->thread, NULL, ts_main, s), 0);
}

static inline void ts_stop(test_server_t *s)
{
    (void)!write(s->stop_pipe[1], "x", 1);
    pthread_join(s->thread, NULL);
    close(s->listen_fd);
    close(s->stop_pipe[0]);
    close(s->stop_pipe[1]);
    pthread_mutex_destroy(&s->mu);
}

static inline int ts_requests(test_server_t *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->requests;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static inline int ts_tls_failures(test_server_t *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->tls_failures;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* A copy of the last request (static: one per test process). */
static inline const char *ts_last_request(test_server_t *s)
{
    static char copy[8192];
    pthread_mutex_lock(&s->mu);
    memcpy(copy, s->request, sizeof copy);
    pthread_mutex_unlock(&s->mu);
    return copy;
}

#endif
