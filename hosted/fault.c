/* CPU exceptions reach a process as signals; Linux passes the vector
 * (REG_TRAPNO), the error code and the faulting address, so the fault
 * record says what the kernel's would. The handler runs on its own stack,
 * so a stack overflow into a fiber's guard page is reported too. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>

#include "arch/exc_names.h"
#include "hosted/platform.h"
#include "kernel/fault_record.h"

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    const ucontext_t *uc = ctx;
    const greg_t *g = uc->uc_mcontext.gregs;
    uint32_t vector = (uint32_t)g[REG_TRAPNO];
    if (vector >= 32) /* not from a CPU exception (e.g. kill -SEGV): name the nearest */
        vector = sig == SIGFPE ? 0 : sig == SIGILL ? 6 : 14;
    struct fault_report r = {
        .vector = vector, .name = exc_sdm_name(vector), .eip = (uint32_t)g[REG_EIP], .err = (uint32_t)g[REG_ERR],
        .cr2 = sig == SIGSEGV || sig == SIGBUS ? (uint32_t)si->si_addr : 0,
        .cs = (uint32_t)g[REG_CS], .eflags = (uint32_t)g[REG_EFL], .esp = (uint32_t)g[REG_ESP],
    };
    fault_report_and_end(&r);
}

void hosted_fault_init(void)
{
    static char alt[1 << 16];
    stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 };
    sigaltstack(&ss, 0);
    struct sigaction sa = { 0 };
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, 0);
}
