/* The virtual-memory axis a Linux process really has: buffers backed by
 * 4 KiB pages or by 2 MiB transparent huge pages (pages=4k|2m|both; paging=
 * does not apply). Each mode gets its own pair of buffers, mapped for that
 * page size, so the modes can be measured sample by sample in turn.
 *
 * Every buffer is its own mapping, starting on a 2 MiB boundary and as long
 * as its size rounded up to whole 2 MiB pages, in both modes: the modes then
 * differ in the page size alone, and a buffer smaller than 2 MiB can still
 * sit in one huge page. madvise asks for the page size (MADV_HUGEPAGE works
 * with the usual THP setting "madvise"; MADV_NOHUGEPAGE keeps huge pages
 * away even under "always"); the buffers are written once so the host backs
 * them before any sample, and what it gave is read back from
 * /proc/self/smaps (AnonHugePages), since the request is only a hint. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "bench/vmmode.h"

#define HUGE_PAGE (2ull << 20) /* x86's PMD-sized transparent huge page */
#define SMALL_PAGE 4096ull

enum vm_pages { VM_4K, VM_2M };
static const char *const pages_name[] = { [VM_4K] = "4k", [VM_2M] = "2m" };

static enum vm_pages mode_pages(const struct config *cfg, uint32_t m)
{
    switch (cfg->pages) {
    case PAGES_2M: return VM_2M;
    case PAGES_BOTH: return m ? VM_2M : VM_4K; /* 4k first, then 2m */
    default: return VM_4K;
    }
}

/* The bracketed word of a THP setting file ("always [madvise] never"), or
 * "absent" when the kernel has no transparent huge pages. */
static const char *thp_setting(const char *file, char *out, size_t n)
{
    snprintf(out, n, "absent");
    FILE *f = fopen(file, "re");
    if (!f)
        return out;
    char line[128];
    if (fgets(line, sizeof line, f)) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : 0;
        if (open && close)
            snprintf(out, n, "%.*s", (int)(close - open - 1), open + 1);
    }
    fclose(f);
    return out;
}

/* Why this process can have no transparent huge page at all, or NULL:
 * the kernel has none, they are off, or they are off for this process
 * (prctl PR_SET_THP_DISABLE, inherited from whoever started it; 1 is the
 * plain disable, other values still let madvise'd memory have them). */
static const char *thp_refused(void)
{
    char enabled[32];
    thp_setting("/sys/kernel/mm/transparent_hugepage/enabled", enabled, sizeof enabled);
    if (!strcmp(enabled, "absent"))
        return "this host's kernel has no transparent huge pages";
    if (!strcmp(enabled, "never"))
        return "this host's transparent huge pages are off (transparent_hugepage/enabled: never)";
    if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1)
        return "transparent huge pages are off for this process (prctl PR_SET_THP_DISABLE)";
    return 0;
}

uint32_t vm_modes(const struct config *cfg, const char **why)
{
    if (why)
        *why = 0;
    const char *no = cfg->pages == PAGES_2M ? thp_refused() : 0;
    if (no) {
        if (why) {
            static char text[160];
            snprintf(text, sizeof text, "pages=2m: %s", no);
            *why = text;
        }
        return 0;
    }
    return cfg->pages == PAGES_BOTH ? 2 : 1;
}

/* A buffer's mapping: its size rounded up to whole huge pages (at least
 * one, so a 0-byte buffer still has an address), then a PROT_NONE guard
 * page that keeps the kernel from merging it with a neighbouring mapping
 * (smaps then reports each buffer on its own). */
static uint64_t span_of(uint32_t bytes)
{
    uint64_t s = ((uint64_t)bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    return s ? s : HUGE_PAGE;
}

static uint8_t *map_buffer(uint32_t bytes, enum vm_pages pages)
{
    uint64_t span = span_of(bytes), total = span + HUGE_PAGE + SMALL_PAGE; /* slack to align, guard */
    if (total > 0xffffffffull)
        return 0;
    uint8_t *raw = mmap(0, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return 0;
    uintptr_t start = ((uintptr_t)raw + (uintptr_t)HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t end = start + (uintptr_t)span + (uintptr_t)SMALL_PAGE, raw_end = (uintptr_t)raw + (uintptr_t)total;
    if (start > (uintptr_t)raw)
        munmap(raw, start - (uintptr_t)raw);
    if (raw_end > end)
        munmap((void *)end, raw_end - end);
    uint8_t *buf = (uint8_t *)start;
    mprotect(buf + span, (size_t)SMALL_PAGE, PROT_NONE);
    /* A hint: it fails only on a kernel without THP, and smaps says what came of it. */
    madvise(buf, (size_t)span, pages == VM_2M ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    /* Back every page now, so no sample takes the page faults. */
    uint64_t touch = bytes ? bytes : 1;
    for (uint64_t off = 0; off < touch; off += SMALL_PAGE)
        ((volatile uint8_t *)buf)[off] = 0;
    return buf;
}

bool vm_alloc(const struct config *cfg, uint32_t bytes, struct vm_buffers *b)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    uint32_t modes = cfg->pages == PAGES_BOTH ? 2 : 1;
    for (uint32_t m = 0; m < modes; m++)
        for (uint32_t i = 0; i < 2; i++)
            if (!(b->buf[m][i] = map_buffer(bytes, mode_pages(cfg, m)))) {
                vm_free(b);
                return false;
            }
    return true;
}

void vm_free(struct vm_buffers *b)
{
    for (uint32_t m = 0; m < VM_MODES_MAX; m++)
        for (uint32_t i = 0; i < 2; i++)
            if (b->buf[m][i]) {
                munmap(b->buf[m][i], (size_t)(span_of(b->bytes) + SMALL_PAGE));
                b->buf[m][i] = 0;
            }
}

void vm_enter(const struct config *cfg, uint32_t m) { (void)cfg, (void)m; }
void vm_leave(void) {}

/* Bytes of [start, start + len) in huge pages, from the AnonHugePages of
 * the mappings that overlap it (each counted no further than the overlap);
 * -1 when /proc/self/smaps cannot be read. */
static int64_t huge_bytes(const uint8_t *start, uint64_t len)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return -1;
    uint64_t lo = (uintptr_t)start, hi = lo + len, overlap = 0, total = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned long from, to, kib;
        char space;
        if (sscanf(line, "%lx-%lx%c", &from, &to, &space) == 3 && space == ' ') {
            /* a mapping's first line: "from-to perms offset dev inode path" */
            uint64_t a = from > lo ? from : lo, z = to < hi ? to : hi;
            overlap = z > a ? z - a : 0;
        } else if (overlap && sscanf(line, "AnonHugePages: %lu kB", &kib) == 1) {
            uint64_t got = (uint64_t)kib << 10;
            total += got < overlap ? got : overlap;
        }
    }
    fclose(f);
    return (int64_t)total;
}

/* What the host gave mode m's buffers: "2m" when huge pages back all of
 * every buffer, "4k" when none of any, "mixed" in between; "unknown"
 * when smaps cannot be read. */
static const char *pages_got(uint32_t m, const struct vm_buffers *b)
{
    uint64_t span = span_of(b->bytes);
    bool all = true, none = true;
    for (uint32_t i = 0; i < 2; i++) {
        if (!b->buf[m][i])
            return "unknown";
        int64_t h = huge_bytes(b->buf[m][i], span);
        if (h < 0)
            return "unknown";
        all = all && (uint64_t)h >= span;
        none = none && h == 0;
    }
    return all ? "2m" : none ? "4k" : "mixed";
}

void vm_params(const struct config *cfg, uint32_t m, const struct vm_buffers *b, struct bench_case *c)
{
    if (c->nparams + 2 > BENCH_MAX_PARAMS)
        return;
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("pages", pages_name[mode_pages(cfg, m)]);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("pages_got", pages_got(m, b));
}

const char *vm_unavailable(const struct config *cfg, uint32_t m, const struct vm_buffers *b)
{
    if (mode_pages(cfg, m) != VM_2M || strcmp(pages_got(m, b), "4k"))
        return 0;
    static char why[256];
    const char *no = thp_refused();
    char enabled[32], defrag[32];
    if (no)
        snprintf(why, sizeof why, "pages=2m: %s", no);
    else /* THP is on: the host had no free 2 MiB block (fragmented or short of memory) */
        snprintf(why, sizeof why,
                 "pages=2m: the host backed none of these %u-byte buffers with 2 MiB pages "
                 "(transparent_hugepage enabled: %s, defrag: %s)",
                 b->bytes, thp_setting("/sys/kernel/mm/transparent_hugepage/enabled", enabled, sizeof enabled),
                 thp_setting("/sys/kernel/mm/transparent_hugepage/defrag", defrag, sizeof defrag));
    return why;
}
