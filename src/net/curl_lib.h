/* libcurl, loaded when HTTP is first needed: dlopen("libcurl.so.4") and its functions
 * resolved into one table. A client on pulsar:// without OAuth2 never loads it, and so
 * never maps libcurl's dependencies (nghttp2, idn2, ssh2, ldap, gnutls, ...): about half
 * of the dynamic loader's work at a process's start. Code compiles against <curl/curl.h>
 * for its types and constants and calls curl through the table. The library is never
 * unloaded. Thread-safe: the first call loads, on whichever thread makes it. */
#ifndef PC_CURL_LIB_H
#define PC_CURL_LIB_H

#include <curl/curl.h>

#include "pulsarc/pulsarc.h"

/* The soname loaded: the one of the libcurl ABI this code is compiled for. */
#define PC_CURL_SONAME "libcurl.so.4"

/* Every function called through the table, without its curl_ prefix. */
/* One entry a line: clang-format folds a list of several a line differently each run. */
#define PC_CURL_FUNCTIONS(X) \
    X(global_init)           \
    X(easy_init)             \
    X(easy_setopt)           \
    X(easy_getinfo)          \
    X(easy_strerror)         \
    X(easy_cleanup)          \
    X(easy_perform)          \
    X(easy_reset)            \
    X(easy_escape)           \
    X(multi_init)            \
    X(multi_setopt)          \
    X(multi_add_handle)      \
    X(multi_remove_handle)   \
    X(multi_assign)          \
    X(multi_socket_action)   \
    X(multi_info_read)       \
    X(multi_cleanup)         \
    X(slist_append)          \
    X(slist_free_all)        \
    X(url)                   \
    X(url_set)               \
    X(url_get)               \
    X(url_cleanup)           \
    X(free)

/* Each member has the type <curl/curl.h> declares for curl_<name>, so a call through the
 * table is checked against the header as a direct call is (curl's typecheck macros for
 * curl_easy_setopt aside). */
#define PC_CURL_MEMBER(name) __typeof__(curl_##name) *name;
typedef struct pc_curl_lib {
    PC_CURL_FUNCTIONS(PC_CURL_MEMBER)
} pc_curl_lib_t;
#undef PC_CURL_MEMBER

/* The table, filled by the first successful pc_curl_lib call and never changed after it:
 * code may call through it once pc_curl_lib has returned it (http.c's code, which only
 * runs for a pc_http_t, made by pc_http_new after loading). */
extern pc_curl_lib_t pc_curl;

/* The table, libcurl loaded and curl_global_init called on the first call. NULL when the
 * library cannot be loaded, lacks a function, or does not initialise: then the detail
 * (pulsarc_last_error_detail) names the library and the loader's reason, on every call,
 * and pc_curl_lib_result says which result that is (PULSARC_ERR_UNSUPPORTED: this
 * system has no usable libcurl; PULSARC_ERR_NO_MEMORY: it did not initialise). */
const pc_curl_lib_t *pc_curl_lib(void);
pulsarc_result pc_curl_lib_result(void);

/* Tests only: load soname instead of PC_CURL_SONAME. Effective before the first
 * pc_curl_lib call of the process, ignored after it. Deliberately not an environment
 * variable: which library a process loads is not for its environment to choose. */
void pc_curl_lib_set_soname_for_tests(const char *soname);

#endif
