#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/compression.h"

static const pc_codec_t all_codecs[] = { PC_CODEC_NONE, PC_CODEC_LZ4, PC_CODEC_ZLIB, PC_CODEC_ZSTD,
                                         PC_CODEC_SNAPPY };
static const pc_codec_t real_codecs[] = { PC_CODEC_LZ4, PC_CODEC_ZLIB, PC_CODEC_ZSTD,
                                          PC_CODEC_SNAPPY };
#define N_ALL (sizeof all_codecs / sizeof all_codecs[0])
#define N_REAL (sizeof real_codecs / sizeof real_codecs[0])

/* For failure messages only. */
static const char *codec_name(pc_codec_t codec)
{
    static const char *const names[] = { "none", "lz4", "zlib", "zstd", "snappy" };
    return (size_t)codec < sizeof names / sizeof names[0] ? names[codec] : "unknown";
}

/* Deterministic pseudo-random bytes (xorshift32), so a failure can be replayed. */
static void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

/* Text-like data that every codec shrinks a lot. */
static void fill_text(uint8_t *p, size_t n)
{
    static const char words[] = "{\"id\":42,\"user\":\"pulsar\",\"tags\":[\"a\",\"b\"]}\n";
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)words[i % (sizeof words - 1)];
}

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex) / 2;
    cr_assert_leq(n, cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        cr_assert_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

/* Compress then decompress; checks that bytes already in the output buffers survive. */
static void round_trip(pc_codec_t codec, const uint8_t *in, size_t len)
{
    pc_buf_t c, d;
    pc_buf_init(&c);
    pc_buf_init(&d);
    cr_assert_eq(pc_buf_append(&c, "HDR", 3), 0);
    cr_assert_eq(pc_buf_append(&d, "xy", 2), 0);

    cr_assert_eq(pc_compress(codec, in, len, &c), 0, "%s compress of %zu bytes", codec_name(codec),
                 len);
    cr_assert_eq(memcmp(c.data, "HDR", 3), 0);
    cr_assert_eq(pc_decompress(codec, c.data + 3, c.len - 3, len, &d), 0,
                 "%s decompress of %zu bytes", codec_name(codec), len);
    cr_assert_eq(d.len, len + 2);
    cr_assert_eq(memcmp(d.data, "xy", 2), 0);
    if (len > 0)
        cr_assert_eq(memcmp(d.data + 2, in, len), 0, "%s round trip of %zu bytes differs",
                     codec_name(codec), len);
    pc_buf_free(&c);
    pc_buf_free(&d);
}

Test(compression, round_trip_every_codec_and_size)
{
    const size_t mb = 1024 * 1024;
    uint8_t *rnd = malloc(mb);
    uint8_t *txt = malloc(mb);
    uint8_t *zeros = calloc(1, mb);
    cr_assert(rnd && txt && zeros);
    fill_random(rnd, mb, 12345);
    fill_text(txt, mb);

    for (size_t k = 0; k < N_ALL; k++) {
        pc_codec_t c = all_codecs[k];
        round_trip(c, NULL, 0);
        round_trip(c, (const uint8_t *)"", 0);
        round_trip(c, (const uint8_t *)"x", 1);
        round_trip(c, rnd, 1000);
        round_trip(c, txt, 4096);
        round_trip(c, zeros, 65536);
        round_trip(c, rnd, mb);
        round_trip(c, txt, mb);
    }
    free(rnd);
    free(txt);
    free(zeros);
}

Test(compression, compressible_input_shrinks)
{
    const size_t n = 1024 * 1024;
    uint8_t *txt = malloc(n);
    cr_assert(txt);
    fill_text(txt, n);
    for (size_t k = 0; k < N_REAL; k++) {
        pc_buf_t out;
        pc_buf_init(&out);
        cr_assert_eq(pc_compress(real_codecs[k], txt, n, &out), 0);
        cr_expect_lt(out.len, n / 10, "%s only reached %zu bytes", codec_name(real_codecs[k]),
                     out.len);
        pc_buf_free(&out);
    }
    free(txt);
}

/* What the Java client (Pulsar 4.0.8, CompressionCodecProvider, on heap and direct buffers
 * alike) produced for these inputs. ZLIB is its SYNC_FLUSH form without trailer, and
 * empty input gives zero bytes; ZSTD carries a content checksum. Decoding them proves we
 * read what Java producers write. */
struct golden {
    pc_codec_t codec;
    const char *plain;
    const char *hex;
};

#define A64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define P12 "pulsar pulsar pulsar pulsar pulsar pulsar pulsar pulsar pulsar pulsar pulsar pulsar "

static const struct golden java_vectors[] = {
    { PC_CODEC_LZ4, "", "00" },
    { PC_CODEC_LZ4, "hello", "5068656c6c6f" },
    { PC_CODEC_LZ4, A64, "1f61010027506161616161" },
    { PC_CODEC_LZ4, P12, "7f70756c73617220070035506c73617220" },
    { PC_CODEC_ZLIB, "", "" },
    { PC_CODEC_ZLIB, "hello", "789cca48cdc9c907000000ffff" },
    { PC_CODEC_ZLIB, A64, "789c4a4ca40c00000000ffff" },
    { PC_CODEC_ZLIB, P12, "789c2a28cd294e2c5228a02605000000ffff" },
    { PC_CODEC_ZSTD, "", "28b52ffd240001000099e9d851" },
    { PC_CODEC_ZSTD, "hello", "28b52ffd240529000068656c6c6fa36d9f88" },
    { PC_CODEC_ZSTD, A64, "28b52ffd24404500001061610100930016e22293aa" },
    { PC_CODEC_ZSTD, P12, "28b52ffd24547500003870756c7361722001002ab418013f164eec" },
    { PC_CODEC_SNAPPY, "", "00" },
    { PC_CODEC_SNAPPY, "hello", "051068656c6c6f" },
    { PC_CODEC_SNAPPY, A64, "400061fa0100" },
    { PC_CODEC_SNAPPY, P12, "541870756c73617220fe0700320700" },
};

/* Built by hand from the format specifications, independent of any library:
 * LZ4: literals "abcd", match offset 4 length 12, last literals "12345".
 * SNAPPY: varint 12, literal "abcd", copy (1-byte offset) length 8 offset 4.
 * ZSTD: single-segment frames with one raw block / one RLE block.
 * ZLIB: one stored block with Adler-32, and zlib's well-known default-level "hello". */
static const struct golden spec_vectors[] = {
    { PC_CODEC_LZ4, "abcdabcdabcdabcd12345", "48616263640400503132333435" },
    { PC_CODEC_SNAPPY, "abcdabcdabcd", "0c0c616263641104" },
    { PC_CODEC_ZSTD, "hello",
      "28b52ffd2005290000"
      "68656c6c6f" },
    { PC_CODEC_ZSTD, "aaaaaaaaaa", "28b52ffd200a53000061" },
    { PC_CODEC_ZLIB, "hello", "7801010500faff68656c6c6f062c0215" },
    { PC_CODEC_ZLIB, "hello", "789ccb48cdc9c90700062c0215" },
};

static void check_golden(const struct golden *g)
{
    uint8_t in[128];
    size_t n = unhex(g->hex, in, sizeof in);
    size_t plen = strlen(g->plain);
    pc_buf_t out;
    pc_buf_init(&out);
    cr_assert_eq(pc_decompress(g->codec, in, n, plen, &out), 0, "%s vector for \"%s\"",
                 codec_name(g->codec), g->plain);
    cr_assert_eq(out.len, plen);
    if (plen)
        cr_assert_eq(memcmp(out.data, g->plain, plen), 0);
    /* The same bytes with any other announced size must be refused. */
    out.len = 0;
    cr_assert_eq(pc_decompress(g->codec, in, n, plen + 1, &out), -1);
    cr_assert_eq(out.len, 0);
    if (plen) {
        cr_assert_eq(pc_decompress(g->codec, in, n, plen - 1, &out), -1, "%s short size",
                     codec_name(g->codec));
        cr_assert_eq(out.len, 0);
    }
    pc_buf_free(&out);
}

Test(compression, decodes_java_client_output)
{
    for (size_t i = 0; i < sizeof java_vectors / sizeof java_vectors[0]; i++)
        check_golden(&java_vectors[i]);
}

Test(compression, decodes_hand_built_spec_vectors)
{
    for (size_t i = 0; i < sizeof spec_vectors / sizeof spec_vectors[0]; i++)
        check_golden(&spec_vectors[i]);
}

/* Where the output is fixed by the format itself (LZ4 and snappy cannot use a match in an
 * input this short) or by zlib's stable deflate, the bytes must equal the C++ client's. */
Test(compression, encoder_output_for_short_input)
{
    struct {
        pc_codec_t codec;
        const char *hex;
    } want[] = {
        { PC_CODEC_NONE, "68656c6c6f" },
        { PC_CODEC_LZ4, "5068656c6c6f" },
        { PC_CODEC_SNAPPY, "051068656c6c6f" },
        { PC_CODEC_ZLIB, "789ccb48cdc9c90700062c0215" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint8_t exp[64];
        size_t n = unhex(want[i].hex, exp, sizeof exp);
        pc_buf_t out;
        pc_buf_init(&out);
        cr_assert_eq(pc_compress(want[i].codec, (const uint8_t *)"hello", 5, &out), 0);
        cr_assert_eq(out.len, n, "%s: %zu bytes", codec_name(want[i].codec), out.len);
        cr_assert_eq(memcmp(out.data, exp, n), 0, "%s bytes differ", codec_name(want[i].codec));
        pc_buf_free(&out);
    }

    /* ZSTD: a single frame (magic 28 b5 2f fd) that declares its content size. */
    pc_buf_t out;
    pc_buf_init(&out);
    cr_assert_eq(pc_compress(PC_CODEC_ZSTD, (const uint8_t *)"hello", 5, &out), 0);
    cr_assert_geq(out.len, 4);
    cr_assert_eq(memcmp(out.data, "\x28\xb5\x2f\xfd", 4), 0);
    pc_buf_free(&out);
}

Test(compression, wrong_uncompressed_size_fails)
{
    uint8_t data[5000];
    fill_text(data, sizeof data);
    for (size_t k = 0; k < N_ALL; k++) {
        pc_codec_t codec = all_codecs[k];
        pc_buf_t c, d;
        pc_buf_init(&c);
        pc_buf_init(&d);
        cr_assert_eq(pc_compress(codec, data, sizeof data, &c), 0);
        const size_t sizes[] = { 0, 1, sizeof data - 1, sizeof data + 1, sizeof data * 2 };
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            cr_expect_eq(pc_decompress(codec, c.data, c.len, sizes[s], &d), -1,
                         "%s accepted size %zu", codec_name(codec), sizes[s]);
            cr_expect_eq(d.len, 0, "nothing appended on failure");
        }
        pc_buf_free(&c);
        pc_buf_free(&d);
    }
}

Test(compression, truncated_input_fails)
{
    /* Random data: every compressed byte carries payload, so any cut loses some. (A zlib
     * stream cut only inside its Adler-32 trailer still decodes: the Java client writes no
     * trailer at all, so readers cannot insist on it.) */
    uint8_t data[3000];
    fill_random(data, sizeof data, 99);
    for (size_t k = 0; k < N_REAL; k++) {
        pc_codec_t codec = real_codecs[k];
        pc_buf_t c, d;
        pc_buf_init(&c);
        pc_buf_init(&d);
        cr_assert_eq(pc_compress(codec, data, sizeof data, &c), 0);
        size_t tail = codec == PC_CODEC_ZLIB ? 5 : 1;
        const size_t cuts[] = { 1, 2, c.len / 2, c.len - tail };
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            cr_expect_eq(pc_decompress(codec, c.data, cuts[i], sizeof data, &d), -1,
                         "%s accepted %zu of %zu bytes", codec_name(codec), cuts[i], c.len);
            cr_expect_eq(d.len, 0);
        }
        pc_buf_free(&c);
        pc_buf_free(&d);
    }
}

Test(compression, corrupt_input_fails)
{
    struct {
        pc_codec_t codec;
        const char *hex;
        size_t size;
    } bad[] = {
        /* literal "a", then a match reaching 5 bytes back with 1 byte written */
        { PC_CODEC_LZ4, "10610500", 8 },
        { PC_CODEC_LZ4, "ffffffffffffffff", 100 },
        /* header check bits wrong */
        { PC_CODEC_ZLIB, "789dcb48cdc9c90700062c0215", 5 },
        /* bad Adler-32 */
        { PC_CODEC_ZLIB, "789ccb48cdc9c90700062c0216", 5 },
        /* wrong magic */
        { PC_CODEC_ZSTD,
          "28b52ffe2005290000"
          "68656c6c6f",
          5 },
        /* Java's vector with a flipped payload byte: the content checksum catches it */
        { PC_CODEC_ZSTD, "28b52ffd240529000068656c6c70a36d9f88", 5 },
        /* copy before anything was written */
        { PC_CODEC_SNAPPY, "040101", 4 },
        /* varint says 12, elements give 4 */
        { PC_CODEC_SNAPPY, "0c0c61626364", 12 },
        /* unterminated varint */
        { PC_CODEC_SNAPPY, "ffffffffffff", 5 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t in[64];
        size_t n = unhex(bad[i].hex, in, sizeof in);
        pc_buf_t d;
        pc_buf_init(&d);
        cr_expect_eq(pc_decompress(bad[i].codec, in, n, bad[i].size, &d), -1, "case %zu (%s)", i,
                     codec_name(bad[i].codec));
        cr_expect_eq(d.len, 0);
        pc_buf_free(&d);
    }
}

/* Garbage and bit-flipped streams must never crash or overrun (the sanitizer build checks
 * that); when a decoder does accept, it must have produced exactly the announced size. */
Test(compression, random_garbage_is_safe)
{
    uint8_t good[2000];
    fill_text(good, sizeof good);
    uint32_t seed = 7;
    for (size_t k = 0; k < N_REAL; k++) {
        pc_codec_t codec = real_codecs[k];
        pc_buf_t c, d;
        pc_buf_init(&c);
        pc_buf_init(&d);
        cr_assert_eq(pc_compress(codec, good, sizeof good, &c), 0);
        for (int round = 0; round < 300; round++) {
            uint8_t junk[256];
            seed = seed * 1103515245u + 12345u;
            size_t n = seed % sizeof junk;
            fill_random(junk, n, seed);
            size_t size = (seed >> 8) % 3000;
            d.len = 0;
            if (pc_decompress(codec, junk, n, size, &d) == 0)
                cr_assert_eq(d.len, size);
            else
                cr_assert_eq(d.len, 0);

            uint8_t *flip = malloc(c.len);
            cr_assert(flip);
            memcpy(flip, c.data, c.len);
            flip[(seed >> 4) % c.len] ^= (uint8_t)(1u << (seed % 8));
            d.len = 0;
            if (pc_decompress(codec, flip, c.len, sizeof good, &d) == 0)
                cr_assert_eq(d.len, sizeof good);
            else
                cr_assert_eq(d.len, 0);
            free(flip);
        }
        pc_buf_free(&c);
        pc_buf_free(&d);
    }
}

Test(compression, empty_payload_edge_cases)
{
    pc_buf_t d;
    pc_buf_init(&d);
    for (size_t k = 0; k < N_ALL; k++) {
        /* No compressed bytes at all means an empty payload, whatever the codec. */
        cr_expect_eq(pc_decompress(all_codecs[k], NULL, 0, 0, &d), 0);
        cr_expect_eq(d.len, 0);
        cr_expect_eq(pc_decompress(all_codecs[k], NULL, 0, 1, &d), -1);
        cr_expect_eq(pc_decompress(all_codecs[k], (const uint8_t *)"", 0, 7, &d), -1);
        cr_expect_eq(d.len, 0);
    }
    pc_buf_free(&d);
}

Test(compression, bad_arguments)
{
    pc_buf_t b;
    pc_buf_init(&b);
    cr_expect_eq(pc_compress((pc_codec_t)5, (const uint8_t *)"x", 1, &b), -1);
    cr_expect_eq(pc_compress((pc_codec_t)-1, (const uint8_t *)"x", 1, &b), -1);
    cr_expect_eq(pc_decompress((pc_codec_t)9, (const uint8_t *)"x", 1, 1, &b), -1);
    cr_expect_eq(pc_compress(PC_CODEC_LZ4, NULL, 3, &b), -1);
    cr_expect_eq(pc_decompress(PC_CODEC_LZ4, NULL, 3, 3, &b), -1);
    cr_expect_eq(pc_compress(PC_CODEC_LZ4, (const uint8_t *)"x", 1, NULL), -1);
    cr_expect_eq(pc_decompress(PC_CODEC_NONE, (const uint8_t *)"abc", 3, 2, &b), -1);
    cr_expect_eq(b.len, 0);
    pc_buf_free(&b);
}

/* A producer's reused contexts give the same bytes as fresh ones, call after call, over
 * inputs of different sizes and kinds (so a context that kept state from the previous
 * message would show), and every result decodes. */
Test(compression, reused_contexts_give_the_same_bytes)
{
    enum { MAX = 200000 };
    uint8_t *in = malloc(MAX);
    cr_assert_not_null(in);
    pc_compressor_t cx = { 0 };
    static const size_t sizes[] = { 0, 1, 100, 5000, MAX, 3, 70000, 100 };
    for (size_t r = 0; r < sizeof sizes / sizeof *sizes; r++) {
        size_t len = sizes[r];
        if (r % 2)
            fill_random(in, len, (uint32_t)r + 1);
        else
            fill_text(in, len);
        for (size_t c = 0; c < sizeof all_codecs / sizeof *all_codecs; c++) {
            pc_codec_t codec = all_codecs[c];
            pc_buf_t fresh, reused, back;
            pc_buf_init(&fresh);
            pc_buf_init(&reused);
            pc_buf_init(&back);
            cr_assert_eq(pc_compress(codec, in, len, &fresh), 0);
            cr_assert_eq(pc_compress_with(&cx, codec, in, len, &reused), 0);
            cr_assert_eq(reused.len, fresh.len, "%s, %zu bytes", codec_name(codec), len);
            cr_assert(fresh.len == 0 || !memcmp(reused.data, fresh.data, fresh.len),
                      "%s, %zu bytes", codec_name(codec), len);
            cr_assert_eq(pc_decompress(codec, reused.data, reused.len, len, &back), 0);
            cr_assert(len == 0 || !memcmp(back.data, in, len));
            pc_buf_free(&fresh);
            pc_buf_free(&reused);
            pc_buf_free(&back);
        }
    }
    pc_compressor_clear(&cx);
    cr_assert_null(cx.zstd);
    cr_assert_null(cx.zlib);
    free(in);
}

/* compressionLevel: each level of lz4, zlib and zstd decodes with the one decoder every
 * reader has; better is at least as small as the default on compressible records (faster
 * need not be larger: zstd's level 1 sometimes wins), and the levels really differ (a level that changed nothing would
 * give the default's bytes); a reused context keeps its level. */
/* Records with varying fields: compressible, but not so regular that every level finds
 * the same matches (a repeated line does). */
static void fill_records(uint8_t *p, size_t n)
{
    uint32_t x = 12345;
    size_t at = 0;
    while (at < n) {
        char rec[96];
        x = x * 1103515245u + 12345u;
        int w = snprintf(rec, sizeof rec, "{\"id\":%u,\"user\":\"u%u\",\"zone\":\"z%u\"}\n", x >> 8,
                         (x >> 20) % 97, (x >> 12) % 7);
        for (int i = 0; i < w && at < n; i++)
            p[at++] = (uint8_t)rec[i];
    }
}

Test(compression, levels_keep_the_format_and_change_the_bytes)
{
    enum { LEN = 256 * 1024 };
    uint8_t *in = malloc(LEN);
    cr_assert_not_null(in);
    fill_records(in, LEN);
    static const pc_codec_t leveled[] = { PC_CODEC_LZ4, PC_CODEC_ZLIB, PC_CODEC_ZSTD };
    for (size_t c = 0; c < sizeof leveled / sizeof *leveled; c++) {
        pc_codec_t codec = leveled[c];
        size_t size[3];
        pc_buf_t out[3];
        for (int level = PC_LEVEL_DEFAULT; level <= PC_LEVEL_BETTER; level++) {
            pc_buf_init(&out[level]);
            cr_assert_eq(pc_compress_level(codec, level, in, LEN, &out[level]), 0);
            size[level] = out[level].len;
            pc_buf_t back;
            pc_buf_init(&back);
            cr_assert_eq(pc_decompress(codec, out[level].data, size[level], LEN, &back), 0,
                         "%s level %d", codec_name(codec), level);
            cr_assert(!memcmp(back.data, in, LEN));
            pc_buf_free(&back);
            pc_compressor_t cx = { .level = level };
            pc_buf_t again;
            pc_buf_init(&again);
            for (int round = 0; round < 2; round++) {
                again.len = 0;
                cr_assert_eq(pc_compress_with(&cx, codec, in, LEN, &again), 0);
                cr_assert(again.len == size[level] &&
                              !memcmp(again.data, out[level].data, size[level]),
                          "%s level %d: a reused context gave other bytes", codec_name(codec),
                          level);
            }
            pc_buf_free(&again);
            pc_compressor_clear(&cx);
        }
        cr_assert_leq(size[PC_LEVEL_BETTER], size[PC_LEVEL_DEFAULT], "%s: better %zu, default %zu",
                      codec_name(codec), size[PC_LEVEL_BETTER], size[PC_LEVEL_DEFAULT]);
        for (int level = PC_LEVEL_FASTER; level <= PC_LEVEL_BETTER; level++)
            cr_assert(size[level] != size[PC_LEVEL_DEFAULT] ||
                          memcmp(out[level].data, out[PC_LEVEL_DEFAULT].data, size[level]),
                      "%s level %d gave the default's bytes", codec_name(codec), level);
        for (int level = PC_LEVEL_DEFAULT; level <= PC_LEVEL_BETTER; level++)
            pc_buf_free(&out[level]);
    }
    free(in);
}
