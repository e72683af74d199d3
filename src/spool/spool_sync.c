/* The spool's syncs: one round at a time, taken under the lock and run outside it, by
 * whoever needs it: the first appender of a group with ALWAYS (the group commit), the
 * flusher thread every interval with INTERVAL, pc_spool_finish for the last one. A round
 * covers the sealed segments' files written since the last round, the current one's
 * (through a duplicate of its descriptor, so that a roll may close it meanwhile) and the
 * directory when a segment was made since (its name is part of what must survive).
 *
 * Nothing here runs while the spool's lock is held: appends, rolls and releases (the loop
 * thread's included) never wait for the disk. */
#include "spool/spool_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

/* A sync failed: nothing written since the last good one can be trusted, so every append
 * from now on fails (the next producer opened on the directory replays what is there). */
static void set_broken(pc_spool_t *sp, int err)
{
    if (sp->broken != PULSARC_OK)
        return;
    sp->broken = PULSARC_ERR_SPOOL;
    snprintf(sp->broken_detail, sizeof sp->broken_detail,
             "spool %.200s: fdatasync failed (%s): sends fail until a producer opens the "
             "spool again",
             sp->dir, strerror(err));
    PC_ERROR(sp->log, "%s", sp->broken_detail);
}

bool pc_spool_reserve_sync(pc_spool_t *sp)
{
    if (sp->n_unsynced < sp->cap_unsynced)
        return true;
    size_t cap = sp->cap_unsynced ? sp->cap_unsynced * 2 : 4;
    int *grown = realloc(sp->unsynced, cap * sizeof *grown);
    if (!grown)
        return false;
    sp->unsynced = grown;
    sp->cap_unsynced = cap;
    return true;
}

void pc_spool_queue_sync(pc_spool_t *sp, int fd)
{
    sp->unsynced[sp->n_unsynced++] = fd; /* room reserved by the caller */
}

void pc_spool_sync_take(pc_spool_t *sp, pc_spool_sync_job_t *job)
{
    *job = (pc_spool_sync_job_t){ .cur = -1 };
    if (sp->dirty && sp->cur) {
        job->cur = dup(sp->cur_fd);
        if (job->cur < 0)
            job->err = errno; /* then what it should have covered fails */
    }
    sp->dirty = false;
    job->dir = sp->dir_dirty;
    sp->dir_dirty = false;
    job->fds = sp->unsynced;
    job->n = sp->n_unsynced;
    job->cap = sp->cap_unsynced;
    sp->unsynced = NULL;
    sp->n_unsynced = sp->cap_unsynced = 0;
    job->group = sp->group_head;
    sp->group_head = sp->group_tail = NULL;
    sp->syncing = true;
}

static void sync_into(const pc_spool_t *sp, int fd, int *first)
{
    int err = pc_spool_sync(sp, fd);
    if (err && !*first)
        *first = err;
}

void pc_spool_sync_run(const pc_spool_t *sp, pc_spool_sync_job_t *job)
{
    for (size_t i = 0; i < job->n; i++) {
        sync_into(sp, job->fds[i], &job->err);
        close(job->fds[i]);
    }
    job->n = 0;
    if (job->cur >= 0) {
        sync_into(sp, job->cur, &job->err);
        close(job->cur);
        job->cur = -1;
    }
    /* The files first, then the names: a segment counts once both are on disk. */
    if (job->dir)
        sync_into(sp, sp->dir_fd, &job->err);
}

/* t's sync failed: its message is not accepted, and must not come back at the next open
 * either. Its record is blanked, and with it everything after it in its segment: all
 * appended later, so failing too (after a failed sync every append fails). Tickets come
 * in append order, so the first failed one of a segment cuts it and the later ones find
 * it cut already; each cut is made in t's own segment, which need not be the current
 * one. Under the lock. */
static void fail_ticket(pc_spool_ticket_t *t)
{
    pc_spool_segment_t *seg = t->segment;
    if (seg->map && seg->size > t->offset) {
        memset(seg->map + t->offset, 0, seg->size - t->offset);
        seg->size = t->offset;
    }
    seg->live--;
    t->res = PULSARC_ERR_SPOOL;
}

/* Hand the group g over (err 0: its sync succeeded) or fail it. Under the lock. */
static void settle_group(pc_spool_t *sp, pc_spool_ticket_t *g, int err)
{
    for (pc_spool_ticket_t *t = g, *next; t; t = next) {
        next = t->next;
        if (err) {
            fail_ticket(t);
        } else {
            t->res = PULSARC_OK;
            sp->accepted(t);
        }
        t->done = true;
    }
}

int pc_spool_sync_settle(pc_spool_t *sp, pc_spool_sync_job_t *job)
{
    sp->syncing = false;
    settle_group(sp, job->group, job->err);
    if (job->err) {
        set_broken(sp, job->err);
        /* Those appended since the round was taken are past the failure: they fail too. */
        pc_spool_ticket_t *rest = sp->group_head;
        sp->group_head = sp->group_tail = NULL;
        settle_group(sp, rest, job->err);
    }
    if (!sp->unsynced) { /* keep the list's room for the next rounds */
        sp->unsynced = job->fds;
        sp->cap_unsynced = job->cap;
    } else {
        free(job->fds);
    }
    uv_cond_broadcast(&sp->cond);
    return job->err;
}

/* One round from taking to settling; the lock is held before and after. */
static int sync_round(pc_spool_t *sp)
{
    pc_spool_sync_job_t job;
    pc_spool_sync_take(sp, &job);
    uv_mutex_unlock(&sp->mu);
    pc_spool_sync_run(sp, &job);
    uv_mutex_lock(&sp->mu);
    return pc_spool_sync_settle(sp, &job);
}

/* ---- ALWAYS: the group commit --------------------------------------------------------- */

pulsarc_result pc_spool_commit(pc_spool_t *sp, pc_spool_ticket_t *t)
{
    if (sp->group_tail)
        sp->group_tail->next = t;
    else
        sp->group_head = t;
    sp->group_tail = t;
    /* The first to find no round running takes one for everyone appended so far; the
     * others wait for it, and one of them leads the next. */
    while (!t->done) {
        if (sp->syncing)
            uv_cond_wait(&sp->cond, &sp->mu);
        else
            sync_round(sp);
    }
    if (t->res != PULSARC_OK)
        return pc_fail(t->res, "%s", sp->broken_detail);
    return PULSARC_OK;
}

/* ---- INTERVAL: the flusher ------------------------------------------------------------ */

static bool round_needed(const pc_spool_t *sp)
{
    return sp->dirty || sp->dir_dirty || sp->n_unsynced;
}

static void flusher_main(void *arg)
{
    pc_spool_t *sp = arg;
    uint64_t interval_ns = sp->interval_ms * 1000000u;
    uv_mutex_lock(&sp->mu);
    while (!sp->flusher_stop) {
        uv_cond_timedwait(&sp->flusher_cond, &sp->mu, interval_ns);
        if (!sp->flusher_stop && !sp->syncing && round_needed(sp))
            sync_round(sp);
    }
    uv_mutex_unlock(&sp->mu);
}

int pc_spool_start_flusher(pc_spool_t *sp)
{
    if (sp->fsync != PC_SPOOL_FSYNC_INTERVAL)
        return 0;
    if (uv_cond_init(&sp->flusher_cond) != 0)
        return -1;
    if (uv_thread_create(&sp->flusher, flusher_main, sp) != 0) {
        uv_cond_destroy(&sp->flusher_cond);
        return -1;
    }
    sp->flusher_on = true;
    return 0;
}

void pc_spool_stop_flusher(pc_spool_t *sp)
{
    if (!sp->flusher_on)
        return;
    uv_mutex_lock(&sp->mu);
    sp->flusher_stop = true;
    uv_cond_signal(&sp->flusher_cond);
    uv_mutex_unlock(&sp->mu);
    uv_thread_join(&sp->flusher);
    uv_cond_destroy(&sp->flusher_cond);
    sp->flusher_on = false;
}
