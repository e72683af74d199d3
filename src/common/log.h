/* Logging through the user's hook. */
#ifndef PC_LOG_H
#define PC_LOG_H

#include "pulsarc/pulsarc.h"

typedef struct pc_logger {
    pulsarc_log_cb cb; /* NULL = silent */
    void *ctx;
    pulsarc_log_level level;
} pc_logger_t;

void pc_log_write(const pc_logger_t *lg, pulsarc_log_level level, const char *file, int line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The default hook: one line to stderr. */
void pc_log_stderr(pulsarc_log_level level, const char *file, int line, const char *message,
                   void *ctx);

#define PC_LOG(lg, lvl, ...)                                            \
    do {                                                                \
        if ((lg)->cb && (lvl) >= (lg)->level)                           \
            pc_log_write((lg), (lvl), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define PC_DEBUG(lg, ...) PC_LOG(lg, PULSARC_LOG_DEBUG, __VA_ARGS__)
#define PC_INFO(lg, ...) PC_LOG(lg, PULSARC_LOG_INFO, __VA_ARGS__)
#define PC_WARN(lg, ...) PC_LOG(lg, PULSARC_LOG_WARN, __VA_ARGS__)
#define PC_ERROR(lg, ...) PC_LOG(lg, PULSARC_LOG_ERROR, __VA_ARGS__)

#endif
