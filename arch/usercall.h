/* Running the user's code (arch/usercall.asm says how): it gets known
 * registers, runs with interrupts as they are, and comes back through the
 * tail the harness appends to its buffer, whatever it did to the stack
 * pointer, the frame pointer, the segment registers or EFLAGS; what it
 * changed of those is returned as a mask, never left to crash the harness. */
#ifndef ARCH_USERCALL_H
#define ARCH_USERCALL_H

#include <stddef.h>
#include <stdint.h>

#define USERCALL_ESP 1u
#define USERCALL_EBP 2u
#define USERCALL_SEGS 4u
#define USERCALL_IF 8u
#define USERCALL_DF 16u
#define USERCALL_CALLEE 32u /* usercall_cdecl: EBX, ESI or EDI, which cdecl keeps */

/* What the code came back with (the segments zero-extended). */
struct usercall_seen {
    uint32_t esp, ebp, eflags, ds, es, fs, gs, ss;
};
_Static_assert(offsetof(struct usercall_seen, eflags) == 8 && offsetof(struct usercall_seen, ss) == 28,
               "usercall_seen offsets used by arch/usercall.asm");

/* Runs code (which must end with the tail's bytes) with EAX = EBX = ECX =
 * EDX = 0 and ESI = EDI = EBP = scratch; the mask of USERCALL_* it broke.
 * *seen is written in full. */
uint32_t usercall(const void *code, void *scratch, struct usercall_seen *seen);

/* fn(a, b), a C function of the user's (lib/userabi.h), with the same
 * care; EBX, ESI, EDI and EBP must come back as they went in (cdecl). */
uint32_t usercall_cdecl(void (*fn)(void *, uint32_t), void *a, uint32_t b, struct usercall_seen *seen);

/* The tail: copied after the user's code, it jumps back into usercall. */
extern const uint8_t usercall_tail[], usercall_tail_end[];

#endif
