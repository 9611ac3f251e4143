/* setjmp/longjmp for faults provoked on purpose (see kernel/fault.h). */
#ifndef ARCH_CATCH_H
#define ARCH_CATCH_H

#include <stddef.h>
#include <stdint.h>

struct catch_frame {
    uint32_t ebx, esi, edi, ebp, esp, eip;
};
_Static_assert(offsetof(struct catch_frame, esp) == 16 && offsetof(struct catch_frame, eip) == 20,
               "catch_frame offsets used by arch/catch.asm");

int catch_call(void (*fn)(void *), void *arg, struct catch_frame *f);
__attribute__((noreturn)) void catch_resume(const struct catch_frame *f);

#endif
