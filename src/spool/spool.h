/* A producer's spool: every accepted message is appended to a segment file in one
 * directory before its send is accepted, and stays there until its receipt; a producer
 * opened on the directory later (after a crash, say) resends what is left.
 *
 * The directory holds `spool.lock` (an exclusive flock: one producer at a time),
 * `spool.id` (the producer name and topic the spool belongs to; a producer with another
 * name or topic is refused) and segment files `<20-digit number>.seg` (spool_format.h).
 * A segment is deleted once every message in it is released. Files set aside, never
 * read again nor counted in max_bytes, and never deleted by the spool: `<name>.bad`
 * (named like a segment but not one of this format, or not a regular file) and
 * `<name>.damaged` (see recovery); new segments are numbered above them.
 *
 * Recovery (pc_spool_replay_next), RocksDB's WAL recovery modes for reference: a record
 * that fails its checks with no whole record after it in its segment is a torn tail (a
 * crash cut the last write; a zero length and CRC is the clean end of a segment
 * allocated ahead) and is cut off, as kTolerateCorruptedTailRecords does; one with whole
 * records after it is damage in the middle (a disk's), skipped: the records before and
 * after it are replayed, the skip is logged and counted (pc_spool_skipped_records), and
 * the segment is kept whole, set aside as `<name>.damaged` once its records are done
 * with. Together that is kSkipAnyCorruptedRecords. Not kPointInTimeRecovery (stop at the
 * first damage): spooled messages do not build on each other as a database's log
 * entries do, each has its own sequence id, so stopping would drop intact messages for a
 * consistency nobody needs; not kAbsoluteConsistency (refuse the spool): it would stop
 * the producer over damage it can step past. The damaged record's message is lost to
 * the producer (its bytes stay in the .damaged file).
 *
 * Sequence ids: the spool gives each message without an explicit id the next one, under
 * the same lock as the append and the caller's `accepted` hand-over, so that ids, file
 * order and hand-over order are one order. Its counter starts above every id it
 * replays, and callers raise it (pc_spool_note_id) to above the broker's last id.
 *
 * Durability (pc_spool_fsync_t): ALWAYS accepts a message only once an fdatasync covered
 * it (and, for a message in a new segment, the directory entry naming the segment);
 * concurrent appenders share one (a group commit: one of them syncs while the others
 * wait). INTERVAL syncs every interval on a thread of its own (the segments written
 * since, and the directory when a segment was made), NEVER leaves it to the operating
 * system. Whatever the policy, a write is in the kernel before the message is accepted,
 * so a crash of the process loses nothing; ALWAYS also survives a crash of the machine.
 *
 * Thread-safe: one mutex guards the spool (appends, releases, the replay's bookkeeping).
 * No sync runs under it, a segment roll included: file reads of the replay and every
 * fdatasync run outside it, so an append with INTERVAL or NEVER and a release never
 * wait for the disk (the loop thread may make both). */
#ifndef PC_SPOOL_H
#define PC_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/log.h"
#include "pulsarc/pulsarc.h"
#include "spool/spool_format.h"

typedef enum pc_spool_fsync {
    PC_SPOOL_FSYNC_ALWAYS = 0,
    PC_SPOOL_FSYNC_INTERVAL,
    PC_SPOOL_FSYNC_NEVER,
} pc_spool_fsync_t;

typedef struct pc_spool pc_spool_t;
typedef struct pc_spool_segment pc_spool_segment_t;

/* One append in progress, in the appender's memory (its stack is fine: the spool uses
 * it only until pc_spool_append returns). */
typedef struct pc_spool_ticket {
    void *owner; /* the caller's: what `accepted` hands over */
    /* Set by the spool before `accepted` runs. */
    int64_t sequence_id;         /* the id it was written with */
    pc_spool_segment_t *segment; /* release it there (pc_spool_release) */
    uint64_t offset;             /* ... with this: where its record starts */
    /* The spool's own. */
    struct pc_spool_ticket *next;
    pulsarc_result res;
    bool done;
} pc_spool_ticket_t;

/* The message of t is as durable as the policy asks: hand it over. Runs under the
 * spool's lock, in append order (hence sequence-id order), on the appending thread or on
 * the thread whose fdatasync covered it; it must not call into the spool. */
typedef void (*pc_spool_accepted_fn)(pc_spool_ticket_t *t);

/* A test seam: what the spool calls instead of fdatasync for every sync of its files and
 * its directory, so that a test can fail a sync or hold it. Returns 0 or an errno. Tests
 * embed it in a struct of their own (the context). Production leaves it NULL (the client
 * never sets it), and the spool then calls fdatasync directly. */
typedef struct pc_spool_sync_seam {
    int (*sync)(const struct pc_spool_sync_seam *seam, int fd);
} pc_spool_sync_seam_t;

typedef struct pc_spool_settings {
    const char *dir;           /* created (mode 0700, missing parents too) if missing;
                                     else owned by the process's user, not writable by
                                     group or others, not a symbolic link */
    const char *producer_name; /* at most PC_SPOOL_NAME_MAX bytes */
    const char *topic;         /* at most PC_SPOOL_TOPIC_MAX bytes */
    pc_spool_fsync_t fsync;
    uint64_t fsync_interval_ms; /* INTERVAL */
    uint64_t max_bytes;         /* the segment files' total size */
    uint64_t segment_bytes;     /* 0: max_bytes / 8, within 64 KiB .. 16 MiB */
    const pc_logger_t *log;     /* must outlive the spool */
    pc_spool_accepted_fn accepted;
    const pc_spool_sync_seam_t *sync_seam; /* tests only (see above); NULL: fdatasync */
} pc_spool_settings_t;

/* Open (or create) the spool: check that the directory is the process's own (see
 * `dir`), lock it, check whose it is, find its segments. No file in it is opened through
 * a symbolic link, and a found segment that is not a regular file is set aside
 * (renamed <name>.bad). Nothing is read of the records yet (pc_spool_replay_next does
 * it). PULSARC_ERR_SPOOL with a detail when the directory cannot be used or is not
 * trusted (naming its owner or mode), is locked by another producer, or belongs to
 * another producer name or topic. */
pulsarc_result pc_spool_open(const pc_spool_settings_t *set, pc_spool_t **out);
/* The producer is done with the spool: sync what is not yet on disk (unless NEVER; on
 * the calling thread, the one disk wait that is not an append's), delete the segments
 * with nothing left in them, close the files and unlock, so that another producer may
 * open it. Messages never released stay for that producer. Waits
 * for appenders still inside (woken by pc_spool_stop_waiting) to leave; later appends
 * fail with PULSARC_ERR_ALREADY_CLOSED. Nothing may be released after it. Idempotent. */
void pc_spool_finish(pc_spool_t *sp);
/* pc_spool_finish, and free the spool. NULL is fine. */
void pc_spool_close(pc_spool_t *sp);

/* The next message left from before this spool was opened, oldest first: true, with
 * *rec (valid until the next call), *seg and *offset (pc_spool_release it there once
 * done with). Messages marked released are skipped. A torn tail of a segment is cut off
 * (one log line) and the scan goes on with the next segment; damage in the middle is
 * skipped (one log line, counted) and the scan goes on at the next whole record (see
 * recovery above). False after the last; call it until then, or pc_spool_replay_end.
 * One thread at a time. */
bool pc_spool_replay_next(pc_spool_t *sp, pc_spool_record_t *rec, pc_spool_segment_t **seg,
                          uint64_t *offset);
/* Abandon the replay: what it did not hand out stays on disk for the next producer. */
void pc_spool_replay_end(pc_spool_t *sp);
/* How many messages the replay handed out so far. */
uint64_t pc_spool_replayed(const pc_spool_t *sp);
/* Damage the replay skipped so far: stretches of a segment that failed the checks with
 * whole records after them, and their bytes. A stretch counts as one record (the one
 * whose check failed: where any other record inside the damage began cannot be
 * trusted), its bytes all. Torn tails are not counted (they are cut, see
 * pc_spool_replay_next). Any thread. */
uint64_t pc_spool_skipped_records(pc_spool_t *sp);
uint64_t pc_spool_skipped_bytes(pc_spool_t *sp);

/* Automatic ids continue above id (the broker's last sequence id, say). */
void pc_spool_note_id(pc_spool_t *sp, int64_t id);

/* Append m (m->sequence_id, or the next automatic id when it is -1) and return once
 * `accepted` ran for t. When the spool holds max_bytes already: wait for room if
 * wait_for_room, else fail with PULSARC_ERR_QUEUE_FULL. A message that can never fit
 * fails with PULSARC_ERR_MESSAGE_TOO_BIG. A failed write (disk full, I/O error) fails
 * with PULSARC_ERR_SPOOL; a failed fdatasync too, and every later append with it (the
 * spool can no longer say what is on disk). PULSARC_ERR_ALREADY_CLOSED after
 * pc_spool_stop_waiting. With ALWAYS this blocks for the disk: not on a loop thread; with
 * INTERVAL and NEVER it never does (only waiting for room, when asked to, blocks). */
pulsarc_result pc_spool_append(pc_spool_t *sp, const pc_spool_msg_t *m, pc_spool_ticket_t *t,
                               bool wait_for_room);
/* The message at offset of seg (the ticket's) is done with (stored, or failed for
 * good): it is marked so in the file (in segments this spool made; a later replay skips
 * it), and its segment goes once all of its messages are. Any thread. */
void pc_spool_release(pc_spool_segment_t *seg, uint64_t offset);
/* Appenders waiting for room, and later ones, fail with PULSARC_ERR_ALREADY_CLOSED. */
void pc_spool_stop_waiting(pc_spool_t *sp);

/* The segment files' total size now (for tests and stats). */
uint64_t pc_spool_bytes(pc_spool_t *sp);
pc_spool_fsync_t pc_spool_policy(const pc_spool_t *sp);

#endif
