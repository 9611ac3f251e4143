/* Hardware event counters for a Linux process: one perf_event group on the
 * calling thread, user mode only (what perf_event_paranoid 2, the usual
 * default, allows without privileges), read with one read(2) of the whole
 * group so a snapshot costs one system call wherever it is taken.
 *
 * The group is led by core cycles; the other events join it only if the
 * leader opened, so every snapshot reads all of them at the same instant.
 * An event that cannot open is named in the `counters` record with the
 * reason, and reads as 0: a machine without a PMU (a VM whose hypervisor
 * does not expose one) runs everything else as before.
 *
 * The counters follow the thread that opened them (the benchmarks and their
 * fibers), not threads it creates (inherit is off). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/cpu.h"
#include "kernel/counters.h"
#include "kernel/counters_record.h"

#define HW_CACHE(cache, op, result) \
    ((uint64_t)(cache) | ((uint64_t)(op) << 8) | ((uint64_t)(result) << 16))

/* LLC misses: PERF_COUNT_HW_CACHE_MISSES, not the HW_CACHE LL/READ/MISS
 * event. On AMD Zen (family 17h and later, this development machine) Linux
 * has no LL entry in its cache-event table, so LL/READ/MISS fails with
 * ENOENT, while the generic cache-misses counts: there it is the core's L2
 * misses (event 0x64, umask 0x09: the requests that go on to the L3, which
 * is shared and counted only by an uncore PMU). On Intel, cache-misses is
 * the architectural last-level-cache miss event. Either way it counts the
 * requests that leave the core's private caches. */
static const struct {
    uint32_t type;
    uint64_t config;
} events[CTR_COUNT] = {
    [CTR_CORE_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
    [CTR_INSTRUCTIONS] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
    [CTR_L1D_MISSES] = { PERF_TYPE_HW_CACHE,
                         HW_CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    [CTR_LLC_MISSES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
    [CTR_DTLB_MISSES] = { PERF_TYPE_HW_CACHE,
                          HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
};

/* With PERF_FORMAT_GROUP and both times: nr, time enabled, time running,
 * then one value per member in the order they joined. */
struct group_read {
    uint64_t nr, enabled, running;
    uint64_t value[CTR_COUNT];
};

static int leader = -1;
static int fds[CTR_COUNT];
static int slot[CTR_COUNT];        /* position in the group's read, -1: absent */
static uint32_t members;           /* events in the group */
static uint32_t paused;            /* nesting depth of counters_pause */
static char why_text[CTR_COUNT][160];

static int perf_open(enum counter_event e, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = events[e].type;
    a.config = events[e].config;
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = group < 0; /* the leader starts off; members count whenever it does */
    a.exclude_kernel = 1;   /* user mode only: what paranoid level 2 permits */
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1 /* any CPU */, group, PERF_FLAG_FD_CLOEXEC);
}

/* The kernel registers a "cpu" event source (cpu_core/cpu_atom on hybrid
 * Intel) only when it found a PMU; a guest whose hypervisor hides the PMU
 * has none, and every hardware event then fails with ENOENT. */
static bool core_pmu_present(void)
{
    static const char *const dirs[] = {
        "/sys/bus/event_source/devices/cpu", "/sys/bus/event_source/devices/cpu_core",
        "/sys/bus/event_source/devices/cpu_atom",
    };
    for (unsigned i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (access(dirs[i], F_OK) == 0)
            return true;
    return false;
}

static int paranoid_level(void)
{
    int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -99;
    char text[16] = { 0 };
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    int level;
    return n > 0 && sscanf(text, "%d", &level) == 1 ? level : -99;
}

static const char *errno_name(int err)
{
    switch (err) {
    case ENOENT: return "ENOENT";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENODEV: return "ENODEV";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EINVAL: return "EINVAL";
    case EBUSY: return "EBUSY";
    case EMFILE: return "EMFILE";
    }
    return "errno";
}

/* Why event e did not open (err from perf_event_open); *whole_pmu: the
 * reason holds for every hardware event, not this one alone. */
static const char *explain(enum counter_event e, int err, bool *whole_pmu)
{
    char *t = why_text[e];
    size_t n = sizeof why_text[e];
    *whole_pmu = true;
    switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        if (!core_pmu_present()) {
            snprintf(t, n, "no PMU %s(%s: the kernel has no cpu event source)",
                     cpu_has(FEAT_HYPERVISOR) ? "in this virtual machine " : "", errno_name(err));
            return t;
        }
        *whole_pmu = err == ENODEV;
        snprintf(t, n, err == ENODEV ? "no PMU for it (ENODEV)" : "not supported by this CPU or hypervisor (%s)",
                 errno_name(err));
        return t;
    case EACCES:
    case EPERM: {
        int level = paranoid_level();
        if (level == -99)
            snprintf(t, n, "permission denied (%s; perf_event_paranoid unreadable)", errno_name(err));
        else if (level > 2)
            snprintf(t, n, "perf_event_paranoid level %d (%s; user-mode counting of one's own process needs 2 or less)",
                     level, errno_name(err));
        else /* the level permits it: something else refuses, typically a container's seccomp filter */
            snprintf(t, n, "perf_event_paranoid level %d permits it, yet %s (a seccomp filter?)", level,
                     errno_name(err));
        return t;
    }
    case ENOSYS:
        snprintf(t, n, "this kernel has no perf_event_open (ENOSYS)");
        return t;
    case EINVAL:
        *whole_pmu = false;
        snprintf(t, n, e == CTR_CORE_CYCLES ? "the kernel rejected the event (EINVAL)"
                                            : "the PMU cannot count it in one group with the others (EINVAL)");
        return t;
    }
    *whole_pmu = false;
    snprintf(t, n, "perf_event_open failed (%s %d)", errno_name(err), err);
    return t;
}

static bool group_read(struct group_read *g)
{
    ssize_t n = read(leader, g, sizeof *g);
    return n >= (ssize_t)(3 * sizeof(uint64_t)) && g->nr == members;
}

/* A group that fits the PMU on paper may still never be scheduled (its
 * counters taken by another user, such as the NMI watchdog): then it counts
 * nothing, silently. Run it briefly and see. */
static bool group_runs(void)
{
    ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    for (volatile uint32_t i = 0; i < 100000; i++)
        ;
    struct group_read g;
    bool ok = group_read(&g) && g.running > 0;
    ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    return ok;
}

void counters_init(const struct config *cfg)
{
    bool opened[CTR_COUNT] = { false };
    const char *why[CTR_COUNT] = { 0 };
    for (uint32_t e = 0; e < CTR_COUNT; e++)
        fds[e] = slot[e] = -1;
    members = paused = 0;
    leader = -1;
    if (cfg->counters == COUNTERS_OFF) {
        for (uint32_t e = 0; e < CTR_COUNT; e++)
            why[e] = "counters=off";
        counters_record(opened, why, 0);
        return;
    }

    bool whole_pmu = false;
    leader = perf_open(CTR_CORE_CYCLES, -1);
    if (leader < 0) {
        why[CTR_CORE_CYCLES] = explain(CTR_CORE_CYCLES, errno, &whole_pmu);
        for (uint32_t e = 1; e < CTR_COUNT; e++)
            why[e] = whole_pmu ? why[CTR_CORE_CYCLES] : "not tried: core_cycles, the group's leader, did not open";
        counters_record(opened, why, 0);
        return;
    }
    fds[CTR_CORE_CYCLES] = leader;
    slot[CTR_CORE_CYCLES] = (int)members++;
    for (uint32_t e = 1; e < CTR_COUNT; e++) {
        int fd = perf_open((enum counter_event)e, leader);
        if (fd < 0) {
            why[e] = explain((enum counter_event)e, errno, &whole_pmu);
            continue;
        }
        fds[e] = fd;
        slot[e] = (int)members++;
    }
    /* Drop the last-joined members until the group gets onto the PMU. */
    while (!group_runs()) {
        int last = -1;
        for (uint32_t e = 1; e < CTR_COUNT; e++)
            if (slot[e] == (int)members - 1)
                last = (int)e;
        if (last < 0) { /* the leader alone never ran */
            close(leader);
            fds[CTR_CORE_CYCLES] = slot[CTR_CORE_CYCLES] = leader = -1;
            members = 0;
            for (uint32_t e = 0; e < CTR_COUNT; e++)
                if (!why[e])
                    why[e] = "the PMU never scheduled the group (its counters are in use elsewhere)";
            counters_record(opened, why, 0);
            return;
        }
        close(fds[last]);
        fds[last] = slot[last] = -1;
        members--;
        why[last] = "no free PMU counter for it beside the others (the group was never scheduled with it)";
    }
    for (uint32_t e = 0; e < CTR_COUNT; e++)
        opened[e] = slot[e] >= 0;
    ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    counters_record(opened, why, "user");
}

/* While paused nothing counts: the harness, which asks before a case, then
 * reads nothing and its records carry no (frozen, all-zero) counts. */
uint32_t counters_open(void) { return paused ? 0 : members; }
bool counters_has(enum counter_event e) { return !paused && members && (unsigned)e < CTR_COUNT && slot[e] >= 0; }

void counters_read(uint64_t v[CTR_COUNT])
{
    struct group_read g;
    bool ok = members && group_read(&g);
    for (uint32_t e = 0; e < CTR_COUNT; e++)
        v[e] = ok && slot[e] >= 0 ? g.value[slot[e]] : 0;
}

/* DISABLE/ENABLE of the leader with PERF_IOC_FLAG_GROUP stops and restarts
 * every member at once; nested pauses resume only at the outermost. */
void counters_pause(void)
{
    if (members && paused++ == 0)
        ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void counters_resume(void)
{
    if (members && paused && --paused == 0)
        ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}
