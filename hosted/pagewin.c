/* runtime/pagewin.h for a process: it has no page tables of its own to
 * change, so the benchmarks built on them (shootdown, aslock) are skipped;
 * what Linux does with its own tables is bench=linuxvm's. */
#include "runtime/pagewin.h"

const char *pagewin_unavailable(uint32_t windows)
{
    (void)windows;
    return "kernel only: a process cannot change page tables or send IPIs (Linux's own page faults, mmap locks and "
           "TLB shootdowns: bench=linuxvm)";
}

uint32_t pagewin_slot(uint32_t i) { (void)i; return 0; }
uint32_t *pagewin_dir_new(void) { return 0; }
uint32_t *pagewin_table(uint32_t *dir, uint32_t va) { (void)dir; (void)va; return 0; }
void pagewin_on_fault(bool (*fn)(uint32_t va, bool write)) { (void)fn; }
