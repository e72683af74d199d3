#include "auth/secret_json.h"

#include <jansson.h>
#include <malloc.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>

void pc_secret_json_wipe(void *p)
{
    if (p)
        OPENSSL_cleanse(p, malloc_usable_size(p));
}

static void wiping_free(void *p)
{
    pc_secret_json_wipe(p);
    free(p);
}

static void install(void)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    if (m == malloc && f == free)
        json_set_alloc_funcs(malloc, wiping_free);
}

void pc_secret_json_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}
