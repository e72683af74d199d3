/* A connection's read path: what the broker writes in one burst, far more than the first
 * read buffer holds (net/conn_io.c starts small and grows), reaches the listeners whole
 * and in order. The test plays the broker on the other end of a socketpair handed to the
 * connection through the runtime's transport seam, and runs the loop itself. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "../support/broker_commands.h"
#include "net/connection.h"

#define PRODUCER_ID 7
#define RECEIPTS 3000 /* about 80 KiB of receipts */

static int broker_fd = -1;

static int hand_over(void *ctx, const pc_host_port_t *to)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    broker_fd = sv[1];
    return sv[0];
}

typedef struct seen {
    bool ready;
    int receipts;
    bool in_order;
} seen_t;

static void on_ready(pc_conn_t *conn, pulsarc_result res, void *ctx)
{
    cr_assert_eq(res, PULSARC_OK, "the connection failed: %s", pulsarc_result_name(res));
    ((seen_t *)ctx)->ready = true;
}

static void on_receipt(void *ctx, const Pulsar__Proto__CommandSendReceipt *r)
{
    seen_t *s = ctx;
    s->in_order &= r->sequence_id == (uint64_t)s->receipts;
    s->receipts++;
}

static void on_disconnect(void *ctx, pulsarc_result why)
{
}

/* Everything the client wrote so far, read and dropped (CONNECT). */
static void drain(void)
{
    uint8_t buf[4096];
    while (recv(broker_fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
}

/* Write everything, giving the loop a turn whenever the socket is full. */
static void write_all(uv_loop_t *loop, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(broker_fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            uv_run(loop, UV_RUN_NOWAIT);
        } else {
            cr_assert(n < 0 && errno == EINTR, "send: %s", strerror(errno));
        }
    }
}

/* Turn the loop until cond holds (bounded: the bytes are all there already). */
static bool run_until(uv_loop_t *loop, const bool *cond, const int *count, int want)
{
    for (int i = 0; i < 100000; i++) {
        if ((cond && *cond) || (count && *count >= want))
            return true;
        uv_run(loop, UV_RUN_NOWAIT);
    }
    return false;
}

Test(conn_read, a_burst_larger_than_the_read_buffer_arrives_whole_and_in_order)
{
    uv_loop_t loop;
    cr_assert_eq(uv_loop_init(&loop), 0);
    const pc_logger_t log = { 0 };
    const pc_transport_t seam = { .open_socket = hand_over };
    pc_runtime_t rt = {
        .loop = &loop,
        .log = &log,
        .limits = { .operation_timeout_ms = 30000, .connection_timeout_ms = 30000,
                    .keepalive_interval_ms = 30000 },
        .net = { .connections_per_broker = 1 },
        .transport = &seam,
    };
    const pc_host_port_t broker = { .host = "broker", .port = 6650 };
    pc_conn_t *conn = pc_conn_open(&rt, &broker, &broker);
    cr_assert(conn && broker_fd >= 0, "no connection");
    seen_t s = { .in_order = true };
    pc_conn_when_ready(conn, on_ready, &s);
    uv_run(&loop, UV_RUN_NOWAIT); /* CONNECT goes out */
    drain();

    pc_buf_t out;
    pc_buf_init(&out);
    cr_assert_eq(bc_connected(&out, "Pulsar Server", 21, 5 * 1024 * 1024), 0);
    write_all(&loop, out.data, out.len);
    cr_assert(run_until(&loop, &s.ready, NULL, 0), "no CONNECTED handled");

    pc_conn_listener_t listener = { .producer_id = PRODUCER_ID, .ctx = &s,
                                    .on_receipt = on_receipt, .on_disconnect = on_disconnect };
    pc_conn_add_listener(conn, &listener);
    /* The receipts written at once (as far as the socket takes them) before the loop reads
     * any: reads fill the buffer, which grows. */
    out.len = 0;
    for (uint64_t seq = 0; seq < RECEIPTS; seq++)
        cr_assert_eq(bc_receipt(&out, PRODUCER_ID, seq, seq, 1, seq), 0);
    cr_assert_gt(out.len, 64 * 1024, "the burst must exceed the largest read buffer");
    write_all(&loop, out.data, out.len);
    cr_assert(run_until(&loop, NULL, &s.receipts, RECEIPTS), "%d of %d receipts handled",
              s.receipts, RECEIPTS);
    cr_assert_eq(s.receipts, RECEIPTS);
    cr_assert(s.in_order, "receipts out of order");

    pc_buf_free(&out);
    pc_conn_remove_listener(conn, &listener);
    pc_conn_close(conn, PULSARC_ERR_ALREADY_CLOSED, "test over");
    cr_assert_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    cr_assert_eq(uv_loop_close(&loop), 0);
    close(broker_fd);
}
