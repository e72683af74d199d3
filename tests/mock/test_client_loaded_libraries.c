/* libcurl and the GSSAPI library are loaded when first needed (net/curl_lib.h,
 * auth/gss_lib.h). When one cannot be loaded, what needed it fails with a named error and
 * a detail that names the library and the dynamic loader's reason, through its usual
 * path: an http:// service URL or OAuth2 fails the client's creation with
 * PULSARC_ERR_UNSUPPORTED (the HTTP client is made then); Kerberos fails the connect, and
 * so the producer's creation, at once, with PULSARC_ERR_AUTH_PROVIDER. A lookup that
 * finds no HTTP client (a failover cluster's) fails likewise: unit/test_http_lookup.c. Each test points
 * the loader at a library that does not exist (the test-only soname setters), before
 * anything of the process loads it: Criterion runs each test in a process of its own.
 * That a pulsar:// client maps neither library is tests/lazy/lazy_libraries.c (a program
 * without Criterion, which maps GSSAPI through libgit2). */
#include "client_harness.h"
#include "auth/gss_lib.h"
#include "net/curl_lib.h"

TestSuite(client_loaded_libraries, .init = h_setup, .fini = h_teardown,
          .timeout = H_SUITE_TIMEOUT(30));

#define NO_CURL "libpulsarc-test-no-such-curl.so.4"
#define NO_GSS "libpulsarc-test-no-such-gssapi.so.2"
/* dlerror's words for a library that is nowhere on the search path (glibc). */
#define NOT_FOUND "cannot open shared object file"

static void expect_producer_fails(pulsarc_client_t *c, pulsarc_result want, const char *soname,
                                  const char *what)
{
    char detail[1024];
    uint64_t elapsed;
    pulsarc_result r = h_producer_fails(c, H_TOPIC, h_producer_conf(0, NULL), detail, sizeof detail,
                                        &elapsed);
    cr_assert_eq(r, want, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert(strstr(detail, soname), "the detail does not name %s: %s", soname, detail);
    cr_assert(strstr(detail, NOT_FOUND), "no dlerror text in the detail: %s", detail);
    cr_assert(strstr(detail, what), "the detail does not say %s: %s", what, detail);
    /* At once: operationTimeoutMs is 3000 here (h_client's default is shorter still). */
    cr_assert_lt(elapsed, h_upper_ms(1000), "took %llu ms", (unsigned long long)elapsed);
}

/* The client makes its HTTP client when it starts: without libcurl, an http:// service
 * URL fails pulsarc_client_new, by name, before anything connects. */
Test(client_loaded_libraries, an_http_service_url_without_libcurl_fails_the_client_by_name)
{
    pc_curl_lib_set_soname_for_tests(NO_CURL);
    char url[64];
    /* The mock broker's port: nothing may connect to it. */
    snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)mock_broker_port(mb));
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new(url, NULL, &c);
    const char *detail = pulsarc_last_error_detail();
    cr_assert_eq(r, PULSARC_ERR_UNSUPPORTED, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert_null(c);
    cr_assert(strstr(detail, url) && strstr(detail, NO_CURL) && strstr(detail, NOT_FOUND),
              "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0, "a connection was made");
    h_finish();
}

Test(client_loaded_libraries, oauth2_without_libcurl_fails_the_client_by_name)
{
    pc_curl_lib_set_soname_for_tests(NO_CURL);
    pulsarc_client_config_t *cc = pulsarc_client_config_new();
    cr_assert_eq(pulsarc_client_config_set(cc, "authPlugin", "oauth2"), PULSARC_OK);
    cr_assert_eq(pulsarc_client_config_set(cc, "authParams",
                                           "{\"issuerUrl\":\"http://127.0.0.1:1\","
                                           "\"clientId\":\"cid\",\"clientSecret\":\"secret\","
                                           "\"audience\":\"urn:pulsar\"}"),
                 PULSARC_OK, "%s", pulsarc_last_error_detail());
    pulsarc_client_t *c = NULL;
    pulsarc_result r = pulsarc_client_new(mock_broker_url(mb), cc, &c);
    pulsarc_client_config_free(cc);
    const char *detail = pulsarc_last_error_detail();
    cr_assert_eq(r, PULSARC_ERR_UNSUPPORTED, "%s: %s", pulsarc_result_name(r), detail);
    cr_assert_null(c);
    cr_assert(strstr(detail, "OAuth2") && strstr(detail, NO_CURL) && strstr(detail, NOT_FOUND),
              "detail: %s", detail);
    cr_assert_eq(h_count(mb, MOCK_CONNECTIONS), 0, "a connection was made");
    h_finish();
}

Test(client_loaded_libraries, kerberos_without_the_gssapi_library_fails_the_connect_by_name)
{
    pc_gss_lib_set_soname_for_tests(NO_GSS);
    client = h_client("authPlugin", "sasl", "authParams", "{\"principal\":\"client@PULSARC.TEST\"}",
                      "operationTimeoutMs", "3000", NULL);
    expect_producer_fails(client, PULSARC_ERR_AUTH_PROVIDER, NO_GSS, "Kerberos");
    cr_assert_eq(h_count(mb, MOCK_CONNECTS), 0, "CONNECT went out without a token");
    h_finish();
}
