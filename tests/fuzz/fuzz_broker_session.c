/* libFuzzer target: a client with messages in flight, against a broker that may send
 * anything, over plain in-memory sockets.
 *
 * Each input is a session (format: broker_session_format.h) played by broker_session.c,
 * which also says what is checked: no crash and no leak, every frame the client writes
 * parses, every accepted message, flush and close called back exactly once.
 *
 * FUZZ_BROKER_SESSION_LOG=1 in the environment prints the client's log (debug level) and
 * how each message ended to stderr, to follow what a reproducer does. */
#include <stdint.h>

#include "broker_session.h"

/* The broker lookups name (fake_broker.h): lookups and the producer share a connection. */
#define SERVICE_URL FB_BROKER_URL

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const bs_options_t plain = { .service_url = SERVICE_URL };
    bs_init(&plain);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Static: the session is large, and one runs at a time. */
    static session_t s;
    input_t in = { data, size };
    if (bs_start(&s, &in))
        while (bs_running(&s, &in))
            bs_run_op(&s, (bs_op_t)(bs_next_byte(&in) % BS_OP_COUNT), &in);
    bs_finish(&s);
    return 0;
}
