/*
 * Waiting for room in the producer's queue (blockIfQueueFull) in pulsarc-produce itself,
 * not inside pulsarc_producer_send_async (room.c). A sender blocked in the library wakes
 * only when a message completes: neither a signal nor the run stopping can reach it, and
 * a topic that stores nothing with sendTimeoutMs=0 never completes one. So the library is
 * told not to block, and on QUEUE_FULL or MEMORY_LIMIT the main thread waits here, where
 * the stop (stop.h) wakes it too.
 */
#ifndef PULSARC_PRODUCE_ROOM_H
#define PULSARC_PRODUCE_ROOM_H

#include <stdbool.h>

/* Before the first send. Exits on failure. */
void room_open(void);

/* The main thread is about to wait: the next room_given_back wakes it. Called before
 * the send is tried again, so room given back in between is never missed. */
void room_wanted(void);

/* A message completed and gave its room back (every send callback, on the loop thread). */
void room_given_back(void);

/* Waits until room was given back since room_wanted. Returns false, at once, when
 * sending has to stop instead. */
bool room_wait(void);

#endif
