/* The reader of the broker's SASL answers over HTTP (auth_sasl_http.c, pc_sasl_http_read):
 * each answer the broker's AuthenticationProviderSasl gives, and every way a value may
 * break the rules, named; and the expiry a role token states. The exchange itself (a
 * GSSAPI acceptor on a web server) is tests/mock/test_client_auth_sasl_http.c, the real
 * broker tests/interop/test_kerberos.py. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "auth/auth_sasl.h"

typedef struct reply_case {
    long status;
    const char *state, *token, *server_id, *role_token;
    unsigned refused;
    pc_sasl_http_kind_t kind;
    const char *why; /* MALFORMED: in why */
} reply_case_t;

static void read_case(const reply_case_t *c, pc_sasl_http_answer_t *out)
{
    const char *values[] = { c->state, c->token, c->server_id, c->role_token };
    pc_auth_http_reply_t r = { .status = c->status, .values = values, .refused = c->refused };
    pc_sasl_http_read(&r, out);
}

TestSuite(sasl_http_read);

Test(sasl_http_read, the_brokers_answers)
{
    static pc_sasl_http_answer_t a;
    read_case(&(reply_case_t){ .status = 401,
                               .state = "ING",
                               .token = "YWJjZA==",
                               .server_id = "-9223372036854775808" },
              &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_CONTINUE, "%s", a.why);
    cr_assert_eq(a.token_len, 4);
    cr_assert_eq(memcmp(a.token, "abcd", 4), 0);
    cr_assert_str_eq(a.server_id, "-9223372036854775808");

    /* An empty token is a token (the broker's Base64 of nothing). */
    read_case(&(reply_case_t){ .status = 401, .state = "ing", .token = "", .server_id = "7" }, &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_CONTINUE, "%s", a.why);
    cr_assert_eq(a.token_len, 0);

    read_case(&(reply_case_t){ .status = 200,
                               .state = "Done",
                               .server_id = "7",
                               .role_token = "u=client@R&i=7&e=1700000000000&s=a+b/c==" },
              &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_DONE, "%s", a.why);
    cr_assert_str_eq(a.role_token, "u=client@R&i=7&e=1700000000000&s=a+b/c==");

    read_case(&(reply_case_t){ .status = 401, .state = "SaslAuthRoleTokenExpired" }, &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_EXPIRED);
    read_case(&(reply_case_t){ .status = 401 }, &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_REFUSED);
    read_case(&(reply_case_t){ .status = 200 }, &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_OTHER);
    read_case(&(reply_case_t){ .status = 503 }, &a);
    cr_assert_eq(a.kind, PC_SASL_HTTP_OTHER);
}

Test(sasl_http_read, values_that_break_the_rules_are_named)
{
    static char long_token[PC_SASL_HTTP_TOKEN_MAX / 3 * 4 + 8];
    memset(long_token, 'A', sizeof long_token - 1);
    static char long_role[PC_SASL_HTTP_ROLE_TOKEN_MAX + 2];
    memset(long_role, 'r', sizeof long_role - 1);
    const reply_case_t cases[] = {
        { 401, "ING", "YWJj=", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YW=j", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YWJ=", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YR==", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YWJj\n", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YW-j", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YWJ", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "====", "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", long_token, "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", NULL, "7", NULL, 0, 0, "without a SASL-Token in base64" },
        { 401, "ING", "YWJj", NULL, NULL, 0, 0, "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "", NULL, 0, 0, "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "-", NULL, 0, 0, "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "12a", NULL, 0, 0, "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "9223372036854775808", NULL, 0, 0,
          "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "12345678901234567890", NULL, 0, 0,
          "without a decimal SASL-Server-ID" },
        { 401, "ING", "YWJj", "+7", NULL, 0, 0, "without a decimal SASL-Server-ID" },
        { 200, "ING", "YWJj", "7", NULL, 0, 0, "State ING comes with a status other than 401" },
        { 401, "Done", NULL, "7", "u=a", 0, 0, "State Done comes with a status other than 200" },
        { 200, "Done", NULL, "7", NULL, 0, 0, "State Done without a SaslAuthRoleToken" },
        { 200, "Done", NULL, "7", "", 0, 0, "State Done without a SaslAuthRoleToken" },
        { 200, "Done", NULL, "7", "u=a\x7f", 0, 0, "State Done without a SaslAuthRoleToken" },
        { 200, "Done", NULL, "7", long_role, 0, 0, "State Done without a SaslAuthRoleToken" },
        { 200, "SaslAuthRoleTokenExpired", NULL, NULL, NULL, 0, 0,
          "State SaslAuthRoleTokenExpired comes with a status other than 401" },
        { 401, "Init", NULL, NULL, NULL, 0, 0, "its State is none of" },
        { 401, NULL, NULL, NULL, NULL, 1u << 0, 0, "its State header is repeated" },
        { 401, "ING", NULL, "7", NULL, 1u << 1, 0, "its SASL-Token header is repeated" },
        { 401, "ING", "YWJj", NULL, NULL, 1u << 2, 0, "its SASL-Server-ID header is repeated" },
        { 200, "Done", NULL, NULL, NULL, 1u << 3, 0, "its SaslAuthRoleToken header is repeated" },
    };
    static pc_sasl_http_answer_t a;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        read_case(&cases[i], &a);
        cr_expect_eq(a.kind, PC_SASL_HTTP_MALFORMED, "case %zu: kind %d", i, a.kind);
        cr_expect(strstr(a.why, cases[i].why), "case %zu: %s", i, a.why);
        cr_expect_eq(a.token_len, 0, "case %zu kept a token", i);
    }
}

Test(sasl_http_read, the_expiry_a_role_token_states)
{
    cr_assert_eq(pc_sasl_role_token_expiry("u=c@R&i=7&e=1700000000123&s=x=="), 1700000000123u);
    cr_assert_eq(pc_sasl_role_token_expiry("e=42&u=c"), 42);
    cr_assert_eq(pc_sasl_role_token_expiry("u=c@R&i=7&s=x"), 0);
    cr_assert_eq(pc_sasl_role_token_expiry("u=c@R&e=&s=x"), 0);
    cr_assert_eq(pc_sasl_role_token_expiry("u=c@R&e=12x&s=x"), 0);
    cr_assert_eq(pc_sasl_role_token_expiry("u=c@R&e=99999999999999999999&s=x"), 0);
    cr_assert_eq(pc_sasl_role_token_expiry("u=ce=5&x"), 0);
    cr_assert_eq(pc_sasl_role_token_expiry(""), 0);
}
