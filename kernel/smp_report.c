#include "kernel/smp_report.h"

#include "kernel/error_record.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "lib/config.h"
#include "lib/fmt.h"

void smp_report_silent(uint32_t cpu, const char *id_kind, uint32_t id, uint32_t seconds)
{
    char msg[200];
    const char *bench = fault_running_bench(), *what = fault_running_what();
    fmt(msg, sizeof msg, "CPU %u (%s %u) did not finish its work within %u s (running %s%s%s)", cpu, id_kind, id, seconds,
        bench ? bench : "no benchmark", what ? ": " : "", what ? what : "");
    error_record("cpu_silent", msg);
    finish_run(RUN_FAIL);
}

void smp_note_id(uint32_t *ids, uint32_t *count, uint32_t id)
{
    if (*count < SMP_CPUS_MAX)
        ids[*count] = id;
    (*count)++;
}
