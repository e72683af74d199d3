/* A leak check inside a test. Criterion runs each test in a worker process whose exit
 * status it ignores once the test reported its end, so LeakSanitizer's report at the
 * worker's exit fails nothing: a test that must prove it frees everything asks for the
 * check itself, after its last free, while the worker still runs. Without ASan it checks
 * nothing (the ASan builds of scripts/test run every such test). */
#ifndef PULSARC_TEST_LEAK_CHECK_H
#define PULSARC_TEST_LEAK_CHECK_H

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#define PC_TEST_HAS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_TEST_HAS_LSAN 1
#endif
#endif

#ifdef PC_TEST_HAS_LSAN
#include <sanitizer/lsan_interface.h>
#define pc_test_assert_no_leaks()                       \
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, \
                 "memory leaked (LeakSanitizer's report is on stderr)")
#else
#define pc_test_assert_no_leaks() ((void)0)
#endif

#endif
