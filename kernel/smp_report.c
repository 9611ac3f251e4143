#include "kernel/smp_report.h"

#include "kernel/error_record.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "kernel/smp.h"
#include "lib/fmt.h"
#include "lib/string.h"

void smp_report_silent(uint32_t cpu, uint32_t id, uint32_t seconds)
{
    char msg[200];
    const char *bench = fault_running_bench(), *what = fault_running_what();
    fmt(msg, sizeof msg, "CPU %u (%s %u) did not finish its work within %u s (running %s%s%s)", cpu,
        smp_summary()->apic && str_eq(smp_summary()->apic, "host") ? "OS CPU" : "APIC id", id, seconds,
        bench ? bench : "no benchmark", what ? ": " : "", what ? what : "");
    error_record("cpu_silent", msg);
    finish_run(RUN_FAIL);
}

bool smp_siblings(uint32_t a, uint32_t b)
{
    const struct smp_summary *s = smp_summary();
    return s->cores && a != b && a < s->used && b < s->used && s->core_ids[a] == s->core_ids[b];
}

bool smp_any_siblings(uint32_t k)
{
    for (uint32_t a = 0; a < k; a++)
        for (uint32_t b = a + 1; b < k; b++)
            if (smp_siblings(a, b))
                return true;
    return false;
}

void smp_note_id(uint32_t *ids, uint32_t *count, uint32_t id)
{
    if (*count < SMP_MAX_CPUS)
        ids[*count] = id;
    (*count)++;
}
