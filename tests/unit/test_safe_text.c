/* Peers' words in details and log lines: control characters and broken UTF-8 become '?',
 * whoever formats the text (pc_fail, pc_set_detail, the logger). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
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
    expect_clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    expect_clean("c1 csi \xc2\x9b"
                 "2J",
                 "c1 csi ??2J");                        /* U+009B */
    expect_clean("lone \x9b and \xff", "lone ? and ?"); /* 8-bit CSI, no UTF-8 */
    expect_clean("overlong \xc0\xaf", "overlong ??");
    expect_clean("surrogate \xed\xa0\x80", "surrogate ???");
    expect_clean("cut \xe2\x82", "cut ??");
    pc_safe_text(NULL);
}

/* Format characters (Unicode's Cf) and the Unicode line and paragraph separators are
 * invisible or reorder what follows: a broker's words could make a log line read
 * otherwise than it was written ("...\u202Egnp.exe" shows as "...exe.png"), hide a
 * word (zero-width characters, tags) or break a line in some viewers. Each of their
 * bytes becomes '?', as for the C1 controls. */
Test(safe_text, bidi_and_other_format_characters_become_question_marks)
{
    expect_clean("file \xe2\x80\xae"
                 "gnp.exe",
                 "file ???gnp.exe"); /* U+202E RLO */
    expect_clean("a\xe2\x80\xaa"
                 "b\xe2\x80\xac"
                 "c",
                 "a???b???c"); /* U+202A, U+202C */
    expect_clean("\xe2\x81\xa6"
                 "x\xe2\x81\xa9",
                 "???x???");                                              /* U+2066, U+2069 */
    expect_clean("\xe2\x81\xa7\xe2\x81\xa8", "??????");                   /* U+2067, U+2068 */
    expect_clean("zero\xe2\x80\x8bwidth\xe2\x80\x8f", "zero???width???"); /* U+200B, U+200F */
    expect_clean("arabic mark \xd8\x9c", "arabic mark ??");               /* U+061C */
    expect_clean("bom \xef\xbb\xbf, shy \xc2\xad", "bom ???, shy ??");    /* U+FEFF, U+00AD */
    expect_clean("word\xe2\x81\xa0joiner", "word???joiner");              /* U+2060 */
    expect_clean("line\xe2\x80\xa8sep\xe2\x80\xa9", "line???sep???");     /* U+2028, U+2029 */
    expect_clean("tag \xf3\xa0\x81\x81", "tag ????");                     /* U+E0041 */
    expect_clean("\xf0\x9d\x85\xb3 beam", "???? beam");                   /* U+1D173 */
    /* Their neighbours stay. */
    expect_clean("\xe2\x80\x90 \xe2\x80\xa7 \xe2\x81\x9f \xd8\x9b \xef\xbb\xbc",
                 "\xe2\x80\x90 \xe2\x80\xa7 \xe2\x81\x9f \xd8\x9b \xef\xbb\xbc");
}

Test(safe_text, details_are_cleaned_however_they_are_set)
{
    pc_fail(PULSARC_ERR_BROKER_UNKNOWN, "broker said: %s", "no\x1b]0;pwned\x07\nway");
    cr_expect_str_eq(pulsarc_last_error_detail(), "broker said: no?]0;pwned??way");
    pc_set_detail("raw\r\ntext");
    cr_expect_str_eq(pulsarc_last_error_detail(), "raw??text");
}

static char logged[256];

static void capture(pulsarc_log_level level, const char *file, int line, const char *msg, void *ctx)
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

/* For JSON: every stray byte becomes U+FFFD, well-formed text (controls and format
 * characters included: JSON escapes what it must) stays. */
static void expect_repaired(const char *in, const char *want)
{
    char *got = pc_utf8_repaired(in);
    cr_assert_not_null(got);
    cr_expect_str_eq(got, want, "from \"%s\"", in);
    free(got);
}

Test(safe_text, repaired_utf8_replaces_each_stray_byte)
{
    expect_repaired("caf\xc3\xa9 \xf0\x9f\x98\x80 \x1b\xe2\x80\xae",
                    "caf\xc3\xa9 \xf0\x9f\x98\x80 \x1b\xe2\x80\xae");
    expect_repaired("caf\xe9!", "caf\xef\xbf\xbd!"); /* Latin-1 */
    expect_repaired("\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd");
    expect_repaired("cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd");
    expect_repaired("overlong \xc0\xaf", "overlong \xef\xbf\xbd\xef\xbf\xbd");
    expect_repaired("surrogate \xed\xa0\x80.", "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd.");
    expect_repaired("", "");
    expect_repaired(NULL, "");
}
