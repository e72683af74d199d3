/* Appending to the spool and letting go of what was appended: room (spoolMaxBytes),
 * sequence ids, segment files, the group commit of ALWAYS and the flusher of INTERVAL;
 * releases that delete finished segments; close. See spool.h. */
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
    if (unlinkat(sp->dir_fd, name, 0) != 0 && errno != ENOENT) {
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

/* fdatasync, or nothing with NEVER. 0 or an errno. (The appends are stores into a shared
 * mapping of the file: fdatasync writes those pages back like any others.) */
static int sync_fd(const pc_spool_t *sp, int fd)
{
    if (sp->fsync == PC_SPOOL_FSYNC_NEVER)
        return 0;
    return pc_spool_sync(sp, fd);
}

/* A sync failed: nothing written since the last good one can be trusted, so every append
 * from now on fails (the next producer opened on the directory replays what is there). */
static void set_broken(pc_spool_t *sp, const char *what, int err)
{
    if (sp->broken != PULSARC_OK)
        return;
    sp->broken = PULSARC_ERR_SPOOL;
    snprintf(sp->broken_detail, sizeof sp->broken_detail,
             "spool %.200s: %s failed (%s): sends fail until a producer opens the spool again",
             sp->dir, what, strerror(err));
    PC_ERROR(sp->log, "%s", sp->broken_detail);
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
    if (err)
        set_broken(sp, "fdatasync", err);
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

/* INTERVAL: the file of a sealed segment with writes not yet synced goes to the flusher,
 * which syncs and closes it on its next round (a seal does not wait for the disk).
 * Under the lock. */
static void hand_to_flusher(pc_spool_t *sp, int fd)
{
    if (sp->n_unsynced == sp->cap_unsynced) {
        size_t cap = sp->cap_unsynced ? sp->cap_unsynced * 2 : 4;
        int *grown = realloc(sp->unsynced, cap * sizeof *grown);
        if (!grown) {
            int err = sync_fd(sp, fd); /* no memory: sync it here instead */
            if (err)
                set_broken(sp, "fdatasync", err);
            close(fd);
            return;
        }
        sp->unsynced = grown;
        sp->cap_unsynced = cap;
    }
    sp->unsynced[sp->n_unsynced++] = fd;
}

/* Appends stop going to the current segment: with ALWAYS, sync it for the group still
 * waiting (it is covered); give back its unused room; close it, or with INTERVAL and
 * unsynced writes hand it to the flusher. Not while a group's sync runs. Returns the
 * sync's errno, or 0. */
static int seal_current(pc_spool_t *sp)
{
    pc_spool_segment_t *seg = sp->cur;
    pc_spool_ticket_t *g = sp->group_head;
    sp->group_head = sp->group_tail = NULL;
    int err = g ? sync_fd(sp, sp->cur_fd) : 0;
    settle_group(sp, g, err);
    /* The mapping stays, for marking releases, until the segment goes; its pages leave
     * the process (they stay in the page cache, dirty ones too, until written back). */
    madvise(seg->map, seg->map_len, MADV_DONTNEED);
    pc_spool_trim(sp, seg, sp->cur_fd);
    if (sp->dirty)
        hand_to_flusher(sp, sp->cur_fd);
    else
        close(sp->cur_fd);
    sp->dirty = false;
    sp->cur = NULL;
    sp->cur_fd = -1;
    pc_spool_maybe_delete(sp, seg);
    return err;
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
    if (!err) {
        hlen = pc_spool_header_encode(map, number, sp->name, sp->topic);
        /* The file and its name must be on disk before a message in it counts as durable. */
        if ((err = sync_fd(sp, fd)) == 0)
            err = sync_fd(sp, sp->dir_fd);
    }
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
    if (!sp->cur || sp->cur->live || sp->syncing || sp->group_head)
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
        if (!sp->syncing) { /* a group's segment must not be closed under its sync */
            if (sp->bytes + segment_room(sp, need) <= sp->max_bytes) {
                int err = sp->cur ? seal_current(sp) : 0;
                if (err)
                    return pc_fail(sp->broken, "%s", sp->broken_detail);
                return new_segment(sp, need);
            }
            if (reclaim_current(sp))
                continue;
            if (!wait_for_room)
                return pc_fail(PULSARC_ERR_QUEUE_FULL,
                               "the spool is full: %llu bytes of messages wait for their "
                               "receipts (spoolMaxBytes %llu)",
                               (unsigned long long)sp->bytes, (unsigned long long)sp->max_bytes);
        }
        uv_cond_wait(&sp->cond, &sp->mu);
    }
}

/* m's record (`need` bytes, meta_len of them metadata) can never be written: say why,
 * with every part of what it takes, since a payload below spoolMaxBytes can still need
 * more than that. */
static pulsarc_result refuse_too_big(const pc_spool_t *sp, const pc_spool_msg_t *m,
                                     size_t meta_len, uint64_t need)
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
    return PULSARC_OK;
}

/* ALWAYS: t is accepted once a sync covered it. The first appender to find no sync
 * running syncs for everyone appended so far, outside the lock; the others wait for it
 * (and one of them leads the next group). */
static pulsarc_result commit(pc_spool_t *sp, pc_spool_ticket_t *t)
{
    if (sp->group_tail)
        sp->group_tail->next = t;
    else
        sp->group_head = t;
    sp->group_tail = t;
    while (!t->done) {
        if (sp->syncing) {
            uv_cond_wait(&sp->cond, &sp->mu);
            continue;
        }
        pc_spool_ticket_t *g = sp->group_head;
        sp->group_head = sp->group_tail = NULL;
        sp->syncing = true;
        int fd = sp->cur_fd;
        uv_mutex_unlock(&sp->mu);
        int err = pc_spool_sync(sp, fd);
        uv_mutex_lock(&sp->mu);
        sp->syncing = false;
        settle_group(sp, g, err);
        if (err) {
            /* Those appended after the failed group are beyond the cut: they fail too. */
            pc_spool_ticket_t *rest = sp->group_head;
            sp->group_head = sp->group_tail = NULL;
            settle_group(sp, rest, err);
        }
        uv_cond_broadcast(&sp->cond);
    }
    if (t->res != PULSARC_OK)
        return pc_fail(t->res, "%s", sp->broken_detail);
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
    if (res == PULSARC_OK && sp->fsync == PC_SPOOL_FSYNC_ALWAYS) {
        res = commit(sp, t);
    } else if (res == PULSARC_OK) {
        sp->dirty = sp->fsync == PC_SPOOL_FSYNC_INTERVAL;
        sp->accepted(t);
    }
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

/* ---- INTERVAL: the flusher ------------------------------------------------------------ */

/* Sync and close the files taken from the spool (INTERVAL); 0 or the first errno. */
static int sync_and_close(const pc_spool_t *sp, int *fds, size_t n)
{
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        int err = pc_spool_sync(sp, fds[i]);
        if (err && !first)
            first = err;
        close(fds[i]);
    }
    return first;
}

/* Take what the next round syncs: the sealed files handed over, and (a copy of the
 * descriptor of) the current segment when written since the last round. Under the
 * lock; *n 0 when there is nothing. */
static int *take_unsynced(pc_spool_t *sp, size_t *n)
{
    if (sp->dirty && sp->cur) {
        int fd = dup(sp->cur_fd);
        if (fd >= 0) {
            hand_to_flusher(sp, fd);
            sp->dirty = false;
        }
    }
    int *fds = sp->unsynced;
    *n = sp->n_unsynced;
    sp->unsynced = NULL;
    sp->n_unsynced = sp->cap_unsynced = 0;
    return fds;
}

static void flusher_main(void *arg)
{
    pc_spool_t *sp = arg;
    uint64_t interval_ns = sp->interval_ms * 1000000u;
    uv_mutex_lock(&sp->mu);
    while (!sp->flusher_stop) {
        uv_cond_timedwait(&sp->flusher_cond, &sp->mu, interval_ns);
        if (sp->flusher_stop)
            break;
        size_t n;
        int *fds = take_unsynced(sp, &n);
        if (!n) {
            free(fds);
            continue;
        }
        /* Outside the lock: appenders go on, seals hand more files over meanwhile. */
        uv_mutex_unlock(&sp->mu);
        int err = sync_and_close(sp, fds, n);
        free(fds);
        uv_mutex_lock(&sp->mu);
        if (err)
            set_broken(sp, "fdatasync", err);
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

/* ---- close --------------------------------------------------------------------------- */

void pc_spool_finish(pc_spool_t *sp)
{
    if (!sp || sp->finished)
        return;
    uv_mutex_lock(&sp->mu);
    sp->stopping = true;
    uv_cond_broadcast(&sp->cond);
    while (sp->inside > 0)
        uv_cond_wait(&sp->cond, &sp->mu);
    sp->flusher_stop = true;
    if (sp->flusher_on)
        uv_cond_signal(&sp->flusher_cond);
    uv_mutex_unlock(&sp->mu);
    if (sp->flusher_on) {
        uv_thread_join(&sp->flusher);
        uv_cond_destroy(&sp->flusher_cond);
        sp->flusher_on = false;
    }
    pc_spool_replay_free(sp);
    uv_mutex_lock(&sp->mu);
    int err = sp->cur ? seal_current(sp) : 0;
    size_t n;
    int *fds = take_unsynced(sp, &n); /* the flusher's last round */
    int last = sync_and_close(sp, fds, n);
    free(fds);
    if (err || last)
        PC_ERROR(sp->log, "spool %s: fdatasync at close failed: %s", sp->dir,
                 strerror(err ? err : last));
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
