/* The end of the sending, by signal or by failure, and the waits it cuts short (stop.h). */
#include "stop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Set by SIGINT/SIGTERM: stop sending, then flush and report what did get through. */
static volatile sig_atomic_t g_interrupted;

/* The failure that ended the sending (PULSARC_OK: none yet), set by whichever thread saw
 * it first. */
static atomic_int g_stop_result;

/* Written once sending must end (a signal, a stopped producer) and never drained, so
 * every later wait on its read end returns at once. The main thread waits on it together
 * with standard input or the pacer's deadline: it cannot miss the event, even one that
 * happened just before the wait began. */
static int g_wake_pipe[2];

void open_wake_pipe(void)
{
    if (pipe(g_wake_pipe) != 0) {
        fprintf(stderr, PROG ": cannot create a pipe: %s\n", strerror(errno));
        exit(EXIT_SOME_FAILED);
    }
}

/* Async-signal-safe, for on_signal. */
static void wake_main_thread(void)
{
    /* The result needs no check: the pipe gets at most two bytes, so it cannot fill. */
    ssize_t n = write(g_wake_pipe[1], "", 1);
    (void)n;
}

static void on_signal(int sig)
{
    (void)sig;
    int saved_errno = errno; /* the interrupted code may be about to read it */
    g_interrupted = 1;
    wake_main_thread();
    errno = saved_errno;
}

/* SA_RESETHAND makes a second signal kill the process, in case the broker is unreachable
 * and the flush hangs. The handler wakes the main thread's waits for input or for the
 * pacer, on whichever thread it runs. */
void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A broker that drops the connection must show up as a send error, not kill us. */
    signal(SIGPIPE, SIG_IGN);
}

/* The per-message failure lines stop after a while (outcome.c); this one always shows. */
void stop_sending(pulsarc_result res, const char *detail, bool producer_stopped)
{
    int none = PULSARC_OK;
    if (!atomic_compare_exchange_strong(&g_stop_result, &none, (int)res))
        return;
    if (producer_stopped)
        fprintf(stderr, PROG ": producer stopped: %s [%s]%s%s; sending no more messages\n",
                pulsarc_strerror(res), pulsarc_result_name(res), detail[0] ? ": " : "", detail);
    else
        fprintf(stderr,
                PROG ": stopping at the first failed message: %s [%s]; sending no more "
                     "messages (--keep-going sends on)\n",
                pulsarc_strerror(res), pulsarc_result_name(res));
    wake_main_thread();
}

bool sending_stopped(void)
{
    return g_interrupted || atomic_load(&g_stop_result) != PULSARC_OK;
}

bool was_interrupted(void)
{
    return g_interrupted;
}

bool wait_for(int fd, const struct timespec *timeout)
{
    struct pollfd fds[2] = { { .fd = g_wake_pipe[0], .events = POLLIN },
                             { .fd = fd, .events = POLLIN } };
    for (;;) {
        int n = ppoll(fds, 2, timeout, NULL);
        if (sending_stopped())
            return false;
        /* The wake pipe is written only after the stop is recorded, so a ready fd here
         * is fd. Only a signal (EINTR) that stopped nothing means waiting on. */
        if (n >= 0 || errno != EINTR)
            return true;
    }
}
