/* Text that may come from a peer (a broker's error message, an HTTP body, a server's
 * version string) made safe to show: error details and log lines end up on terminals and
 * in log files, where a control character could rewrite what the reader sees (ANSI
 * escapes), forge a log line (a line break) or cut the text short. error.c and log.c
 * pass everything they hold through this, so no caller has to remember it. */
#ifndef PC_SAFE_TEXT_H
#define PC_SAFE_TEXT_H

/* In place: each C0 control character (tab and line breaks included) and DEL becomes
 * '?', and so does each byte of anything that is not well-formed UTF-8 and of each
 * character that hides or reorders text or breaks a line: a C1 control (U+0080..U+009F),
 * U+2028 and U+2029, and every format character (Unicode's Cf: the bidi controls
 * U+202A..U+202E, U+2066..U+2069, U+061C and U+200E/F, zero-width characters, U+FEFF,
 * tags, ...); other text stays as it is. NULL is a no-op. */
void pc_safe_text(char *s);

/* A copy of s (malloc'd) that is well-formed UTF-8, for formats that take nothing else
 * (JSON: jansson refuses ill-formed UTF-8): each byte that is not part of a well-formed
 * sequence becomes U+FFFD REPLACEMENT CHARACTER, everything else is kept as it is (the
 * format escapes controls). NULL when out of memory; s NULL gives "". */
char *pc_utf8_repaired(const char *s);

#endif
