/* The replay: the segments found at open, read back record by record, oldest first. A
 * record that fails the scan's checks is either a torn tail (no whole record after it in
 * its segment: a crash mid-write), cut off the file with one log line so that it is never
 * read again, or damage in the middle (whole records after it: a damaged disk), skipped
 * with one log line and counted, the records after it replayed like the others, and the
 * segment kept: set aside as <name>.damaged instead of deleted once done with. A segment
 * goes once it has been read to its end and every message handed out of it is
 * released. */
#include "spool/spool_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int64_t file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    int fd = *(const int *)ctx;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

static void close_replay_fd(pc_spool_t *sp)
{
    if (sp->replay_fd >= 0)
        close(sp->replay_fd);
    sp->replay_fd = -1;
    pc_spool_scan_free(&sp->scan);
}

/* Read to its end: unpin it (it goes once its messages are released). */
static void finish_segment(pc_spool_t *sp, pc_spool_segment_t *seg)
{
    close_replay_fd(sp);
    sp->replay_i++;
    uv_mutex_lock(&sp->mu);
    seg->pinned = false;
    pc_spool_maybe_delete(sp, seg);
    uv_mutex_unlock(&sp->mu);
}

/* Stop reading seg where it cannot be read: it keeps its pin, so it stays whole on disk
 * for the next producer. */
static void give_up_segment(pc_spool_t *sp, const char *name, const char *why)
{
    PC_ERROR(sp->log, "spool %s: %s: %s; what is left of it stays for the next producer", sp->dir,
             name, why);
    close_replay_fd(sp);
    sp->replay_i++;
}

/* The segment's records end at the scan's offset: give back what follows. That is the
 * unused room of a segment the process was writing when it stopped (zeros: nothing to
 * say), or a torn record (why: one log line), which is cut off the file so that it is
 * never read again. A segment with damage in the middle is kept whole (it is set aside
 * for inspection once done with): nothing is cut. */
static void end_segment_at_scan(pc_spool_t *sp, pc_spool_segment_t *seg, const char *name,
                                const char *why)
{
    uint64_t at = sp->scan.offset;
    if (at >= seg->size)
        return;
    if (seg->damaged) {
        if (why)
            PC_WARN(sp->log,
                    "spool %s: %s: the %llu bytes from offset %llu hold no whole "
                    "record (%s): left in the damaged segment",
                    sp->dir, name, (unsigned long long)(seg->size - at), (unsigned long long)at,
                    why);
        return;
    }
    if (why)
        PC_WARN(sp->log,
                "spool %s: %s: %llu bytes cut at offset %llu: %s (a write cut short "
                "by a crash, or a damaged disk)",
                sp->dir, name, (unsigned long long)(seg->size - at), (unsigned long long)at, why);
    uv_mutex_lock(&sp->mu);
    seg->size = at;
    pc_spool_trim(sp, seg, sp->replay_fd);
    bool cut = seg->disk == at;
    uv_mutex_unlock(&sp->mu);
    int err = !cut                                ? (errno ? errno : EIO)
              : sp->fsync != PC_SPOOL_FSYNC_NEVER ? pc_spool_sync(sp, sp->replay_fd)
                                                  : 0;
    if (err)
        PC_WARN(sp->log,
                "spool %s: %s: the cut at offset %llu failed (%s); the next open "
                "cuts it again",
                sp->dir, name, (unsigned long long)at, strerror(err));
}

/* The record at the scan's offset failed a check (why). Whole records after it in seg:
 * the damage is skipped (one log line, counted; seg kept once done with) and true
 * returned, for the scan to go on. None: a torn tail, which the caller cuts (false). A
 * failed read gives the segment up (false, *gave_up). */
static bool skip_damage(pc_spool_t *sp, pc_spool_segment_t *seg, const char *name,
                        const pc_spool_source_t *src, bool *gave_up)
{
    uint64_t cut = sp->scan.offset;
    const char *why = sp->scan.why;
    *gave_up = false;
    switch (pc_spool_scan_resync(&sp->scan, src)) {
    case PC_SPOOL_RESYNC_FOUND:
        break;
    case PC_SPOOL_RESYNC_NONE:
        sp->scan.why = why;
        return false;
    case PC_SPOOL_RESYNC_IO:
        give_up_segment(sp, name, strerror(errno));
        *gave_up = true;
        return false;
    case PC_SPOOL_RESYNC_NO_MEMORY:
        give_up_segment(sp, name, "out of memory");
        *gave_up = true;
        return false;
    }
    uint64_t skipped = sp->scan.offset - cut;
    PC_WARN(sp->log,
            "spool %s: %s: %llu bytes skipped at offset %llu: %s, with whole records "
            "after it (a damaged disk); those before and after are resent, and the segment "
            "is kept as %s.damaged once they are done with",
            sp->dir, name, (unsigned long long)skipped, (unsigned long long)cut, why, name);
    uv_mutex_lock(&sp->mu);
    seg->damaged = true;
    sp->skipped_records++;
    sp->skipped_bytes += skipped;
    uv_mutex_unlock(&sp->mu);
    return true;
}

bool pc_spool_replay_next(pc_spool_t *sp, pc_spool_record_t *rec, pc_spool_segment_t **seg_out,
                          uint64_t *offset)
{
    bool gave_up;
    while (sp->replay_i < sp->replay_n) {
        pc_spool_segment_t *seg = sp->replay[sp->replay_i];
        char name[SEGMENT_NAME_LEN + 1];
        pc_spool_segment_name(seg->number, name);
        if (sp->replay_fd < 0) {
            sp->replay_fd = pc_spool_open_file(sp, name, O_RDWR, 0);
            if (sp->replay_fd < 0) {
                give_up_segment(sp, name, pc_spool_open_error(errno));
                continue;
            }
            pc_spool_scan_init(&sp->scan, seg->header);
        }
        /* Only the replay changes a pinned segment's size: no lock needed to read it. */
        pc_spool_source_t src = { .read = file_read, .ctx = &sp->replay_fd, .size = seg->size };
        uint64_t at = sp->scan.offset;
        switch (pc_spool_scan_next(&sp->scan, &src, rec)) {
        case PC_SPOOL_SCAN_RECORD:
            if (rec->released)
                break; /* stored (or failed) before: nothing to resend */
            uv_mutex_lock(&sp->mu);
            seg->live++;
            sp->replayed++;
            pc_spool_note_id_locked(sp, rec->sequence_id);
            uv_mutex_unlock(&sp->mu);
            *seg_out = seg;
            *offset = at;
            return true;
        case PC_SPOOL_SCAN_CUT:
            if (skip_damage(sp, seg, name, &src, &gave_up) || gave_up)
                break;
            end_segment_at_scan(sp, seg, name, sp->scan.why);
            finish_segment(sp, seg);
            break;
        case PC_SPOOL_SCAN_END:
            end_segment_at_scan(sp, seg, name, NULL);
            finish_segment(sp, seg);
            break;
        case PC_SPOOL_SCAN_IO:
            give_up_segment(sp, name, strerror(errno));
            break;
        case PC_SPOOL_SCAN_NO_MEMORY:
            give_up_segment(sp, name, "out of memory");
            break;
        }
    }
    close_replay_fd(sp);
    return false;
}

void pc_spool_replay_end(pc_spool_t *sp)
{
    close_replay_fd(sp);
    sp->replay_i = sp->replay_n;
}

uint64_t pc_spool_replayed(const pc_spool_t *sp)
{
    return sp->replayed;
}

uint64_t pc_spool_skipped_records(pc_spool_t *sp)
{
    uv_mutex_lock(&sp->mu);
    uint64_t n = sp->skipped_records;
    uv_mutex_unlock(&sp->mu);
    return n;
}

uint64_t pc_spool_skipped_bytes(pc_spool_t *sp)
{
    uv_mutex_lock(&sp->mu);
    uint64_t n = sp->skipped_bytes;
    uv_mutex_unlock(&sp->mu);
    return n;
}

void pc_spool_replay_free(pc_spool_t *sp)
{
    close_replay_fd(sp);
    free(sp->replay);
    sp->replay = NULL;
    sp->replay_n = sp->replay_i = 0;
}
