/* Authentication providers and the parsing of authPlugin/authParams. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/test_outcomes.h"
#include "auth/auth.h"
#include "auth/auth_params.h"
#include "auth/auth_plugin.h"
#include "auth/secret_json.h"
#include "common/error.h"
#include "pulsarc/pulsarc.h"

/* Write a file under /tmp named after tag and this process into path. */
static void write_temp(char *path, size_t len, const char *tag, const char *content)
{
    snprintf(path, len, "/tmp/pulsarc-unit-%s-%d.tok", tag, (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
}

/* ---- authParams formats ------------------------------------------------------------- */

Test(auth_params, json_object_with_strings_numbers_and_booleans)
{
    pc_auth_params_t p;
    cr_assert_eq(pc_auth_params_parse(" {\"userId\":\"u\",\"password\":\"p,w:d\",\"n\":3,"
                                      "\"b\":true}",
                                      &p),
                 PULSARC_OK);
    cr_assert_str_eq(pc_auth_params_get(&p, "userId"), "u");
    cr_assert_str_eq(pc_auth_params_get(&p, "password"), "p,w:d");
    cr_assert_str_eq(pc_auth_params_get(&p, "n"), "3");
    cr_assert_str_eq(pc_auth_params_get(&p, "b"), "true");
    cr_assert_null(pc_auth_params_get(&p, "missing"));
    pc_auth_params_clear(&p);
}

Test(auth_params, key_value_pairs_keep_later_colons_and_trim_blanks)
{
    pc_auth_params_t p;
    cr_assert_eq(pc_auth_params_parse("tlsCertFile:/a/c.pem, tlsKeyFile : /a/k.pem,x:y:z", &p),
                 PULSARC_OK);
    cr_assert_eq(p.n, 3);
    cr_assert_str_eq(pc_auth_params_get(&p, "tlsCertFile"), "/a/c.pem");
    cr_assert_str_eq(pc_auth_params_get(&p, "tlsKeyFile"), "/a/k.pem");
    cr_assert_str_eq(pc_auth_params_get(&p, "x"), "y:z");
    pc_auth_params_clear(&p);
}

Test(auth_params, errors_never_quote_the_text)
{
    static const char *const bad[] = {
        "{\"password\":\"hunter2\"",    /* unterminated JSON */
        "[\"hunter2\"]",                /* not an object */
        "{\"password\":[\"hunter2\"]}", /* a value that is not a scalar */
        "hunter2",                      /* no key */
        "user:u,hunter2",               /* second item without a key */
        ":hunter2",                     /* empty key */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pc_auth_params_t p;
        cr_assert_eq(pc_auth_params_parse(bad[i], &p), PULSARC_ERR_INVALID_CONFIG, "%s", bad[i]);
        cr_assert_eq(p.n, 0);
        cr_assert_null(strstr(pulsarc_last_error_detail(), "hunter2"), "%s -> %s", bad[i],
                       pulsarc_last_error_detail());
        cr_assert_neq(pulsarc_last_error_detail()[0], '\0');
    }
}

/* ---- plugin names ------------------------------------------------------------------- */

Test(auth_plugin, official_and_short_names)
{
    static const struct {
        const char *name;
        pc_auth_kind_t kind;
    } names[] = {
        { "token", PC_AUTH_TOKEN },
        { "TOKEN", PC_AUTH_TOKEN },
        { "org.apache.pulsar.client.impl.auth.AuthenticationToken", PC_AUTH_TOKEN },
        { "tls", PC_AUTH_TLS },
        { "org.apache.pulsar.client.impl.auth.AuthenticationTls", PC_AUTH_TLS },
        { "basic", PC_AUTH_BASIC },
        { "org.apache.pulsar.client.impl.auth.AuthenticationBasic", PC_AUTH_BASIC },
        { "oauth2", PC_AUTH_OAUTH2 },
        { "org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2", PC_AUTH_OAUTH2 },
        { "sasl", PC_AUTH_SASL },
        { "org.apache.pulsar.client.impl.auth.AuthenticationSasl", PC_AUTH_SASL },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        pc_auth_kind_t k;
        cr_assert_eq(pc_auth_kind_from_name(names[i].name, &k), PULSARC_OK, "%s", names[i].name);
        cr_assert_eq(k, names[i].kind, "%s", names[i].name);
    }
    pc_auth_kind_t k;
    cr_assert_eq(pc_auth_kind_from_name("kerberos", &k), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pc_auth_kind_from_name("AuthenticationToken", &k), PULSARC_ERR_INVALID_CONFIG);
}

/* ---- providers built from configuration --------------------------------------------- */

/* Build from plugin + params and return the initial data as a string (caller frees). */
static char *initial(const char *plugin, const char *params, const char *method)
{
    pc_auth_config_t in = { .plugin = plugin, .params = params };
    pc_auth_t *a;
    pc_auth_tls_files_t tls;
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_OK, "%s %s: %s", plugin, params,
                 pulsarc_last_error_detail());
    cr_assert_not_null(a);
    cr_assert_str_eq(pc_auth_method(a), method);
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_OK, "%s", pulsarc_last_error_detail());
    char *s = strndup((const char *)d.bytes, d.len);
    pc_auth_data_free(&d);
    cr_assert_null(d.bytes);
    pc_auth_free(a);
    pc_auth_tls_files_clear(&tls);
    return s;
}

static void expect_initial(const char *plugin, const char *params, const char *method,
                           const char *want)
{
    char *got = initial(plugin, params, method);
    cr_assert_str_eq(got, want, "%s %s", plugin, params);
    free(got);
}

Test(auth_plugin, token_param_forms)
{
    char path[64];
    write_temp(path, sizeof path, "token", "  from.file.jwt\n");
    char uri[80];

    expect_initial("token", "token:abc.def", "token", "abc.def");
    expect_initial("token", "bare.jwt.value", "token", "bare.jwt.value");
    expect_initial("token", "{\"token\":\"json.jwt\"}", "token", "json.jwt");
    snprintf(uri, sizeof uri, "file://%s", path);
    expect_initial("token", uri, "token", "from.file.jwt");
    snprintf(uri, sizeof uri, "file:%s", path);
    expect_initial("token", uri, "token", "from.file.jwt");
    snprintf(uri, sizeof uri, "{\"file\":\"%s\"}", path);
    expect_initial("token", uri, "token", "from.file.jwt");
    setenv("PULSARC_UNIT_TOKEN", "from.env.jwt\n", 1);
    expect_initial("token", "env:PULSARC_UNIT_TOKEN", "token", "from.env.jwt");
    unlink(path);
}

Test(auth_plugin, basic_and_tls_params)
{
    expect_initial("basic", "{\"userId\":\"alice\",\"password\":\"p:w\"}", "basic", "alice:p:w");
    expect_initial("basic", "userId:bob,password:pw", "basic", "bob:pw");
    expect_initial("tls", NULL, "tls", "");

    char cert[128], key[128], params[400];
    write_temp(cert, sizeof cert, "cert", "a certificate");
    write_temp(key, sizeof key, "key", "a key");
    snprintf(params, sizeof params, "{\"tlsCertFile\":\"%s\",\"tlsKeyFile\":\"%s\"}", cert, key);
    pc_auth_config_t in = { .plugin = "tls", .params = params };
    pc_auth_t *a;
    pc_auth_tls_files_t tls;
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_str_eq(tls.cert_file, cert);
    cr_assert_str_eq(tls.key_file, key);
    pc_auth_free(a);
    pc_auth_tls_files_clear(&tls);
    unlink(cert);
    unlink(key);
}

/* Whatever the scheme, the tls plugin's identity files must be readable when the
 * provider is made, as a token file must be when it is read: on pulsar:// nothing else
 * would ever open them. The TLS settings' files, when given, are the identity. */
Test(auth_plugin, tls_identity_files_must_be_readable)
{
    char cert[128], params[400];
    write_temp(cert, sizeof cert, "cert", "a certificate");
    snprintf(params, sizeof params, "tlsCertFile:%s,tlsKeyFile:/nonexistent/client.key", cert);
    pc_auth_config_t in = { .plugin = "tls", .params = params };
    pc_auth_t *a = (pc_auth_t *)1;
    pc_auth_tls_files_t tls;
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert_null(a);
    cr_assert_null(tls.cert_file, "nothing is adopted from a refused plugin");
    cr_assert_str_eq(pulsarc_last_error_detail(),
                     "cannot read the TLS key file /nonexistent/client.key: No such file or "
                     "directory");

    in = (pc_auth_config_t){ .plugin = "tls",
                             .tls_cert_file = "/nonexistent/client.pem",
                             .tls_key_file = cert };
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert(strstr(pulsarc_last_error_detail(), "certificate file /nonexistent/client.pem"), "%s",
              pulsarc_last_error_detail());

    /* The TLS settings win over the parameters' files, which are then not read. */
    in = (pc_auth_config_t){ .plugin = "tls",
                             .params = "tlsCertFile:/nonexistent/a,tlsKeyFile:/nonexistent/b",
                             .tls_cert_file = cert,
                             .tls_key_file = cert };
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_OK, "%s", pulsarc_last_error_detail());
    pc_auth_free(a);
    pc_auth_tls_files_clear(&tls);
    unlink(cert);
}

static pulsarc_result build_fails(const char *plugin, const char *params)
{
    pc_auth_config_t in = { .plugin = plugin, .params = params };
    pc_auth_t *a = (pc_auth_t *)1;
    pc_auth_tls_files_t tls;
    pulsarc_result r = pc_auth_from_config(&in, &a, &tls);
    cr_assert_null(a);
    cr_assert_null(tls.cert_file);
    return r;
}

Test(auth_plugin, bad_configurations)
{
    cr_assert_eq(build_fails("nope", "x"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("token", ""), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("token", "token:"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("token", "env:"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("token", "{\"other\":\"x\"}"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("basic", "{\"userId\":\"a:b\",\"password\":\"p\"}"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("basic", "{\"password\":\"p\"}"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("tls", "tlsKeyFile:/k.pem"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails(NULL, "token:x"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("oauth2", "{}"), PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "oauth2"), "%s", pulsarc_last_error_detail());

    pc_auth_config_t none = { 0 };
    pc_auth_t *a = (pc_auth_t *)1;
    pc_auth_tls_files_t tls;
    cr_assert_eq(pc_auth_from_config(&none, &a, &tls), PULSARC_OK);
    cr_assert_null(a, "no plugin, no provider");
}

/* ---- providers at connect time ------------------------------------------------------ */

static int calls;

static char *supplier(void *ctx)
{
    calls++;
    if (calls == 3)
        return NULL;
    char buf[32];
    snprintf(buf, sizeof buf, "%s%d", (const char *)ctx, calls);
    return strdup(buf);
}

Test(auth_provider, supplier_is_asked_on_every_connect_and_challenge)
{
    pc_auth_config_t in = { .plugin = "token", .supplier = supplier, .supplier_ctx = (void *)"t" };
    pc_auth_t *a;
    pc_auth_tls_files_t tls;
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_OK);
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_OK);
    cr_assert_eq(d.len, 2);
    cr_assert_eq(memcmp(d.bytes, "t1", 2), 0);
    pc_auth_data_free(&d);
    cr_assert_eq(pc_auth_challenge_data(a, (const uint8_t *)"refresh", 7, &d), PULSARC_OK);
    cr_assert_eq(memcmp(d.bytes, "t2", 2), 0);
    pc_auth_data_free(&d);
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert_null(d.bytes);
    pc_auth_free(a);

    in.plugin = "basic";
    cr_assert_eq(pc_auth_from_config(&in, &a, &tls), PULSARC_ERR_INVALID_CONFIG,
                 "a supplier with a non-token plugin");
}

Test(auth_provider, missing_file_and_variable_fail_with_auth_provider)
{
    pc_auth_t *a;
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_token_file("/nonexistent/pulsarc.tok", &a), PULSARC_OK);
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert(strstr(pulsarc_last_error_detail(), "/nonexistent/pulsarc.tok"), "%s",
              pulsarc_last_error_detail());
    pc_auth_free(a);

    unsetenv("PULSARC_UNIT_UNSET");
    cr_assert_eq(pc_auth_token_env("PULSARC_UNIT_UNSET", &a), PULSARC_OK);
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert(strstr(pulsarc_last_error_detail(), "PULSARC_UNIT_UNSET"));
    pc_auth_free(a);

    char path[64];
    write_temp(path, sizeof path, "empty", " \n");
    cr_assert_eq(pc_auth_token_file(path, &a), PULSARC_OK);
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_ERR_AUTH_PROVIDER, "an empty file");
    pc_auth_free(a);
    unlink(path);
}

/* ---- OAuth2 client credentials, against a fake HTTP table --------------------------- */

#define ISSUER "https://issuer.test"
#define SECRET "s&cr=t/+ secret"

/* The fake keeps the one request in flight; the test answers it with fake_answer. */
static struct {
    int gets, posts, released;
    char url[512], form[1024];
    pc_auth_http_done_cb done;
    void *ctx;
} fh;

static int fake_get(void *h, const char *url, uint64_t timeout_ms, pc_auth_http_done_cb done,
                    void *ctx)
{
    fh.gets++;
    snprintf(fh.url, sizeof fh.url, "%s", url);
    fh.done = done;
    fh.ctx = ctx;
    return 0;
}

static int fake_post(void *h, const char *url, const char *form, uint64_t timeout_ms,
                     pc_auth_http_done_cb done, void *ctx)
{
    fh.posts++;
    snprintf(fh.url, sizeof fh.url, "%s", url);
    snprintf(fh.form, sizeof fh.form, "%s", form);
    fh.done = done;
    fh.ctx = ctx;
    return 0;
}

static void fake_release(void *h)
{
    fh.released++;
    if (fh.done) { /* as pc_http_free does: cancelled requests end with a failure */
        pc_auth_http_done_cb done = fh.done;
        fh.done = NULL;
        done(PULSARC_ERR_ALREADY_CLOSED, 0, NULL, 0, fh.ctx);
    }
}

static void fake_answer(pulsarc_result res, long status, const char *body)
{
    cr_assert_not_null(fh.done, "no request in flight");
    pc_auth_http_done_cb done = fh.done;
    fh.done = NULL;
    done(res, status, body, body ? strlen(body) : 0, fh.ctx);
}

static uint64_t fake_now;
static uint64_t fake_now_ms(const pc_clock_t *clock)
{
    (void)clock;
    return fake_now;
}
static const pc_clock_t fake_clock = { fake_now_ms };

static pc_auth_t *oauth2_with(const char *params)
{
    memset(&fh, 0, sizeof fh);
    fake_now = 1000;
    pc_auth_t *a = NULL;
    pc_auth_config_t in = { .plugin = "oauth2", .params = params, .clock = &fake_clock };
    pc_auth_tls_files_t tls;
    pulsarc_result r = pc_auth_from_config(&in, &a, &tls);
    cr_assert_eq(r, PULSARC_OK, "%s: %s", pulsarc_result_name(r), pulsarc_last_error_detail());
    cr_assert(pc_auth_wants_http(a));
    cr_assert_str_eq(pc_auth_method(a), "token");
    pc_auth_http_t table = { fake_get, fake_post, fake_release, &fh, 5000 };
    pc_auth_use_http(a, &table);
    return a;
}

static pc_auth_t *oauth2_default(void)
{
    return oauth2_with("{\"issuer_url\":\"" ISSUER "/\",\"client_id\":\"id 1\","
                       "\"client_secret\":\"" SECRET "\",\"audience\":\"urn:pulsar:x\"}");
}

static void assert_data(pc_auth_t *a, const char *want)
{
    pc_auth_data_t d;
    cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_assert_eq(d.len, strlen(want));
    cr_assert(!memcmp(d.bytes, want, d.len));
    pc_auth_data_free(&d);
}

static void assert_no_secret(const char *detail)
{
    cr_assert(!strstr(detail, "s&cr"), "secret in \"%s\"", detail);
    cr_assert(!strstr(detail, "tok-"), "token in \"%s\"", detail);
}

/* Discovery, then the token request, then the token as "token" data. */
static void fetch(pc_auth_t *a, const char *token, const char *expires_in)
{
    waiter_t w = { 0 };
    pc_auth_prepare(a, &w.w, on_ready, &w);
    cr_assert_eq(w.calls, 0, "must wait for the issuer");
    if (fh.gets == 1 && fh.posts == 0) {
        cr_assert_str_eq(fh.url, ISSUER "/.well-known/openid-configuration");
        fake_answer(PULSARC_OK, 200,
                    "{\"issuer\":\"" ISSUER "\",\"token_endpoint\":\"" ISSUER "/oauth/token\"}");
    }
    cr_assert_str_eq(fh.url, ISSUER "/oauth/token");
    char body[256];
    snprintf(body, sizeof body, "{\"access_token\":\"%s\",\"token_type\":\"Bearer\"%s%s}", token,
             expires_in ? ",\"expires_in\":" : "", expires_in ? expires_in : "");
    fake_answer(PULSARC_OK, 200, body);
    cr_assert_eq(w.calls, 1);
    cr_assert_eq(w.res, PULSARC_OK, "%s", w.detail);
    assert_data(a, token);
}

Test(auth_oauth2, discovers_the_endpoint_and_posts_an_urlencoded_form)
{
    pc_auth_t *a = oauth2_with("{\"issuer_url\":\"" ISSUER "/\",\"client_id\":\"id 1\","
                               "\"client_secret\":\"" SECRET "\",\"audience\":\"urn:pulsar:x\","
                               "\"scope\":\"a b\"}");
    fetch(a, "tok-1", "3600");
    cr_assert_str_eq(fh.form, "grant_type=client_credentials&client_id=id%201"
                              "&client_secret=s%26cr%3Dt%2F%2B%20secret"
                              "&audience=urn%3Apulsar%3Ax&scope=a%20b");
    pc_auth_free(a);
    cr_assert_eq(fh.released, 1, "the provider releases its HTTP client");
}

Test(auth_oauth2, caches_until_a_tenth_of_the_lifetime_before_expiry)
{
    pc_auth_t *a = oauth2_default();
    cr_assert(!strstr(fh.form, "scope"));
    fetch(a, "tok-1", "100"); /* 100 s: renewed 10 s early, at 1000 + 90000 */
    waiter_t w = { 0 };
    fake_now = 1000 + 89999;
    pc_auth_prepare(a, &w.w, on_ready, &w);
    cr_assert_eq(w.calls, 1, "a cached token is ready at once");
    cr_assert_eq(fh.posts, 1);
    assert_data(a, "tok-1");
    fake_now = 1000 + 90000;
    fetch(a, "tok-2", "3600"); /* the endpoint is kept: no second discovery */
    cr_assert_eq(fh.gets, 1);
    cr_assert_eq(fh.posts, 2);
    /* An hour-long token is renewed at most 30 s early. */
    waiter_t w2 = { 0 };
    fake_now = 1000 + 90000 + 3600000 - 30001;
    pc_auth_prepare(a, &w2.w, on_ready, &w2);
    cr_assert_eq(w2.calls, 1);
    fake_now += 1;
    fetch(a, "tok-3", NULL); /* no expires_in: not cached */
    waiter_t w3 = { 0 };
    pc_auth_prepare(a, &w3.w, on_ready, &w3);
    cr_assert_eq(w3.calls, 0, "a token without a lifetime is fetched again");
    cr_assert_eq(fh.posts, 4);
    fake_answer(PULSARC_OK, 200, "{\"access_token\":\"tok-4\",\"expires_in\":60}");
    cr_assert_eq(w3.calls, 1);
    assert_data(a, "tok-4");
    pc_auth_free(a);
}

Test(auth_oauth2, waiters_share_one_fetch_and_a_cancelled_one_is_never_called)
{
    pc_auth_t *a = oauth2_default();
    waiter_t w1 = { 0 }, w2 = { 0 }, w3 = { 0 };
    pc_auth_prepare(a, &w1.w, on_ready, &w1);
    pc_auth_prepare(a, &w2.w, on_ready, &w2);
    pc_auth_prepare(a, &w3.w, on_ready, &w3);
    cr_assert_eq(fh.gets, 1, "one discovery for all");
    pc_auth_cancel(a, &w2.w);
    cr_assert(!w2.w.pending);
    fake_answer(PULSARC_OK, 200, "{\"token_endpoint\":\"" ISSUER "/t\"}");
    fake_answer(PULSARC_OK, 200, "{\"access_token\":\"tok-1\",\"expires_in\":60}");
    cr_assert_eq(fh.posts, 1);
    cr_assert_eq(w1.calls, 1);
    cr_assert_eq(w2.calls, 0);
    cr_assert_eq(w3.calls, 1);
    pc_auth_free(a);
}

/* The failure a waiter heard of, checked for the issuer's name and for secrets. */
static pulsarc_result fails_with(pc_auth_t *a, waiter_t *w)
{
    cr_assert_eq(w->calls, 1, "the waiter hears of the failure");
    cr_assert_neq(w->res, PULSARC_OK);
    cr_assert(strstr(w->detail, ISSUER), "issuer not named: %s", w->detail);
    assert_no_secret(w->detail);
    return w->res;
}

Test(auth_oauth2, issuer_errors_name_the_issuer_and_the_problem_never_the_secret)
{
    static const struct {
        long discovery_status;
        const char *discovery, *token_body;
        long token_status;
        const char *want;
    } cases[] = {
        { 404, "nope", NULL, 0, "HTTP 404" },
        { 200, "not json", NULL, 0, "not a JSON object" },
        { 200, "{\"issuer\":\"x\"}", NULL, 0, "no token_endpoint" },
        { 200, "{\"token_endpoint\":\"http://issuer.test/t\"}", NULL, 0, "not an https://" },
        { 200, "{\"token_endpoint\":\"" ISSUER "/t\"}",
          "{\"error\":\"invalid_client\","
          "\"error_description\":\"bad " SECRET "\"}",
          401, "HTTP 401 (error \"invalid_client\")" },
        { 200, "{\"token_endpoint\":\"" ISSUER "/t\"}", "<html>tok-x", 200, "not a JSON object" },
        { 200, "{\"token_endpoint\":\"" ISSUER "/t\"}", "{\"token\":\"tok-x\"}", 200,
          "no access_token" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pc_auth_t *a = oauth2_default();
        waiter_t w = { 0 };
        pc_auth_prepare(a, &w.w, on_ready, &w);
        fake_answer(PULSARC_OK, cases[i].discovery_status, cases[i].discovery);
        if (cases[i].token_body)
            fake_answer(PULSARC_OK, cases[i].token_status, cases[i].token_body);
        cr_assert_eq(fails_with(a, &w), PULSARC_ERR_AUTH_PROVIDER, "case %zu", i);
        cr_assert(strstr(w.detail, cases[i].want), "case %zu: %s", i, w.detail);
        pc_auth_data_t d;
        cr_assert_eq(pc_auth_initial_data(a, &d), PULSARC_ERR_AUTH_PROVIDER);
        pc_auth_free(a);
    }
}

Test(auth_oauth2, transport_failures_keep_the_http_clients_detail)
{
    pc_auth_t *a = oauth2_default();
    waiter_t w = { 0 };
    pc_auth_prepare(a, &w.w, on_ready, &w);
    pc_set_detail("https://issuer.test/.well-known/openid-configuration: certificate not trusted");
    fake_answer(PULSARC_ERR_TLS_UNTRUSTED, 0, NULL);
    cr_assert_eq(fails_with(a, &w), PULSARC_ERR_AUTH_PROVIDER);
    cr_assert(strstr(w.detail, "certificate not trusted"), "%s", w.detail);
    cr_assert(strstr(w.detail, "TLS"), "%s", w.detail);
    /* The next connect tries again. */
    waiter_t w2 = { 0 };
    pc_auth_prepare(a, &w2.w, on_ready, &w2);
    cr_assert_eq(fh.gets, 2);
    pc_auth_free(a);
}

Test(auth_oauth2, detaching_http_fails_the_waiters)
{
    pc_auth_t *a = oauth2_default();
    waiter_t w = { 0 };
    pc_auth_prepare(a, &w.w, on_ready, &w);
    pc_auth_use_http(a, NULL);
    cr_assert_eq(fh.released, 1);
    cr_assert_eq(w.calls, 1);
    cr_assert_neq(w.res, PULSARC_OK);
    waiter_t w2 = { 0 };
    pc_auth_prepare(a, &w2.w, on_ready, &w2);
    cr_assert_eq(w2.calls, 1, "no HTTP client: fails at once");
    cr_assert_eq(w2.res, PULSARC_ERR_AUTH_PROVIDER);
    pc_auth_free(a);
    cr_assert_eq(fh.released, 1, "released once");
}

static void write_key(char *path, size_t len, const char *content)
{
    snprintf(path, len, "/tmp/pulsarc-unit-oauth2-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
}

Test(auth_oauth2, private_key_as_path_file_url_and_data_url_with_both_name_styles)
{
    char path[128], params[512];
    write_key(path, sizeof path,
              "{\"type\":\"client_credentials\",\"client_id\":\"kid\","
              "\"client_secret\":\"ksecret\",\"issuer_url\":\"" ISSUER "\"}");
    const char *forms[] = {
        "{\"issuer_url\":\"" ISSUER "\",\"private_key\":\"file://%s\",\"audience\":\"aud\"}",
        "{\"issuerUrl\":\"" ISSUER "\",\"privateKey\":\"%s\",\"audience\":\"aud\"}",
        "issuerUrl:" ISSUER ",privateKey:file:%s,audience:aud",
        "{\"privateKey\":\"file://%s\",\"audience\":\"aud\"}", /* issuer from the file */
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(params, sizeof params, forms[i], path);
        pc_auth_t *a = oauth2_with(params);
        fetch(a, "tok-1", "60");
        cr_assert_str_eq(fh.form,
                         "grant_type=client_credentials&client_id=kid"
                         "&client_secret=ksecret&audience=aud",
                         "form %zu", i);
        pc_auth_free(a);
    }
    /* {"client_id":"did","client_secret":"dsecret"} */
    pc_auth_t *a = oauth2_with("{\"issuer_url\":\"" ISSUER "\",\"private_key\":\"data:application/"
                               "json;base64,eyJjbGllbnRfaWQiOiJkaWQiLCJjbGllbnRfc2VjcmV0Ijoi"
                               "ZHNlY3JldCJ9\"}");
    fetch(a, "tok-1", "60");
    cr_assert_str_eq(fh.form, "grant_type=client_credentials&client_id=did&client_secret=dsecret");
    pc_auth_free(a);
    unlink(path);
}

Test(auth_oauth2, bad_parameters)
{
    cr_assert_eq(build_fails("oauth2", "{\"client_id\":\"i\",\"client_secret\":\"s\"}"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "issuer_url"));
    cr_assert_eq(build_fails("oauth2", "{\"issuer_url\":\"" ISSUER "\"}"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(build_fails("oauth2", "{\"issuer_url\":\"" ISSUER "\",\"private_key\":"
                                       "\"/nonexistent/creds.json\"}"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert(strstr(pulsarc_last_error_detail(), "/nonexistent/creds.json"));
    char path[128];
    write_key(path, sizeof path, "{\"client_secret\":\"" SECRET "\"}");
    char params[256];
    snprintf(params, sizeof params, "{\"issuer_url\":\"" ISSUER "\",\"private_key\":\"%s\"}", path);
    cr_assert_eq(build_fails("oauth2", params), PULSARC_ERR_INVALID_CONFIG);
    assert_no_secret(pulsarc_last_error_detail());
    unlink(path);
    cr_assert_eq(build_fails("oauth2", "{\"issuer_url\":\"" ISSUER "\",\"client_id\":\"i\","
                                       "\"client_secret\":\"s\",\"tokenEndpointAuthMethod\":"
                                       "\"tls_client_auth\"}"),
                 PULSARC_ERR_UNSUPPORTED);
    cr_assert_eq(build_fails("oauth2", "{\"issuer_url\":\"" ISSUER "\",\"private_key\":"
                                       "\"data:text/plain,x\"}"),
                 PULSARC_ERR_INVALID_CONFIG);
}

/* Providers without a prepare step are ready at once. */
Test(auth_oauth2, synchronous_providers_are_ready_at_once)
{
    pc_auth_t *a;
    cr_assert_eq(pc_auth_token_literal("t", &a), PULSARC_OK);
    cr_assert(!pc_auth_wants_http(a));
    waiter_t w = { 0 };
    pc_auth_prepare(a, &w.w, on_ready, &w);
    cr_assert_eq(w.calls, 1);
    cr_assert_eq(w.res, PULSARC_OK);
    pc_auth_cancel(a, &w.w); /* not pending: no-op */
    pc_auth_free(a);
}

/* The issuer's own CAs (the Java client's trustCertsFilePath); none by default: the
 * system's store, never the broker's tlsTrustCertsFilePath. */
Test(auth_oauth2, trust_certs_file_path_is_the_issuers_own)
{
    pc_auth_t *a = oauth2_default();
    cr_assert_null(pc_auth_http_trust_file(a));
    pc_auth_free(a);
    a = oauth2_with("{\"issuerUrl\":\"" ISSUER "\",\"client_id\":\"i\",\"client_secret\":\"s\","
                    "\"trustCertsFilePath\":\"/etc/issuer-ca.pem\"}");
    cr_assert_str_eq(pc_auth_http_trust_file(a), "/etc/issuer-ca.pem");
    pc_auth_free(a);
    cr_assert_eq(pc_auth_token_literal("t", &a), PULSARC_OK);
    cr_assert_null(pc_auth_http_trust_file(a));
    pc_auth_free(a);
}

/* ---- jansson's copies of secrets ----------------------------------------------------- */

/* Parsing authParams as JSON leaves the values (and the lexer's buffers) in memory jansson
 * frees: its free function must wipe, and stay compatible with malloc's blocks. */
Test(secret_json, parsing_secrets_makes_janssons_free_wipe)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    cr_assert(m == malloc && f == free, "jansson starts with its defaults");
    pc_auth_params_t p;
    cr_assert_eq(pc_auth_params_parse("{\"token\":\"a-secret\"}", &p), PULSARC_OK);
    pc_auth_params_clear(&p);
    json_get_alloc_funcs(&m, &f);
    cr_expect(m == malloc, "blocks still come from malloc");
    cr_expect(f != free, "jansson frees the parsed secret without wiping it");
    /* Blocks allocated before or by others are freed the same way. */
    json_t *before = json_string("x");
    f(malloc(10));
    json_decref(before);
}

static int app_frees;

static void *app_malloc(size_t n)
{
    return malloc(n);
}

static void app_free(void *p)
{
    app_frees++;
    free(p);
}

/* An application that installed its own pair keeps it: swapping it would hand blocks of
 * its allocator to free(). */
Test(secret_json, an_applications_own_allocator_is_left_alone)
{
    json_set_alloc_funcs(app_malloc, app_free);
    pc_auth_params_t p;
    cr_assert_eq(pc_auth_params_parse("{\"token\":\"a-secret\"}", &p), PULSARC_OK);
    pc_auth_params_clear(&p);
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    cr_expect(m == app_malloc && f == app_free);
    cr_expect_gt(app_frees, 0);
}

Test(secret_json, the_wipe_covers_the_whole_block)
{
    size_t n = 100;
    unsigned char *b = malloc(n);
    memset(b, 'S', n);
    size_t usable = malloc_usable_size(b);
    pc_secret_json_wipe(b);
    for (size_t i = 0; i < usable; i++)
        cr_assert_eq(b[i], 0, "byte %zu of %zu", i, usable);
    free(b);
    pc_secret_json_wipe(NULL);
}

/* ---- secrets in clear text: one warning per client -------------------------------- */

typedef struct lines {
    int n;
    char last[512];
} lines_t;

static void capture(pulsarc_log_level level, const char *file, int line, const char *msg, void *ctx)
{
    (void)file;
    (void)line;
    lines_t *l = ctx;
    if (level == PULSARC_LOG_WARN) {
        l->n++;
        snprintf(l->last, sizeof l->last, "%s", msg);
    }
}

static lines_t warnings_for(pc_auth_t *a, int tls)
{
    lines_t l = { 0 };
    pc_logger_t log = { .cb = capture, .ctx = &l, .level = PULSARC_LOG_DEBUG };
    pc_auth_warn_cleartext(a, tls, &log);
    return l;
}

Test(auth_cleartext, token_and_password_without_tls_are_warned_about)
{
    pc_auth_t *a;
    cr_assert_eq(pc_auth_token_literal("t", &a), PULSARC_OK);
    lines_t l = warnings_for(a, 0);
    cr_expect_eq(l.n, 1);
    cr_expect(strstr(l.last, "token") && strstr(l.last, "unencrypted"), "%s", l.last);
    cr_expect_eq(warnings_for(a, 1).n, 0, "over TLS");
    pc_auth_free(a);

    cr_assert_eq(pc_auth_basic("u", "p", &a), PULSARC_OK);
    l = warnings_for(a, 0);
    cr_expect_eq(l.n, 1);
    cr_expect(strstr(l.last, "password") != NULL, "%s", l.last);
    pc_auth_free(a);

    char cert[128], key[128];
    write_temp(cert, sizeof cert, "cleartext-cert", "a certificate");
    write_temp(key, sizeof key, "cleartext-key", "a key");
    cr_assert_eq(pc_auth_tls(cert, key, &a), PULSARC_OK, "%s", pulsarc_last_error_detail());
    cr_expect_eq(warnings_for(a, 0).n, 0, "a certificate is no secret on the wire");
    pc_auth_free(a);
    unlink(cert);
    unlink(key);
    cr_expect_eq(warnings_for(NULL, 0).n, 0);
}

Test(auth_cleartext, an_http_issuer_is_warned_about_even_over_tls)
{
    pc_auth_t *a = oauth2_with("{\"issuer_url\":\"http://issuer.test\",\"client_id\":\"i\","
                               "\"client_secret\":\"s\"}");
    lines_t l = warnings_for(a, 1);
    cr_expect_eq(l.n, 1);
    cr_expect(strstr(l.last, "issuer") && strstr(l.last, "http://"), "%s", l.last);
    l = warnings_for(a, 0); /* both reasons, still one line */
    cr_expect_eq(l.n, 1);
    cr_expect(strstr(l.last, "token") && strstr(l.last, "issuer"), "%s", l.last);
    pc_auth_free(a);
    a = oauth2_default(); /* https */
    cr_expect_eq(warnings_for(a, 1).n, 0);
    pc_auth_free(a);
}
