/* suite=selftest: the table of checks the kernel runs on the machine it
 * booted on (its own pieces, and the runtime's *_selftest.c), one `test`
 * record each through kernel/selftest.h. The hosted build skips them
 * (hosted/selftests.c). */
#ifndef APP_SELFTESTS_H
#define APP_SELFTESTS_H

void selftests_run(void);

#endif
