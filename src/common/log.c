#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/safe_text.h"

void pc_log_write(const pc_logger_t *lg, pulsarc_log_level level, const char *file, int line,
                  const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pc_safe_text(msg); /* lines quote peers' words: see safe_text.h */
    lg->cb(level, file, line, msg, lg->ctx);
}

void pc_log_stderr(pulsarc_log_level level, const char *file, int line, const char *message,
                   void *ctx)
{
    static const char *names[] = { "DEBUG", "INFO", "WARN", "ERROR" };
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    fprintf(stderr, "%02d:%02d:%02d.%03ld pulsarc %s %s:%d %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
            ts.tv_nsec / 1000000, level <= PULSARC_LOG_ERROR ? names[level] : "?",
            base ? base + 1 : file, line, message);
}
