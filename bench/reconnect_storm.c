/*
 * pulsarc-reconnect-storm — what a TLS reconnect storm costs the client: PRODUCERS
 * producers on one client, over CONNECTIONS connections to a null broker; the broker
 * drops every connection (SIGUSR2 to its pid) and the tool times how long until every
 * producer is registered again, and the process's CPU over that window. With TLS each
 * dropped connection is a handshake; with tlsEnableSessionResumption (the default) it
 * resumes the session the broker gave before, so no certificate is sent or checked.
 *
 *   pulsarc-reconnect-storm -u URL --broker-pid PID [-p PRODUCERS] [-c CONNECTIONS]
 *                           [-r ROUNDS] [--trust FILE] [--no-resumption]
 *
 * The null broker keeps its ticket keys across SIGUSR2 (the process lives), as a broker
 * behind a dropped network path does; a broker process that restarts makes new ones, and
 * every client then pays full handshakes whatever it cached.
 *
 * Prints one STORM line per round and a summary:
 *   STORM round=N reconnect_ms=... cpu_ms=... cpu_us_per_connection=...
 *   STORMSUMMARY producers=P connections=C resumption=on|off rounds=R
 *       median_reconnect_ms=... median_cpu_ms=... median_cpu_us_per_connection=...
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <pulsarc/pulsarc.h>

#define MAX_ROUNDS 100

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static int fail(const char *what, pulsarc_result res)
{
    fprintf(stderr, "%s: %s: %s\n", what, pulsarc_strerror(res), pulsarc_last_error_detail());
    return 1;
}

/* Producers from *next on that are connected; polls move on from where the last stopped,
 * so a wait costs each producer one successful look. */
static int count_from(pulsarc_producer_t **ps, int n, int *next, int want_connected)
{
    while (*next < n && !!pulsarc_producer_is_connected(ps[*next]) == want_connected)
        (*next)++;
    return *next;
}

/* Wait until all n producers are (dis)connected; false after timeout_s. */
static int wait_all(pulsarc_producer_t **ps, int n, int connected, double timeout_s)
{
    int next = 0;
    double end = mono_s() + timeout_s;
    while (count_from(ps, n, &next, connected) < n) {
        if (mono_s() > end)
            return 0;
        nap_ms(2);
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s -u URL --broker-pid PID [-p PRODUCERS] [-c CONNECTIONS] [-r ROUNDS]\n"
            "          [--trust FILE] [--no-resumption]\n",
            prog);
}

int main(int argc, char **argv)
{
    const char *url = NULL, *trust = NULL;
    long producers = 1000, connections = 1, rounds = 5;
    pid_t broker = 0;
    int resumption = 1;
    static const struct option longs[] = {
        { "service-url", required_argument, NULL, 'u' },
        { "producers", required_argument, NULL, 'p' },
        { "connections", required_argument, NULL, 'c' },
        { "rounds", required_argument, NULL, 'r' },
        { "broker-pid", required_argument, NULL, 'b' },
        { "trust", required_argument, NULL, 't' },
        { "no-resumption", no_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "u:p:c:r:h", longs, NULL)) != -1) {
        switch (ch) {
        case 'u':
            url = optarg;
            break;
        case 'p':
            producers = strtol(optarg, NULL, 10);
            break;
        case 'c':
            connections = strtol(optarg, NULL, 10);
            break;
        case 'r':
            rounds = strtol(optarg, NULL, 10);
            break;
        case 'b':
            broker = (pid_t)strtol(optarg, NULL, 10);
            break;
        case 't':
            trust = optarg;
            break;
        case 'n':
            resumption = 0;
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }
    if (!url || broker <= 0 || producers < 1 || producers > 100000 || connections < 1 ||
        connections > 1024 || rounds < 1 || rounds > MAX_ROUNDS || optind != argc) {
        usage(stderr, argv[0]);
        return 2;
    }

    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    char conns[16];
    snprintf(conns, sizeof conns, "%ld", connections);
    const char *settings[][2] = {
        { "connectionsPerBroker", conns },
        { "tlsEnableSessionResumption", resumption ? "true" : "false" },
        /* Every producer comes back at once after the drop, not spread over seconds. */
        { "initialBackoffIntervalMs", "10" },
        { "maxBackoffIntervalMs", "100" },
        /* A lost connection is a warning per producer: not what is measured. */
        { "logLevel", "error" },
        { "tlsTrustCertsFilePath", trust },
    };
    pulsarc_result res;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (settings[i][1] &&
            (res = pulsarc_client_config_set(cc, settings[i][0], settings[i][1])) != PULSARC_OK)
            return fail(settings[i][0], res);
    pulsarc_client_t *client;
    res = pulsarc_client_new(url, cc, &client);
    pulsarc_client_config_free(cc);
    if (res != PULSARC_OK)
        return fail("client", res);

    pulsarc_producer_t **ps = calloc((size_t)producers, sizeof *ps);
    if (!ps)
        return fail("producers", PULSARC_ERR_NO_MEMORY);
    double t0 = mono_s();
    for (long i = 0; i < producers; i++) {
        char topic[128];
        snprintf(topic, sizeof topic, "persistent://public/default/storm-%d-%ld", (int)getpid(), i);
        if ((res = pulsarc_client_create_producer(client, topic, NULL, &ps[i])) != PULSARC_OK)
            return fail("create producer", res);
    }
    printf("created %ld producers in %.3f s\n", producers, mono_s() - t0);

    double wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
    int ok = 1;
    for (long r = 0; r < rounds && ok; r++) {
        nap_ms(200); /* let the tickets of the last handshakes arrive */
        double c0 = cpu_s(), w0 = mono_s();
        if (kill(broker, SIGUSR2) != 0) {
            perror("kill");
            return 1;
        }
        ok = wait_all(ps, (int)producers, 0, 10) && wait_all(ps, (int)producers, 1, 60);
        wall[r] = (mono_s() - w0) * 1e3;
        cpu[r] = (cpu_s() - c0) * 1e3;
        printf("STORM round=%ld reconnect_ms=%.1f cpu_ms=%.1f cpu_us_per_connection=%.0f%s\n",
               r + 1, wall[r], cpu[r], cpu[r] * 1e3 / (double)connections,
               ok ? "" : " (timed out)");
        fflush(stdout);
    }
    if (ok)
        printf("STORMSUMMARY producers=%ld connections=%ld resumption=%s rounds=%ld "
               "median_reconnect_ms=%.1f median_cpu_ms=%.1f "
               "median_cpu_us_per_connection=%.0f\n",
               producers, connections, resumption ? "on" : "off", rounds, median(wall, (int)rounds),
               median(cpu, (int)rounds), median(cpu, (int)rounds) * 1e3 / (double)connections);
    pulsarc_client_destroy(client); /* closes every producer; the handles stay to be freed */
    for (long i = 0; i < producers; i++)
        pulsarc_producer_free(ps[i]);
    free(ps);
    return ok ? 0 : 1;
}
