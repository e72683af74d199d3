/* CRC32C (Castagnoli), as Pulsar checksums payload frames.
 * Values chain: pc_crc32c(pc_crc32c(0, a), b) == pc_crc32c(0, a || b). Any thread. */
#ifndef PC_CRC32C_H
#define PC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The fastest implementation this CPU runs: three SSE4.2 streams joined with PCLMULQDQ,
 * else one SSE4.2 stream, else the table version. */
uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len);
/* pc_crc32c(crc_a, b) from crc_a and crc_b = pc_crc32c(0, b): lets a CRC over a payload be
 * computed apart (on another thread) and joined to the CRC of what precedes it. */
uint32_t pc_crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t len_b);

/* Each implementation on its own, for tests and benchmarks. */
/* The portable table-driven version (slicing-by-8). */
uint32_t pc_crc32c_sw(uint32_t crc, const void *data, size_t len);
/* One SSE4.2 stream; only valid when pc_crc32c_hw_available() returns 1. */
uint32_t pc_crc32c_hw(uint32_t crc, const void *data, size_t len);
int pc_crc32c_hw_available(void);
/* Three SSE4.2 streams joined with PCLMULQDQ; only valid when pc_crc32c_hw3_available()
 * returns 1. */
uint32_t pc_crc32c_hw3(uint32_t crc, const void *data, size_t len);
int pc_crc32c_hw3_available(void);

#endif
