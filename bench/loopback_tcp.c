/*
 * pulsarc-loopback — the loopback TCP ceiling: how fast this machine moves bytes from one
 * process to another over 127.0.0.1 with 1 MiB writes, with no protocol at all.
 *
 *   pulsarc-loopback [-d SECONDS] [-w WRITE_BYTES]
 *
 * A forked child reads into a buffer of the write size and throws the bytes away; the
 * parent writes the same buffer again and again for the given time, then closes and
 * waits for the child to have read everything. Two processes, as client and broker are,
 * so the kernel's copy in and copy out land on both cores the way they do in a benchmark.
 * bench/compare reports 1 MiB results as a percentage of this number.
 *
 * Prints: LOOPBACK bytes=N seconds=S mib_per_s=R write_bytes=W
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The child: read until end of stream. Exit status 0 when it saw a clean close. */
static int receive_all(int lfd, size_t chunk)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return 1;
    char *buf = malloc(chunk);
    if (!buf)
        return 1;
    for (;;) {
        ssize_t n = read(fd, buf, chunk);
        if (n == 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return 1;
    }
}

static int send_for(int fd, size_t chunk, double seconds, unsigned long long *sent)
{
    char *buf = malloc(chunk);
    if (!buf)
        return 1;
    memset(buf, 0x5a, chunk); /* touch every page before the clock starts */
    double end = mono_s() + seconds;
    while (mono_s() < end) {
        size_t off = 0;
        while (off < chunk) {
            ssize_t n = write(fd, buf + off, chunk - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return 1;
            off += (size_t)n;
        }
        *sent += chunk;
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    size_t chunk = 1 << 20;
    int opt;
    while ((opt = getopt(argc, argv, "d:w:h")) != -1) {
        switch (opt) {
        case 'd':
            seconds = atof(optarg);
            break;
        case 'w':
            chunk = (size_t)strtoull(optarg, NULL, 10);
            break;
        default:
            fprintf(opt == 'h' ? stdout : stderr, "usage: %s [-d SECONDS] [-w WRITE_BYTES]\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (seconds <= 0 || chunk == 0) {
        fprintf(stderr, "%s: -d and -w must be positive\n", argv[0]);
        return 2;
    }

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET,
                                .sin_port = 0,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof addr;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &len) != 0) {
        perror("listen");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0)
        _exit(receive_all(lfd, chunk));
    close(lfd);

    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("connect");
        return 1;
    }
    unsigned long long sent = 0;
    double start = mono_s();
    int rc = send_for(fd, chunk, seconds, &sent);
    close(fd);
    int status = 0;
    /* Elapsed until the receiver has read the last byte, not until the last write. */
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = 1;
    double elapsed = mono_s() - start;
    if (rc != 0) {
        fprintf(stderr, "%s: transfer failed\n", argv[0]);
        return 1;
    }
    printf("LOOPBACK bytes=%llu seconds=%.3f mib_per_s=%.1f write_bytes=%zu\n", sent, elapsed,
           (double)sent / elapsed / (1024.0 * 1024.0), chunk);
    return 0;
}
