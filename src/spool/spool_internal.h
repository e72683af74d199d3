/* The spool's state, shared by its files, each with one job:
 *   spool.c         appends (room, sequence ids, segment rolls), releases, close
 *   spool_sync.c    the sync rounds: the group commit (ALWAYS), the flusher (INTERVAL),
 *                   the last round at close; never under the lock
 *   spool_open.c    the directory: its lock, whose spool it is, the segments on disk
 *   spool_replay.c  reading the segments found at open back, cutting torn tails
 * Nothing outside src/spool/ includes this. */
#ifndef PC_SPOOL_INTERNAL_H
#define PC_SPOOL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>
#include <uv.h>

#include "spool/spool.h"

#define SEGMENT_NAME_LEN 24 /* 20 digits, ".seg" */

struct pc_spool_segment {
    pc_spool_t *sp;
    struct pc_spool_segment *prev, *next; /* the spool's segments, oldest first */
    uint64_t number;
    uint64_t header; /* the header's size: records start there */
    uint64_t size;   /* where its records end */
    uint64_t disk;   /* the file's size, as counted in the spool's bytes (the
                               current segment's is allocated ahead) */
    uint8_t *map;    /* the file mapped shared (segments this spool made), where
                               appends are copied and releases marked; else NULL */
    uint64_t map_len;
    uint64_t live; /* messages handed out (accepted or replayed), not released */
    bool pinned;   /* found at open and not yet replayed to its end: kept */
    bool damaged;  /* the replay skipped damage in it: set aside (renamed
                               <name>.damaged), not deleted, once done with */
};

struct pc_spool {
    char *dir;
    char *name;
    char *topic;
    pc_spool_fsync_t fsync;
    uint64_t interval_ms;
    uint64_t max_bytes;
    uint64_t segment_bytes;
    const pc_logger_t *log;
    pc_spool_accepted_fn accepted;
    const pc_spool_sync_seam_t *sync_seam;
    int dir_fd;
    int lock_fd;

    uv_mutex_t mu;  /* everything below */
    uv_cond_t cond; /* room, the end of a group's sync, appenders leaving */
    pc_spool_segment_t *oldest, *newest;
    pc_spool_segment_t *cur; /* where appends go; NULL until the first */
    int cur_fd;
    uint64_t next_number; /* of the next segment */
    uint64_t bytes;       /* the segment files' total size (their `disk`) */
    int64_t next_id;      /* the next automatic sequence id */
    bool ids_exhausted;
    int inside; /* threads inside pc_spool_append */
    bool stopping;
    bool finished;         /* pc_spool_finish ran: no files, no lock */
    pulsarc_result broken; /* a failed sync: every append fails with it */
    char broken_detail[384];

    /* The sync rounds (spool_sync.c), one at a time (syncing), each taking what the
     * fields below hold. ALWAYS: appended, waiting for a round (oldest first). */
    pc_spool_ticket_t *group_head, *group_tail;
    bool syncing;
    /* ALWAYS and INTERVAL: the current segment was written since the last round; a
     * segment was made (its name is not synced); the files of sealed segments written
     * since (the round syncs and closes them). */
    bool dirty;
    bool dir_dirty;
    int *unsynced;
    size_t n_unsynced, cap_unsynced;

    /* INTERVAL: the flusher thread. */
    uv_thread_t flusher;
    bool flusher_on;
    bool flusher_stop;
    uv_cond_t flusher_cond;

    /* The replay (spool_replay.c): the segments found at open, in order. */
    pc_spool_segment_t **replay;
    size_t replay_n, replay_i;
    int replay_fd; /* the segment being read, or -1 */
    pc_spool_scan_t scan;
    uint64_t replayed;
    uint64_t skipped_records; /* damage skipped (under the lock: stats read it) */
    uint64_t skipped_bytes;
};

/* fdatasync(fd), or the test seam's sync: 0 or an errno. Whatever the policy (callers
 * decide whether to sync). */
static inline int pc_spool_sync(const pc_spool_t *sp, int fd)
{
    if (sp->sync_seam)
        return sp->sync_seam->sync(sp->sync_seam, fd);
    return fdatasync(fd) == 0 ? 0 : errno;
}

/* spool_open.c */
/* The file name of segment number n (SEGMENT_NAME_LEN + 1 bytes). */
void pc_spool_segment_name(uint64_t n, char out[SEGMENT_NAME_LEN + 1]);
/* Open name in the spool's directory (openat's flags and mode; O_CLOEXEC added), never
 * through a symbolic link (errno ELOOP) and only a regular file (errno EINVAL, and never
 * blocking on a FIFO): the descriptor, or -1. */
int pc_spool_open_file(const pc_spool_t *sp, const char *name, int flags, mode_t mode);
/* What pc_spool_open_file's errno means, for a detail or a log line. */
const char *pc_spool_open_error(int err);
/* Rename name to name + suffix (never over an existing file) and say why in the log:
 * false when it stays. */
bool pc_spool_set_aside(const pc_spool_t *sp, const char *name, const char *suffix,
                        const char *why);

/* spool.c */
/* Put seg (number, header, size and disk filled) at the end of the list; its disk
 * counts in the spool's bytes. Under the lock (or before anyone else has the spool). */
void pc_spool_add_segment(pc_spool_t *sp, pc_spool_segment_t *seg);
/* Delete seg if nothing in it is wanted any more (no live message, not pinned, not
 * where appends go); one with damage is set aside instead. Under the lock. */
void pc_spool_maybe_delete(pc_spool_t *sp, pc_spool_segment_t *seg);
/* Give back the room of seg's file past its records (fd: the file, open for writing).
 * Under the lock. */
void pc_spool_trim(pc_spool_t *sp, pc_spool_segment_t *seg, int fd);
/* Raise the next automatic id above id. Under the lock. */
void pc_spool_note_id_locked(pc_spool_t *sp, int64_t id);

/* spool_sync.c */
/* A sync round: what it took under the lock, synced outside it. */
typedef struct pc_spool_sync_job {
    int *fds; /* sealed segments' files: synced, then closed */
    size_t n, cap;
    int cur;                  /* a duplicate of the current segment's descriptor, or -1 */
    bool dir;                 /* the directory too (a segment was made) */
    pc_spool_ticket_t *group; /* ALWAYS: the tickets it settles */
    int err;                  /* the first failure (an errno), or 0 */
} pc_spool_sync_job_t;

/* Take what is not synced yet into job, and mark a round as running. Under the lock. */
void pc_spool_sync_take(pc_spool_t *sp, pc_spool_sync_job_t *job);
/* Sync it (files, then the directory) and close its files. Without the lock. */
void pc_spool_sync_run(const pc_spool_t *sp, pc_spool_sync_job_t *job);
/* The round is over: hand its group over, or on a failure fail it and every append
 * waiting after it and refuse appends from now on. Returns job->err. Under the lock. */
int pc_spool_sync_settle(pc_spool_t *sp, pc_spool_sync_job_t *job);
/* Room for one more sealed file in the next round, so that a seal never allocates:
 * false when out of memory. Under the lock. */
bool pc_spool_reserve_sync(pc_spool_t *sp);
/* fd (a sealed segment's, written since the last round) goes to the next round, which
 * closes it. After pc_spool_reserve_sync. Under the lock. */
void pc_spool_queue_sync(pc_spool_t *sp, int fd);
/* ALWAYS: t (just appended) is accepted once a round covered it; run one when none is
 * running, else wait. PULSARC_ERR_SPOOL when its round failed. Under the lock. */
pulsarc_result pc_spool_commit(pc_spool_t *sp, pc_spool_ticket_t *t);
/* INTERVAL: start the thread that runs a round every interval; 0 or -1. Stop it (after
 * its round in progress), or nothing without one. */
int pc_spool_start_flusher(pc_spool_t *sp);
void pc_spool_stop_flusher(pc_spool_t *sp);

/* spool_replay.c */
void pc_spool_replay_free(pc_spool_t *sp);

#endif
