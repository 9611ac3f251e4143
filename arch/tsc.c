#include "arch/tsc.h"

#include "arch/cpu.h"
#include "arch/hpet.h"
#include "arch/lfence.h"
#include "arch/pit.h"
#include "arch/pmtimer.h"
#include "arch/timebase.h"
#include "lib/clockpick.h"
#include "lib/string.h"

/* Three measurement windows per counting source, 5 ms of its time each:
 * long enough that a read's latency at either end (a few microseconds on a
 * PC's ports) is under 0.1 %, and the median drops a window an SMI hit;
 * three sources cost 45 ms, or 45 million instructions under qemu-icount. */
#define WINDOWS 3u
#define WINDOW_FS 5000000000000ull
/* A live counter changes between two reads on a PC, and within a few dozen
 * reads under an emulator (QEMU -icount: a PIT tick is 838 instructions).
 * This many reads without a change is a counter that does not count (no
 * PIT, a clock-gated one, an HPET left halted): found in milliseconds. */
#define STALL_READS 5000u
/* Whatever happens, a window ends: after this many reads, or this many TSC
 * ticks (a 10 ms window is 5e7 ticks of a 5 GHz TSC). */
#define MAX_READS 4000000u
#define MAX_WINDOW_TICKS (1ull << 28)
/* Until the window's last 1/TIGHT_PART, reads are spaced by SPACED_TURNS
 * turns of an empty loop (under a microsecond on a PC, where a read itself
 * costs about that; some 15 us under Bochs, inside the last 1/64 = 78 us):
 * the edges that bound a window are still caught by back-to-back reads, so
 * the figure is as precise as before, and an emulator that makes each read
 * of a device a slow exit (QEMU -icount: 9 windows of back-to-back reads
 * took 0.55 s of a 0.75 s boot) is read a few hundred times less. */
#define SPACED_TURNS 256u
#define TIGHT_PART 64u
#define FS_PER_NS 1000000ull
#define NS_PER_S 1000000000ull
/* CPUID 8000_0021h EAX bit 2: lfence is always dispatch-serialising (AMD). */
#define AMD_LFENCE_ALWAYS_SERIALIZING (1u << 2)

enum tsc_serialize tsc_mode = TSC_SER_NONE;
static struct tsc_info info = { .hz = 0, .method = "none", .serialize = TSC_SER_NONE, .lfence = "n/a" };
static uint32_t forced = TSC_SRC_AUTO;

const struct tsc_info *tsc_info(void) { return &info; }

void tsc_force(uint32_t source)
{
    if (source < TSC_SRC_COUNT)
        forced = source;
}

const char *tsc_serialize_name(enum tsc_serialize s)
{
    switch (s) {
    case TSC_SER_CPUID: return "cpuid";
    case TSC_SER_LFENCE: return "lfence";
    case TSC_SER_RDTSCP: return "rdtscp";
    default: return "none";
    }
}

uint64_t tsc_empty_region(uint32_t samples)
{
    uint64_t best = ~(uint64_t)0;
    for (uint32_t i = 0; i < samples; i++) {
        uint64_t t0 = tsc_begin();
        uint64_t t1 = tsc_end();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

/* TSC ticks over one window of tb, from one edge of its count to another
 * (an edge pins the instant a count began better than any read does). */
static uint64_t measure(const struct timebase *tb, const char **why)
{
    uint64_t window_counts = WINDOW_FS / tb->period_fs;
    if (window_counts == 0 || window_counts > tb->mask / 2) {
        *why = "its counter is too slow or too narrow for the window";
        return 0;
    }
    uint64_t spaced_until = window_counts - window_counts / TIGHT_PART;
    uint32_t prev = tb->read(), count = prev, reads = 0;
    uint64_t t = 0;
    while (count == prev) { /* the first edge */
        count = tb->read();
        t = rdtsc();
        if (++reads == STALL_READS) {
            *why = "its counter did not change";
            return 0;
        }
    }
    uint64_t start = t;
    uint32_t start_count = count, counted = 0, unchanged = 0;
    prev = count;
    for (reads = 0;; ) {
        count = tb->read();
        t = rdtsc();
        if (count != prev) {
            uint32_t now_counted = (count - start_count) & tb->mask;
            if (now_counted < counted || now_counted > tb->mask / 2) {
                *why = "its counter went backwards";
                return 0;
            }
            counted = now_counted;
            prev = count;
            unchanged = 0;
            if (counted >= window_counts)
                break;
        } else if (++unchanged == STALL_READS) {
            *why = "its counter stopped";
            return 0;
        }
        if (++reads == MAX_READS || t - start > MAX_WINDOW_TICKS) {
            *why = "its counter did not cover the window in time";
            return 0;
        }
        if (counted < spaced_until)
            spin_turns(SPACED_TURNS);
    }
    uint64_t elapsed_ns = (uint64_t)counted * tb->period_fs / FS_PER_NS;
    if (elapsed_ns == 0 || t - start == 0) {
        *why = "the TSC did not advance";
        return 0;
    }
    return (t - start) * NS_PER_S / elapsed_ns;
}

static void measure_source(enum tsc_source s, bool (*setup)(struct timebase *, const char **))
{
    struct timebase tb;
    const char *why = 0;
    uint64_t windows[WINDOWS] = { 0 };
    if (setup(&tb, &why)) {
        for (uint32_t w = 0; w < WINDOWS; w++) {
            windows[w] = measure(&tb, &why);
            if (!windows[w] && w == 0)
                break; /* a counter that fails at once fails every time: do not wait twice more */
        }
        if (tb.release)
            tb.release();
    }
    info.sources[s].hz = clock_median(windows, WINDOWS, &info.sources[s].spread_ppm);
    if (!info.sources[s].hz)
        info.sources[s].why = why ? why : "fewer than two windows of three gave a figure";
}

static void cpuid_sources(void)
{
    const struct cpu_info *c = cpu_info();
    struct tsc_source_figure *f15 = &info.sources[TSC_SRC_CPUID15], *f16 = &info.sources[TSC_SRC_CPUID16];
    f15->why = f16->why = "the CPU's highest CPUID leaf is below it";
    if (c->max_leaf >= 0x15) {
        struct cpuid_regs r = cpuid(0x15, 0);
        if (r.eax && r.ebx && r.ecx) /* crystal Hz x TSC/crystal ratio */
            f15->hz = (uint64_t)r.ecx * r.ebx / r.eax;
        else
            f15->why = r.eax && r.ebx ? "no crystal frequency (ECX = 0)" : "no TSC/crystal ratio";
    }
    if (c->max_leaf >= 0x16) {
        uint32_t mhz = cpuid(0x16, 0).eax & 0xffff;
        if (mhz) /* the nominal base frequency, not a measurement */
            f16->hz = (uint64_t)mhz * 1000000;
        else
            f16->why = "no base frequency (EAX = 0)";
    }
}

bool tsc_figures_agree(uint64_t a, uint64_t b) { return clock_ppm(a, b) <= TSC_AGREE_PPM; }

/* The forced source; else the one the closest-agreeing pair of independent
 * sources supports (lib/clockpick.h); else, unconfirmed, the most preferred
 * one there is. CPUID 15h and 16h come from the same fused values: they can
 * confirm a measured figure, not each other. */
static void choose(void)
{
    struct clock_source s[TSC_SRC_COUNT - 1];
    for (int i = TSC_SRC_AUTO + 1; i < TSC_SRC_COUNT; i++)
        s[i - 1] = (struct clock_source){ info.sources[i].hz,
                                          i == TSC_SRC_CPUID15 || i == TSC_SRC_CPUID16 ? TSC_SRC_CPUID15 : (uint32_t)i };
    struct clock_choice c = clock_choose(s, TSC_SRC_COUNT - 1, forced == TSC_SRC_AUTO ? -1 : (int)forced - 1,
                                         TSC_AGREE_PPM);
    info.pair[0] = c.pair[0] < 0 ? 0 : info.sources[c.pair[0] + 1].name;
    info.pair[1] = c.pair[1] < 0 ? 0 : info.sources[c.pair[1] + 1].name;
    info.pair_ppm = c.pair[0] < 0 ? 0 : c.pair_ppm;
    info.tolerance_ppm = c.tolerance_ppm;
    if (c.chosen < 0)
        return;
    info.hz = info.sources[c.chosen + 1].hz;
    info.method = info.sources[c.chosen + 1].name;
    info.agree = c.agree;
}

static void frequency(void)
{
    info.sources[TSC_SRC_HPET].name = "hpet";
    info.sources[TSC_SRC_PMTIMER].name = "pmtimer";
    info.sources[TSC_SRC_PIT].name = pit_method();
    info.sources[TSC_SRC_CPUID15].name = "cpuid15";
    info.sources[TSC_SRC_CPUID16].name = "cpuid16";
    info.forced = forced != TSC_SRC_AUTO;
    measure_source(TSC_SRC_HPET, hpet_timebase);
    measure_source(TSC_SRC_PMTIMER, pmtimer_timebase);
    measure_source(TSC_SRC_PIT, pit_timebase);
    cpuid_sources();
    choose();
}

static bool amd_like(const struct cpu_info *c)
{
    return strcmp(c->vendor, "AuthenticAMD") == 0 || strcmp(c->vendor, "HygonGenuine") == 0;
}

/* Whether lfence waits for every earlier instruction (what tsc_begin and
 * tsc_end rely on). Intel defines it so; AMD only where CPUID says so, on
 * families 0Fh and 11h, or once the DE_CFG bit is set (10h-17h, and AMD
 * promised the bit to later families). */
static const char *lfence_ordering(void)
{
    const struct cpu_info *c = cpu_info();
    if (!cpu_has(FEAT_SSE2))
        return "n/a";
    if (!amd_like(c))
        return strcmp(c->vendor, "GenuineIntel") == 0 ? "architectural" : "unverified";
    if (c->max_ext_leaf >= 0x80000021 && (cpuid(0x80000021, 0).eax & AMD_LFENCE_ALWAYS_SERIALIZING))
        return "architectural";
    if (c->family == 0x0f || c->family == 0x11)
        return "architectural";
    if (c->family >= 0x10) {
        const char *how = lfence_make_serialising();
        if (how)
            return how;
    }
    return "unverified";
}

bool tsc_init(void)
{
    if (!cpu_has(FEAT_TSC))
        return false;
    info.invariant = cpu_has(FEAT_INVTSC);
    info.lfence = lfence_ordering();
    bool lfence_orders = strcmp(info.lfence, "architectural") == 0 || strcmp(info.lfence, "msr") == 0 ||
                         strcmp(info.lfence, "os") == 0;
    if (lfence_orders && cpu_has(FEAT_RDTSCP))
        tsc_mode = TSC_SER_RDTSCP;
    else if (lfence_orders)
        tsc_mode = TSC_SER_LFENCE;
    else if (cpu_info()->has_cpuid)
        tsc_mode = TSC_SER_CPUID; /* no SSE2, or an lfence nobody vouches for */
    info.serialize = tsc_mode;
    uint64_t start = rdtsc();
    frequency();
    info.cost = rdtsc() - start;
    tsc_empty_region(16); /* warm up */
    info.overhead = tsc_empty_region(1000);
    return true;
}
