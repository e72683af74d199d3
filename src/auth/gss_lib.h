/* The MIT GSSAPI library, loaded when Kerberos is first needed: dlopen of
 * "libgssapi_krb5.so.2" and its functions (with the krb5 ones auth_sasl.c calls, from
 * libkrb5.so.3, which it brings along) resolved into one table. A client without
 * authPlugin=sasl never loads it, nor krb5, k5crypto, com_err, keyutils, ... Code
 * compiles against <gssapi/gssapi.h> and <krb5.h> for types and constants and calls
 * through the table. Never unloaded. Thread-safe: the first call loads. */
#ifndef PC_GSS_LIB_H
#define PC_GSS_LIB_H

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>

#include "pulsarc/pulsarc.h"

/* The soname loaded: MIT krb5's GSSAPI library, the ABI this code is compiled for. */
#define PC_GSS_SONAME "libgssapi_krb5.so.2"

/* The functions called through the table, without their gss_ or krb5_ prefix. */
/* One entry a line: clang-format folds a list of several a line differently each run. */
#define PC_GSS_FUNCTIONS(X) \
    X(display_status)       \
    X(release_buffer)       \
    X(display_name)         \
    X(import_name)          \
    X(release_name)         \
    X(acquire_cred)         \
    X(acquire_cred_from)    \
    X(inquire_cred)         \
    X(release_cred)         \
    X(init_sec_context)     \
    X(delete_sec_context)   \
    X(wrap)                 \
    X(unwrap)
#define PC_KRB5_FUNCTIONS(X) \
    X(init_context)          \
    X(free_context)          \
    X(cc_resolve)            \
    X(cc_destroy)

/* Each member has the type the headers declare for gss_<name> or krb5_<name>. */
#define PC_GSS_MEMBER(name) __typeof__(gss_##name) *name;
#define PC_KRB5_MEMBER(name) __typeof__(krb5_##name) *krb5_##name;
typedef struct pc_gss_lib {
    PC_GSS_FUNCTIONS(PC_GSS_MEMBER)
    PC_KRB5_FUNCTIONS(PC_KRB5_MEMBER)
    /* The library's OIDs (its data symbols gss_mech_krb5, 1.2.840.113554.1.2.2, and
     * GSS_KRB5_NT_PRINCIPAL_NAME, 1.2.840.113554.1.2.2.1), read once loaded. */
    gss_OID mech_krb5;
    gss_OID nt_krb5_principal;
} pc_gss_lib_t;
#undef PC_GSS_MEMBER
#undef PC_KRB5_MEMBER

/* The table, filled by the first successful pc_gss_lib call and never changed after it:
 * code may call through it once pc_gss_lib has returned it (auth_sasl.c loads it before
 * it acquires credentials, and calls nothing before). */
extern pc_gss_lib_t pc_gss;

/* The table, the library loaded on the first call; NULL when it cannot be loaded or
 * lacks a symbol: then the result is PULSARC_ERR_AUTH_PROVIDER, with the detail
 * (pulsarc_last_error_detail) naming the library and the loader's reason, on every call.
 */
const pc_gss_lib_t *pc_gss_lib(void);

/* Tests only: load soname instead of PC_GSS_SONAME. Effective before the first
 * pc_gss_lib call of the process, ignored after it. Deliberately not an environment
 * variable: which library a process loads is not for its environment to choose. */
void pc_gss_lib_set_soname_for_tests(const char *soname);

#endif
