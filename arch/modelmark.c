#include "arch/modelmark.h"

#include "arch/mmu.h"

/* Its own page: the plugin takes every store into [mailbox, mailbox + 4096)
 * for a mark, so nothing else may live there. */
_Alignas(MODEL_MAILBOX_BYTES) volatile uint8_t model_mailbox[MODEL_MAILBOX_BYTES];

/* tests/unit/test_modelmark.c defines this to record the offsets instead.
 * The value stored means nothing: the offset is the message. */
#ifndef MODEL_MAILBOX_STORE
#define MODEL_MAILBOX_STORE(offset) (model_mailbox[(offset)] = 0)
#endif

static inline void put(uint32_t field, uint32_t byte) { MODEL_MAILBOX_STORE(field << 8 | (byte & 0xffu)); }

static inline void put_register(uint32_t first_field, uint32_t value)
{
    put(first_field, value);
    put(first_field + 1, value >> 8);
    put(first_field + 2, value >> 16);
    put(first_field + 3, value >> 24);
}

static inline void command(enum model_command c) { put(MODEL_FIELD_COMMAND, (uint32_t)c); }

void model_mark_paging_on(uint32_t cr3, bool pse, bool pge)
{
    put_register(MODEL_FIELD_A, cr3);
    put_register(MODEL_FIELD_B, (pse ? MODEL_PAGING_PSE : 0) | (pge ? MODEL_PAGING_PGE : 0));
    command(MODEL_PAGING_ON);
}

void model_mark_paging_off(void) { command(MODEL_PAGING_OFF); }

void model_mark_cr3(uint32_t cr3)
{
    put_register(MODEL_FIELD_A, cr3);
    command(MODEL_CR3_LOAD);
}

void model_mark_invlpg(uint32_t va)
{
    put_register(MODEL_FIELD_A, va);
    command(MODEL_INVLPG);
}

void model_mark_pde(uint32_t slot_phys, uint32_t value, bool children_global)
{
    if (!(value & PTE_PS))
        value = (value & ~MODEL_PDE_CHILDREN_GLOBAL) | (children_global ? MODEL_PDE_CHILDREN_GLOBAL : 0);
    put_register(MODEL_FIELD_A, slot_phys);
    put_register(MODEL_FIELD_B, value);
    command(MODEL_PDE);
}

void model_mark_sample_begin(uint32_t case_no, uint32_t sample)
{
    put_register(MODEL_FIELD_A, case_no);
    put_register(MODEL_FIELD_B, sample);
    command(MODEL_SAMPLE_BEGIN);
}

void model_mark_sample_end(uint32_t case_no, uint32_t sample)
{
    put_register(MODEL_FIELD_A, case_no);
    put_register(MODEL_FIELD_B, sample);
    command(MODEL_SAMPLE_END);
}

void model_mark_tlb_flush_all(void) { command(MODEL_TLB_FLUSH_ALL); }

void pde_write(uint32_t *slot, uint32_t value, bool children_global)
{
    *slot = value;
    model_mark_pde((uint32_t)(uintptr_t)slot, value, children_global);
}
