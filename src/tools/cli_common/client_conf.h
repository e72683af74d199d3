/*
 * client_conf — read Pulsar's own client.conf (the file `bin/pulsar-client` and
 * `bin/pulsar-admin` use) into pulsarc client settings, so that the command-line tools
 * work with a user's existing file.
 *
 * The file is a Java properties file: `key=value` (or `key: value`, `key value`), `#` and
 * `!` comment lines, blank lines, a trailing backslash continuing a line, and the escapes
 * \t \n \r \f \uXXXX. Unlike Java, trailing blanks of a value are dropped: in a path or a
 * boolean they are always a mistake. An empty value means "not set", as in Pulsar.
 *
 * Shared by pulsarc-produce and pulsarc-perf; it uses no pulsarc API, so the unit tests
 * can exercise it alone.
 */
#ifndef PULSARC_TOOLS_CLIENT_CONF_H
#define PULSARC_TOOLS_CLIENT_CONF_H

#include <stdbool.h>
#include <stddef.h>

/* One client setting from the file, already named as pulsarc_client_config_set wants. */
struct client_conf_setting {
    char *key;
    char *value;
    int line; /* where the file sets it, for error messages */
};

struct client_conf {
    char *broker_service_url;             /* brokerServiceUrl (or serviceUrl); NULL: not set */
    char *web_service_url;                /* webServiceUrl; NULL: not set */
    struct client_conf_setting *settings; /* in file order: a later one wins */
    size_t n_settings;
};

/* Told about a key the tools do not use (the value is never passed: it may be secret). */
typedef void (*client_conf_warn_fn)(void *ctx, int line, const char *key, const char *why);

/* Parses len bytes of properties text. Returns 0, or -1 with a message in err (a key
 * that cannot be honoured safely, or out of memory). out is always safe to free. */
int client_conf_parse(const char *text, size_t len, struct client_conf *out,
                      client_conf_warn_fn warn, void *warn_ctx, char *err, size_t err_len);

/* client_conf_parse on the contents of path; err also covers an unreadable file. */
int client_conf_load(const char *path, struct client_conf *out, client_conf_warn_fn warn,
                     void *warn_ctx, char *err, size_t err_len);

/* The service URL the file gives: brokerServiceUrl. NULL when the file gives none; when
 * it gives only webServiceUrl, NULL with the reason in err (HTTP lookup is not
 * supported yet). */
const char *client_conf_service_url(const struct client_conf *conf, char *err, size_t err_len);

void client_conf_free(struct client_conf *conf);

#endif
