/*
 * Host-compiled checks of the cache/TLB model (model.c) with constructed
 * access streams: LRU order, working sets that fit and that do not, TLB
 * flushes by CR3 load against global entries, page walks and their reads,
 * the mark encoding and the per-sample accounting. Built and run by
 * tests/test_cachemodel_plugin.py:
 *   gcc -std=c11 -O1 -Wall -Wextra -Werror -o t tools/cachemodel/test_model.c tools/cachemodel/model.c && ./t
 */
#define _GNU_SOURCE
#include "model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

#define CHECK_EQ(got, want)                                                                              \
    do {                                                                                                 \
        uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want);                                       \
        checks++;                                                                                        \
        if (got_ != want_) {                                                                             \
            failures++;                                                                                  \
            printf("FAIL %s:%d: %s = %" PRIu64 ", want %" PRIu64 "\n", __FILE__, __LINE__, #got, got_, want_); \
        }                                                                                                \
    } while (0)

#define MAILBOX 0x200000u

static void build(struct cm_model *m, const char *name)
{
    struct cm_config cfg;
    char err[256];
    if (cm_config_from_name(&cfg, name, err, sizeof err) || cm_config_check(&cfg, err, sizeof err)
        || cm_model_init(m, &cfg, MAILBOX, NULL)) {
        printf("FAIL cannot build %s: %s\n", name, err);
        exit(1);
    }
}

static void load(struct cm_model *m, uint64_t addr)
{
    cm_access(m, addr, addr, 2, false, false, 0);
}

/* A mark exactly as the kernel sends it: one-byte stores whose address is the message. */
static void mark(struct cm_model *m, uint32_t a, uint32_t b, unsigned cmd, uint64_t remaining)
{
    for (unsigned i = 0; i < 4; i++) {
        uint64_t pa = MAILBOX + ((CM_FIELD_A0 + i) << 8 | (a >> 8 * i & 0xff));
        cm_access(m, pa, pa, 0, true, false, remaining);
        pa = MAILBOX + ((CM_FIELD_B0 + i) << 8 | (b >> 8 * i & 0xff));
        cm_access(m, pa, pa, 0, true, false, remaining);
    }
    uint64_t pa = MAILBOX + (CM_FIELD_COMMAND << 8 | cmd);
    cm_access(m, pa, pa, 0, true, false, remaining);
}

static void test_lru_order(void)
{
    struct cm_model m;
    build(&m, "custom:l1d=256/4/64/2,l2=64K/4/64/7");   /* L1: one set of 4 ways */
    uint64_t a = 0x1000, b = 0x1040, c = 0x1080, d = 0x10c0, e = 0x1100;
    load(&m, a); load(&m, b); load(&m, c); load(&m, d);
    CHECK_EQ(m.c.l1d_misses, 4);
    load(&m, a);                 /* hit: A is now the most recent, B the least */
    CHECK_EQ(m.c.l1d_misses, 4);
    load(&m, e);                 /* evicts B */
    CHECK_EQ(m.c.l1d_misses, 5);
    load(&m, a); load(&m, c); load(&m, d); load(&m, e);
    CHECK_EQ(m.c.l1d_misses, 5);
    load(&m, b);                 /* B was evicted: miss (in L2 still) */
    CHECK_EQ(m.c.l1d_misses, 6);
    CHECK_EQ(m.c.l2_misses, 5);
    CHECK_EQ(m.c.loads, 11);
    /* an access that straddles two lines touches both */
    load(&m, 0x2000);
    cm_access(&m, 0x203e, 0x203e, 2, false, false, 0);
    CHECK_EQ(m.c.l1d_misses, 8);
    cm_model_free(&m);
}

static void sweep(struct cm_model *m, uint64_t base, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes; off += 4)
        cm_access(m, base + off, base + off, 2, true, false, 0);
}

static void test_working_sets(void)
{
    struct cm_model m;
    build(&m, "prestonia");      /* L1d 8 KiB 4-way, L2 512 KiB 8-way, 64 B lines */
    sweep(&m, 0x100000, 8192);
    CHECK_EQ(m.c.l1d_misses, 128);
    sweep(&m, 0x100000, 8192);   /* fits: no more misses */
    CHECK_EQ(m.c.l1d_misses, 128);
    uint64_t before = m.c.l1d_misses;
    sweep(&m, 0x100000, 12288);  /* 1.5x L1: LRU loses every line before its reuse */
    sweep(&m, 0x100000, 12288);
    CHECK_EQ(m.c.l1d_misses - before, 64 + 192);
    CHECK_EQ(m.c.l2_misses, 192);
    /* L2: 512 KiB fits, 768 KiB misses everything on the second pass */
    struct cm_counts c0 = m.c;
    sweep(&m, 0x400000, 512u << 10);
    sweep(&m, 0x400000, 512u << 10);
    CHECK_EQ(m.c.l2_misses - c0.l2_misses, 8192);
    c0 = m.c;
    sweep(&m, 0x400000, 768u << 10);
    sweep(&m, 0x400000, 768u << 10);
    CHECK_EQ(m.c.l2_misses - c0.l2_misses, 4096 + 12288);  /* the new quarter, then every line */
    CHECK_EQ(m.c.tlb_misses, 0);     /* paging off: no TLB */
    cm_model_free(&m);
}

/* A directory at 0x10000: PDE 0 -> a table of global 4 KiB pages, PDE 1 -> a
 * table of non-global ones, PDE 2 -> a global 4 MiB page. */
#define DIR 0x10000u
static void announce_directory(struct cm_model *m)
{
    mark(m, DIR + 0, 0x20000 | CM_PDE_PRESENT | CM_PDE_MARK_GLOBAL_4K, CM_CMD_PDE, 0);
    mark(m, DIR + 4, 0x21000 | CM_PDE_PRESENT, CM_CMD_PDE, 0);
    mark(m, DIR + 8, 0x800000 | CM_PDE_PRESENT | CM_PDE_PS | CM_PDE_GLOBAL_4M, CM_CMD_PDE, 0);
}

static void test_tlb_and_walks(void)
{
    struct cm_model m;
    build(&m, "prestonia");
    announce_directory(&m);
    mark(&m, DIR, 3, CM_CMD_PAGING_ON, 0);   /* PSE and PGE on */
    CHECK_EQ(m.c.stores, 0);                 /* marks are not data accesses */
    CHECK_EQ(m.marks, 4);

    load(&m, 0x1000);                        /* global 4 KiB page: PDE + PTE read */
    CHECK_EQ(m.c.tlb_misses, 1);
    CHECK_EQ(m.c.walk_reads, 2);
    CHECK_EQ(m.c.l1d_misses, 3);             /* PDE line, PTE line, data line: all cold */
    load(&m, 0x401000);                      /* non-global 4 KiB page */
    load(&m, 0x800000);                      /* 4 MiB page: the PDE read only */
    CHECK_EQ(m.c.tlb_misses, 3);
    CHECK_EQ(m.c.walk_reads, 5);
    load(&m, 0x1004); load(&m, 0x401ffc); load(&m, 0xbffffc);
    CHECK_EQ(m.c.tlb_misses, 3);             /* all hits, the 4 MiB page's far end too */

    mark(&m, DIR, 0, CM_CMD_CR3_LOAD, 0);    /* PGE on: global entries stay */
    load(&m, 0x1000); load(&m, 0x800000);
    CHECK_EQ(m.c.tlb_misses, 3);
    load(&m, 0x401000);
    CHECK_EQ(m.c.tlb_misses, 4);

    mark(&m, 0x401000, 0, CM_CMD_INVLPG, 0); /* drops that page only */
    load(&m, 0x1000);
    CHECK_EQ(m.c.tlb_misses, 4);
    load(&m, 0x401000);
    CHECK_EQ(m.c.tlb_misses, 5);
    mark(&m, 0x800000, 0, CM_CMD_INVLPG, 0); /* a global 4 MiB page too */
    load(&m, 0x800000);
    CHECK_EQ(m.c.tlb_misses, 6);

    mark(&m, 0, 0, CM_CMD_TLB_FLUSH_ALL, 0); /* global ones go as well */
    load(&m, 0x1000); load(&m, 0x800000);
    CHECK_EQ(m.c.tlb_misses, 8);

    mark(&m, DIR, 1, CM_CMD_PAGING_ON, 0);   /* PGE off: a CR3 load flushes everything */
    load(&m, 0x1000); load(&m, 0x800000);
    CHECK_EQ(m.c.tlb_misses, 10);
    mark(&m, DIR, 0, CM_CMD_CR3_LOAD, 0);
    load(&m, 0x1000); load(&m, 0x800000);
    CHECK_EQ(m.c.tlb_misses, 12);

    mark(&m, DIR, 2, CM_CMD_PAGING_ON, 0);   /* PSE off: PDE 2's PS bit means nothing */
    uint64_t walks = m.c.walk_reads;
    load(&m, 0x800000);
    CHECK_EQ(m.c.walk_reads - walks, 2);

    CHECK_EQ(m.unknown_pde_walks, 0);
    load(&m, 0xc00000);                      /* PDE 3 was never announced */
    CHECK_EQ(m.unknown_pde_walks, 1);
    CHECK_EQ(m.c.walk_reads - walks, 3);

    mark(&m, 0, 0, CM_CMD_PAGING_OFF, 0);
    uint64_t misses = m.c.tlb_misses;
    load(&m, 0x5000000);
    CHECK_EQ(m.c.tlb_misses, misses);
    cm_model_free(&m);
}

static void test_tlb_capacity(void)
{
    struct cm_model m;
    build(&m, "custom:dtlb4k=8/2");          /* 4 sets of 2 */
    /* one page table covering 4 MiB, so 1024 pages can be walked */
    mark(&m, DIR, 0x20000 | CM_PDE_PRESENT, CM_CMD_PDE, 0);
    mark(&m, DIR, 0, CM_CMD_PAGING_ON, 0);
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t p = 0; p < 8; p++)
            load(&m, p << 12);
    CHECK_EQ(m.c.tlb_misses, 8);             /* 8 pages fit in 8 entries */
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t p = 0; p < 12; p++)
            load(&m, p << 12);
    CHECK_EQ(m.c.tlb_misses, 8 + 4 + 12);    /* 12 pages thrash: 3 per 2-way set */
    cm_model_free(&m);
}

static void test_samples(void)
{
    struct cm_model m;
    build(&m, "prestonia");
    /* A block of 10 instructions starts: QEMU adds its length first. */
    m.c.instructions += 10;
    mark(&m, 7, 0, CM_CMD_SAMPLE_BEGIN, 9);  /* by the block's first instruction */
    cm_rdtsc(&m, 7);                         /* the third: count 3 */
    load(&m, 0x3000);                        /* one cold load */
    cm_rdtsc(&m, 2);                         /* the eighth: count 8 */
    mark(&m, 7, 0, CM_CMD_SAMPLE_END, 0);
    CHECK_EQ(m.samples, 1);
    CHECK_EQ(m.last_sample.case_no, 7);
    CHECK_EQ(m.last_sample.index, 0);
    CHECK_EQ(m.last_sample.d.instructions, 5);
    CHECK_EQ(m.last_sample.d.loads, 1);
    CHECK_EQ(m.last_sample.d.l1d_misses, 1);
    CHECK_EQ(m.last_sample.d.l2_misses, 1);
    CHECK_EQ(m.last_sample.cycles, 5 * 1 + 1 * 7 + 1 * 300);

    /* fewer than two rdtsc: BEGIN to END */
    m.c.instructions += 20;
    mark(&m, 7, 1, CM_CMD_SAMPLE_BEGIN, 19);
    cm_rdtsc(&m, 10);
    mark(&m, 7, 1, CM_CMD_SAMPLE_END, 4);
    CHECK_EQ(m.samples, 2);
    CHECK_EQ(m.last_sample.index, 1);
    CHECK_EQ(m.last_sample.d.instructions, 15);

    /* an END that is not the open sample's, a BEGIN left open */
    mark(&m, 8, 0, CM_CMD_SAMPLE_END, 0);
    mark(&m, 8, 0, CM_CMD_SAMPLE_BEGIN, 0);
    CHECK_EQ(m.unmatched, 1);
    FILE *f = tmpfile();
    cm_finish(&m, f);
    CHECK_EQ(m.unmatched, 2);
    CHECK_EQ(m.samples, 2);
    fclose(f);
    cm_model_free(&m);
}

static void test_config(void)
{
    struct cm_config cfg;
    char err[256];
    CHECK_EQ(cm_config_from_name(&cfg, "custom:l1d=16K/8/64/3,l2=2M/8/64/9,l3=8M/16/64/40,dtlb4k=32/4,"
                                       "dtlb4m=8/8,cpi=0.75,mem=250,walk=12", err, sizeof err), 0);
    CHECK_EQ(cfg.l1d.size, 16384);
    CHECK_EQ(cfg.l2.size, 2u << 20);
    CHECK_EQ(cfg.l3.ways, 16);
    CHECK_EQ(cfg.dtlb4k.entries, 32);
    CHECK_EQ(cfg.cpi_milli, 750);
    CHECK_EQ(cfg.mem_latency, 250);
    CHECK_EQ(cfg.walk_cycles, 12);
    CHECK_EQ(cm_config_check(&cfg, err, sizeof err), 0);
    struct cm_counts d = { .instructions = 1000, .l1d_misses = 10, .l2_misses = 4, .l3_misses = 2, .tlb_misses = 3 };
    CHECK_EQ(cm_cycles(&cfg, &d), 750 + 10 * 9 + 4 * 40 + 2 * 250 + 3 * 12);
    CHECK_EQ(cm_config_from_name(&cfg, "custom:l3=none", err, sizeof err), 0);
    CHECK_EQ(cfg.l3.size, 0);
    CHECK_EQ(cfg.l2.size, 512u << 10);       /* what is not given stays prestonia's */
    CHECK_EQ(cm_config_from_name(&cfg, "custom:l2=3M/8/64/7", err, sizeof err), 0);
    CHECK_EQ(cm_config_check(&cfg, err, sizeof err), -1);   /* 6144 sets: not a power of two */
    CHECK_EQ(cm_config_from_name(&cfg, "custom:l2=2M/8", err, sizeof err), -1);
    CHECK_EQ(cm_config_from_name(&cfg, "custom:l4=1M/8/64/9", err, sizeof err), -1);
    CHECK_EQ(cm_config_from_name(&cfg, "prescott", err, sizeof err), -1);
    CHECK_EQ(cm_config_is_spec_key("l2=1M/8/64/7"), 1);
    CHECK_EQ(cm_config_is_spec_key("out=/tmp/x"), 0);
    CHECK_EQ(cm_config_from_name(&cfg, "modern", err, sizeof err), 0);
    CHECK_EQ(cm_config_check(&cfg, err, sizeof err), 0);
}

int main(void)
{
    test_lru_order();
    test_working_sets();
    test_tlb_and_walks();
    test_tlb_capacity();
    test_samples();
    test_config();
    printf("%s: %d checks, %d failed\n", failures ? "FAIL" : "ok", checks, failures);
    return failures ? 1 : 0;
}
