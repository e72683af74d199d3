/* The C++ client's BoostHash (routing/hash_boost.c): boost::hash<std::string> of each Boost
 * release users meet, and the partition libpulsar gives a key with it.
 *
 * How the vectors were obtained: tests/support/boost_hash/vectors.cpp, a program that
 * prints boost::hash<std::string>()(key) for keys read as hex, was compiled with g++ 12 on
 * x86-64 (Debian 12) by tests/support/boost_hash/make_vectors.sh against
 *   - Debian's libboost1.74-dev (Boost 1.74: the 1.56..1.80 algorithm, char signed), and
 *     again with -funsigned-char (the same algorithm where char is unsigned, as on arm64);
 *     Boost's own container_hash at the tag boost-1.80.0 laid over gave the same numbers;
 *   - Debian's libboost1.81-dev, unpacked with dpkg -x (Boost 1.81);
 *   - boostorg/container_hash at the tag boost-1.90.0 laid over 1.81's headers (the 1.82+
 *     algorithm: the tags boost-1.82.0 and boost-1.83.0 gave identical numbers),
 * over tests/support/boost_hash/keys.txt (the named keys, then random byte strings of
 * lengths 0..69, seed 31); the table keeps the named keys and the random ones up to 24
 * bytes (every tail length of every algorithm).
 *
 * The last column is the partition among 16 the official libpulsar 4.2.0 chose for the key
 * with pulsar_BoostHash: the copy in the pulsar-client 3.13.0 wheel (the project's RPM
 * build, Boost 1.90 through vcpkg), driven through its C API with ctypes
 * (tests/interop/libpulsar_oracle.py) against a standalone broker with a 16-partition
 * topic, reading the partition from each message id. -1: not sent (the empty key is no
 * key to libpulsar's C API). All 97 keys it sent matched (hash & INT32_MAX) % 16 with the
 * 1.82+ column, and none of the other columns did more than by chance. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "routing/hash.h"
#include "routing/router.h"

typedef struct vec {
    const char *hex;
    uint64_t b180, b180_arm, b181, b182;
    int libpulsar_partition_of_16;
} vec;

static const vec vectors[] = {
    { "", 0x0000000000000000u, 0x0000000000000000u, 0x1ed1b5abbd8399b7u, 0x1c97da6f7f24eba6u, -1 },
    { "61", 0x3d38188654ef1dbfu, 0x3d38188654ef1dbfu, 0xd53c452e09f39b66u, 0x5dc94fb3ff4ecd1cu,
      12 },
    { "6162", 0xf1b1f64c93b89ec5u, 0xf1b1f64c93b89ec5u, 0x4cf94c11f67938a0u, 0xe367ca6307ed7876u,
      6 },
    { "616263", 0x591bb2c715e44a7bu, 0x591bb2c715e44a7bu, 0x68fe5a6e75da685eu, 0x233d0900c00abcfdu,
      13 },
    { "61626364", 0x944151aed050443du, 0x944151aed050443du, 0x20d36d6b2a1910bdu,
      0x6e7b505f8eb39b62u, 2 },
    { "6162636465", 0xf3be25b46c7a4828u, 0xf3be25b46c7a4828u, 0x9b0e8fc7ae8c3742u,
      0x1e00d3c094fe9b85u, 5 },
    { "616263646566", 0x7bbb17ffd48759ffu, 0x7bbb17ffd48759ffu, 0xe11fa2e70ee3c04bu,
      0xf6e848df5f982f18u, 8 },
    { "61626364656667", 0x6e877d4d9651dbeau, 0x6e877d4d9651dbeau, 0xb4c6319a014d960bu,
      0x1c3509df555ca766u, 6 },
    { "6162636465666768", 0x02fd84c296b03d56u, 0x02fd84c296b03d56u, 0xf97b47d3e43fb083u,
      0xd7506556db73884eu, 14 },
    { "616263646566676869", 0xa3cbdbb726b7ee56u, 0xa3cbdbb726b7ee56u, 0x2f37edc06ba71012u,
      0xae750500b2dbc6eeu, 14 },
    { "757365722d3432", 0xd3d689c272363427u, 0xd3d689c272363427u, 0x205d0b867cc61d84u,
      0x9b478bd956880554u, 4 },
    { "6b65792d30", 0x726216c4bdcaca8cu, 0x726216c4bdcaca8cu, 0x94ba6a75b635c02au,
      0x027d143e667f69f2u, 2 },
    { "6b65792d31", 0xb442a682414f12cfu, 0xb442a682414f12cfu, 0xef918202a0e32f63u,
      0x28e93f2ae58dfc19u, 9 },
    { "6b65792d3137", 0x270bfbeb124664d4u, 0x270bfbeb124664d4u, 0x86906b68769fd745u,
      0x5d25afeba48e756cu, 12 },
    { "636f6d706174", 0xab810aa6b2531a61u, 0xab810aa6b2531a61u, 0x2cfe2fe50c2c66d3u,
      0xf712fae98ae3c34bu, 11 },
    { "68656c6c6f20776f726c64", 0xff7eb1e6434a5ca8u, 0xff7eb1e6434a5ca8u, 0x6852448889f173edu,
      0xb0843985961bea4cu, 12 },
    { "30313233343536373839616263646566", 0x17dbe85a71806b73u, 0x17dbe85a71806b73u,
      0x37f07670ef32cf12u, 0x526ca5648d5ffd6cu, 12 },
    { "3031323334353637383961626364656658", 0x00afe8f41cde2b08u, 0x00afe8f41cde2b08u,
      0xc1e32552b277c182u, 0x182214acf2ecf2edu, 13 },
    { "54686520717569636b2062726f776e20666f78206a756d7073206f76657220746865206c617a7920646f67",
      0x5e3c7e91d6c016e1u, 0x5e3c7e91d6c016e1u, 0x6f298b5b0dc9b83cu, 0x1119518e43ffe01eu, 14 },
    { "c3a9", 0xfc1b9406b76789f8u, 0x9cc59f43be561048u, 0xb240c0c4ed5ab562u, 0xab3807fc94be52c9u,
      9 },
    { "e697a5e69cace8aa9e", 0x8ede1a38f176cd57u, 0xbe40797f7f538085u, 0x4e90c70df438de97u,
      0x3c7277bb81204709u, 9 },
    { "636cc3a92dc3bc2dc39f", 0x7f40dc9e863b93b7u, 0xa8756c90cab20fc2u, 0x8e8d1782a8dfacddu,
      0xc0c3a59eadb60463u, 3 },
    { "f09f9880", 0x3419dfa5980bb16eu, 0x8cffc3db1e6a66c0u, 0x43045c4fa1476e6fu,
      0x70b54b5d28b842dbu, 11 },
    { "80", 0x583e98e510a8057cu, 0xb43322de7113f593u, 0xe1bd665e42bf6501u, 0x5db80c312b9360a6u, 6 },
    { "fffefd", 0xb7f196c82e47c8a3u, 0x00facb1ff0157feau, 0xa74f9088b770f0f8u, 0x929980cd4771d791u,
      1 },
    { "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20", 0x80f728c557fb13ebu,
      0x80f728c557fb13ebu, 0xf21825933fdcf5bdu, 0x7cfac4e9e4c30a05u, 5 },
    { "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacad"
      "aeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadb"
      "dcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
      0x076bea3d0efb827du, 0x2810436cd9d200f2u, 0x8492d96bd59d3b5eu, 0xa5357d3d0bbb1778u, 8 },
    { "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
      "78787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
      "7878787878787878",
      0xe8c510eb01aa6198u, 0xe8c510eb01aa6198u, 0x2f9d11eae4eaa48fu, 0x2469a214dfcf32d2u, 2 },
    { "70657273697374656e743a2f2f7075626c69632f64656661756c742f74", 0xc1ebe448b6ccb9b3u,
      0xc1ebe448b6ccb9b3u, 0x6d125bda982fe38cu, 0xec734e1c8312347eu, 14 },
    { "", 0x0000000000000000u, 0x0000000000000000u, 0x1ed1b5abbd8399b7u, 0x1c97da6f7f24eba6u, -1 },
    { "04", 0x80efaf3848c7880du, 0x80efaf3848c7880du, 0x23e3c128c4e3e980u, 0x0e364377c16a071cu,
      12 },
    { "791d", 0x62075746a69fb6cbu, 0x62075746a69fb6cbu, 0xdf15a6da45ba4088u, 0x933eae0d0b77714eu,
      14 },
    { "c46525", 0x61f144c54dde18c1u, 0x5948bdbcdb7ded20u, 0x3cecf960bc25179cu, 0xc294ccfa79d4c13cu,
      12 },
    { "b00c24f4", 0x53bc67e059c77913u, 0x4b93512b869bade9u, 0x732f83ad9dbee5f7u,
      0xf077ef7bd5b815afu, 15 },
    { "1d8a3cb7c2", 0x5f06576d521cf072u, 0xe063e597135028c7u, 0x44315de26abf490cu,
      0x6812a452ec5c4954u, 4 },
    { "2426fcbe09aa", 0x9af20793a608ee6au, 0xff9379de957f8ffdu, 0x5c9ad45a1cc7b8f6u,
      0x68fc84f79160b018u, 8 },
    { "10233c8abc7387", 0x4c417d59df69fb0eu, 0xdc0e4ebc75be7cd2u, 0x3966d852c39de6b9u,
      0x08ce830e42486710u, 0 },
    { "6a3598181f06c6f1", 0x2580554e47b7dd2du, 0xc64d61c41679e54cu, 0x6a4d8c3ac790e650u,
      0x8756aa50abeedd0du, 13 },
    { "e46858333555655e99", 0x8e9c69f8d9739863u, 0x8e79295fedfee32bu, 0xb96cac3418d21a80u,
      0xcaa5178e96e20f8cu, 12 },
    { "f54036ba386b96aa8d10", 0xefcacdcb91625acdu, 0x3168107d2ea75ca6u, 0x8816368b87af1635u,
      0x10f4946bd3233b31u, 1 },
    { "f50ed72f5c233526d7ccfe", 0x5417f89db15d48cfu, 0xf80af3335073c7c7u, 0x2734732b159b9a22u,
      0x0e906632acb90057u, 7 },
    { "610817bd88df71a7d03836cc", 0xaee763f48590a32du, 0x9326c425dc9aec19u, 0x1aa1350f182a58c9u,
      0xc79d359137011389u, 9 },
    { "6fbb5f3255a5d2397c0b44574c", 0x00ad45f936d4c93eu, 0x01b2070c4e67e0b2u, 0xea846c64d40cef09u,
      0xde2312423ec9a9a0u, 0 },
    { "5693667ca6a7d751f737fac0ff19", 0xe0fe302fe5881a3du, 0xba09eda1d40059d5u, 0xfe1fc7b15fa82a85u,
      0xe240c5b282438035u, 5 },
    { "cbc64fe62e90a0f08cd7ad4c182d32", 0x185fcfab6efdeac5u, 0xb91513af86e4bbefu,
      0x4e003ded83c1e41bu, 0x999dbbafdba73e36u, 6 },
    { "08eccc9a60b3f519ac6749e94fa7d7fe", 0x268aebe74a9c8a87u, 0x3474979c9d5771e1u,
      0x293a8f606433cc95u, 0x4ce4bd8a420d8a52u, 2 },
    { "e3331e7534cd567268ca0d90b71f451ae0", 0x3e55d9dd953ac96fu, 0xb194ebef1cf2415du,
      0xe982ab5b19374f26u, 0x86e59f4c7eea05f8u, 8 },
    { "fca41ff63234562ab7fedb277a0f809dca84", 0x9b1ca9e158604f17u, 0x0a341f9ad8c5edcau,
      0xe2581a8b670c4a4eu, 0x807797d6f28f144cu, 12 },
    { "48dd60fc9d7ea3980adb1d7d24cdba9cb280fa", 0x636c6ca3e0a8d0fdu, 0xdb8467a9dfdf3f0eu,
      0x132253c3951a405eu, 0x8744ec13fb0e84dbu, 11 },
    { "d5c507427ec4c9fd795a3d0319619649732eff0c", 0xa8220b40a4733cc3u, 0xf1cbefd9d74b4ed1u,
      0xaadceaf26329a67cu, 0xda686871dc8cf1bcu, 12 },
    { "222092de9e0ded9ee435ca32f3d3de4db1308e758f", 0xf4935345869c2f01u, 0x713320281214f256u,
      0x1d7594cee455e046u, 0x36b5f13dfb13e814u, 4 },
    { "b28487b6dd81673b8732b89e774fb8d2785423602086", 0x2bb23c2e84a59074u, 0x5a42a892b0660955u,
      0x96cad44a64570a92u, 0xf4658ffd2750ab41u, 1 },
    { "c959bf32f24bb16295c62b0bdbac1fbc6d36253f62e24f", 0xd066b415ad46f15eu, 0xeb163fb7aaa7a966u,
      0x5163004f50ad6930u, 0x879238b729731cdbu, 11 },
    { "356de4b74f8b973fecc845bdf1d40a09799ed4e647438a34", 0x0ef1596d425395ceu, 0x82cb9400f49f1baau,
      0x968ed2415d17976bu, 0x6d791eda91d4d7b7u, 7 },
};

static size_t unhex(const char *hex, char *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (char)v;
    }
    return n;
}

Test(hash_boost, every_algorithm_matches_boost)
{
    char key[256];
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        const vec *v = &vectors[i];
        size_t n = unhex(v->hex, key);
        cr_expect_eq(pc_hash_boost_64(PC_BOOST_1_80, key, n), v->b180, "1.80 key %s", v->hex);
        cr_expect_eq(pc_hash_boost_64(PC_BOOST_1_80_UNSIGNED_CHAR, key, n), v->b180_arm,
                     "1.80 arm64 key %s", v->hex);
        cr_expect_eq(pc_hash_boost_64(PC_BOOST_1_81, key, n), v->b181, "1.81 key %s", v->hex);
        cr_expect_eq(pc_hash_boost_64(PC_BOOST_1_82, key, n), v->b182, "1.82 key %s", v->hex);
        cr_expect_eq(pc_hash_boost(PC_BOOST_1_82, key, n), (int32_t)(v->b182 & 0x7fffffffu));
    }
}

Test(hash_boost, null_key_is_the_empty_key)
{
    cr_assert_eq(pc_hash_boost_64(PC_BOOST_1_82, NULL, 5), pc_hash_boost_64(PC_BOOST_1_82, "", 0));
    cr_assert_eq(pc_hash_boost_64(PC_BOOST_1_81, NULL, 0), 0x1ed1b5abbd8399b7u);
}

/* A router set up as a producer with hashingScheme=scheme would set it up. */
static pc_router_t router_with_scheme(const char *scheme)
{
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    cr_assert_eq(pulsarc_producer_config_set(&c, "hashingScheme", scheme), PULSARC_OK, "%s",
                 scheme);
    pc_router_settings_t set;
    pc_producer_config_router(&c, &set);
    pc_router_t r;
    pc_router_init(&r, &set);
    return r;
}

static int route(pc_router_t *r, const char *key, size_t len, int n)
{
    pc_route_view_t view = { .key = key, .key_len = len, .sequence_id = -1 };
    return pc_router_choose(r, &view, n);
}

Test(hash_boost, keys_land_where_libpulsar_put_them)
{
    pc_router_t r = router_with_scheme("boost");
    char key[256];
    int checked = 0;
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        if (vectors[i].libpulsar_partition_of_16 < 0)
            continue;
        size_t n = unhex(vectors[i].hex, key);
        cr_expect_eq(route(&r, key, n, 16), vectors[i].libpulsar_partition_of_16, "key %s",
                     vectors[i].hex);
        checked++;
    }
    cr_assert_gt(checked, 40);
}

Test(hash_boost, each_scheme_name_picks_its_algorithm)
{
    static const struct {
        const char *name;
        pc_boost_hash_variant variant;
    } names[] = { { "boost", PC_BOOST_1_82 },
                  { "boost_1_81", PC_BOOST_1_81 },
                  { "boost_1_80", PC_BOOST_1_80 },
                  { "boost_1_80_arm64", PC_BOOST_1_80_UNSIGNED_CHAR } };
    /* "clé" has a byte above 0x7f: the two 1.80 variants differ on it. */
    const char *key = "cl\xc3\xa9-42";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        pc_router_t r = router_with_scheme(names[i].name);
        int32_t h = pc_hash_boost(names[i].variant, key, strlen(key));
        cr_expect_eq(pc_router_hash(&r, key, strlen(key)), h, "%s", names[i].name);
        cr_expect_eq(route(&r, key, strlen(key), 1009), h % 1009, "%s", names[i].name);
    }
    cr_assert_neq(pc_hash_boost(PC_BOOST_1_80, key, strlen(key)),
                  pc_hash_boost(PC_BOOST_1_80_UNSIGNED_CHAR, key, strlen(key)));
}

Test(hash_boost, unknown_scheme_is_refused)
{
    pulsarc_producer_config_t c;
    pc_producer_config_defaults(&c);
    cr_assert_eq(pulsarc_producer_config_set(&c, "hashingScheme", "boost_1_79"),
                 PULSARC_ERR_INVALID_CONFIG);
    cr_assert_eq(pulsarc_producer_config_set(&c, "hashingScheme", "BOOST"), PULSARC_OK);
}
