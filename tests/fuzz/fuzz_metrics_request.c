/* libFuzzer target for the /metrics request check (metrics_http/http_request.c), whose
 * input any HTTP client controls.
 *
 * Input: the bytes a client sends. Checked: every prefix gets a verdict without reading
 * past it; a verdict is final (a longer input with the same head says the same); only a
 * complete head, ending in an empty line within the limit, is ever served; nothing at or
 * past the limit is incomplete. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "metrics_http/http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan sees any read past it */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    pc_http_verdict whole = pc_http_request_check(buf, size);
    FUZZ_CHECK("metrics request", whole >= PC_HTTP_INCOMPLETE && whole <= PC_HTTP_BAD_REQUEST,
               "verdict %d out of range", (int)whole);
    if (size >= PC_METRICS_HTTP_MAX_REQUEST)
        FUZZ_CHECK("metrics request", whole != PC_HTTP_INCOMPLETE, "%zu bytes still incomplete",
                   size);
    if (whole == PC_HTTP_GET_METRICS) {
        const char *end = NULL;
        for (size_t i = 0; i + 3 < size && i + 4 <= PC_METRICS_HTTP_MAX_REQUEST; i++)
            if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
                end = buf + i;
                break;
            }
        FUZZ_CHECK("metrics request", end != NULL, "served without a complete head");
        FUZZ_CHECK("metrics request", memcmp(buf, "GET /metrics", 12) == 0,
                   "served something that is not GET /metrics");
    }
    /* Read as it arrives, cut at a few places: once a prefix has a verdict, it stays. */
    size_t cuts[] = { size / 3, size / 2, size - (size > 0) };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        pc_http_verdict part = pc_http_request_check(buf, cuts[c]);
        if (part != PC_HTTP_INCOMPLETE)
            FUZZ_CHECK("metrics request", part == whole,
                       "the first %zu bytes say %d, all %zu say %d", cuts[c], (int)part, size,
                       (int)whole);
    }
    free(buf);
    return 0;
}
