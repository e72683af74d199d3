/* libcurl loaded on first use (curl_lib.h). */
#include "net/curl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "common/error.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *soname = PC_CURL_SONAME;
pc_curl_lib_t pc_curl;
static const pc_curl_lib_t *loaded;
static pulsarc_result failure = PULSARC_OK;
static char why[512];

/* dlerror's text, or a stand-in when it has none. */
static const char *dl_reason(void)
{
    const char *e = dlerror();
    return e ? e : "no reason given";
}

static void load(void)
{
    /* RTLD_LOCAL: curl's symbols stay out of the global namespace, so they cannot
     * interpose on anything the process links itself. Never dlclosed. */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        failure = PULSARC_ERR_UNSUPPORTED;
        snprintf(why, sizeof why,
                 "%s could not be loaded (HTTP(S) lookups and HTTP token endpoints need "
                 "libcurl): %s",
                 soname, dl_reason());
        return;
    }
#define PC_CURL_RESOLVE(name)                                                                \
    if (failure == PULSARC_OK) {                                                             \
        dlerror();                                                                           \
        pc_curl.name = (__typeof__(pc_curl.name))dlsym(h, "curl_" #name);                    \
        if (!pc_curl.name) {                                                                 \
            failure = PULSARC_ERR_UNSUPPORTED;                                               \
            snprintf(why, sizeof why, "%s has no curl_%s (libcurl is too old?): %s", soname, \
                     #name, dl_reason());                                                    \
        }                                                                                    \
    }
    PC_CURL_FUNCTIONS(PC_CURL_RESOLVE)
#undef PC_CURL_RESOLVE
    if (failure != PULSARC_OK)
        return;
    /* Once per process: curl_global_init may not race with itself (curl before 7.84 is
     * not thread-safe there), and several clients may start at once. */
    CURLcode rc = pc_curl.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        failure = PULSARC_ERR_NO_MEMORY;
        snprintf(why, sizeof why, "%s did not initialise: %s", soname, pc_curl.easy_strerror(rc));
        return;
    }
    loaded = &pc_curl;
}

const pc_curl_lib_t *pc_curl_lib(void)
{
    pthread_once(&once, load);
    if (!loaded)
        pc_fail(failure, "%s", why);
    return loaded;
}

pulsarc_result pc_curl_lib_result(void)
{
    pthread_once(&once, load);
    return failure;
}

void pc_curl_lib_set_soname_for_tests(const char *name)
{
    soname = name ? name : PC_CURL_SONAME;
}
