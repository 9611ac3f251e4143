#include "app/selftests.h"

#include "arch/cpu.h"
#include "arch/gdt.h"
#include "arch/idt.h"
#include "arch/mmu.h"
#include "arch/paging.h"
#include "arch/trap.h"
#include "arch/tsc.h"
#include "arch/x86.h"
#include "kernel/console.h"
#include "kernel/fault_record.h"
#include "kernel/finish.h"
#include "kernel/memory.h"
#include "kernel/selftest.h"
#include "kernel/serial.h"
#include "lib/cmdline.h"
#include "lib/crc32.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "lib/wire.h"
#include "runtime/fiber_selftest.h"
#include "runtime/smp_selftest.h"
#include "runtime/smplock_selftest.h"
#include "runtime/sync_selftest.h"
#include "runtime/uthread_selftest.h"

#define DETAIL_MAX SELFTEST_DETAIL_MAX

extern char _kernel_start[], _kernel_end[];

/* --- records ------------------------------------------------------------- */

static bool test_crc32(char *d)
{
    static const char check[] = "123456789";
    static const char example[] =
        "{\"t\":\"hello\",\"seq\":0,\"proto\":1,\"kernel\":\"0.1.0\",\"cmdline\":\"suite=quick exit=qemu\"}";
    uint32_t a = crc32(check, 9), b = crc32(example, sizeof example - 1);
    /* streaming in pieces must equal one pass */
    uint32_t s = crc32_final(crc32_update(crc32_update(CRC32_INIT, example, 10), example + 10, sizeof example - 11));
    fmt(d, DETAIL_MAX, "crc32(\"123456789\")=%08x crc32(protocol example)=%08x", a, b);
    return a == 0xcbf43926u && b == 0x22317d96u && s == b;
}

struct capture {
    char buf[512];
    size_t len;
};

static void capture_sink(void *ctx, const char *s, size_t n)
{
    struct capture *c = ctx;
    for (size_t i = 0; i < n && c->len + 1 < sizeof c->buf; i++)
        c->buf[c->len++] = s[i];
    c->buf[c->len] = 0;
}

static bool test_record_writer(char *d)
{
    static const char expected[] = "@cr1 {\"t\":\"hello\",\"seq\":0,\"proto\":1,\"kernel\":\"0.1.0\","
                                   "\"cmdline\":\"suite=quick exit=qemu\"} ~22317d96\r\n"
                                   "@cr1 {\"t\":\"x\",\"seq\":1,\"s\":\"q\\\"\\\\\\u0007\",\"a\":[1,-2,true,null,{}]} ~";
    struct capture cap = { { 0 }, 0 };
    struct rec_writer w;
    rec_writer_init(&w, capture_sink, &cap);
    struct rec_writer *prev = rec_attach(&w);
    rec_begin(REC_HELLO);
    rec_u64("proto", 1);
    rec_str("kernel", "0.1.0");
    rec_str("cmdline", "suite=quick exit=qemu");
    rec_end();
    rec_begin("x");
    rec_str("s", "q\"\\\a");
    rec_arr_begin("a");
    rec_u64(0, 1);
    rec_i64(0, -2);
    rec_bool(0, true);
    rec_null(0);
    rec_obj_begin(0);
    rec_obj_end();
    rec_arr_end();
    rec_end();
    rec_attach(prev);
    bool ok = strncmp(cap.buf, expected, sizeof expected - 1) == 0 && w.seq == 2;
    fmt(d, DETAIL_MAX, "%s", ok ? "known vector and escapes framed exactly" : cap.buf);
    return ok;
}

/* --- command line -------------------------------------------------------- */

struct reject_log {
    int count;
    char first_token[64];
};

static void log_reject(void *ctx, const char *token, const char *msg, const char *accepted)
{
    struct reject_log *l = ctx;
    (void)msg, (void)accepted;
    if (l->count++ == 0)
        str_copy(l->first_token, token, sizeof l->first_token);
}

static bool test_cmdline_accept(char *d)
{
    static const char *const names[] = { "tsc", "ctxsw" };
    struct name_list nl = { names, 2 };
    struct config cfg;
    struct reject_log log = { 0, { 0 } };
    int errs = cmdline_parse("/boot/cleanroom.elf suite=paper bench=ctxsw,tsc runs=7 sizes=0,1K,3M maxsize=2G "
                             "paging=both pagesize=4m fill=loop raw=1 exit=bochs console=serial",
                             &cfg, &nl, log_reject, &log);
    bool ok = errs == 0 && cfg.suite == SUITE_PAPER && cfg.nbenches == 2 && cfg.benches[0] == 1 &&
              cfg.benches[1] == 0 && cfg.runs == 7 && cfg.nsizes == 3 && cfg.sizes[1] == 1024 &&
              cfg.sizes[2] == 3u << 20 && cfg.maxsize == (uint64_t)2 << 30 && cfg.paging == PAGING_BOTH &&
              cfg.pagesize == PAGESIZE_4M && cfg.fill == FILL_LOOP && cfg.raw == 1 && cfg.exit == EXIT_BOCHS &&
              cfg.console == CONSOLE_SERIAL && cfg.given[KEY_RUNS] && !cfg.given[KEY_REPS];
    fmt(d, DETAIL_MAX, "%d errors%s%s", errs, errs ? ", first: " : "", log.first_token);
    return ok;
}

static bool test_cmdline_reject(char *d)
{
    static const char *const bad[] = {
        "foo=1", "runs=abc", "runs=0", "sizes=", "sizes=1K,,2K", "sizes=4Q", "suite=fast", "bench=nosuch",
        "maxsize=1T", "suite=quick suite=paper", "x raw", "raw=2",
    };
    static const char *const names[] = { "tsc" };
    struct name_list nl = { names, 1 };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct config cfg;
        struct reject_log log = { 0, { 0 } };
        int errs = cmdline_parse(bad[i], &cfg, &nl, log_reject, &log);
        if (errs != 1 || log.count != 1 || !log.first_token[0]) {
            fmt(d, DETAIL_MAX, "'%s' gave %d errors", bad[i], errs);
            return false;
        }
    }
    fmt(d, DETAIL_MAX, "%u bad command lines each rejected once, token named",
        (unsigned)(sizeof bad / sizeof bad[0]));
    return true;
}

/* --- CPU and TSC ----------------------------------------------------------- */

static bool test_cpuid(char *d)
{
    const struct cpu_info *c = cpu_info();
    bool printable = true;
    for (int i = 0; i < 12; i++)
        printable &= c->vendor[i] >= 0x20 && c->vendor[i] < 0x7f;
    fmt(d, DETAIL_MAX, "vendor %s family %u max leaf %u, %u caches (%s)", c->vendor, c->family, c->max_leaf,
        c->ncaches, c->cache_source);
    return c->has_cpuid && printable && strlen(c->vendor) == 12 && c->max_leaf >= 1 && c->family >= 4 &&
           cpu_has(FEAT_TSC);
}

static bool test_tsc_monotonic(char *d)
{
    uint64_t first = rdtsc(), prev = first;
    uint32_t backwards = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t t = rdtsc();
        if (t < prev)
            backwards++;
        prev = t;
    }
    fmt(d, DETAIL_MAX, "10000 reads, %u went backwards, advanced %llu cycles", backwards,
        (unsigned long long)(prev - first));
    return backwards == 0 && prev > first;
}

static bool test_stats(char *d)
{
    int64_t s[] = { 9, -1, 5, 7, 3 }; /* a sample may be negative (a difference inside the noise) */
    struct stats st;
    stats_compute(s, 5, &st);
    fmt(d, DETAIL_MAX, "min %lld med %lld max %lld mean %lld", (long long)st.min, (long long)st.med,
        (long long)st.max, (long long)st.mean);
    return st.n == 5 && st.min == -1 && st.med == 5 && st.max == 9 && st.mean == 4 && s[0] == -1 && s[4] == 9;
}

/* --- memory -------------------------------------------------------------- */

static bool overlaps(uint32_t a, uint32_t an, uint32_t b, uint32_t bn) { return a < b + bn && b < a + an; }

static bool test_alloc(char *d)
{
    static const uint32_t sizes[] = { 1, 4096, 100000, 1 << 20 };
    static const uint32_t aligns[] = { 16, 4096, 64, 1 << 22 };
    uint32_t at[4];
    struct region_mark mark;
    memory_mark(&mark);
    uint64_t before = memory_largest_free();
    bool ok = true;
    for (int i = 0; i < 4 && ok; i++) {
        void *p = memory_alloc(sizes[i], aligns[i]);
        at[i] = (uint32_t)p;
        ok = p && at[i] % aligns[i] == 0 && at[i] >= (1u << 20) &&
             !overlaps(at[i], sizes[i], (uint32_t)_kernel_start, (uint32_t)(_kernel_end - _kernel_start)) &&
             memory_is_free_ram(p, sizes[i]);
        for (int j = 0; j < i && ok; j++)
            ok = !overlaps(at[i], sizes[i], at[j], sizes[j]);
        if (!ok)
            fmt(d, DETAIL_MAX, "block %d (%u bytes, align %u) at 0x%x is wrong", i, sizes[i], aligns[i], at[i]);
    }
    void *too_big = memory_alloc(0xfffff000u, 4096);
    memory_release(&mark);
    if (ok && too_big) {
        fmt(d, DETAIL_MAX, "a 4 GiB request was granted at 0x%x", (uint32_t)too_big);
        ok = false;
    }
    if (ok && memory_largest_free() != before) {
        fmt(d, DETAIL_MAX, "release did not restore the free memory");
        ok = false;
    }
    if (ok)
        fmt(d, DETAIL_MAX, "4 blocks aligned, disjoint, outside the kernel; 4 GiB refused; released");
    return ok;
}

/* --- faults ---------------------------------------------------------------- */

static void divide_by_zero(void *arg)
{
    volatile uint32_t dividend = 1000, zero = 0; /* both volatile: a real div */
    *(volatile uint32_t *)arg = dividend / zero;
}

static void invalid_opcode(void *arg)
{
    (void)arg;
    ud2();
}

static void breakpoint(void *arg)
{
    (void)arg;
    int3();
}

static void no_fault(void *arg) { *(volatile int *)arg = 1; }

static void write_word(void *arg) { *(volatile uint32_t *)arg = 0xdeadbeef; }

static void read_word(void *arg) { (void)*(volatile uint32_t *)arg; }

static bool expect_vector(char *d, uint32_t vector, void (*fn)(void *), void *arg)
{
    struct trap_info fi = { 0, 0, 0, 0 };
    bool caught = trap_expect(TRAP_VEC(vector), fn, arg, &fi);
    bool in_fn = fi.eip >= (uint32_t)fn && fi.eip < (uint32_t)fn + 256;
    fmt(d, DETAIL_MAX, "%s: caught %s (vector %u) at eip 0x%x, resumed", exc_name(vector),
        caught ? "yes" : "no", fi.vector, fi.eip);
    return caught && fi.vector == vector && in_fn;
}

static bool test_divide_error(char *d)
{
    volatile uint32_t sink = 0;
    return expect_vector(d, EXC_DE, divide_by_zero, (void *)&sink);
}

static bool test_invalid_opcode(char *d) { return expect_vector(d, EXC_UD, invalid_opcode, 0); }
static bool test_breakpoint(char *d) { return expect_vector(d, EXC_BP, breakpoint, 0); }

static bool test_no_fault(char *d)
{
    volatile int ran = 0;
    bool caught = trap_expect(TRAP_VEC(EXC_PF) | TRAP_VEC(EXC_GP), no_fault, (void *)&ran, 0);
    fmt(d, DETAIL_MAX, "a function that does not fault returns normally");
    return !caught && ran == 1;
}

/* --- paging ------------------------------------------------------------------ */

static bool identity_check(enum page_size ps, uint32_t *buf, uint32_t words, char *d)
{
    for (uint32_t i = 0; i < words; i++)
        buf[i] = i * 2654435761u;
    paging_enable(ps);
    bool ok = paging_enabled() && (read_cr0() & CR0_PG) && (read_cr0() & CR0_WP);
    for (uint32_t i = 0; i < words && ok; i++) {
        ok = buf[i] == i * 2654435761u;
        buf[i] = ~i;
    }
    paging_disable();
    ok = ok && !(read_cr0() & CR0_PG);
    for (uint32_t i = 0; i < words && ok; i++)
        ok = buf[i] == ~i;
    fmt(d, DETAIL_MAX, "%s pages: %u words written, read back through the identity map, read again with paging off",
        ps == PAGESIZE_4M ? "4m" : "4k", words);
    return ok;
}

static bool test_paging_identity(char *d)
{
    const uint32_t words = 1 << 16;
    struct region_mark mark;
    memory_mark(&mark);
    /* the top of usable memory: the far end of the map */
    uint32_t *buf = memory_alloc(words * 4, PAGE_SIZE);
    bool ok = buf && paging_supports(PAGESIZE_4K) && identity_check(PAGESIZE_4K, buf, words, d);
    memory_release(&mark);
    return ok;
}

static bool test_paging_4m(char *d)
{
    const uint32_t words = 1 << 16;
    if (!paging_supports(PAGESIZE_4M)) {
        fmt(d, DETAIL_MAX, "no PSE: 4 MiB pages not available (cleanly refused)");
        return !cpu_has(FEAT_PSE);
    }
    struct region_mark mark;
    memory_mark(&mark);
    uint32_t *buf = memory_alloc(words * 4, LARGE_PAGE_SIZE);
    bool ok = buf && identity_check(PAGESIZE_4M, buf, words, d);
    memory_release(&mark);
    return ok;
}

/* RAM above 4 GiB through a PSE-36 4 MiB page (how a framebuffer there is
 * drawn, kernel/fbcon.c): runs where the map lists some and the CPU has
 * PSE-36 (QEMU with --memory over 4 GiB). */
static bool pse36_applies(void)
{
    uint64_t base, len;
    return paging_pse36_bits() > 32 && paging_supports(PAGESIZE_4M) && memory_high_ram(&base, &len);
}

/* What is written through the window reads back through it, and the RAM
 * at the same address below 4 GiB (where the page would land if the CPU
 * dropped the PDE's high bits) keeps its own words. */
static bool test_paging_pse36(char *d)
{
    const uint32_t words = 1 << 12;
    uint64_t high_base, high_len;
    memory_high_ram(&high_base, &high_len);
    struct region_mark mark;
    memory_mark(&mark);
    uint32_t *low = memory_alloc(LARGE_PAGE_SIZE, LARGE_PAGE_SIZE);
    uint64_t high = (high_base & ~0xffffffffull) + (uint32_t)low;
    if (high < high_base)
        high += 1ull << 32;
    struct pse36_window w;
    struct paging_window pw = { 0 };
    const char *why = !low ? "no 4 MiB of memory below 4 GiB"
                      : high + LARGE_PAGE_SIZE > high_base + high_len
                          ? "no 4 MiB above 4 GiB at the buffer's address modulo 4 GiB"
                          : pse36_window_plan(high, LARGE_PAGE_SIZE, memory_top(), paging_pse36_bits(), &w);
    if (!why)
        why = paging_window_build(&w, &pw);
    bool ok = !why;
    if (ok) {
        for (uint32_t i = 0; i < words; i++)
            low[i] = ~i;
        volatile uint32_t *far = (volatile uint32_t *)w.va;
        bool back = paging_window_enter(&pw), kept = true;
        for (uint32_t i = 0; i < words && back; i++)
            far[i] = i * 0x9e3779b9u;
        paging_window_leave();
        back = back && paging_window_enter(&pw);
        for (uint32_t i = 0; i < words && back; i++)
            back = far[i] == i * 0x9e3779b9u;
        paging_window_leave();
        for (uint32_t i = 0; i < words && kept; i++)
            kept = low[i] == ~i;
        ok = back && kept;
        fmt(d, DETAIL_MAX, "0x%llx through the 4 MiB page at 0x%x (PDE 0x%x): %u words %s; 0x%x below 4 GiB %s",
            (unsigned long long)high, w.va, pw.dir[w.first_slot], words, back ? "read back" : "NOT read back",
            (uint32_t)low, kept ? "kept its own" : "was overwritten: the PDE's high address bits were dropped");
    } else {
        fmt(d, DETAIL_MAX, "%s", why);
    }
    memory_release(&mark);
    return ok;
}

/* Runs fn(page) with paging on and `page` mapped with `flags`; expects a #PF. */
static bool page_fault_check(char *d, const char *what, uint32_t flags, void (*fn)(void *), uint32_t want_err)
{
    struct region_mark mark;
    memory_mark(&mark);
    uint32_t page = (uint32_t)memory_alloc(PAGE_SIZE, PAGE_SIZE);
    if (!page) {
        fmt(d, DETAIL_MAX, "no memory for a test page");
        return false;
    }
    uint32_t saved = paging_get_flags(page);
    paging_enable(PAGESIZE_4K);
    paging_set_flags(page, flags);
    struct trap_info fi = { 0, 0, 0, 0 };
    bool caught = trap_expect(TRAP_VEC(EXC_PF), fn, (void *)page, &fi);
    paging_set_flags(page, saved);
    paging_disable();
    memory_release(&mark);
    uint32_t err = fi.err & (PF_PRESENT | PF_WRITE | PF_USER);
    fmt(d, DETAIL_MAX, "%s: #PF %s, cr2 0x%x (page 0x%x), err 0x%x (want 0x%x)", what, caught ? "caught" : "missing",
        fi.cr2, page, fi.err, want_err);
    return caught && fi.cr2 == page && err == want_err;
}

static bool test_pf_unmapped(char *d)
{
    return page_fault_check(d, "write to an unmapped page", 0, write_word, PF_WRITE);
}

static bool test_pf_read_unmapped(char *d)
{
    return page_fault_check(d, "read of an unmapped page", 0, read_word, 0);
}

static bool test_wp(char *d)
{
    return page_fault_check(d, "ring-0 write to a read-only page (CR0.WP)", PTE_P, write_word, PF_PRESENT | PF_WRITE);
}

static bool test_null_page(char *d)
{
    struct trap_info fi = { 0, 0, 0, 0 };
    paging_enable(PAGESIZE_4K);
    bool caught = trap_expect(TRAP_VEC(EXC_PF), read_word, (void *)0, &fi);
    paging_disable();
    fmt(d, DETAIL_MAX, "null read with paging on: #PF %s, cr2 0x%x", caught ? "caught" : "missing", fi.cr2);
    return caught && fi.cr2 == 0;
}

/* --- descriptor tables and consoles --------------------------------------- */

static bool test_gdt_tss(char *d)
{
    uint16_t tr = str();
    fmt(d, DETAIL_MAX, "task register 0x%x (want 0x%x)", tr, SEL_TSS);
    return tr == SEL_TSS;
}

static bool test_console(char *d)
{
    bool serial = serial_present(), vga = vga_present();
    bool ok = true;
    if (vga) { /* the status line must read back what we wrote */
        volatile uint16_t *cell = (volatile uint16_t *)0xb8000 + 24 * 80 + 79;
        uint16_t old = *cell;
        *cell = 0x1f21;
        ok = *cell == 0x1f21;
        *cell = old;
    }
    fmt(d, DETAIL_MAX, "serial %s, vga %s", serial ? "present" : "absent (output dropped)",
        vga ? "present" : "absent (no text mode)");
    return ok;
}

static const struct {
    const char *name;
    selftest_fn fn;
    bool (*applies)(void); /* NULL: always; else the check runs only where this says so */
} tests[] = {
    { "crc32", test_crc32, 0 },
    { "record_writer", test_record_writer, 0 },
    { "cmdline_accept", test_cmdline_accept, 0 },
    { "cmdline_reject", test_cmdline_reject, 0 },
    { "cpuid", test_cpuid, 0 },
    { "tsc_monotonic", test_tsc_monotonic, 0 },
    { "stats", test_stats, 0 },
    { "alloc", test_alloc, 0 },
    { "gdt_tss", test_gdt_tss, 0 },
    { "fault_none", test_no_fault, 0 },
    { "fault_divide_error", test_divide_error, 0 },
    { "fault_invalid_opcode", test_invalid_opcode, 0 },
    { "fault_breakpoint", test_breakpoint, 0 },
    { "paging_identity", test_paging_identity, 0 },
    { "paging_4m", test_paging_4m, 0 },
    { "paging_pse36", test_paging_pse36, pse36_applies },
    { "pf_unmapped_write", test_pf_unmapped, 0 },
    { "pf_unmapped_read", test_pf_read_unmapped, 0 },
    { "pf_null_page", test_null_page, 0 },
    { "wp_readonly", test_wp, 0 },
    { "console", test_console, 0 },
    { "fiber_switch_pushad", fiber_test_switch_pushad, 0 },
    { "fiber_switch_callee", fiber_test_switch_callee, 0 },
    { "fiber_switch_fxsave", fiber_test_switch_fxsave, 0 },
    { "fiber_switch_jump", fiber_test_switch_jump, 0 },
    { "fiber_run_queue", fiber_test_run_queue, 0 },
    { "fiber_join", fiber_test_join, 0 },
    { "fiber_pair", fiber_test_pair, 0 },
    { "fiber_guard_page", fiber_test_guard_page, 0 },
    { "sync_mutual_exclusion", sync_test_mutual_exclusion, 0 },
    { "sync_fifo", sync_test_fifo, 0 },
    { "sync_condvar", sync_test_condvar, 0 },
    { "sync_barrier", sync_test_barrier, 0 },
    { "sync_semaphore", sync_test_semaphore, 0 },
    { "sync_stack_pool", sync_test_stack_pool, 0 },
    { "uthread_syscalls", uthread_test_syscalls, 0 },
    { "uthread_share", uthread_test_share, 0 },
    { "uthread_stack_private", uthread_test_stack_private, 0 },
    { "uthread_faults", uthread_test_faults, 0 },
    { "uthread_commit_merge", uthread_test_commit_merge, 0 },
    { "uthread_commit_order", uthread_test_commit_order, 0 },
    { "uthread_heap", uthread_test_heap, 0 },
    { "uthread_lifecycle", uthread_test_lifecycle, 0 },
    { "uthread_sync", uthread_test_sync, 0 },
    { "uthread_map_demand", uthread_test_map_demand, 0 },
    { "smp_every_cpu_answers", smp_test_every_cpu_answers, smp_tests_apply },
    { "smp_no_lost_increment", smp_test_no_lost_increment, smp_tests_apply },
    { "smp_paging_follows", smp_test_paging_follows, smp_tests_apply },
    { "smp_ipi", smp_test_ipi, smp_tests_apply },
    { "smplock_no_lost_increment", smplock_test_no_lost_increment, smp_tests_apply },
    { "smplock_condvar_handoff", smplock_test_condvar_handoff, smp_tests_apply },
    { "smplock_rw_exclusion", smplock_test_rw_exclusion, smp_tests_apply },
};

void selftests_run(void)
{
    const unsigned all = sizeof tests / sizeof tests[0];
    unsigned n = 0, done = 0;
    for (unsigned i = 0; i < all; i++)
        n += !tests[i].applies || tests[i].applies();
    console_say(VGA_CYAN, "self-test: %u checks", n);
    for (unsigned i = 0; i < all; i++) {
        if (tests[i].applies && !tests[i].applies())
            continue; /* the multi-CPU checks, with one CPU */
        char detail[DETAIL_MAX];
        detail[0] = 0;
        fault_set_running("selftest", tests[i].name);
        console_status(" cleanroom: self-test %u/%u %s", ++done, n, tests[i].name);
        bool ok = tests[i].fn(detail);
        selftest_report(tests[i].name, ok, detail);
    }
    fault_set_running(0, 0);
}
