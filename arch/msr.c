#include "arch/msr.h"

#include "arch/idt.h"
#include "arch/trap.h"
#include "arch/x86.h"

struct msr_read {
    uint32_t msr;
    uint64_t value;
};

static void read_one(void *arg)
{
    struct msr_read *r = arg;
    r->value = rdmsr(r->msr);
}

static void write_one(void *arg)
{
    struct msr_read *w = arg;
    wrmsr(w->msr, w->value);
}

bool msr_try_write(uint32_t msr, uint64_t v)
{
    struct msr_read w = { msr, v };
    return !trap_expect(TRAP_VEC(EXC_GP), write_one, &w, 0);
}

bool msr_try_read(uint32_t msr, uint64_t *v)
{
    struct msr_read r = { msr, 0 };
    if (trap_expect(TRAP_VEC(EXC_GP), read_one, &r, 0))
        return false;
    *v = r.value;
    return true;
}
