/* pulsarc-produce against the mock broker when nothing can be stored. A topic fenced for
 * ever (every registration answered ServiceNotReady) must end the run at the first failed
 * send, as pulsar-client's does; --keep-going sends on, also after a message the broker
 * refuses alone; and a run waiting for room in a full queue ends on Ctrl-C at once,
 * accepting nothing more. Standard input is endless (`yes`), so only the tool giving up
 * ends a run. And what a run's exit status and summary say of messages it had no
 * callback for (those resent from a spool) and of statistics it could not write. */
#include "client_harness.h"
#include "test_spool_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The tool's queue: it accepts this many messages, then waits for room. */
#define MAX_PENDING "10"

static struct {
    pid_t cli, yes; /* 0: not running */
    char out[64], err[64];
    char text[64 * 1024]; /* the last file read */
} run;

static void cli_teardown(void)
{
    if (run.cli > 0) {
        kill(run.cli, SIGKILL);
        waitpid(run.cli, NULL, 0);
    }
    if (run.yes > 0) {
        kill(run.yes, SIGKILL);
        waitpid(run.yes, NULL, 0);
    }
    run.cli = run.yes = 0;
    if (run.out[0])
        unlink(run.out);
    if (run.err[0])
        unlink(run.err);
    h_teardown();
}

TestSuite(cli_stops, .init = h_setup, .fini = cli_teardown, .timeout = H_SUITE_TIMEOUT(60));

/* pulsarc-produce -u <mock> ARGS... t, its standard output and error going to files; its
 * standard input is `yes line` when endless, else empty. args ends with NULL. */
static void cli_spawn(const char *const *args, bool endless)
{
    int fds[2] = { -1, -1 };
    posix_spawn_file_actions_t fa;
    if (endless) {
        cr_assert_eq(pipe(fds), 0);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
        static char yes_cmd[] = "yes", yes_line[] = "line";
        char *yes_argv[] = { yes_cmd, yes_line, NULL };
        cr_assert_eq(posix_spawnp(&run.yes, "yes", &fa, NULL, yes_argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
    }

    snprintf(run.out, sizeof run.out, "/tmp/pulsarc-cli-stops-%d.out", (int)getpid());
    snprintf(run.err, sizeof run.err, "/tmp/pulsarc-cli-stops-%d.err", (int)getpid());
    posix_spawn_file_actions_init(&fa);
    if (endless) {
        posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
    } else {
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    const int create = O_WRONLY | O_CREAT | O_TRUNC;
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, run.out, create, 0600);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, run.err, create, 0600);
    const char *argv[32] = { PC_TEST_PRODUCE_BIN, "-u", mock_broker_url(mb) };
    int n = 3;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n++] = H_TOPIC;
    cr_assert_eq(posix_spawn(&run.cli, PC_TEST_PRODUCE_BIN, &fa, NULL, (char **)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    if (endless) {
        close(fds[0]);
        close(fds[1]);
    }
}

/* `yes line | pulsarc-produce -u <mock> --stdin --no-batching --max-pending 10 EXTRA... t`.
 * extra ends with NULL. */
static void cli_start(const char *const *extra)
{
    const char *args[32] = { "--stdin", "--no-batching", "--max-pending", MAX_PENDING };
    int n = 4;
    for (int i = 0; extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    cli_spawn(args, true);
}

static const char *read_text(const char *path)
{
    run.text[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return run.text;
    size_t n = fread(run.text, 1, sizeof run.text - 1, f);
    run.text[n] = '\0';
    fclose(f);
    return run.text;
}

static bool stderr_has(const char *needle)
{
    return strstr(read_text(run.err), needle) != NULL;
}

static bool stderr_has_cond(void *needle)
{
    return stderr_has(needle);
}

/* Wait until the tool's standard error holds needle. */
static bool wait_stderr(const char *needle)
{
    return h_wait_until(stderr_has_cond, (void *)needle, 10000);
}

static int exit_status = -1;

static bool cli_exited(void *unused)
{
    int st;
    if (waitpid(run.cli, &st, WNOHANG) != run.cli)
        return false;
    run.cli = 0;
    exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return true;
}

/* The tool's exit status; a run that does not end fails the test. */
static int cli_wait(void)
{
    cr_assert(h_wait_until(cli_exited, NULL, 10000), "pulsarc-produce is still running:\n%s",
              read_text(run.err));
    return exit_status;
}

/* Once the tool's producer has registered, its topic is fenced for ever. */
static void fence_for_ever(void)
{
    cr_assert(h_wait_count(mb, MOCK_PRODUCERS, 1, 10000), "the tool never registered");
    h_fence_for_ever(mb);
}

/* The first message that times out ends the run: what was pending fails with it and the
 * tool exits 1 naming the result, instead of reading standard input (and waiting for
 * room) for ever. A sender waiting for room sees the stop before the room, so no message
 * is accepted after the failure: exactly the queue's 10 fail. */
Test(cli_stops, fenced_for_ever_ends_the_run_at_the_first_send_timeout)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD); /* nothing is ever stored */
    const char *extra[] = { "--send-timeout-ms", "300", NULL };
    cli_start(extra);
    fence_for_ever();
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(stderr_has("stopping at the first failed message: "), "%s", run.text);
    cr_assert(stderr_has("[SEND_TIMEOUT]; sending no more messages"), "%s", run.text);
    cr_assert(strstr(read_text(run.out), "sent=0 failed=" MAX_PENDING " "), "%s", run.text);
    h_finish();
}

/* --keep-going keeps the old behaviour: a timed-out message is counted and sending goes
 * on (message 11 and later are accepted once the first ones failed), until interrupted. */
Test(cli_stops, keep_going_sends_on_after_send_timeouts)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    const char *extra[] = { "--send-timeout-ms", "300", "--keep-going", NULL };
    cli_start(extra);
    fence_for_ever();
    cr_assert(wait_stderr("message 11 failed: "),
              "no message after the first " MAX_PENDING " failed:\n%s", run.text);
    kill(run.cli, SIGINT);
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(!stderr_has("stopping at the first failed message"), "%s", run.text);
    h_finish();
}

/* The tool waits for room itself, so Ctrl-C reaches it there: with 10 messages waiting
 * for receipts that never come (sendTimeoutMs=0: they never time out) it stops reading
 * at once, and once the receipts come it reports exactly those 10. A sender blocked in
 * the library would have slept through the signal, and then sent an 11th message. */
Test(cli_stops, interrupt_while_waiting_for_room_sends_nothing_more)
{
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_HOLD);
    const char *extra[] = { "--send-timeout-ms", "0", NULL };
    cli_start(extra);
    cr_assert(h_wait_count(mb, MOCK_HELD_RECEIPTS, 10, 10000), "the queue never filled");
    kill(run.cli, SIGINT);
    cr_assert(wait_stderr("interrupted; flushing what was sent"),
              "the interrupt did not end the wait for room:\n%s", run.text);
    mock_broker_set_receipt_mode(mb, MOCK_RECEIPTS_NORMAL);
    mock_broker_release_receipts(mb);
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(strstr(read_text(run.out), "sent=" MAX_PENDING " failed=0 "), "%s", run.text);
    cr_assert_eq(h_count(mb, MOCK_SENDS), 10, "a message was sent after the interrupt");
    h_finish();
}

/* A message the broker refuses alone (NotAllowed, as for a message above the topic's
 * size policy) leaves the producer registered: with --keep-going it is one failed
 * message and sending goes on (the messages after it are stored), not a producer that
 * stopped. */
Test(cli_stops, keep_going_sends_on_after_a_message_the_broker_refuses)
{
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    const char *extra[] = { "--keep-going", NULL };
    cli_start(extra);
    cr_assert(wait_stderr("message 1 failed: "), "%s", run.text);
    cr_assert(h_wait_count(mb, MOCK_RECEIPTS, 100, 10000),
              "sending did not go on after the refused message:\n%s", read_text(run.err));
    kill(run.cli, SIGINT);
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(stderr_has("[BROKER_NOT_ALLOWED]"), "%s", run.text);
    cr_assert(!stderr_has("producer stopped"), "%s", run.text);
    h_finish();
}

/* Without --keep-going the same refusal ends the run as any first failure does; it is
 * not named a stopped producer. */
Test(cli_stops, a_message_the_broker_refuses_stops_the_run_as_a_failed_message)
{
    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 1);
    const char *extra[] = { NULL };
    cli_start(extra);
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(stderr_has("stopping at the first failed message: broker: operation not "
                         "allowed [BROKER_NOT_ALLOWED]"),
              "%s", run.text);
    cr_assert(!stderr_has("producer stopped"), "%s", run.text);
    h_finish();
}

/* A run killed with messages unsent leaves them in its spool; the next run's producer
 * resends them when it is created, with no callback of the tool's. When the broker
 * refuses them they are failed messages: counted in failed=, and the exit status is 1,
 * though the run's own message is stored. */
Test(cli_stops, spooled_messages_that_fail_on_resend_count_as_failed)
{
    char dir[64];
    cr_assert_eq(test_spool_dir_make(dir, sizeof dir), 0);
    client = h_client(NULL);
    producer = h_producer(client, H_TOPIC, "producerName", "cli-spool", "spoolDir", dir,
                          "spoolFsync", "never", "sendTimeoutMs", "0", NULL);
    cr_assert_eq(mock_broker_set_down(mb, true), 0);
    h_send_range(producer, 0, 3);
    pulsarc_client_destroy(client); /* the "crash": the three stay in the spool */
    client = NULL;
    cr_assert(h_wait_calls(3, 3000));
    for (int i = 0; i < 3; i++)
        cr_assert_eq(T.res[i], PULSARC_ERR_ALREADY_CLOSED); /* which leaves them spooled */
    pulsarc_producer_free(producer);
    producer = NULL;
    cr_assert_eq(mock_broker_set_down(mb, false), 0);
    cr_assert_eq(test_spool_dir_count(dir, ".seg"), 1, "nothing was left in the spool");

    mock_broker_fail_sends(mb, PULSAR__PROTO__SERVER_ERROR__NotAllowedError, 3);
    /* Unbatched, so that the mock refuses the three resends and stores the new message. */
    const char *args[] = {
        "--spool-dir", dir, "--producer-name", "cli-spool", "--no-batching", "-m", "new", NULL
    };
    cli_spawn(args, false);
    int status = cli_wait();
    test_spool_dir_remove(dir);
    cr_assert_eq(h_count(mb, MOCK_SEND_ERRORS), 3, "the resends were not refused:\n%s",
                 read_text(run.err));
    cr_assert_eq(status, 1, "%s", read_text(run.err));
    cr_assert(strstr(read_text(run.out), "sent=1 failed=3 "), "%s", run.text);
    cr_assert(stderr_has("3 message(s) resent from the spool failed"), "%s", run.text);
    h_finish();
}

/* Statistics that cannot be written make the exit status 1, and the message says why. */
Test(cli_stops, stats_json_that_cannot_be_written_says_why)
{
    const char *args[] = { "-m", "x", "--stats-json", "/nonexistent/pulsarc/stats.json", NULL };
    cli_spawn(args, false);
    cr_assert_eq(cli_wait(), 1, "%s", read_text(run.err));
    cr_assert(strstr(read_text(run.out), "sent=1 failed=0 "), "%s", run.text);
    cr_assert(stderr_has("cannot write the statistics to '/nonexistent/pulsarc/stats.json': "
                         "No such file or directory"),
              "%s", run.text);
    h_finish();
}
