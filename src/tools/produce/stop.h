/*
 * When pulsarc-produce's sending ends early: a signal (SIGINT/SIGTERM), or a failed
 * message (the first one, or with --keep-going one every later message would share).
 * Either wakes the main thread wherever it waits (for standard input, the pacer or room
 * in the queue), so it can flush and report what got through.
 */
#ifndef PULSARC_PRODUCE_STOP_H
#define PULSARC_PRODUCE_STOP_H

#include <stdbool.h>
#include <time.h>

#include <pulsarc/pulsarc.h>

/* Before anything waits (wait_for) or a stop can happen. Exits on failure. */
void open_wake_pipe(void);

/* First SIGINT/SIGTERM: stop sending, flush, report; a second one kills the process.
 * Also ignores SIGPIPE. */
void install_signal_handlers(void);

/* Ends the sending after a failed message: says so once, naming the result (with the
 * detail when producer_stopped: a failure every later message would share), and wakes
 * the main thread. On either thread. */
void stop_sending(pulsarc_result res, const char *detail, bool producer_stopped);

/* Whether sending has to end: interrupted, or stopped by a failure. */
bool sending_stopped(void);

/* Whether a signal interrupted the run. */
bool was_interrupted(void);

/* Waits until fd (-1: none) has input or the timeout (NULL: none) has passed. Returns
 * false, at once, when sending has to stop instead. */
bool wait_for(int fd, const struct timespec *timeout);

#endif
