/* The C library's clock_gettime, for a program that replaces clock_gettime with its own
 * (tests/fuzz/virtual_clock.c, tests/mock/skip_clock.c) and still needs the real clocks:
 * the definition after the program's own, found once (through the vDSO, no system call),
 * or the system call when there is none. Any thread. */
#ifndef PC_TEST_REAL_CLOCK_H
#define PC_TEST_REAL_CLOCK_H

#include <time.h>

int pc_test_real_clock_gettime(clockid_t id, struct timespec *ts);

#endif
