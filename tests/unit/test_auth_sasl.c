/* Kerberos (authPlugin=sasl): the plugin's names and parameters, per-connection sessions
 * of the auth interface (start, steps, a refresh that starts over, end), and a GSSAPI
 * failure named with GSSAPI's own words when no KDC answers. The exchange with a real KDC
 * and broker is tests/interop/test_kerberos.py. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <krb5.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/auth.h"
#include "auth/auth_plugin.h"
#include "common/error.h"
#include "pulsarc/pulsarc.h"

static char dir[128];
static char keytab[192];

/* A keytab with one random aes256 key for client@UNIT.TEST and a krb5.conf whose only KDC
 * is a loopback port nothing listens on. */
static void make_realm(void)
{
    snprintf(dir, sizeof dir, "/tmp/pulsarc-unit-krb-%d", (int)getpid());
    cr_assert_eq(mkdir(dir, 0700), 0);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t sl = sizeof sa;
    cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    close(s); /* closed: connections to it are refused at once */
    char conf[256];
    snprintf(conf, sizeof conf, "%s/krb5.conf", dir);
    FILE *f = fopen(conf, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "[libdefaults]\n default_realm = UNIT.TEST\n dns_lookup_kdc = false\n"
            " udp_preference_limit = 1\n rdns = false\n"
            "[realms]\n UNIT.TEST = {\n  kdc = 127.0.0.1:%d\n }\n",
            ntohs(sa.sin_port));
    fclose(f);
    setenv("KRB5_CONFIG", conf, 1);

    snprintf(keytab, sizeof keytab, "%s/client.keytab", dir);
    krb5_context k;
    krb5_keytab kt;
    krb5_principal p;
    cr_assert_eq(krb5_init_context(&k), 0);
    char name[256];
    snprintf(name, sizeof name, "FILE:%s", keytab);
    cr_assert_eq(krb5_kt_resolve(k, name, &kt), 0);
    cr_assert_eq(krb5_parse_name(k, "client@UNIT.TEST", &p), 0);
    krb5_keytab_entry e = { 0 };
    e.principal = p;
    e.vno = 1;
    cr_assert_eq(krb5_c_make_random_key(k, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &e.key), 0);
    cr_assert_eq(krb5_kt_add_entry(k, kt, &e), 0);
    krb5_free_keyblock_contents(k, &e.key);
    krb5_free_principal(k, p);
    krb5_kt_close(k, kt);
    krb5_free_context(k);
}

static void remove_realm(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(auth_sasl, .init = make_realm, .fini = remove_realm, .timeout = 30);

static pulsarc_result from_params(const char *plugin, const char *params, pc_auth_t **a)
{
    pc_auth_config_t in = { .plugin = plugin, .params = params };
    pc_auth_tls_files_t tls;
    return pc_auth_from_config(&in, a, &tls);
}

Test(auth_sasl, plugin_names_and_parameters)
{
    pc_auth_t *a = NULL;
    char params[512];
    snprintf(params, sizeof params,
             "{\"keytab\":\"%s\",\"principal\":\"client@UNIT.TEST\",\"serverType\":\"broker\"}",
             keytab);
    cr_assert_eq(from_params("sasl", params, &a), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_str_eq(pc_auth_method(a), "sasl");
    pc_auth_free(a);
    /* The Java class name; key:value form; a file:// keytab; the JAAS section ignored. */
    snprintf(params, sizeof params, "keytab:file://%s,saslJaasClientSectionName:PulsarClient",
             keytab);
    cr_assert_eq(from_params("org.apache.pulsar.client.impl.auth.AuthenticationSasl", params, &a),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    pc_auth_free(a);
    /* Nothing at all: the default ticket cache, serverType broker. */
    cr_assert_eq(from_params("sasl", NULL, &a), PULSARC_OK);
    pc_auth_free(a);

    cr_assert_eq(from_params("sasl", "{\"serverType\":\"broker/x\"}", &a),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_not_null(strstr(pulsarc_last_error_detail(), "serverType"));
    cr_assert_eq(from_params("sasl", "{\"principal\":\"\"}", &a), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(from_params("sasl", "{\"keytab\":\"/nonexistent/k.keytab\"}", &a),
                 PULSARC_ERR_AUTH_PROVIDER);
    cr_assert_not_null(strstr(pulsarc_last_error_detail(), "/nonexistent/k.keytab"));
    cr_assert_null(a);
}

Test(auth_sasl, no_kdc_fails_the_connect_with_gssapis_words_and_no_key)
{
    pc_auth_t *a = NULL;
    char params[512];
    snprintf(params, sizeof params, "{\"keytab\":\"%s\",\"principal\":\"client@UNIT.TEST\"}",
             keytab);
    cr_assert_eq(from_params("sasl", params, &a), PULSARC_OK, "%s", pulsarc_last_error_detail());
    pc_auth_session_t *s = NULL;
    pc_auth_data_t d;
    for (int round = 0; round < 2; round++) { /* again: credentials are acquired afresh */
        cr_assert_eq(pc_auth_connect_data(a, "broker1.unit.test", &s, &d),
                     PULSARC_ERR_AUTH_PROVIDER);
        const char *why = pulsarc_last_error_detail();
        /* MIT's library asks the KDC for the ticket-granting ticket when it acquires
         * credentials from a keytab. */
        cr_assert_not_null(strstr(why, "sasl: acquiring credentials for client@UNIT.TEST from "
                                       "keytab "),
                           "%s", why);
        cr_assert_not_null(strstr(why, "Cannot contact any KDC for realm 'UNIT.TEST'"), "%s", why);
        cr_assert_not_null(strstr(why, "(GSSAPI major 0x"), "%s", why);
        cr_assert_null(s, "a failed start left a session");
        cr_assert_null(d.bytes, "a failed start left data");
    }
    pc_auth_free(a);
}

Test(auth_sasl, a_principal_not_in_the_keytab_is_named)
{
    pc_auth_t *a = NULL;
    char params[512];
    snprintf(params, sizeof params, "{\"keytab\":\"%s\",\"principal\":\"nobody@UNIT.TEST\"}",
             keytab);
    cr_assert_eq(from_params("sasl", params, &a), PULSARC_OK);
    pc_auth_session_t *s = NULL;
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_connect_data(a, "h", &s, &d), PULSARC_ERR_AUTH_PROVIDER);
    const char *why = pulsarc_last_error_detail();
    cr_assert_not_null(strstr(why, "sasl: acquiring credentials for nobody@UNIT.TEST from keytab "),
                       "%s", why);
    cr_assert_not_null(strstr(why, keytab), "%s", why);
    pc_auth_free(a);
}

/* ---- sessions of the auth interface -------------------------------------------------- */

struct pc_auth_session {
    int id;
    int steps;
    char host[32];
};

typedef struct fake {
    pc_auth_t base;
    int started, ended;
} fake_t;

static pulsarc_result f_start(pc_auth_t *a, const char *host, pc_auth_session_t **s,
                              pc_auth_data_t *out)
{
    fake_t *f = (fake_t *)a;
    *s = calloc(1, sizeof **s);
    (*s)->id = ++f->started;
    snprintf((*s)->host, sizeof(*s)->host, "%s", host);
    char buf[64];
    snprintf(buf, sizeof buf, "first-%d-%s", (*s)->id, host);
    pc_auth_data_set(out, buf);
    return PULSARC_OK;
}

static pulsarc_result f_step(pc_auth_t *a, pc_auth_session_t *s, const uint8_t *ch, size_t len,
                             pc_auth_data_t *out)
{
    (void)a;
    char buf[128];
    snprintf(buf, sizeof buf, "s%d-step%d-%.*s", s->id, ++s->steps, (int)len, (const char *)ch);
    pc_auth_data_set(out, buf);
    return PULSARC_OK;
}

static void f_end(pc_auth_t *a, pc_auth_session_t *s)
{
    ((fake_t *)a)->ended++;
    free(s);
}

static pulsarc_result f_initial(pc_auth_t *a, pc_auth_data_t *out)
{
    (void)a;
    (void)out;
    cr_assert_fail("initial data asked of a provider with sessions");
    return PULSARC_ERR_UNSUPPORTED;
}

static void f_destroy(pc_auth_t *a)
{
    (void)a;
}

static const pc_auth_ops_t fake_ops = {
    .method = "fake",
    .initial = f_initial,
    .destroy = f_destroy,
    .session_start = f_start,
    .session_step = f_step,
    .session_end = f_end,
};

static void expect(pc_auth_data_t *d, const char *want)
{
    cr_assert_eq(d->len, strlen(want), "got %.*s", (int)d->len, (const char *)d->bytes);
    cr_assert_eq(memcmp(d->bytes, want, d->len), 0, "got %.*s", (int)d->len,
                 (const char *)d->bytes);
    pc_auth_data_free(d);
}

Test(auth_session, rounds_refresh_and_end)
{
    fake_t f = { .base = { .ops = &fake_ops } };
    pc_auth_session_t *s = NULL;
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_connect_data(&f.base, "b1", &s, &d), PULSARC_OK);
    expect(&d, "first-1-b1");
    /* Several AUTH_CHALLENGE rounds: each goes to the same session, in order. */
    const char *rounds[] = { "aa", "bb", "cc" };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(pc_auth_connect_challenge(&f.base, "b1", &s, (const uint8_t *)rounds[i], 2,
                                               &d),
                     PULSARC_OK);
        char want[32];
        snprintf(want, sizeof want, "s1-step%d-%s", i + 1, rounds[i]);
        expect(&d, want);
    }
    /* The broker's refresh: the old session ends, a new one starts (its first data). */
    cr_assert_eq(pc_auth_connect_challenge(&f.base, "b1", &s, (const uint8_t *)"PulsarAuthRefresh",
                                           17, &d),
                 PULSARC_OK);
    expect(&d, "first-2-b1");
    cr_assert_eq(f.ended, 1);
    /* A reconnect starts over too. */
    cr_assert_eq(pc_auth_connect_data(&f.base, "b2", &s, &d), PULSARC_OK);
    expect(&d, "first-3-b2");
    cr_assert_eq(f.ended, 2);
    pc_auth_session_end(&f.base, &s);
    cr_assert_null(s);
    cr_assert_eq(f.ended, 3);
    pc_auth_session_end(&f.base, &s); /* no-op */
    cr_assert_eq(f.ended, 3);
}

Test(auth_session, providers_without_sessions_answer_as_before)
{
    pc_auth_t *a = NULL;
    cr_assert_eq(pc_auth_token_literal("tok", &a), PULSARC_OK);
    pc_auth_session_t *s = NULL;
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_connect_data(a, "h", &s, &d), PULSARC_OK);
    expect(&d, "tok");
    cr_assert_eq(pc_auth_connect_challenge(a, "h", &s, (const uint8_t *)"x", 1, &d), PULSARC_OK);
    expect(&d, "tok");
    cr_assert_null(s);
    pc_auth_free(a);
}
