/* Peers' words in details and log lines: control characters and broken UTF-8 become '?',
 * whoever formats the text (pc_fail, pc_set_detail, the logger). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/safe_text.h"

static void expect_clean(const char *in, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", in);
    pc_safe_text(buf);
    cr_expect_str_eq(buf, want, "from \"%s\"", in);
}

Test(safe_text, controls_and_broken_utf8_become_question_marks)
{
    expect_clean("plain text, 100% ASCII ~", "plain text, 100% ASCII ~");
    expect_clean("red\x1b[31mtext\x1b[0m", "red?[31mtext?[0m");
    expect_clean("line\r\nforged: INFO ok", "line??forged: INFO ok");
    expect_clean("tab\there\x7f", "tab?here?");
    expect_clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    expect_clean("c1 csi \xc2\x9b" "2J", "c1 csi ??2J");           /* U+009B */
    expect_clean("lone \x9b and \xff", "lone ? and ?");            /* 8-bit CSI, no UTF-8 */
    expect_clean("overlong \xc0\xaf", "overlong ??");
    expect_clean("surrogate \xed\xa0\x80", "surrogate ???");
    expect_clean("cut \xe2\x82", "cut ??");
    pc_safe_text(NULL);
}

Test(safe_text, details_are_cleaned_however_they_are_set)
{
    pc_fail(PULSARC_ERR_BROKER_UNKNOWN, "broker said: %s", "no\x1b]0;pwned\x07\nway");
    cr_expect_str_eq(pulsarc_last_error_detail(), "broker said: no?]0;pwned??way");
    pc_set_detail("raw\r\ntext");
    cr_expect_str_eq(pulsarc_last_error_detail(), "raw??text");
}

static char logged[256];

static void capture(pulsarc_log_level level, const char *file, int line, const char *msg,
                    void *ctx)
{
    (void)level;
    (void)file;
    (void)line;
    (void)ctx;
    snprintf(logged, sizeof logged, "%s", msg);
}

Test(safe_text, log_lines_are_cleaned)
{
    pc_logger_t log = { .cb = capture, .level = PULSARC_LOG_DEBUG };
    PC_WARN(&log, "server version %s", "mock\x1b[2J\n12:00:00 pulsarc ERROR forged");
    cr_expect_str_eq(logged, "server version mock?[2J?12:00:00 pulsarc ERROR forged");
}
