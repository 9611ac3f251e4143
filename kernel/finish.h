/* The end of every run: the `done` record, the on-screen summary, and the
 * exit chosen by exit= (kernel/exit.c). */
#ifndef KERNEL_FINISH_H
#define KERNEL_FINISH_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/wire.h"

void finish_count_test(bool ok);
uint32_t finish_tests_passed(void);
uint32_t finish_tests_failed(void);
/* A check outside the self-tests failed, and an error record said which (the
 * user's code left the harness's state broken): a run that would end ok ends
 * fail instead. */
void finish_mark_failed(void);
__attribute__((noreturn)) void finish_run(enum run_status status);
/* Exit without a done record (only when even writing records failed). */
__attribute__((noreturn)) void finish_exit_only(enum run_status status);
const char *finish_status_name(enum run_status status);

#endif
