/* Text that may come from a peer (a broker's error message, an HTTP body, a server's
 * version string) made safe to show: error details and log lines end up on terminals and
 * in log files, where a control character could rewrite what the reader sees (ANSI
 * escapes), forge a log line (a line break) or cut the text short. error.c and log.c
 * pass everything they hold through this, so no caller has to remember it. */
#ifndef PC_SAFE_TEXT_H
#define PC_SAFE_TEXT_H

/* In place: each C0 control character (tab and line breaks included) and DEL becomes
 * '?', and so does each byte of a C1 control (U+0080..U+009F) or of anything that is not
 * well-formed UTF-8; other text stays as it is. NULL is a no-op. */
void pc_safe_text(char *s);

#endif
