#include "kernel/counters_record.h"

#include "lib/record.h"
#include "lib/wire.h"

static const char *const names[CTR_COUNT] = {
    CTR_NAME_CORE_CYCLES, CTR_NAME_INSTRUCTIONS, CTR_NAME_L1D_MISSES, CTR_NAME_LLC_MISSES, CTR_NAME_DTLB_MISSES,
};

const char *counters_name(enum counter_event e) { return (unsigned)e < CTR_COUNT ? names[e] : "?"; }

void counters_record(const bool opened[CTR_COUNT], const char *const why[CTR_COUNT], const char *scope)
{
    rec_begin(REC_COUNTERS);
    rec_arr_begin("events");
    for (uint32_t i = 0; i < CTR_COUNT; i++) {
        rec_obj_begin(0);
        rec_str("name", names[i]);
        rec_bool("ok", opened[i]);
        if (!opened[i])
            rec_str("why", why[i] ? why[i] : "not opened");
        rec_obj_end();
    }
    rec_arr_end();
    if (scope)
        rec_str("scope", scope);
    else
        rec_null("scope");
    rec_end();
}
