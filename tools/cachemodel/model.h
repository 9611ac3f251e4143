/*
 * The cache and TLB model behind the QEMU plugin (plugin.c), kept free of
 * QEMU so that a host-compiled driver (test_model.c) can feed it
 * constructed access streams. docs/MODEL.md describes what it models and
 * what it leaves out; docs/MODEL.md and the contract of issue 13 define the
 * mailbox marks and the output lines.
 */
#ifndef CACHEMODEL_MODEL_H
#define CACHEMODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CM_OUTPUT_VERSION 1

/* The mailbox: one page; a one-byte store to mailbox + (field << 8 | byte) is a mark. */
#define CM_MAILBOX_BYTES 4096u
#define CM_FIELD_A0 0u          /* fields 0-3: bytes 0-3 of register A */
#define CM_FIELD_B0 4u          /* fields 4-7: bytes 0-3 of register B */
#define CM_FIELD_COMMAND 15u

enum cm_command {
    CM_CMD_PAGING_ON = 1,       /* A = CR3; B bit 0 = CR4.PSE, bit 1 = CR4.PGE */
    CM_CMD_PAGING_OFF = 2,
    CM_CMD_CR3_LOAD = 3,        /* A = new CR3 */
    CM_CMD_INVLPG = 4,          /* A = virtual address */
    CM_CMD_PDE = 5,             /* A = physical address of the slot, B = its value */
    CM_CMD_SAMPLE_BEGIN = 6,    /* A = case number, B = sample index */
    CM_CMD_SAMPLE_END = 7,
    CM_CMD_TLB_FLUSH_ALL = 8,
};

/* Page-directory entry bits the model reads (IA-32, 32-bit paging). */
#define CM_PDE_PRESENT 0x001u
#define CM_PDE_PS 0x080u        /* a 4 MiB page (with CR4.PSE) */
#define CM_PDE_GLOBAL_4M 0x100u /* G of a 4 MiB page */
#define CM_PDE_MARK_GLOBAL_4K 0x200u /* in the mark only: the table's 4 KiB pages are global */

/* One cache level; size 0 = absent (only L3 may be). Sizes in bytes. */
struct cm_cache_cfg {
    uint32_t size, ways, line, latency;
};

struct cm_tlb_cfg {
    uint32_t entries, ways;
};

struct cm_config {
    char preset[16];            /* "prestonia", "modern" or "custom" */
    struct cm_cache_cfg l1d, l2, l3;
    struct cm_tlb_cfg dtlb4k, dtlb4m;
    uint32_t cpi_milli;         /* base cycles per instruction, x1000 (exact integer arithmetic) */
    uint32_t mem_latency;       /* cycles of a miss in the last cache level */
    uint32_t walk_cycles;       /* fixed cost of a TLB miss beyond its priced reads */
};

/* Counts that grow over the whole run; a sample's figures are differences of two snapshots. */
struct cm_counts {
    uint64_t instructions;      /* QEMU adds 1 here before each instruction */
    uint64_t loads, stores;     /* modelled data accesses (not the marks, not the walk reads) */
    uint64_t l1d_misses, l2_misses, l3_misses; /* walk reads included */
    uint64_t tlb_misses, walk_reads;
};

struct cm_sample {
    uint32_t case_no, index;
    struct cm_counts d;         /* the differences over the sample's span */
    uint64_t cycles;
};

/* A set-associative level with true LRU: each set's tags in recency order, [0] most recent. */
struct cm_cache {
    uint64_t *tags;             /* line numbers (address >> line_shift); CM_INVALID = empty */
    uint64_t set_mask;
    uint32_t ways, line_shift;
};

/* A data TLB: tags are (virtual page number << 1 | global), in recency order per set. */
struct cm_tlb {
    uint64_t *tags;
    uint64_t set_mask;
    uint64_t mru_vpn;           /* the page of the last hit or fill: a hit that changes nothing */
    uint32_t ways, page_shift;
};

/* A page directory the kernel announced: its 1024 entries and which of them were announced. */
struct cm_pdir {
    uint32_t phys;
    uint32_t pde[1024];
    uint32_t known[1024 / 32];
};

struct cm_model {
    struct cm_config cfg;
    struct cm_counts c;
    struct cm_cache l1d, l2, l3;
    bool has_l3;
    uint64_t l1d_mru_line;      /* the L1 line of the last access: a hit that changes nothing */
    struct cm_tlb tlb4k, tlb4m;
    uint64_t mailbox;

    bool paging, pse, pge;
    uint32_t cr3;
    struct cm_pdir *dir;        /* the directory at CR3 (NULL: none announced there yet) */
    struct cm_pdir **dirs;
    size_t ndirs, dirs_cap;

    uint32_t reg_a, reg_b;

    bool in_sample;
    uint32_t sample_case, sample_index;
    uint32_t rdtsc_seen;
    struct cm_counts at_begin, at_first_rdtsc, at_last_rdtsc;
    struct cm_sample last_sample;

    uint64_t samples, unmatched, unknown_pde_walks, marks, accesses;
    FILE *out;                  /* sample lines go here (NULL: only last_sample) */
};

/* Fills cfg from "prestonia", "modern" or "custom:SPEC"; 0, or -1 with a message in err. */
int cm_config_from_name(struct cm_config *cfg, const char *name, char *err, size_t errlen);
/* Applies one SPEC item ("l2=2M/8/64/7", "cpi=1.5", "l3=none", ...); 0 or -1 with err. */
int cm_config_apply(struct cm_config *cfg, const char *item, char *err, size_t errlen);
/* Is the configuration one the model can build (powers of two where it indexes)? 0 or -1 with err. */
int cm_config_check(const struct cm_config *cfg, char *err, size_t errlen);
/* Is `key` (up to '=') one of the SPEC keys? */
bool cm_config_is_spec_key(const char *item);

/* Builds the model (allocates its tables); 0, or -1 when memory ran out. */
int cm_model_init(struct cm_model *m, const struct cm_config *cfg, uint64_t mailbox, FILE *out);
void cm_model_free(struct cm_model *m);

/*
 * One data access of `1 << size_shift` bytes seen by the guest at linear
 * address va, physical pa. remaining: how many instructions already in
 * c.instructions have not run yet (0 when the plugin counts instruction by
 * instruction; a count added per block would need the rest of the block).
 */
void cm_access(struct cm_model *m, uint64_t va, uint64_t pa, unsigned size_shift, bool store, bool io,
               uint64_t remaining);
/* An rdtsc/rdtscp is about to execute; remaining as for cm_access. */
void cm_rdtsc(struct cm_model *m, uint64_t remaining);

/* Modelled cycles of a span's counts. */
uint64_t cm_cycles(const struct cm_config *cfg, const struct cm_counts *d);

void cm_write_header(const struct cm_model *m, FILE *f);
/* Closes a sample left open (it counts as unmatched) and writes the end line. */
void cm_finish(struct cm_model *m, FILE *f);

#endif
