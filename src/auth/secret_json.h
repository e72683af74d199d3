/* jansson's copies of secrets wiped. Parsing authParams, a credentials file or a token
 * answer leaves the secret in memory jansson allocated: the string values, and the
 * lexer's buffers, which grow by copying and are freed along the way. Wiping the values
 * we read (json_string_value) would miss the lexer's copies, so jansson's free function
 * wipes every block instead.
 *
 * jansson's allocator is process-wide, and the application may use jansson too. So the
 * wiping free is installed only while jansson still has its default functions (malloc,
 * free), and it stays malloc-compatible: it wipes malloc_usable_size() bytes and calls
 * free(), so blocks the application allocated before or after are freed correctly and
 * its use of jansson changes in nothing but the wiping. An application that installed
 * its own functions (json_set_alloc_funcs) keeps them, and then its free function
 * decides whether jansson's copies are wiped.
 * @locality any thread. */
#ifndef PC_SECRET_JSON_H
#define PC_SECRET_JSON_H

/* Install the wiping free if jansson still has its defaults (once per process). Call it
 * before handing a secret to jansson. */
void pc_secret_json_init(void);

/* What the wiping free does before free(): p, a block from malloc (NULL: no-op), is
 * zeroed over its usable size. */
void pc_secret_json_wipe(void *p);

#endif
