/* Appending to the spool and letting go of what was appended: room (spoolMaxBytes),
 * sequence ids, segment files and their rolls; releases that delete finished segments;
 * close. The syncs (the group commit of ALWAYS, the flusher of INTERVAL) are
 * spool_sync.c's. See spool.h. */
#include "spool/spool_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/error.h"
#include "wire/crc32c.h"

/* ---- segments ---------------------------------------------------------------------- */

static void unlink_segment(pc_spool_t *sp, pc_spool_segment_t *seg)
{
    if (seg->prev)
        seg->prev->next = seg->next;
    else
        sp->oldest = seg->next;
    if (seg->next)
        seg->next->prev = seg->prev;
    else
        sp->newest = seg->prev;
}

void pc_spool_add_segment(pc_spool_t *sp, pc_spool_segment_t *seg)
{
    seg->sp = sp;
    seg->next = NULL;
    seg->prev = sp->newest;
    if (sp->newest)
        sp->newest->next = seg;
    else
        sp->oldest = seg;
    sp->newest = seg;
    sp->bytes += seg->disk;
}

void pc_spool_maybe_delete(pc_spool_t *sp, pc_spool_segment_t *seg)
{
    if (seg->live || seg->pinned || seg == sp->cur)
        return;
    char name[SEGMENT_NAME_LEN + 1];
    pc_spool_segment_name(seg->number, name);
    if (seg->damaged) {
        /* Kept for whoever looks into the damage, out of the spool's way and its size:
         * its whole records are all done with. If it stays, the next open reads it
         * again (and skips the damage again). */
        pc_spool_set_aside(sp, name, ".damaged",
                           "had damage that its replay skipped; its whole records are done");
    } else if (unlinkat(sp->dir_fd, name, 0) != 0 && errno != ENOENT) {
        /* It stays on disk, and its messages (all released) are replayed next time: the
         * broker drops them as duplicates. Not worth failing anything for. */
        PC_WARN(sp->log, "spool %s: cannot delete %s: %s", sp->dir, name, strerror(errno));
    }
    sp->bytes -= seg->disk;
    if (seg->map)
        munmap(seg->map, seg->map_len);
    unlink_segment(sp, seg);
    free(seg);
    uv_cond_broadcast(&sp->cond); /* room for appenders that wait */
}

void pc_spool_trim(pc_spool_t *sp, pc_spool_segment_t *seg, int fd)
{
    if (seg->disk > seg->size && ftruncate(fd, (off_t)seg->size) == 0) {
        sp->bytes -= seg->disk - seg->size;
        seg->disk = seg->size;
    }
}

/* Appends stop going to the current segment: give back its unused room, and hand its
 * file to the next sync round when it was written since the last one and still holds a
 * message (the caller reserved room for it: pc_spool_reserve_sync), else close it (one
 * with every message released goes now). Syncs nothing: with ALWAYS the group still
 * waiting for its records finds the file in the round it takes. Under the lock. */
static void seal_current(pc_spool_t *sp)
{
    pc_spool_segment_t *seg = sp->cur;
    /* The mapping stays, for marking releases, until the segment goes; its pages leave
     * the process (they stay in the page cache, dirty ones too, until written back). */
    madvise(seg->map, seg->map_len, MADV_DONTNEED);
    pc_spool_trim(sp, seg, sp->cur_fd);
    if (sp->dirty && seg->live)
        pc_spool_queue_sync(sp, sp->cur_fd);
    else
        close(sp->cur_fd);
    sp->dirty = false;
    sp->cur = NULL;
    sp->cur_fd = -1;
    pc_spool_maybe_delete(sp, seg);
}

/* The room a new segment takes for a first record of `need` bytes: allocated in full
 * when it is made, so that an append is a copy into memory mapped from the file (no
 * system call per message; the process may die the next instant and the kernel still
 * has the bytes) and a full disk shows at creation, never as SIGBUS in a copy. */
static uint64_t segment_header(const pc_spool_t *sp)
{
    return pc_spool_header_size(strlen(sp->name), strlen(sp->topic));
}

static uint64_t segment_room(const pc_spool_t *sp, uint64_t need)
{
    uint64_t header = segment_header(sp);
    return header + need > sp->segment_bytes ? header + need : sp->segment_bytes;
}

/* Make the next segment, with room for a first record of `need` bytes, and send appends
 * there. */
static pulsarc_result new_segment(pc_spool_t *sp, uint64_t need)
{
    char name[SEGMENT_NAME_LEN + 1];
    uint64_t number = sp->next_number++;
    pc_spool_segment_name(number, name);
    uint64_t room = segment_room(sp, need);
    pc_spool_segment_t *seg = calloc(1, sizeof *seg);
    if (!seg)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    uint8_t *map = MAP_FAILED;
    int fd = pc_spool_open_file(sp, name, O_RDWR | O_CREAT | O_EXCL, 0600);
    int err = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)room);
    if (!err) {
        map = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        err = map == MAP_FAILED ? errno : 0;
    }
    size_t hlen = 0;
    if (!err)
        hlen = pc_spool_header_encode(map, number, sp->name, sp->topic);
    if (err) {
        if (map != MAP_FAILED)
            munmap(map, room);
        if (fd >= 0) {
            close(fd);
            unlinkat(sp->dir_fd, name, 0);
        }
        free(seg);
        return pc_fail(PULSARC_ERR_SPOOL, "spool %s: cannot create %s: %s", sp->dir, name,
                       strerror(err));
    }
    seg->number = number;
    seg->header = seg->size = hlen;
    seg->disk = seg->map_len = room;
    seg->map = map;
    pc_spool_add_segment(sp, seg);
    sp->cur = seg;
    sp->cur_fd = fd;
    /* The file and its name must be on disk before a message in it counts as durable:
     * the next sync round covers both (the file once a record makes it dirty). */
    sp->dir_dirty = sp->fsync != PC_SPOOL_FSYNC_NEVER;
    return PULSARC_OK;
}

/* Does a record of `need` bytes go to a new segment? */
static bool segment_needed(const pc_spool_t *sp, uint64_t need)
{
    return !sp->cur || sp->cur->size + need > sp->cur->disk;
}

/* The spool is full, but the segment appends go to holds nothing anyone waits for: it
 * can go (the next append starts a new one). */
static bool reclaim_current(pc_spool_t *sp)
{
    if (!sp->cur || sp->cur->live || !pc_spool_reserve_sync(sp))
        return false;
    seal_current(sp);
    return true;
}

/* ---- appending ----------------------------------------------------------------------- */

/* Payloads from this size on have their CRC computed before the lock is taken. */
#define CRC_APART (16 * 1024)

void pc_spool_note_id_locked(pc_spool_t *sp, int64_t id)
{
    if (sp->ids_exhausted || id < sp->next_id)
        return;
    if (id == INT64_MAX)
        sp->ids_exhausted = true;
    else
        sp->next_id = id + 1;
}

void pc_spool_note_id(pc_spool_t *sp, int64_t id)
{
    uv_mutex_lock(&sp->mu);
    pc_spool_note_id_locked(sp, id);
    uv_mutex_unlock(&sp->mu);
}

/* Wait until a record of `need` bytes has a place: the current segment's room, or a new
 * segment within max_bytes. Under the lock. */
static pulsarc_result find_room(pc_spool_t *sp, uint64_t need, bool wait_for_room)
{
    for (;;) {
        if (sp->stopping)
            return pc_fail(PULSARC_ERR_ALREADY_CLOSED, "producer is closed");
        if (sp->broken != PULSARC_OK)
            return pc_fail(sp->broken, "%s", sp->broken_detail);
        if (!segment_needed(sp, need))
            return PULSARC_OK;
        /* A roll never waits for the disk: a sync running on the current segment goes on
         * through its own descriptor, and a sealed file joins the next round. */
        if (sp->bytes + segment_room(sp, need) <= sp->max_bytes) {
            if (sp->cur && !pc_spool_reserve_sync(sp))
                return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
            if (sp->cur)
                seal_current(sp);
            return new_segment(sp, need);
        }
        if (reclaim_current(sp))
            continue;
        if (!wait_for_room)
            return pc_fail(PULSARC_ERR_QUEUE_FULL,
                           "the spool is full: %llu bytes of messages wait for their "
                           "receipts (spoolMaxBytes %llu)",
                           (unsigned long long)sp->bytes, (unsigned long long)sp->max_bytes);
        uv_cond_wait(&sp->cond, &sp->mu);
    }
}

/* m's record (`need` bytes, meta_len of them metadata) can never be written: say why,
 * with every part of what it takes, since a payload below spoolMaxBytes can still need
 * more than that. */
static pulsarc_result refuse_too_big(const pc_spool_t *sp, const pc_spool_msg_t *m, size_t meta_len,
                                     uint64_t need)
{
    if (need > PC_SPOOL_BODY_MAX)
        return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                       "a message of %llu payload bytes makes a spool record of %llu bytes, "
                       "more than a spool record may hold (%llu)",
                       (unsigned long long)m->payload_len, (unsigned long long)need,
                       (unsigned long long)PC_SPOOL_BODY_MAX);
    uint64_t header = segment_header(sp);
    return pc_fail(PULSARC_ERR_MESSAGE_TOO_BIG,
                   "a message of %llu payload bytes does not fit in the spool: its record "
                   "takes %llu bytes (the payload, %llu bytes of metadata and a %d-byte "
                   "record frame) and the segment file that holds it a %llu-byte segment "
                   "header more, %llu bytes in all (a segment is never smaller than %llu): "
                   "more than spoolMaxBytes (%llu)",
                   (unsigned long long)m->payload_len, (unsigned long long)need,
                   (unsigned long long)meta_len, PC_SPOOL_FRAME, (unsigned long long)header,
                   (unsigned long long)(header + need), (unsigned long long)sp->segment_bytes,
                   (unsigned long long)sp->max_bytes);
}

/* Wait for room, take the id, write the record. Under the lock. */
static pulsarc_result write_record(pc_spool_t *sp, const pc_spool_msg_t *m, pc_spool_ticket_t *t,
                                   uint8_t *meta, size_t meta_len, const uint32_t *payload_crc,
                                   bool wait_for_room)
{
    uint64_t need = PC_SPOOL_FRAME + meta_len + m->payload_len;
    if (need > PC_SPOOL_BODY_MAX || segment_room(sp, need) > sp->max_bytes)
        return refuse_too_big(sp, m, meta_len, need);
    pulsarc_result res = find_room(sp, need, wait_for_room);
    if (res != PULSARC_OK)
        return res;
    int64_t id = m->sequence_id;
    if (id < 0) {
        if (sp->ids_exhausted)
            return pc_fail(PULSARC_ERR_INVALID_ARGUMENT,
                           "sequence ids are exhausted (INT64_MAX was used)");
        id = sp->next_id;
    }
    pc_spool_meta_set_id(meta, id);
    uint8_t frame[PC_SPOOL_FRAME];
    pc_spool_frame_encode(frame, meta, meta_len, m->payload, m->payload_len, payload_crc);
    /* The body first, its length and CRC last: a process that dies in between leaves a
     * zero frame, which a reader takes for the segment's clean end. */
    uint8_t *at = sp->cur->map + sp->cur->size;
    memcpy(at + PC_SPOOL_FRAME, meta, meta_len);
    if (m->payload_len)
        memcpy(at + PC_SPOOL_FRAME + meta_len, m->payload, m->payload_len);
    atomic_signal_fence(memory_order_release);
    memcpy(at, frame, sizeof frame);
    pc_spool_note_id_locked(sp, id);
    t->sequence_id = id;
    t->segment = sp->cur;
    t->offset = sp->cur->size;
    t->next = NULL;
    t->done = false;
    sp->cur->size += need;
    sp->cur->live++;
    sp->dirty = sp->fsync != PC_SPOOL_FSYNC_NEVER;
    return PULSARC_OK;
}

pulsarc_result pc_spool_append(pc_spool_t *sp, const pc_spool_msg_t *m, pc_spool_ticket_t *t,
                               bool wait_for_room)
{
    size_t meta_len = pc_spool_meta_size(m);
    uint8_t small[512];
    uint8_t *meta = meta_len <= sizeof small ? small : malloc(meta_len);
    if (!meta)
        return pc_fail(PULSARC_ERR_NO_MEMORY, "out of memory");
    pc_spool_meta_encode(meta, m);
    /* A large payload's CRC outside the lock (the metadata's, with the id, is taken
     * inside and the two are joined); a small one is cheaper to read inside. */
    uint32_t payload_crc;
    bool apart = m->payload_len >= CRC_APART;
    if (apart)
        payload_crc = pc_crc32c(0, m->payload, m->payload_len);
    uv_mutex_lock(&sp->mu);
    sp->inside++;
    pulsarc_result res = write_record(sp, m, t, meta, meta_len, apart ? &payload_crc : NULL,
                                      wait_for_room);
    if (res == PULSARC_OK && sp->fsync == PC_SPOOL_FSYNC_ALWAYS)
        res = pc_spool_commit(sp, t);
    else if (res == PULSARC_OK)
        sp->accepted(t);
    if (--sp->inside == 0 && sp->stopping)
        uv_cond_broadcast(&sp->cond);
    uv_mutex_unlock(&sp->mu);
    if (meta != small)
        free(meta);
    return res;
}

void pc_spool_release(pc_spool_segment_t *seg, uint64_t offset)
{
    pc_spool_t *sp = seg->sp;
    uv_mutex_lock(&sp->mu);
    if (seg->map) {
        static const uint8_t released[4] = { 0x52, 0x53, 0x4c, 0x44 }; /* PC_SPOOL_RELEASED */
        memcpy(seg->map + offset + 8, released, sizeof released);
    }
    seg->live--;
    pc_spool_maybe_delete(sp, seg);
    uv_mutex_unlock(&sp->mu);
}

void pc_spool_stop_waiting(pc_spool_t *sp)
{
    uv_mutex_lock(&sp->mu);
    sp->stopping = true;
    uv_cond_broadcast(&sp->cond);
    uv_mutex_unlock(&sp->mu);
}

uint64_t pc_spool_bytes(pc_spool_t *sp)
{
    uv_mutex_lock(&sp->mu);
    uint64_t n = sp->bytes;
    uv_mutex_unlock(&sp->mu);
    return n;
}

pc_spool_fsync_t pc_spool_policy(const pc_spool_t *sp)
{
    return sp->fsync;
}

/* ---- close --------------------------------------------------------------------------- */

/* The last sync round, for what the current segment and the sealed ones hold that no
 * round covered yet (nothing with NEVER), and the current segment sealed. Nobody appends
 * any more. Under the lock. */
static void last_round(pc_spool_t *sp)
{
    while (sp->syncing)
        uv_cond_wait(&sp->cond, &sp->mu);
    pc_spool_sync_job_t job;
    pc_spool_sync_take(sp, &job); /* the current file's writes through a duplicate */
    if (sp->cur)
        seal_current(sp); /* not dirty any more: closed */
    uv_mutex_unlock(&sp->mu);
    pc_spool_sync_run(sp, &job);
    uv_mutex_lock(&sp->mu);
    int err = job.err;
    pc_spool_sync_settle(sp, &job);
    if (err)
        PC_ERROR(sp->log, "spool %s: fdatasync at close failed: %s", sp->dir, strerror(err));
}

void pc_spool_finish(pc_spool_t *sp)
{
    if (!sp || sp->finished)
        return;
    uv_mutex_lock(&sp->mu);
    sp->stopping = true;
    uv_cond_broadcast(&sp->cond);
    while (sp->inside > 0)
        uv_cond_wait(&sp->cond, &sp->mu);
    uv_mutex_unlock(&sp->mu);
    pc_spool_stop_flusher(sp);
    pc_spool_replay_free(sp);
    uv_mutex_lock(&sp->mu);
    last_round(sp);
    for (pc_spool_segment_t *seg = sp->oldest, *next; seg; seg = next) {
        next = seg->next;
        pc_spool_maybe_delete(sp, seg);
    }
    for (pc_spool_segment_t *seg = sp->oldest, *next; seg; seg = next) {
        next = seg->next;
        if (seg->map)
            munmap(seg->map, seg->map_len);
        free(seg);
    }
    sp->oldest = sp->newest = NULL;
    free(sp->unsynced);
    sp->unsynced = NULL;
    sp->finished = true;
    uv_mutex_unlock(&sp->mu);
    close(sp->dir_fd);
    close(sp->lock_fd); /* the flock goes with it */
    sp->dir_fd = sp->lock_fd = -1;
}

void pc_spool_close(pc_spool_t *sp)
{
    if (!sp)
        return;
    pc_spool_finish(sp);
    uv_cond_destroy(&sp->cond);
    uv_mutex_destroy(&sp->mu);
    free(sp->dir);
    free(sp->name);
    free(sp->topic);
    free(sp);
}
