/* The kernel's memory modes: paging off and on (identity map, pagesize=),
 * as paging= asks. Every mode uses the same buffers, so the modes differ in
 * the translation alone. */
#include "arch/vmmode.h"

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

bool vm_alloc(const struct config *cfg, uint32_t bytes, struct vm_buffers *b)
{
    (void)cfg;
    *b = (struct vm_buffers){ .bytes = bytes };
    /* 4 MiB alignment keeps a buffer within as few large pages as it can */
    uint32_t align = bytes >= LARGE_PAGE_SIZE ? LARGE_PAGE_SIZE : PAGE_SIZE;
    uint8_t *a = memory_alloc(bytes, align);
    uint8_t *c = a ? memory_alloc(bytes, align) : 0;
    if (!c)
        return false;
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
