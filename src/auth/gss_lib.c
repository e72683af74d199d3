/* The GSSAPI library loaded on first use (gss_lib.h). */
#include "auth/gss_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "common/error.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *soname = PC_GSS_SONAME;
pc_gss_lib_t pc_gss;
static const pc_gss_lib_t *loaded;
static char why[512];

/* dlerror's text, or a stand-in when it has none. */
static const char *dl_reason(void)
{
    const char *e = dlerror();
    return e ? e : "no reason given";
}

/* The address of symbol name in h (searched in the library and what it brings along,
 * libkrb5.so.3 among them), or NULL with why set. */
static void *symbol(void *h, const char *name)
{
    dlerror();
    void *p = dlsym(h, name);
    if (!p)
        snprintf(why, sizeof why, "sasl: %s has no %s: %s", soname, name, dl_reason());
    return p;
}

static void load(void)
{
    /* RTLD_LOCAL: its symbols stay out of the global namespace. Never dlclosed. */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why,
                 "sasl: %s could not be loaded (Kerberos authentication needs MIT's GSSAPI "
                 "library): %s",
                 soname, dl_reason());
        return;
    }
#define PC_GSS_RESOLVE(name)                                               \
    if (!(pc_gss.name = (__typeof__(pc_gss.name))symbol(h, "gss_" #name))) \
        return;
#define PC_KRB5_RESOLVE(name)                                                             \
    if (!(pc_gss.krb5_##name = (__typeof__(pc_gss.krb5_##name))symbol(h, "krb5_" #name))) \
        return;
    PC_GSS_FUNCTIONS(PC_GSS_RESOLVE)
    PC_KRB5_FUNCTIONS(PC_KRB5_RESOLVE)
#undef PC_GSS_RESOLVE
#undef PC_KRB5_RESOLVE
    /* Both are `extern const gss_OID`: the symbol is the variable holding the pointer. */
    const gss_OID *mech = symbol(h, "gss_mech_krb5");
    const gss_OID *nt = mech ? symbol(h, "GSS_KRB5_NT_PRINCIPAL_NAME") : NULL;
    if (!nt)
        return;
    pc_gss.mech_krb5 = *mech;
    pc_gss.nt_krb5_principal = *nt;
    loaded = &pc_gss;
}

const pc_gss_lib_t *pc_gss_lib(void)
{
    pthread_once(&once, load);
    if (!loaded)
        pc_fail(PULSARC_ERR_AUTH_PROVIDER, "%s", why);
    return loaded;
}

void pc_gss_lib_set_soname_for_tests(const char *name)
{
    soname = name ? name : PC_GSS_SONAME;
}
