/*
 * The cache and TLB model: set-associative levels with true LRU, physically
 * indexed; two virtually tagged data TLBs; page walks priced by the caches;
 * the mailbox marks; per-sample counts. See model.h and docs/MODEL.md.
 *
 * The hot path (cm_access) allocates nothing, hashes nothing and divides
 * nothing: sets are powers of two (a mask), lines are powers of two (a
 * shift), and the line and page of the last access are remembered, since a
 * repeat of them is a hit that changes no LRU order.
 */
#define _GNU_SOURCE
#include "model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CM_INVALID UINT64_MAX

/* --- configuration ------------------------------------------------------ */

/*
 * Presets. Where each figure comes from is in docs/MODEL.md; in short:
 * prestonia = the paper's Xeon (Table 1 of Klimiankou) with NetBurst
 * latencies from Intel's IA-32 optimization manual (Table 1-1) and a memory
 * latency worked out from that manual's bus figures at 2.4 GHz; modern = an
 * Intel Skylake client core (Core i7-6700).
 */
static const struct cm_config preset_prestonia = {
    .preset = "prestonia",
    .l1d = { 8u << 10, 4, 64, 2 },
    .l2 = { 512u << 10, 8, 64, 7 },
    .l3 = { 0, 0, 0, 0 },
    .dtlb4k = { 64, 64 },
    .dtlb4m = { 64, 64 },
    .cpi_milli = 1000,
    .mem_latency = 300,
    .walk_cycles = 20,
};

static const struct cm_config preset_modern = {
    .preset = "modern",
    .l1d = { 32u << 10, 8, 64, 4 },
    .l2 = { 256u << 10, 4, 64, 12 },
    .l3 = { 8u << 20, 16, 64, 42 },
    .dtlb4k = { 64, 4 },
    .dtlb4m = { 32, 4 },
    .cpi_milli = 500,
    .mem_latency = 250,
    .walk_cycles = 20,
};

static int fail(char *err, size_t errlen, const char *what, const char *item)
{
    snprintf(err, errlen, "%s: '%s'", what, item);
    return -1;
}

/* A size: digits with an optional K, M or G (x1024). */
static int parse_size(const char **s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(*s, &end, 10);
    if (end == *s || errno)
        return -1;
    if (*end == 'K' || *end == 'k') { v <<= 10; end++; }
    else if (*end == 'M' || *end == 'm') { v <<= 20; end++; }
    else if (*end == 'G' || *end == 'g') { v <<= 30; end++; }
    if (v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    *s = end;
    return 0;
}

/* n sizes separated by '/', nothing after them. */
static int parse_fields(const char *s, uint32_t *out, int n)
{
    for (int i = 0; i < n; i++) {
        if (i > 0 && *s++ != '/')
            return -1;
        if (parse_size(&s, &out[i]) != 0)
            return -1;
    }
    return *s == '\0' ? 0 : -1;
}

/* A decimal with at most three places, as thousandths. */
static int parse_milli(const char *s, uint32_t *out)
{
    uint64_t whole = 0, frac = 0;
    int places = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9' && whole < 1000000)
        whole = whole * 10 + (uint64_t)(*s++ - '0');
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9' && places < 3) {
            frac = frac * 10 + (uint64_t)(*s++ - '0');
            places++;
        }
    }
    if (*s != '\0' || whole >= 1000000)
        return -1;
    while (places++ < 3)
        frac *= 10;
    *out = (uint32_t)(whole * 1000 + frac);
    return 0;
}

static const char *const spec_keys[] = { "l1d", "l2", "l3", "dtlb4k", "dtlb4m", "cpi", "mem", "walk", 0 };

bool cm_config_is_spec_key(const char *item)
{
    const char *eq = strchr(item, '=');
    if (!eq)
        return false;
    for (int i = 0; spec_keys[i]; i++)
        if (strlen(spec_keys[i]) == (size_t)(eq - item) && strncmp(item, spec_keys[i], (size_t)(eq - item)) == 0)
            return true;
    return false;
}

int cm_config_apply(struct cm_config *cfg, const char *item, char *err, size_t errlen)
{
    const char *eq = strchr(item, '=');
    if (!eq)
        return fail(err, errlen, "expected key=value", item);
    size_t klen = (size_t)(eq - item);
    const char *v = eq + 1;
    uint32_t f[4];
#define KEY(k) (klen == sizeof(k) - 1 && strncmp(item, k, klen) == 0)
    if (KEY("l1d") || KEY("l2") || KEY("l3")) {
        struct cm_cache_cfg *c = KEY("l1d") ? &cfg->l1d : KEY("l2") ? &cfg->l2 : &cfg->l3;
        if (KEY("l3") && strcmp(v, "none") == 0) {
            memset(c, 0, sizeof *c);
            return 0;
        }
        if (parse_fields(v, f, 4) != 0)
            return fail(err, errlen, "expected SIZE/WAYS/LINE/LATENCY (or l3=none)", item);
        *c = (struct cm_cache_cfg){ f[0], f[1], f[2], f[3] };
    } else if (KEY("dtlb4k") || KEY("dtlb4m")) {
        if (parse_fields(v, f, 2) != 0)
            return fail(err, errlen, "expected ENTRIES/WAYS", item);
        *(KEY("dtlb4k") ? &cfg->dtlb4k : &cfg->dtlb4m) = (struct cm_tlb_cfg){ f[0], f[1] };
    } else if (KEY("cpi")) {
        if (parse_milli(v, &cfg->cpi_milli) != 0)
            return fail(err, errlen, "expected a decimal with at most 3 places", item);
    } else if (KEY("mem") || KEY("walk")) {
        if (parse_fields(v, f, 1) != 0)
            return fail(err, errlen, "expected cycles", item);
        *(KEY("mem") ? &cfg->mem_latency : &cfg->walk_cycles) = f[0];
    } else {
        return fail(err, errlen, "unknown key (l1d, l2, l3, dtlb4k, dtlb4m, cpi, mem, walk)", item);
    }
#undef KEY
    return 0;
}

int cm_config_from_name(struct cm_config *cfg, const char *name, char *err, size_t errlen)
{
    if (strcmp(name, "prestonia") == 0) {
        *cfg = preset_prestonia;
        return 0;
    }
    if (strcmp(name, "modern") == 0) {
        *cfg = preset_modern;
        return 0;
    }
    if (strncmp(name, "custom:", 7) != 0 && strcmp(name, "custom") != 0)
        return fail(err, errlen, "model must be prestonia, modern or custom:SPEC", name);
    /* custom: prestonia's figures, each given one replacing its own. */
    *cfg = preset_prestonia;
    snprintf(cfg->preset, sizeof cfg->preset, "custom");
    const char *s = name[6] == ':' ? name + 7 : name + 6;
    char item[128];
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n >= sizeof item)
            return fail(err, errlen, "SPEC item too long", s);
        memcpy(item, s, n);
        item[n] = '\0';
        if (n > 0 && cm_config_apply(cfg, item, err, errlen) != 0)
            return -1;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

static bool pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

static int check_cache(const struct cm_cache_cfg *c, const char *name, char *err, size_t errlen)
{
    if (!pow2(c->line) || c->line < 4 || c->ways == 0 || c->size % ((uint64_t)c->ways * c->line) != 0
        || !pow2(c->size / ((uint64_t)c->ways * c->line))) {
        snprintf(err, errlen, "%s: size/(ways*line) must be a power of two, line a power of two >= 4 "
                 "(size %" PRIu32 ", ways %" PRIu32 ", line %" PRIu32 ")", name, c->size, c->ways, c->line);
        return -1;
    }
    return 0;
}

static int check_tlb(const struct cm_tlb_cfg *t, const char *name, char *err, size_t errlen)
{
    if (t->ways == 0 || t->entries % t->ways != 0 || !pow2(t->entries / t->ways)) {
        snprintf(err, errlen, "%s: entries/ways must be a power of two (entries %" PRIu32 ", ways %" PRIu32 ")",
                 name, t->entries, t->ways);
        return -1;
    }
    return 0;
}

int cm_config_check(const struct cm_config *cfg, char *err, size_t errlen)
{
    if (check_cache(&cfg->l1d, "l1d", err, errlen) || check_cache(&cfg->l2, "l2", err, errlen)
        || (cfg->l3.size && check_cache(&cfg->l3, "l3", err, errlen))
        || check_tlb(&cfg->dtlb4k, "dtlb4k", err, errlen) || check_tlb(&cfg->dtlb4m, "dtlb4m", err, errlen))
        return -1;
    if (cfg->cpi_milli == 0) {
        snprintf(err, errlen, "cpi must be > 0");
        return -1;
    }
    return 0;
}

/* --- caches and TLBs ---------------------------------------------------- */

static unsigned log2u(uint64_t v)
{
    unsigned s = 0;
    while ((1ull << s) < v)
        s++;
    return s;
}

static int cache_init(struct cm_cache *c, const struct cm_cache_cfg *cfg)
{
    uint64_t sets = cfg->size / ((uint64_t)cfg->ways * cfg->line);
    c->tags = malloc(sets * cfg->ways * sizeof *c->tags);
    if (!c->tags)
        return -1;
    for (uint64_t i = 0; i < sets * cfg->ways; i++)
        c->tags[i] = CM_INVALID;
    c->set_mask = sets - 1;
    c->ways = cfg->ways;
    c->line_shift = log2u(cfg->line);
    return 0;
}

/* Looks up a line and makes it the most recent of its set; true on a hit. */
static inline bool cache_touch(struct cm_cache *c, uint64_t line)
{
    uint64_t *set = c->tags + (line & c->set_mask) * c->ways;
    if (set[0] == line)
        return true;
    uint32_t i = 1;
    while (i < c->ways && set[i] != line)
        i++;
    bool hit = i < c->ways;
    if (!hit)
        i = c->ways - 1;            /* the least recent (or an empty way: they sit at the end) */
    memmove(set + 1, set, i * sizeof *set);
    set[0] = line;
    return hit;
}

static int tlb_init(struct cm_tlb *t, const struct cm_tlb_cfg *cfg, unsigned page_shift)
{
    t->tags = malloc((size_t)cfg->entries * sizeof *t->tags);
    if (!t->tags)
        return -1;
    for (uint32_t i = 0; i < cfg->entries; i++)
        t->tags[i] = CM_INVALID;
    t->set_mask = cfg->entries / cfg->ways - 1;
    t->ways = cfg->ways;
    t->page_shift = page_shift;
    t->mru_vpn = CM_INVALID;
    return 0;
}

static inline uint64_t *tlb_set(struct cm_tlb *t, uint64_t vpn)
{
    return t->tags + (vpn & t->set_mask) * t->ways;
}

/* A hit makes the entry the most recent of its set. */
static inline bool tlb_lookup(struct cm_tlb *t, uint64_t vpn)
{
    uint64_t *set = tlb_set(t, vpn);
    for (uint32_t i = 0; i < t->ways; i++) {
        if (set[i] != CM_INVALID && set[i] >> 1 == vpn) {
            uint64_t tag = set[i];
            memmove(set + 1, set, i * sizeof *set);
            set[0] = tag;
            t->mru_vpn = vpn;
            return true;
        }
    }
    return false;
}

/* Fills an empty way if there is one (flushes leave holes), else the least recent. */
static void tlb_fill(struct cm_tlb *t, uint64_t vpn, bool global)
{
    uint64_t *set = tlb_set(t, vpn);
    uint32_t victim = 0;
    while (victim < t->ways - 1 && set[victim] != CM_INVALID)
        victim++;
    memmove(set + 1, set, victim * sizeof *set);
    set[0] = vpn << 1 | (global ? 1u : 0u);
    t->mru_vpn = vpn;
}

static void tlb_flush(struct cm_tlb *t, bool keep_global)
{
    uint64_t n = (t->set_mask + 1) * t->ways;
    for (uint64_t i = 0; i < n; i++)
        if (!(keep_global && t->tags[i] != CM_INVALID && (t->tags[i] & 1)))
            t->tags[i] = CM_INVALID;
    t->mru_vpn = CM_INVALID;
}

static void tlb_drop(struct cm_tlb *t, uint64_t vpn)
{
    uint64_t *set = tlb_set(t, vpn);
    for (uint32_t i = 0; i < t->ways; i++)
        if (set[i] != CM_INVALID && set[i] >> 1 == vpn)
            set[i] = CM_INVALID;
    t->mru_vpn = CM_INVALID;
}

/* --- the model ---------------------------------------------------------- */

int cm_model_init(struct cm_model *m, const struct cm_config *cfg, uint64_t mailbox, FILE *out)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->mailbox = mailbox;
    m->out = out;
    m->has_l3 = cfg->l3.size != 0;
    m->l1d_mru_line = CM_INVALID;
    if (cache_init(&m->l1d, &cfg->l1d) || cache_init(&m->l2, &cfg->l2)
        || (m->has_l3 && cache_init(&m->l3, &cfg->l3))
        || tlb_init(&m->tlb4k, &cfg->dtlb4k, 12) || tlb_init(&m->tlb4m, &cfg->dtlb4m, 22)) {
        cm_model_free(m);
        return -1;
    }
    return 0;
}

void cm_model_free(struct cm_model *m)
{
    free(m->l1d.tags);
    free(m->l2.tags);
    free(m->l3.tags);
    free(m->tlb4k.tags);
    free(m->tlb4m.tags);
    for (size_t i = 0; i < m->ndirs; i++)
        free(m->dirs[i]);
    free(m->dirs);
    memset(m, 0, sizeof *m);
}

/* One read or write of a physical line through L1d, L2 and L3. */
static inline void touch_line(struct cm_model *m, uint64_t pa)
{
    uint64_t line = pa >> m->l1d.line_shift;
    if (line == m->l1d_mru_line)
        return;
    m->l1d_mru_line = line;
    if (cache_touch(&m->l1d, line))
        return;
    m->c.l1d_misses++;
    if (cache_touch(&m->l2, pa >> m->l2.line_shift))
        return;
    m->c.l2_misses++;
    if (m->has_l3 && !cache_touch(&m->l3, pa >> m->l3.line_shift))
        m->c.l3_misses++;
}

static void walk_read(struct cm_model *m, uint64_t pa)
{
    m->c.walk_reads++;
    touch_line(m, pa);
}

static bool pde_known(const struct cm_pdir *d, uint32_t idx)
{
    return d && (d->known[idx / 32] >> (idx % 32) & 1);
}

/* A TLB miss: the walk's reads at their physical addresses, then the fill. */
static void walk(struct cm_model *m, uint64_t va)
{
    uint32_t idx = (uint32_t)(va >> 22) & 0x3ff;
    m->c.tlb_misses++;
    walk_read(m, m->cr3 + 4u * idx);
    if (!pde_known(m->dir, idx) || !(m->dir->pde[idx] & CM_PDE_PRESENT)) {
        m->unknown_pde_walks++;
        tlb_fill(&m->tlb4k, va >> 12, false);
        return;
    }
    uint32_t pde = m->dir->pde[idx];
    if (m->pse && (pde & CM_PDE_PS)) {
        tlb_fill(&m->tlb4m, va >> 22, m->pge && (pde & CM_PDE_GLOBAL_4M));
        return;
    }
    walk_read(m, (pde & ~0xfffu) + 4u * ((uint32_t)(va >> 12) & 0x3ff));
    tlb_fill(&m->tlb4k, va >> 12, m->pge && (pde & CM_PDE_MARK_GLOBAL_4K));
}

static inline void translate(struct cm_model *m, uint64_t va)
{
    uint64_t v4k = va >> 12, v4m = va >> 22;
    if (v4k == m->tlb4k.mru_vpn || v4m == m->tlb4m.mru_vpn)
        return;
    if (tlb_lookup(&m->tlb4k, v4k) || tlb_lookup(&m->tlb4m, v4m))
        return;
    walk(m, va);
}

static struct cm_pdir *dir_at(struct cm_model *m, uint32_t phys, bool create)
{
    phys &= ~0xfffu;
    for (size_t i = 0; i < m->ndirs; i++)
        if (m->dirs[i]->phys == phys)
            return m->dirs[i];
    if (!create)
        return NULL;
    if (m->ndirs == m->dirs_cap) {
        size_t cap = m->dirs_cap ? 2 * m->dirs_cap : 16;
        struct cm_pdir **grown = realloc(m->dirs, cap * sizeof *grown);
        if (!grown)
            return NULL;
        m->dirs = grown;
        m->dirs_cap = cap;
    }
    struct cm_pdir *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->phys = phys;
    m->dirs[m->ndirs++] = d;
    return d;
}

static struct cm_counts snapshot(const struct cm_model *m, uint64_t remaining)
{
    struct cm_counts s = m->c;
    s.instructions -= remaining;
    return s;
}

static struct cm_counts diff(const struct cm_counts *b, const struct cm_counts *a)
{
    return (struct cm_counts){
        .instructions = b->instructions - a->instructions,
        .loads = b->loads - a->loads,
        .stores = b->stores - a->stores,
        .l1d_misses = b->l1d_misses - a->l1d_misses,
        .l2_misses = b->l2_misses - a->l2_misses,
        .l3_misses = b->l3_misses - a->l3_misses,
        .tlb_misses = b->tlb_misses - a->tlb_misses,
        .walk_reads = b->walk_reads - a->walk_reads,
    };
}

uint64_t cm_cycles(const struct cm_config *cfg, const struct cm_counts *d)
{
    uint64_t after_l2 = cfg->l3.size ? cfg->l3.latency : cfg->mem_latency;
    return (d->instructions * cfg->cpi_milli + 500) / 1000
        + d->l1d_misses * cfg->l2.latency
        + d->l2_misses * after_l2
        + d->l3_misses * cfg->mem_latency
        + d->tlb_misses * cfg->walk_cycles;
}

static void write_sample(FILE *f, const struct cm_sample *s)
{
    fprintf(f, "{\"t\":\"sample\",\"case\":%" PRIu32 ",\"sample\":%" PRIu32 ",\"instructions\":%" PRIu64
            ",\"loads\":%" PRIu64 ",\"stores\":%" PRIu64 ",\"l1d_misses\":%" PRIu64 ",\"l2_misses\":%" PRIu64
            ",\"l3_misses\":%" PRIu64 ",\"tlb_misses\":%" PRIu64 ",\"walk_reads\":%" PRIu64 ",\"cycles\":%" PRIu64
            "}\n", s->case_no, s->index, s->d.instructions, s->d.loads, s->d.stores, s->d.l1d_misses,
            s->d.l2_misses, s->d.l3_misses, s->d.tlb_misses, s->d.walk_reads, s->cycles);
}

static void sample_end(struct cm_model *m, uint64_t remaining)
{
    if (!m->in_sample || m->reg_a != m->sample_case || m->reg_b != m->sample_index) {
        m->unmatched++;
        m->in_sample = false;
        return;
    }
    struct cm_counts end = snapshot(m, remaining);
    struct cm_sample *s = &m->last_sample;
    s->case_no = m->sample_case;
    s->index = m->sample_index;
    s->d = m->rdtsc_seen >= 2 ? diff(&m->at_last_rdtsc, &m->at_first_rdtsc) : diff(&end, &m->at_begin);
    s->cycles = cm_cycles(&m->cfg, &s->d);
    m->samples++;
    m->in_sample = false;
    if (m->out)
        write_sample(m->out, s);
}

static void command(struct cm_model *m, unsigned cmd, uint64_t remaining)
{
    m->marks++;
    switch (cmd) {
    case CM_CMD_PAGING_ON:
        m->paging = true;
        m->cr3 = m->reg_a & ~0xfffu;
        m->pse = m->reg_b & 1;
        m->pge = m->reg_b & 2;
        m->dir = dir_at(m, m->cr3, true);
        tlb_flush(&m->tlb4k, false);
        tlb_flush(&m->tlb4m, false);
        break;
    case CM_CMD_PAGING_OFF:
        m->paging = false;
        break;
    case CM_CMD_CR3_LOAD:
        m->cr3 = m->reg_a & ~0xfffu;
        m->dir = dir_at(m, m->cr3, true);
        tlb_flush(&m->tlb4k, m->pge);
        tlb_flush(&m->tlb4m, m->pge);
        break;
    case CM_CMD_INVLPG:
        tlb_drop(&m->tlb4k, m->reg_a >> 12);
        tlb_drop(&m->tlb4m, m->reg_a >> 22);
        break;
    case CM_CMD_PDE: {
        struct cm_pdir *d = dir_at(m, m->reg_a, true);
        if (d) {
            uint32_t idx = (m->reg_a & 0xfffu) >> 2;
            d->pde[idx] = m->reg_b;
            d->known[idx / 32] |= 1u << (idx % 32);
        }
        if ((m->reg_a & ~0xfffu) == m->cr3 && m->paging)
            m->dir = d;
        break;
    }
    case CM_CMD_SAMPLE_BEGIN:
        if (m->in_sample)
            m->unmatched++;
        m->in_sample = true;
        m->sample_case = m->reg_a;
        m->sample_index = m->reg_b;
        m->rdtsc_seen = 0;
        m->at_begin = snapshot(m, remaining);
        break;
    case CM_CMD_SAMPLE_END:
        sample_end(m, remaining);
        break;
    case CM_CMD_TLB_FLUSH_ALL:
        tlb_flush(&m->tlb4k, false);
        tlb_flush(&m->tlb4m, false);
        break;
    default:
        break;                  /* a command this model does not know: counted, nothing else */
    }
}

static void mark(struct cm_model *m, uint32_t offset, uint64_t remaining)
{
    uint32_t field = offset >> 8, byte = offset & 0xff;
    if (field < CM_FIELD_B0) {
        unsigned sh = 8 * (field - CM_FIELD_A0);
        m->reg_a = (m->reg_a & ~(0xffu << sh)) | byte << sh;
    } else if (field < CM_FIELD_B0 + 4) {
        unsigned sh = 8 * (field - CM_FIELD_B0);
        m->reg_b = (m->reg_b & ~(0xffu << sh)) | byte << sh;
    } else if (field == CM_FIELD_COMMAND) {
        command(m, byte, remaining);
    }
}

void cm_access(struct cm_model *m, uint64_t va, uint64_t pa, unsigned size_shift, bool store, bool io,
               uint64_t remaining)
{
    if (store && !io && pa - m->mailbox < CM_MAILBOX_BYTES) {
        mark(m, (uint32_t)(pa - m->mailbox), remaining);
        return;
    }
    m->accesses++;
    if (store)
        m->c.stores++;
    else
        m->c.loads++;
    uint64_t last = (1u << size_shift) - 1;
    if (m->paging) {
        translate(m, va);
        if ((va & 0xfff) + last > 0xfff)
            translate(m, va + last);        /* the access crosses into the next page */
    }
    if (io)
        return;                             /* device memory is not cached */
    touch_line(m, pa);
    if ((pa >> m->l1d.line_shift) != ((pa + last) >> m->l1d.line_shift))
        touch_line(m, pa + last);           /* the access crosses into the next line */
}

void cm_rdtsc(struct cm_model *m, uint64_t remaining)
{
    if (!m->in_sample)
        return;
    m->at_last_rdtsc = snapshot(m, remaining);
    if (m->rdtsc_seen++ == 0)
        m->at_first_rdtsc = m->at_last_rdtsc;
}

static void write_cache(FILE *f, const char *name, const struct cm_cache_cfg *c)
{
    if (!c->size) {
        fprintf(f, ",\"%s\":null", name);
        return;
    }
    fprintf(f, ",\"%s\":{\"size\":%" PRIu32 ",\"ways\":%" PRIu32 ",\"line\":%" PRIu32 ",\"latency\":%" PRIu32 "}",
            name, c->size, c->ways, c->line, c->latency);
}

void cm_write_header(const struct cm_model *m, FILE *f)
{
    const struct cm_config *c = &m->cfg;
    fprintf(f, "{\"t\":\"model\",\"version\":%d,\"preset\":\"%s\"", CM_OUTPUT_VERSION, c->preset);
    write_cache(f, "l1d", &c->l1d);
    write_cache(f, "l2", &c->l2);
    write_cache(f, "l3", &c->l3);
    fprintf(f, ",\"dtlb4k\":{\"entries\":%" PRIu32 ",\"ways\":%" PRIu32 "}", c->dtlb4k.entries, c->dtlb4k.ways);
    fprintf(f, ",\"dtlb4m\":{\"entries\":%" PRIu32 ",\"ways\":%" PRIu32 "}", c->dtlb4m.entries, c->dtlb4m.ways);
    fprintf(f, ",\"cpi\":%" PRIu32 ".%03" PRIu32 ",\"mem_latency\":%" PRIu32 ",\"walk_cycles\":%" PRIu32
            ",\"mailbox\":\"0x%" PRIx64 "\"}\n", c->cpi_milli / 1000, c->cpi_milli % 1000, c->mem_latency,
            c->walk_cycles, m->mailbox);
}

void cm_finish(struct cm_model *m, FILE *f)
{
    if (m->in_sample) {
        m->unmatched++;
        m->in_sample = false;
    }
    fprintf(f, "{\"t\":\"end\",\"samples\":%" PRIu64 ",\"unmatched\":%" PRIu64 ",\"unknown_pde_walks\":%" PRIu64
            ",\"marks\":%" PRIu64 ",\"accesses\":%" PRIu64 "}\n", m->samples, m->unmatched, m->unknown_pde_walks,
            m->marks, m->accesses);
}
