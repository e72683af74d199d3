/* The spool's syncs, through its test seam (pc_spool_sync_seam_t): a sync that fails
 * under the group commit fails every sender it covered and every one queued behind it,
 * crashes nothing, and leaves none of them for the next open; and no append or release
 * waits for the disk at a segment roll (the loop thread appends with interval and never,
 * and releases with every policy), while each policy still syncs what it promises. */
#include <errno.h>

#include "../support/test_spool_fixture.h"

TestSuite(spool_sync, .init = make_dir, .fini = remove_dir, .timeout = 60);

/* ---- the seam: a gate the syncs wait at, and a failure they return ------------------- */

typedef struct gate {
    pc_spool_sync_seam_t seam;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool hold;             /* syncs wait while set */
    int fail;              /* what they return: 0 (then the real fdatasync runs) or an errno */
    int fail_from;         /* ... from this call on (1: the first); 0: fail from now on */
    int calls;             /* syncs begun */
    int waiting;           /* syncs waiting at the gate */
    pthread_t waiters[16]; /* ... on these threads */
    ino_t synced[256];     /* the files (and directory) synced, in order */
    int n_synced;
} gate;

static void forget_waiter(gate *g, pthread_t self)
{
    for (int i = 0; i < g->waiting; i++) {
        if (pthread_equal(g->waiters[i], self)) {
            g->waiters[i] = g->waiters[--g->waiting];
            return;
        }
    }
}

static int gate_sync(const pc_spool_sync_seam_t *seam, int fd)
{
    gate *g = (gate *)seam;
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    pthread_mutex_lock(&g->mu);
    int call = ++g->calls;
    cr_assert_lt(g->waiting, 16);
    g->waiters[g->waiting++] = pthread_self();
    pthread_cond_broadcast(&g->cond);
    while (g->hold)
        pthread_cond_wait(&g->cond, &g->mu);
    forget_waiter(g, pthread_self());
    int err = call >= g->fail_from ? g->fail : 0;
    pthread_mutex_unlock(&g->mu);
    if (!err && fdatasync(fd) != 0)
        err = errno;
    pthread_mutex_lock(&g->mu);
    if (!err && g->n_synced < 256)
        g->synced[g->n_synced++] = st.st_ino;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->mu);
    return err;
}

static gate the_gate = { .seam = { gate_sync },
                         .mu = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER };

static void gate_set(bool hold, int fail)
{
    pthread_mutex_lock(&the_gate.mu);
    the_gate.hold = hold;
    the_gate.fail = fail;
    pthread_cond_broadcast(&the_gate.cond);
    pthread_mutex_unlock(&the_gate.mu);
}

/* Wait until n syncs wait at the gate. */
static void gate_wait_for(int n)
{
    pthread_mutex_lock(&the_gate.mu);
    while (the_gate.waiting < n)
        pthread_cond_wait(&the_gate.cond, &the_gate.mu);
    pthread_mutex_unlock(&the_gate.mu);
}

static pc_spool_settings_t gated(pc_spool_fsync_t policy)
{
    pc_spool_settings_t s = settings(policy);
    s.sync_seam = &the_gate.seam;
    return s;
}

/* The records whose frame and CRC check in segment file `name`, as the file holds them
 * now (appends are copies into the file's pages: another process sees them at once). */
static int records_in(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    pc_spool_header_t h;
    size_t hsize;
    cr_assert_eq(pc_spool_header_decode(buf, n, &h, &hsize), PC_SPOOL_HEADER_OK);
    mem_scan m;
    mem_scan_init(&m, buf, n, hsize);
    pc_spool_record_t rec;
    int count = 0;
    while (pc_spool_scan_next(&m.sc, &m.src, &rec) == PC_SPOOL_SCAN_RECORD)
        count++;
    pc_spool_scan_free(&m.sc);
    return count;
}

static void wait_for_records(int n)
{
    char names[4][64];
    cr_assert_eq(segment_files(names, 4), 1);
    while (records_in(names[0]) < n)
        usleep(1000);
}

/* The ids a new producer on the spool finds. */
static int replayed_ids(pc_spool_settings_t s, int64_t *ids, int max)
{
    s.sync_seam = NULL;
    pc_spool_t *sp = open_with(&s);
    int n = replay_all(sp, ids, NULL, max);
    pc_spool_close(sp);
    return n;
}

/* ---- a failed sync under the group commit -------------------------------------------- */

/* The leader's sync fails while three more senders wait, appended, for the next group:
 * all four fail with PULSARC_ERR_SPOOL (the three are past the failure: what is on disk
 * is unknown), later sends too, and the next open finds only what was accepted before. */
Test(spool_sync, a_failed_sync_fails_its_group_and_the_group_waiting_behind_it)
{
    pc_spool_settings_t s = gated(PC_SPOOL_FSYNC_ALWAYS);
    pc_spool_t *sp = open_with(&s);
    for (int i = 0; i < 3; i++)
        append_ok(sp, i, -1);
    gate_set(true, EIO);
    sender leader, rest[3];
    start(&leader, sp, 3);
    gate_wait_for(1); /* the leader syncs its group (message 3) */
    for (int i = 0; i < 3; i++)
        start(&rest[i], sp, 4 + i);
    wait_for_records(7); /* the three appended, waiting for the next group */
    gate_set(false, EIO);
    pthread_join(leader.th, NULL);
    cr_assert_eq(atomic_load(&leader.res), PULSARC_ERR_SPOOL);
    for (int i = 0; i < 3; i++) {
        pthread_join(rest[i].th, NULL);
        cr_assert_eq(atomic_load(&rest[i].res), PULSARC_ERR_SPOOL, "sender %d: %s", i,
                     pulsarc_result_name(atomic_load(&rest[i].res)));
    }
    cr_assert_eq(n_handed, 3, "only the messages synced before were handed over");
    char key[32], payload[64];
    pc_spool_msg_t m = message(9, -1, key, payload);
    pc_spool_ticket_t t = { 0 };
    cr_assert_eq(pc_spool_append(sp, &m, &t, false), PULSARC_ERR_SPOOL);
    cr_assert(strstr(pulsarc_last_error_detail(), "fdatasync failed"), "%s",
              pulsarc_last_error_detail());
    pc_spool_close(sp);

    int64_t ids[16];
    cr_assert_eq(replayed_ids(s, ids, 16), 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ids[i], i);
}

#define SENDERS 4
#define EACH 120

typedef struct stream {
    pc_spool_t *sp;
    int first;
    pthread_t th;
    pulsarc_result res[EACH];
    int64_t id[EACH];
} stream;

static void *send_stream(void *arg)
{
    stream *st = arg;
    char key[32], payload[64];
    for (int i = 0; i < EACH; i++) {
        pc_spool_msg_t m = message(st->first + i, -1, key, payload);
        pc_spool_ticket_t t = { 0 };
        st->res[i] = pc_spool_append(st->sp, &m, &t, true);
        st->id[i] = t.sequence_id;
    }
    return NULL;
}

/* Senders on four threads, segments rolling under them, and the syncs failing from the
 * 25th on: every send either succeeded (and was handed over) or failed with
 * PULSARC_ERR_SPOOL, and the next open finds exactly those that succeeded. */
Test(spool_sync, concurrent_senders_across_rolls_when_syncs_start_failing)
{
    pc_spool_settings_t s = gated(PC_SPOOL_FSYNC_ALWAYS);
    s.segment_bytes = 4096; /* a roll every ~25 messages */
    the_gate.fail_from = 25;
    gate_set(false, EIO);
    pc_spool_t *sp = open_with(&s);
    static stream st[SENDERS];
    for (int i = 0; i < SENDERS; i++) {
        st[i].sp = sp;
        st[i].first = i * EACH;
        cr_assert_eq(pthread_create(&st[i].th, NULL, send_stream, &st[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < SENDERS; i++) {
        pthread_join(st[i].th, NULL);
        for (int j = 0; j < EACH; j++) {
            pulsarc_result r = st[i].res[j];
            cr_assert(r == PULSARC_OK || r == PULSARC_ERR_SPOOL, "%s", pulsarc_result_name(r));
            ok += r == PULSARC_OK;
        }
    }
    cr_assert_eq(ok, n_handed);
    cr_assert_lt(ok, SENDERS * EACH, "no sync failed");
    pc_spool_close(sp);

    static int64_t ids[SENDERS * EACH];
    cr_assert_eq(replayed_ids(s, ids, SENDERS * EACH), ok);
    for (int i = 0; i < ok; i++)
        cr_assert_eq(ids[i], handed[i], "replayed %d: %lld, handed over %lld", i, (long long)ids[i],
                     (long long)handed[i]);
}

/* ---- no disk waits at a roll ----------------------------------------------------------- */

/* Appends on one thread, as the loop thread makes them (never waiting for room). */
typedef struct appender {
    pc_spool_t *sp;
    int n;
    pthread_t th;
    bool done; /* under the gate's lock */
    pulsarc_result res[8];
} appender;

static void *append_some(void *arg)
{
    appender *a = arg;
    char key[32], payload[64];
    for (int i = 0; i < a->n; i++) {
        pc_spool_msg_t m = message(i, -1, key, payload);
        pc_spool_ticket_t t = { 0 };
        a->res[i] = pc_spool_append(a->sp, &m, &t, false);
    }
    pthread_mutex_lock(&the_gate.mu);
    a->done = true;
    pthread_cond_broadcast(&the_gate.cond);
    pthread_mutex_unlock(&the_gate.mu);
    return NULL;
}

static bool gate_holds(pthread_t th)
{
    for (int i = 0; i < the_gate.waiting; i++)
        if (pthread_equal(the_gate.waiters[i], th))
            return true;
    return false;
}

/* Run a's appends with the gate closed: true once they are done, false as soon as a sync
 * of a's own thread waits at the gate (an append waiting for the disk). */
static bool appends_pass_the_closed_gate(appender *a)
{
    cr_assert_eq(pthread_create(&a->th, NULL, append_some, a), 0);
    pthread_mutex_lock(&the_gate.mu);
    while (!a->done && !gate_holds(a->th))
        pthread_cond_wait(&the_gate.cond, &the_gate.mu);
    bool done = a->done;
    pthread_mutex_unlock(&the_gate.mu);
    return done;
}

static ino_t inode_of(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return st.st_ino;
}

static bool synced(ino_t ino)
{
    for (int i = 0; i < the_gate.n_synced; i++)
        if (the_gate.synced[i] == ino)
            return true;
    return false;
}

/* The segment files (and the directory that names them) the gate has synced: how many of
 * names[0..n) and the directory. */
static int synced_of(char names[][64], int n, ino_t dir_ino)
{
    int count = synced(dir_ino);
    for (int i = 0; i < n; i++)
        count += synced(inode_of(names[i]));
    return count;
}

/* interval: an append that rolls to a new segment (each does here) syncs nothing; the
 * flusher syncs every segment file and the directory on its own thread. */
Test(spool_sync, an_interval_append_that_rolls_does_not_wait_for_the_disk)
{
    pc_spool_settings_t s = gated(PC_SPOOL_FSYNC_INTERVAL);
    s.segment_bytes = 1; /* a segment per message */
    pc_spool_t *sp = open_with(&s);
    gate_set(true, 0);
    appender a = { .sp = sp, .n = 5 };
    cr_assert(appends_pass_the_closed_gate(&a), "an append waited for a sync at a roll");
    pthread_join(a.th, NULL);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(a.res[i], PULSARC_OK, "%s", pulsarc_result_name(a.res[i]));
    cr_assert_eq(n_handed, 5);

    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 5);
    struct stat d;
    cr_assert_eq(stat(dir, &d), 0);
    gate_set(false, 0);
    pthread_mutex_lock(&the_gate.mu);
    while (synced_of(names, 5, d.st_ino) < 6) /* the flusher's next rounds */
        pthread_cond_wait(&the_gate.cond, &the_gate.mu);
    pthread_mutex_unlock(&the_gate.mu);
    pc_spool_close(sp);
}

/* never: no sync at all, a roll included, and nothing waits. */
Test(spool_sync, a_never_append_that_rolls_syncs_nothing)
{
    pc_spool_settings_t s = gated(PC_SPOOL_FSYNC_NEVER);
    s.segment_bytes = 1;
    pc_spool_t *sp = open_with(&s);
    int at_open = the_gate.calls; /* the identity file, written once, is synced */
    gate_set(true, 0);
    appender a = { .sp = sp, .n = 4 };
    cr_assert(appends_pass_the_closed_gate(&a), "an append waited for a sync at a roll");
    pthread_join(a.th, NULL);
    cr_assert_eq(n_handed, 4);
    pc_spool_close(sp);
    cr_assert_eq(the_gate.calls, at_open);
}

/* always: while a sender's group waits for its sync, a release (what the loop thread does
 * for each stored message) goes through: nothing syncs under the spool's lock, a roll
 * included. The sender is accepted only once its new segment's file and the directory
 * naming it were synced. */
Test(spool_sync, a_release_does_not_wait_for_a_sync_held_at_a_roll)
{
    pc_spool_settings_t s = gated(PC_SPOOL_FSYNC_ALWAYS);
    s.segment_bytes = 1;
    pc_spool_t *sp = open_with(&s);
    place first = append_ok(sp, 0, -1);
    gate_set(true, 0);
    sender next;
    start(&next, sp, 1); /* a roll to segment 2, then its group's sync */
    gate_wait_for(1);
    release(first); /* before the fix: waited for the held sync (the test timed out) */
    char names[8][64];
    cr_assert_eq(segment_files(names, 8), 1, "the released segment went at once");
    cr_assert_eq(atomic_load(&next.res), 1, "accepted before its sync");
    gate_set(false, 0);
    pthread_join(next.th, NULL);
    cr_assert_eq(atomic_load(&next.res), PULSARC_OK);
    struct stat d;
    cr_assert_eq(stat(dir, &d), 0);
    cr_assert_eq(synced_of(names, 1, d.st_ino), 2,
                 "accepted before its segment and the "
                 "directory were synced");
    pc_spool_close(sp);
}
