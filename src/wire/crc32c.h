/* CRC32C (Castagnoli), as Pulsar checksums payload frames.
 * Values chain: pc_crc32c(pc_crc32c(0, a), b) == pc_crc32c(0, a || b). */
#ifndef PC_CRC32C_H
#define PC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Uses the SSE4.2 instruction when the CPU has it, else the table version. */
uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len);
/* The portable table-driven version. */
uint32_t pc_crc32c_sw(uint32_t crc, const void *data, size_t len);
/* The hardware version; only valid when pc_crc32c_hw_available() returns 1. */
uint32_t pc_crc32c_hw(uint32_t crc, const void *data, size_t len);
int pc_crc32c_hw_available(void);

#endif
