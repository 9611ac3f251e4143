#include "kernel/park.h"

#include "arch/x86.h"

void park_wait(volatile uint32_t *word, uint32_t old)
{
    while (*word == old)
        cpu_pause();
}

void park_wake(volatile uint32_t *word) { (void)word; }
void park_wake_all(volatile uint32_t *word) { (void)word; }

const char *park_kind(void) { return "poll"; }
