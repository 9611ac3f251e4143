#include "kernel/evidence_record.h"

#include "arch/mcheck.h"
#include "arch/memtype.h"
#include "arch/mtrr.h"
#include "arch/paging.h"
#include "arch/perfstate.h"
#include "arch/tco.h"
#include "kernel/console.h"
#include "lib/record.h"
#include "lib/wire.h"

static void present_or_why(const char *key, const char *why_key, const char *why)
{
    rec_bool(key, why == 0);
    if (why)
        rec_str(why_key, why);
}

static void mtrr_fields(void)
{
    const struct mtrr_set *s = mtrr_set();
    rec_str("mtrr", mtrr_state());
    if (!s->present)
        return;
    rec_str("mtrr_default", memtype_name((enum memtype)s->def_type));
    rec_bool("mtrr_fixed", s->fixed_enabled);
    rec_u64("mtrr_vcnt", mtrr_var_count());
    rec_arr_begin("mtrr_var"); /* the valid variable ranges, in MSR order */
    for (uint32_t i = 0; i < s->nvar; i++) {
        if (!s->var[i].valid)
            continue;
        rec_obj_begin(0);
        rec_u64("base", s->var[i].base);
        rec_u64("mask", s->var[i].mask);
        rec_str("type", memtype_name((enum memtype)s->var[i].type));
        rec_obj_end();
    }
    rec_arr_end();
}

void evidence_record(void)
{
    rec_begin(REC_EVIDENCE);
    rec_bool("mce", mcheck_enabled());
    if (mcheck_why())
        rec_str("mce_why", mcheck_why());
    rec_u64("mc_banks", mcheck_banks());
    const struct mcheck_stale *st;
    uint32_t n_stale = mcheck_stale(&st);
    rec_u64("mc_stale", n_stale); /* banks valid from before this boot, cleared */
    rec_arr_begin("mc_stale_banks");
    for (uint32_t i = 0; i < n_stale && i < MCHECK_STALE_MAX; i++) {
        rec_obj_begin(0);
        rec_u64("bank", st[i].bank);
        rec_u64("status", st[i].status);
        rec_u64("addr", st[i].addr);
        rec_bool("cleared", st[i].cleared);
        rec_obj_end();
    }
    rec_arr_end();
    present_or_why("aperf_mperf", "aperf_mperf_why", perfstate_aperf_mperf_why());
    present_or_why("smi_count", "smi_count_why", perfstate_smi_why());
    mtrr_fields();
    uint64_t pat;
    if (mtrr_pat(&pat)) {
        rec_u64("pat", pat);
        rec_str("pat0", memtype_name((enum memtype)(pat & 7)));
    } else {
        rec_null("pat");
    }
    enum memtype free_type = mtrr_free_memory_type();
    rec_str("memtype", memtype_name(free_type));
    rec_u64("split_4m", paging_large_pages_split());
    const struct tco_state *tco = tco_read();
    rec_obj_begin("tco");
    rec_str("where", tco->where);
    if (tco->where) {
        rec_bool("halted", tco->halted);
        rec_u64("timeout_ms", (uint64_t)tco->timeout_ticks * TCO_TICK_MS);
        if (tco->no_reboot < 0)
            rec_null("no_reboot");
        else
            rec_bool("no_reboot", tco->no_reboot == 1);
    } else {
        rec_str("why", tco->why);
    }
    rec_obj_end();
    rec_end();
    if (tco_may_reset(tco))
        console_say(VGA_RED, "the chipset's TCO watchdog is running (%u ms): it may reset this machine during the run",
                    tco->timeout_ticks * TCO_TICK_MS);
    console_say(VGA_GREY, "evidence: memory %s (mtrr %s), aperf/mperf %s, smi count %s, machine checks %s",
                memtype_name(free_type), mtrr_state(), perfstate_has_aperf_mperf() ? "read" : "absent",
                perfstate_has_smi() ? "read" : "absent", mcheck_enabled() ? "on" : "off");
}
