/* pulsarc-config-doc: renders the key tables of docs/configuration.md from the
 * configuration tables (config_doc.h).
 *
 *   pulsarc-config-doc FILE          rewrite FILE's generated tables (when they differ)
 *   pulsarc-config-doc --check FILE  exit 1, naming the first line that differs, when
 *                                    FILE is not what the tables say
 *
 * `cmake --build build --target config-doc` runs the first on docs/configuration.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_doc.h"

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1)) && fread(s, 1, (size_t)n, f) == (size_t)n) {
        s[n] = '\0';
    } else {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

/* The 1-based number of the first line where a and b differ. */
static int first_difference(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        if (*a == '\n')
            line++;
    return line;
}

int main(int argc, char **argv)
{
    bool check = argc == 3 && !strcmp(argv[1], "--check");
    if (argc != 2 + check || argv[1 + check][0] == '-') {
        fprintf(stderr, "usage: pulsarc-config-doc [--check] FILE\n");
        return 2;
    }
    const char *path = argv[1 + check];
    char *page = read_file(path);
    if (!page) {
        perror(path);
        return 2;
    }
    char err[256];
    char *fresh = pc_config_doc_update(page, err, sizeof err);
    if (!fresh) {
        fprintf(stderr, "%s: %s\n", path, err);
        free(page);
        return 2;
    }
    int rc = 0;
    if (strcmp(page, fresh) != 0) {
        if (check) {
            fprintf(stderr,
                    "%s:%d: differs from the configuration tables; run "
                    "`cmake --build build --target config-doc`\n",
                    path, first_difference(page, fresh));
            rc = 1;
        } else {
            FILE *f = fopen(path, "wb");
            bool ok = f && fwrite(fresh, 1, strlen(fresh), f) == strlen(fresh);
            if (f && fclose(f) != 0)
                ok = false;
            if (!ok) {
                perror(path);
                rc = 2;
            } else {
                printf("%s: tables regenerated\n", path);
            }
        }
    }
    free(fresh);
    free(page);
    return rc;
}
