/* Marks for the cache and TLB model (docs/MODEL.md): what a TCG plugin
 * cannot see for itself (QEMU 7.2 plugins read neither guest registers nor
 * stored values), the kernel tells it through model_mailbox, a 4 KiB page of
 * kernel .bss. A mark is encoded in the ADDRESS of one-byte stores: a store
 * to model_mailbox + (field << 8 | byte). Fields 0-3 set byte 0-3 of
 * register A, fields 4-7 byte 0-3 of register B, field 15 runs command
 * `byte` on A and B as they are. Each mark writes all four bytes of every
 * register its command uses, then the command, and nothing else.
 *
 * The stores are plain byte stores to kernel memory: cheap, harmless on a
 * real PC and in every emulator. Only ring 0 makes them (the page is
 * supervisor-only in every address space). */
#ifndef ARCH_MODELMARK_H
#define ARCH_MODELMARK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86.h"

#define MODEL_MAILBOX_BYTES 4096u
#define MODEL_FIELD_A 0u       /* fields 0-3: bytes of register A, low byte first */
#define MODEL_FIELD_B 4u       /* fields 4-7: bytes of register B */
#define MODEL_FIELD_COMMAND 15u

enum model_command {
    MODEL_PAGING_ON = 1,    /* A = CR3, B = MODEL_PAGING_PSE | MODEL_PAGING_PGE as CR4 has them */
    MODEL_PAGING_OFF = 2,
    MODEL_CR3_LOAD = 3,     /* A = the new CR3 */
    MODEL_INVLPG = 4,       /* A = the virtual address */
    MODEL_PDE = 5,          /* A = the slot's physical address, B = the entry (see model_mark_pde) */
    MODEL_SAMPLE_BEGIN = 6, /* A = case number, B = sample index */
    MODEL_SAMPLE_END = 7,
    MODEL_TLB_FLUSH_ALL = 8,
};

#define MODEL_PAGING_PSE (1u << 0)
#define MODEL_PAGING_PGE (1u << 1)
/* In a PDE mark of an entry that points to a page table: that table's
 * 4 KiB pages are global. An AVL bit, set in the mark only. */
#define MODEL_PDE_CHILDREN_GLOBAL (1u << 9)

extern volatile uint8_t model_mailbox[MODEL_MAILBOX_BYTES];

/* Paging switched on through directory cr3 (the plugin flushes its whole
 * TLB) with CR4.PSE/PGE as given; also after a change of CR4.PGE, which
 * flushes global entries too. */
void model_mark_paging_on(uint32_t cr3, bool pse, bool pge);
void model_mark_paging_off(void);
void model_mark_cr3(uint32_t cr3);
void model_mark_invlpg(uint32_t va);
/* The entry `value` was written to the directory slot at physical address
 * slot_phys. For an entry pointing to a page table, bit 9 of the mark says
 * children_global (whatever bit 9 of the entry is); a 4 MiB entry (PS) is
 * announced as written, its own G bit included. */
void model_mark_pde(uint32_t slot_phys, uint32_t value, bool children_global);
/* Around one recorded sample of case case_no (bench/harness.c). */
void model_mark_sample_begin(uint32_t case_no, uint32_t sample);
void model_mark_sample_end(uint32_t case_no, uint32_t sample);
void model_mark_tlb_flush_all(void);

/* Every page-directory entry is written through here, so none goes
 * unannounced (memory is identity-mapped: the slot's address is physical). */
void pde_write(uint32_t *slot, uint32_t value, bool children_global);

/* CR3 loads and invlpg outside the paging switch, each with its mark. */
static inline void cr3_load(uint32_t cr3)
{
    write_cr3(cr3);
    model_mark_cr3(cr3);
}

static inline void tlb_invalidate(uint32_t va)
{
    invlpg(va);
    model_mark_invlpg(va);
}

#endif
