/* The kernel's memory modes: paging off and on (identity map, pagesize=),
 * as paging= asks. Every mode uses the same buffers, so the modes differ in
 * the translation alone. */
#include "bench/vmmode.h"

#include "arch/mmu.h"
#include "arch/paging.h"
#include "kernel/memory.h"

/* Mode m of this run: paging=both is off (m 0), then on (m 1). */
static bool mode_on(const struct config *cfg, uint32_t m)
{
    switch (cfg->paging) {
    case PAGING_OFF: return false;
    case PAGING_ON: return true;
    default: return m == 1;
    }
}

/* paging=both where paging cannot be switched on: the off mode alone, and
 * *why says why the on mode is missing (the caller reports it as a skip);
 * 0 only when paging=on cannot be had. */
uint32_t vm_modes(const struct config *cfg, const char **why)
{
    *why = 0;
    if (cfg->paging == PAGING_OFF)
        return 1;
    const char *no = paging_unavailable((enum page_size)cfg->pagesize);
    if (no) {
        *why = no;
        return cfg->paging == PAGING_BOTH ? 1 : 0;
    }
    return cfg->paging == PAGING_BOTH ? 2 : 1;
}

static bool alloc_pair(uint32_t bytes, uint32_t align, uint8_t **a, uint8_t **c)
{
    *a = memory_alloc(bytes, align);
    *c = *a ? memory_alloc(bytes, align) : 0;
    return *c != 0;
}

bool vm_alloc(const struct config *cfg, uint32_t bytes, struct vm_buffers *b)
{
    (void)cfg;
    *b = (struct vm_buffers){ .bytes = bytes };
    /* Each buffer starts on a 4 MiB boundary, whatever its size and the
     * page size: with pagesize=4m it then lies in large pages (the first
     * 4 MiB, where free memory starts after the kernel, is always mapped
     * with 4 KiB pages: arch/paging.c), and a 4k and a 4m boot place it at
     * the same physical address, so their caches see the same sets. Only
     * when memory is too short for that, page alignment. */
    struct region_mark mark;
    memory_mark(&mark);
    uint8_t *a, *c;
    if (!alloc_pair(bytes, LARGE_PAGE_SIZE, &a, &c)) {
        memory_release(&mark);
        if (!alloc_pair(bytes, PAGE_SIZE, &a, &c))
            return false;
    }
    for (uint32_t m = 0; m < VM_MODES_MAX; m++) {
        b->buf[m][0] = a;
        b->buf[m][1] = c;
    }
    return true;
}

/* The caller's memory_release gives the buffers back. */
void vm_free(struct vm_buffers *b) { (void)b; }

/* Switches even when already in the mode (paging_enable reloads the
 * directory): every mode's samples then start from the same switch,
 * whether the run compares one mode or two. */
void vm_enter(const struct config *cfg, uint32_t m)
{
    if (mode_on(cfg, m))
        paging_enable((enum page_size)cfg->pagesize);
    else
        paging_disable();
}

void vm_leave(void) { paging_disable(); }

/* Paging off or on, the identity map is the same memory: nothing to refuse. */
const char *vm_unavailable(const struct config *cfg, uint32_t m, const struct vm_buffers *b)
{
    (void)cfg, (void)m, (void)b;
    return 0;
}

void vm_params(const struct config *cfg, uint32_t m, const struct vm_buffers *b, struct bench_case *c)
{
    (void)b;
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("paging", mode_on(cfg, m) ? "on" : "off");
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("pagesize", config_value_name(cfg, KEY_PAGESIZE));
}
