/* The logger: libpulsar's pulsar_logger / pulsar_logger_t behind pulsarc's log callback.
 * The levels are numbered alike (DEBUG 0 .. ERROR 3). */
#include <stdlib.h>

#include "compat/compat.h"

static void forward(pulsarc_log_level level, const char *file, int line, const char *message,
                    void *ctx)
{
    const pc_compat_logger *logger = ctx;
    pulsar_logger_level_t lvl = (pulsar_logger_level_t)level;
    if (logger->is_enabled ? !logger->is_enabled(lvl, logger->ctx) : lvl < pulsar_INFO)
        return;
    pc_compat_enter_callback();
    logger->log(lvl, file ? file : "", line, message ? message : "", logger->ctx);
    pc_compat_leave_callback();
}

pulsarc_result pc_compat_logger_apply(const pc_compat_logger *logger, pulsarc_client_config_t *conf,
                                      pc_compat_logger **owned)
{
    *owned = NULL;
    if (!logger->set)
        return PULSARC_OK;
    if (!logger->log) { /* a NULL function: silence, as pulsarc's NULL logger */
        pulsarc_client_config_set_logger(conf, NULL, NULL);
        return PULSARC_OK;
    }
    pc_compat_logger *copy = malloc(sizeof *copy);
    if (!copy)
        return PULSARC_ERR_NO_MEMORY;
    *copy = *logger;
    /* Let every line through to forward(), which asks is_enabled (or keeps INFO and up). */
    pulsarc_result res = pulsarc_client_config_set(conf, "logLevel",
                                                   logger->is_enabled ? "debug" : "info");
    if (res != PULSARC_OK) {
        free(copy);
        return res;
    }
    pulsarc_client_config_set_logger(conf, forward, copy);
    *owned = copy;
    return PULSARC_OK;
}
