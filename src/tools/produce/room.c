/* Waiting for room in the producer's queue, woken by the send callbacks (room.h). */
#include "room.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stop.h"
#include "util.h"

/* Set by the main thread before it waits, taken by the first callback after it: one
 * byte through the pipe per wait, and none while nobody waits. */
static atomic_bool g_wanted;

/* Its read end is non-blocking, so that room_wait can drain it. */
static int g_room_pipe[2];

void room_open(void)
{
    if (pipe(g_room_pipe) != 0 || fcntl(g_room_pipe[0], F_SETFL, O_NONBLOCK) != 0) {
        fprintf(stderr, PROG ": cannot create a pipe: %s\n", strerror(errno));
        exit(EXIT_SOME_FAILED);
    }
}

void room_wanted(void)
{
    atomic_store(&g_wanted, true);
}

void room_given_back(void)
{
    if (atomic_load(&g_wanted) && atomic_exchange(&g_wanted, false)) {
        /* At most one byte is unread per wait, so the pipe cannot fill. */
        ssize_t n = write(g_room_pipe[1], "", 1);
        (void)n;
    }
}

bool room_wait(void)
{
    if (!wait_for(g_room_pipe[0], NULL))
        return false;
    char drain[16];
    while (read(g_room_pipe[0], drain, sizeof drain) > 0) {
    }
    return true;
}
