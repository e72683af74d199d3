/* Key hashes that pick a partition exactly as the Java client does. */
#ifndef PC_HASH_H
#define PC_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Java's String.hashCode() of the UTF-16 form of a UTF-8 key (invalid UTF-8 bytes count as
 * U+FFFD, as Java's decoder does), masked as the Java client's JavaStringHash does. */
int32_t pc_hash_java_string(const char *key, size_t len);
/* Pulsar's Murmur3_32Hash (seed 0) of the key's bytes, masked to a non-negative int. */
int32_t pc_hash_murmur3_32(const char *key, size_t len);
/* signSafeMod(hash, n): the partition index for a hash, in 0..n-1; -1 if n <= 0. */
int pc_hash_partition(int32_t hash, int n);

#endif
