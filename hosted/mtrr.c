/* A Linux process cannot read MSRs: memory types are unknown here (and
 * Linux maps ordinary process memory write-back anyway). */
#include "arch/mtrr.h"

static struct mtrr_set none; /* present = false: every lookup answers unknown */

void mtrr_init(const struct region_set *free) { (void)free; }
const struct mtrr_set *mtrr_set(void) { return &none; }
const char *mtrr_state(void) { return "hosted"; }
uint32_t mtrr_var_count(void) { return 0; }
bool mtrr_pat(uint64_t *pat) { (void)pat; return false; }

enum memtype mtrr_range_type(uint64_t base, uint64_t end, uint64_t *first_other)
{
    (void)base, (void)end, (void)first_other;
    return MEMTYPE_UNKNOWN;
}

enum memtype mtrr_used_memory_type(uint64_t *bad_base, uint64_t *bad_end, enum memtype *bad_type)
{
    (void)bad_base, (void)bad_end, (void)bad_type;
    return MEMTYPE_UNKNOWN;
}

enum memtype mtrr_free_memory_type(void) { return MEMTYPE_UNKNOWN; }

const char *mtrr_provoke_uncached(void) { return "not available in a Linux process (no MSR access from user space)"; }
