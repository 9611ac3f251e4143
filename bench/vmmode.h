/* The virtual-memory axis of the workset sweep (Klimiankou's Figures 5-8):
 * which memory configurations one run compares, measured sample by sample
 * in turn so that drift of the machine lands on every mode alike.
 *
 * The kernel: paging off and on (paging=off|on|both, pagesize=), the same
 * identity-mapped buffers in every mode. The hosted build, which cannot
 * switch paging: buffers backed by 4 KiB or by 2 MiB pages (pages=4k|2m|both,
 * madvise), a pair of buffers per mode, and what the host really gave is
 * recorded (pages_got). */
#ifndef BENCH_VMMODE_H
#define BENCH_VMMODE_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/harness.h"
#include "lib/config.h"

#define VM_MODES_MAX 2

struct vm_buffers {
    uint8_t *buf[VM_MODES_MAX][2]; /* two buffers per mode */
    uint32_t bytes;
};

/* How many modes this run compares (1 or 2). 0 when none can run, with
 * *why saying so (e.g. paging=on where paging cannot be switched on). */
uint32_t vm_modes(const struct config *cfg, const char **why);
/* Two buffers of `bytes` for every mode; false when they do not fit.
 * Kernel: one pair from memory_alloc (inside the caller's memory_mark /
 * memory_release), the same for every mode. Hosted: a pair per mode, mapped
 * with that mode's pages; vm_free unmaps them. */
bool vm_alloc(const struct config *cfg, uint32_t bytes, struct vm_buffers *b);
void vm_free(struct vm_buffers *b);
/* Before timing a sample in mode m (kernel: paging on or off as the mode
 * says). Outside any timed region. */
void vm_enter(const struct config *cfg, uint32_t m);
/* After the last sample: the state the suite expects (paging off). */
void vm_leave(void);
/* Adds mode m's params to a case: kernel "paging" and "pagesize"; hosted
 * "pages" (asked) and "pages_got" ("4k", "2m" or "mixed", read from
 * /proc/self/smaps after the buffers were touched). */
void vm_params(const struct config *cfg, uint32_t m, const struct vm_buffers *b, struct bench_case *c);
/* Why mode m cannot be measured with these buffers (NULL: it can), asked
 * after vm_alloc and before mode m's first sample; the caller then skips
 * mode m at this size with the reason and measures the other modes.
 * Hosted: pages=2m where the host backed none of the mode's buffers with
 * 2 MiB pages (what it gave only in part is measured, pages_got "mixed").
 * Kernel: NULL. */
const char *vm_unavailable(const struct config *cfg, uint32_t m, const struct vm_buffers *b);

#endif
