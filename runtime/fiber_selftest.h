/* Self-tests of the fiber runtime, listed in app/selftests.c. */
#ifndef RUNTIME_FIBER_SELFTEST_H
#define RUNTIME_FIBER_SELFTEST_H

#include <stdbool.h>

bool fiber_test_switch_pushad(char *detail);
bool fiber_test_switch_callee(char *detail);
bool fiber_test_switch_fxsave(char *detail);
bool fiber_test_switch_jump(char *detail);
bool fiber_test_run_queue(char *detail);
bool fiber_test_join(char *detail);
bool fiber_test_pair(char *detail);
bool fiber_test_guard_page(char *detail);

#endif
