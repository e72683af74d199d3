/* Key hashes that pick a partition exactly as the Java client (or the C++ client) does. */
#ifndef PC_HASH_H
#define PC_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Java's String.hashCode() of the UTF-16 form of a UTF-8 key (invalid UTF-8 bytes count as
 * U+FFFD, as Java's decoder does), masked as the Java client's JavaStringHash does. */
int32_t pc_hash_java_string(const char *key, size_t len);
/* Pulsar's Murmur3_32Hash (seed 0) of the key's bytes, masked to a non-negative int. */
int32_t pc_hash_murmur3_32(const char *key, size_t len);
/* boost::hash<std::string> of a 64-bit build, as the C++ client's BoostHash (hash_boost.c):
 * by the Boost release that computed it. */
typedef enum pc_boost_hash_variant {
    PC_BOOST_1_82 = 0,               /* Boost 1.82 and later (mulxp1_hash) */
    PC_BOOST_1_81 = 1,               /* Boost 1.81 */
    PC_BOOST_1_80 = 2,               /* Boost 1.56 .. 1.80 where char is signed (x86-64) */
    PC_BOOST_1_80_UNSIGNED_CHAR = 3, /* Boost 1.56 .. 1.80 where char is unsigned (arm64) */
} pc_boost_hash_variant;

/* The whole 64-bit size_t boost::hash gives. */
uint64_t pc_hash_boost_64(pc_boost_hash_variant variant, const char *key, size_t len);
/* Its low 31 bits, as libpulsar's BoostHash::makeHash keeps them (non-negative). */
int32_t pc_hash_boost(pc_boost_hash_variant variant, const char *key, size_t len);
/* signSafeMod(hash, n): the partition index for a hash, in 0..n-1; -1 if n <= 0. */
int pc_hash_partition(int32_t hash, int n);

#endif
