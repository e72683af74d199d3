/*
 * security_flags — the command-line flags for TLS and authentication that the tools
 * share, each a shortcut for one pulsarc client setting. One table, so pulsarc-produce
 * and pulsarc-perf spell and document them the same way.
 */
#ifndef PULSARC_TOOLS_SECURITY_FLAGS_H
#define PULSARC_TOOLS_SECURITY_FLAGS_H

#include <stddef.h>

struct security_flag {
    const char *name;  /* long option, without "--" */
    const char *key;   /* the pulsarc_client_config_set key it sets */
    const char *fixed; /* the value for a flag without an argument; NULL: the argument */
    const char *arg;   /* argument name for --help; NULL: no argument */
    const char *help;
};

extern const struct security_flag security_flags[];
extern const size_t n_security_flags;

/* The flag with this long name, or NULL. */
const struct security_flag *security_flag_find(const char *name);

#endif
