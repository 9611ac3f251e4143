#include "arch/lfence.h"

#include "arch/cpu.h"
#include "arch/idt.h"
#include "arch/trap.h"
#include "arch/x86.h"

static void set_serialise_bit(void *readback)
{
    wrmsr(MSR_AMD_DE_CFG, rdmsr(MSR_AMD_DE_CFG) | DE_CFG_LFENCE_SERIALIZE);
    *(uint64_t *)readback = rdmsr(MSR_AMD_DE_CFG);
}

const char *lfence_make_serialising(void)
{
    if (!cpu_has(FEAT_MSR))
        return 0;
    uint64_t readback = 0;
    /* an emulator may not implement the MSR: its #GP is an answer, not a fault */
    if (trap_expect(TRAP_VEC(EXC_GP), set_serialise_bit, &readback, 0))
        return 0;
    return readback & DE_CFG_LFENCE_SERIALIZE ? "msr" : 0;
}
