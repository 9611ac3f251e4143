/* More than one CPU: cpus=N|all starts the others at boot (the default, 1,
 * starts nothing: the clean room of one CPU). The CPUs come from the ACPI
 * MADT; each gets INIT-SIPI-SIPI with the SDM's delays and every wait is
 * bounded: a CPU that does not answer is named in an `error` record and the
 * run goes on with those that did.
 *
 * A started CPU runs with IF=0 on a stack, GDT and TSS of its own and the
 * shared IDT, and waits on its mailbox for work (spinning with pause for a
 * millisecond, then halted with IF=1 for the hlt alone until smp_post's
 * wake-up IPI): a function and an argument (smp_post), run with the boot
 * CPU's paging state, then idle again (smp_wait). It never touches the console: the
 * boot CPU writes every record, and an exception on another CPU becomes
 * the boot CPU's `fault` record naming that CPU and its APIC id.
 *
 * The hosted build implements the same with one pthread per CPU, pinned
 * (hosted/smp.c). CPU 0 is always the caller's own. */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/config.h"

#define SMP_MAX_CPUS SMP_CPUS_MAX /* lib/config.h: what cpus= accepts */

enum smp_cpu_state { SMP_CPU_OFF, SMP_CPU_IDLE, SMP_CPU_BUSY, SMP_CPU_FAULTED, SMP_CPU_SILENT };

struct smp_summary {
    uint32_t wanted;              /* cpus= (0: all) */
    uint32_t found;               /* CPUs the platform lists (the MADT's enabled entries) */
    uint32_t found_ids[SMP_MAX_CPUS]; /* their APIC ids (hosted: OS CPU numbers), the first SMP_MAX_CPUS */
    uint32_t used;                /* CPUs the run has, this one included */
    uint32_t used_ids[SMP_MAX_CPUS];
    uint32_t failed;              /* CPUs that did not answer (or were refused), all counted */
    uint32_t failed_ids[SMP_MAX_CPUS]; /* the first SMP_MAX_CPUS of them */
    const char *apic;             /* "xapic", "x2apic", "host" (hosted), or 0 */
    uint32_t trampoline;          /* the start-up page (physical), 0 if none */
    uint64_t start_ticks;         /* TSC ticks the whole start took */
    const char *why;              /* why fewer CPUs than wanted (0: as asked) */
    /* Each used CPU's physical core, so that a k sweep can say whether two
     * of its CPUs are SMT siblings (one core's hardware threads): the
     * kernel's from the APIC id and CPUID's topology leaves, the hosted
     * build's from /sys's topology (package and core). */
    uint32_t core_ids[SMP_MAX_CPUS];
    const char *cores;            /* how core_ids were known ("cpuid_0b", "sys", ...), 0: not known */
    /* Hosted, oversubscribe=1: the workers share this many OS CPUs (fewer
     * than used): a run that checks logic, not speed. 0: a CPU each. */
    uint32_t shared_cpus;
};

/* Starts the CPUs cpus= asks for (want: 1..SMP_MAX_CPUS, 0: every one),
 * after the TSC is calibrated (the start-up delays) and paging is set up.
 * Writes `error` records for what could not be started. oversubscribe=1
 * (hosted only; the kernel refuses it) lets `want` exceed the CPUs there
 * are: the workers then share them, several a CPU. */
void smp_init(uint32_t want, bool oversubscribe);
const struct smp_summary *smp_summary(void);
/* CPUs the run can use, the caller's included (1 unless cpus= started more). */
uint32_t smp_cpus(void);
/* The calling CPU's index (0: the boot CPU). */
uint32_t smp_this_cpu(void);
/* fn(arg) on CPU cpu (1 .. smp_cpus()-1), in the background. False when
 * that CPU is not idle or does not exist. */
bool smp_post(uint32_t cpu, void (*fn)(void *), void *arg);
/* Until CPU cpu is idle again. An exception there ends the run with a
 * `fault` record naming it; a CPU silent past SMP_WAIT_S seconds is named
 * in an `error` record (`cpu_silent`: the CPU, what was running, the
 * limit) and the run ends (status fail). */
void smp_wait(uint32_t cpu);
#define SMP_WAIT_S 600u
/* The same with a limit of its own, for work that must end soon (a CPU
 * released from a sleep, a start line). */
void smp_wait_within(uint32_t cpu, uint32_t seconds);

/* The calling CPU's thread so far, hosted (all 0 in the kernel, where
 * nothing preempts): `preempted`, the times the OS took it off its CPU
 * while it could run (getrusage's involuntary switches), and its time on a
 * CPU (`run_ns`, CLOCK_THREAD_CPUTIME_ID) beside the time gone by
 * (`wall_ns`), so that a benchmark can tell a sample the OS interrupted for
 * a share of it from one it did not (bench/parallel.h). A thread's own
 * sleeps (a futex park in a lock, the caller's wait for the last worker)
 * are voluntary switches: what the benchmark does, not a disturbance. */
struct smp_thread_times {
    uint64_t preempted, wall_ns, run_ns;
};
void smp_thread_times(struct smp_thread_times *t);
/* smp_thread_times' `preempted` alone (one system call): what a worker's finish, inside a timed wait,
 * reads first. */
uint64_t smp_preempted(void);

/* IPIs (kernel only; the hosted build has none): fn runs on the receiving
 * CPU, with IF=1 only where that CPU turned interrupts on itself. */
void smp_ipi_handler(void (*fn)(void));
bool smp_ipi_send(uint32_t cpu);

/* For kernel/fault.c: an exception on a CPU other than the boot CPU. */
struct fault_report;
__attribute__((noreturn)) void smp_cpu_faulted(const struct fault_report *r);

#endif
