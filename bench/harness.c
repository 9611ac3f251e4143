#include "bench/harness.h"

#include "arch/memtype.h"
#include "arch/modelmark.h"
#include "arch/mtrr.h"
#include "arch/paging.h"
#include "arch/perfstate.h"
#include "arch/tsc.h"
#include "kernel/console.h"
#include "kernel/counters.h"
#include "kernel/counters_record.h"
#include "kernel/fault.h"
#include "kernel/memory.h"
#include "lib/defaults.h"
#include "lib/fmt.h"
#include "lib/record.h"
#include "lib/stats.h"
#include "lib/string.h"
#include "lib/wire.h"
#include "runtime/fiber.h"

/* The next case's number: cases count from 0 in the order the harness
 * starts measuring them, through the whole boot. result.case_no and the
 * model's sample marks (arch/modelmark.h) carry it, so the host can join
 * the model's per-sample figures to their record. */
static uint32_t next_case_no;

/* A recorded sample: which case, which of its samples. */
struct sample_id {
    uint32_t case_no, index;
};

static void progress(struct bench_ctx *ctx)
{
    rec_begin(REC_PROGRESS);
    rec_str("bench", ctx->bench->name);
    rec_u64("done", ctx->done);
    rec_u64("total", ctx->total);
    rec_end();
    console_status(" cleanroom: %s  case %u/%u", ctx->bench->name, ctx->done, ctx->total);
}

void bench_running_user(struct bench_ctx *ctx, const char *case_name, const char *user)
{
    rec_begin(REC_PROGRESS);
    rec_str("bench", ctx->bench->name);
    rec_u64("done", ctx->done);
    rec_u64("total", ctx->total);
    rec_str("case", case_name);
    rec_str(WIRE_USER, user);
    rec_end();
}

void bench_plan(struct bench_ctx *ctx, uint32_t cases)
{
    ctx->total = cases;
    ctx->done = 0;
    progress(ctx);
}

uint32_t bench_reps(const struct bench_ctx *ctx, uint32_t fallback)
{
    return ctx->cfg->given[KEY_REPS] ? ctx->cfg->reps : fallback;
}

static void case_done(struct bench_ctx *ctx)
{
    ctx->done++;
    if (ctx->done > ctx->total)
        ctx->total = ctx->done;
    progress(ctx);
    fault_set_running(ctx->bench->name, 0);
}

static bool has_param(const struct bench_case *c, const char *key)
{
    for (uint32_t i = 0; i < c->nparams; i++)
        if (str_eq(c->params[i].key, key))
            return true;
    return false;
}

/* The case's own parameters, then the paging state it ran under (every
 * result says whether paging was on, unless the case says it itself). */
static void params(const struct bench_ctx *ctx, const struct bench_case *c)
{
    rec_obj_begin("params");
    for (uint32_t i = 0; i < c->nparams; i++) {
        if (c->params[i].str)
            rec_str(c->params[i].key, c->params[i].str);
        else
            rec_u64(c->params[i].key, c->params[i].num);
    }
    if (!has_param(c, "paging"))
        rec_str("paging", paging_mode_name());
    if (!has_param(c, "pagesize"))
        rec_str("pagesize", config_value_name(ctx->cfg, KEY_PAGESIZE));
    rec_obj_end();
}

void bench_skip(struct bench_ctx *ctx, const char *case_name, const char *why)
{
    rec_begin(REC_SKIP);
    rec_str("what", case_name);
    rec_str("bench", ctx->bench->name);
    rec_str("why", why);
    rec_end();
    console_say(VGA_YELLOW, "  %s/%s: skipped: %s", ctx->bench->name, case_name, why);
    case_done(ctx);
}


/* The events this run counts, in enum order; their count. */
static uint32_t open_events(enum counter_event ev[CTR_COUNT])
{
    uint32_t n = 0;
    if (counters_open() == 0)
        return 0;
    for (uint32_t e = 0; e < CTR_COUNT; e++)
        if (counters_has((enum counter_event)e))
            ev[n++] = (enum counter_event)e;
    return n;
}

/* One call of the item's function: the hook first, then (when ctr is
 * given, i.e. a recorded sample with counters open) the counters read
 * just before and just after it, their differences stored in ctr[j].
 * A recorded sample (id given; warm-up runs are not) is marked for the
 * model just outside the counters, so they count what they counted before;
 * the marks lie outside every timed region. */
/* --- layout= ------------------------------------------------------------------------------
 * Each round (warm-up too) moves the stack frame its items run in, and the
 * fiber stacks bench_time_fibers makes, by 0-4080 bytes in steps of 16,
 * from a generator seeded with layout=: where a frame or a stack lies
 * within its page (4 KiB aliasing, cache sets) moves a figure by up to half
 * between two processes of one binary, so each round samples a layout of
 * its own instead of every round repeating one. The cases of a round share
 * it (their differences pair up); nothing is added inside a timed region. */
static uint32_t layout_rng;
static uint32_t round_shift;

static void layout_next_round(const struct bench_ctx *ctx)
{
    if (!ctx->cfg->layout) {
        round_shift = 0;
        return;
    }
    if (!layout_rng)
        layout_rng = ctx->cfg->layout;
    layout_rng ^= layout_rng << 13; /* xorshift32 */
    layout_rng ^= layout_rng >> 17;
    layout_rng ^= layout_rng << 5;
    round_shift = (layout_rng & 0xff) * 16;
}

/* Not inlined: its alloca must end with each call, not grow the caller's loop's frame. */
__attribute__((noinline)) static int64_t call_item(const struct bench_ctx *ctx, const struct bench_item *it,
                                                   const struct sample_id *id, int64_t *ctr,
                                                   const enum counter_event *ev, uint32_t nev)
{
    if (round_shift) { /* this round's layout: the frame below moves */
        volatile char *pad = __builtin_alloca(round_shift);
        pad[0] = 0;
    }
    fault_set_running(ctx->bench->name, it->c->name);
    if (it->before)
        it->before(it->hook_arg);
    if (!id)
        return it->fn(it->arg);
    model_mark_sample_begin(id->case_no, id->index);
    int64_t s;
    if (!ctr) {
        s = it->fn(it->arg);
    } else {
        uint64_t before[CTR_COUNT], after[CTR_COUNT];
        counters_read(before);
        s = it->fn(it->arg);
        counters_read(after);
        for (uint32_t j = 0; j < nev; j++)
            ctr[j] = (int64_t)(after[ev[j]] - before[ev[j]]);
    }
    model_mark_sample_end(id->case_no, id->index);
    return s;
}

static int64_t overhead_of(const struct bench_case *c)
{
    return c->subtract_overhead ? (int64_t)tsc_info()->overhead : 0;
}

static uint64_t per_of(const struct bench_case *c)
{
    return c->per > 1 ? c->per : 1;
}

/* What a set's records say besides their samples: the memory type of
 * what it used, and the APERF/MPERF and SMI-count deltas over its recorded
 * rounds (one span for every case of the set: they were read around the
 * rounds, never around a sample). */
struct set_evidence {
    enum memtype memtype;
    struct perfstate before, after;
};

static void evidence_fields(const struct set_evidence *e)
{
    rec_str("memtype", memtype_name(e->memtype));
    if (perfstate_has_aperf_mperf()) {
        rec_u64("aperf", e->after.aperf - e->before.aperf);
        rec_u64("mperf", e->after.mperf - e->before.mperf);
    }
    if (perfstate_has_smi())
        rec_u64("smi", (uint32_t)(e->after.smi - e->before.smi)); /* the MSR counts in 32 bits */
}

/* How a set's rounds went: how many were recorded (each item's count of
 * samples), the length of its counter rows, and under runs=auto whether
 * its key quantities reached precision= before budget= ran out. */
struct set_rounds {
    uint32_t n, row;
    bool autorun, converged;
};

/* The record of one item: samples[n] in run order (sorted here), its
 * counters ctr[nev][row] (the first n of each row sorted here too). */
static void emit(struct bench_ctx *ctx, const struct bench_item *it, uint32_t case_no, int64_t *samples,
                 int64_t *ctr, const enum counter_event *ev, uint32_t nev, const struct set_evidence *evid,
                 const struct set_rounds *r)
{
    struct bench_case c = *it->c;
    if (it->late_params)
        it->late_params(&c, it->hook_arg);
    rec_begin(REC_RESULT);
    rec_str("bench", ctx->bench->name);
    rec_str("case", c.name);
    params(ctx, &c);
    /* after params: bench, case and params stay one run of the line, which a LAVA monitor's
     * regex takes whole as the test case's name (docs/LAB.md) */
    rec_u64("case_no", case_no);
    rec_str("unit", "cycles");
    /* in run order, before stats sorts them: round i of every item of the
     * set is samples[i], so the host can pair them */
    if (ctx->cfg->raw || r->n <= CR_DEF_SAMPLES_MAX) {
        rec_arr_begin("samples");
        for (uint32_t i = 0; i < r->n; i++)
            rec_i64(0, samples[i]);
        rec_arr_end();
    }
    struct stats st;
    stats_compute(samples, r->n, &st);
    rec_u64("n", st.n);
    if (r->autorun)
        rec_bool("converged", r->converged);
    rec_i64("min", st.min);
    rec_i64("med", st.med);
    rec_i64("max", st.max);
    rec_i64("mean", st.mean);
    rec_u64("per", per_of(&c));
    if (c.sums)
        rec_bool(WIRE_SUMS, true);
    rec_u64("overhead", (uint64_t)overhead_of(&c));
    evidence_fields(evid);
    if (nev) {
        /* totals of the whole run function per sample, not divided by per */
        rec_obj_begin("counters");
        for (uint32_t j = 0; j < nev; j++) {
            struct stats cs;
            stats_compute(ctr + j * r->row, r->n, &cs);
            rec_obj_begin(counters_name(ev[j]));
            rec_i64("min", cs.min);
            rec_i64("med", cs.med);
            rec_i64("max", cs.max);
            rec_obj_end();
        }
        rec_obj_end();
    }
    rec_end();
    console_say(VGA_GREY, "  %s/%-14s med %8lld  min %8lld  max %8lld cycles, %u runs%s", ctx->bench->name,
                c.name, (long long)st.med, (long long)st.min, (long long)st.max, st.n,
                r->autorun && !r->converged ? " (budget spent)" : "");
    case_done(ctx);
}

/* A set measured in turn writes its records only after its last round, so
 * a long one would be silent for all its cases together, and the host
 * takes a long silence for a hang: between rounds, once a second of TSC
 * time has passed since the last word, a progress record (done unchanged)
 * says the run goes on. Outside every timed region. */
static void heartbeat(struct bench_ctx *ctx, uint64_t *last)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : 1000000000u, now = rdtsc();
    if (now - *last < hz)
        return;
    progress(ctx);
    *last = rdtsc();
}

/* Memory that is not write-back (the firmware's MTRRs, or PAT entry 0)
 * would time the memory bus instead of the caches: such a set is skipped,
 * naming the range and its type, never measured silently. What the set
 * uses is everything handed out at this moment (its buffers, stacks and
 * samples) and the kernel image. Unknown (no MTRRs to read) is measured,
 * and says so in every result. */
static bool refuse_memory(struct bench_ctx *ctx, const struct bench_item items[], uint32_t n, enum memtype *type)
{
    uint64_t bad_base = 0, bad_end = 0;
    enum memtype bad_type = MEMTYPE_UNKNOWN;
    *type = mtrr_used_memory_type(&bad_base, &bad_end, &bad_type);
    if (*type == MEMTYPE_WB || *type == MEMTYPE_UNKNOWN)
        return false;
    char why[128];
    fmt(why, sizeof why, "memory [0x%llx, 0x%llx) is %s, not write-back (memtype %s): not measured",
        (unsigned long long)bad_base, (unsigned long long)bad_end, memtype_name(bad_type), memtype_name(*type));
    for (uint32_t k = 0; k < n; k++)
        bench_skip(ctx, items[k].c->name, why);
    return true;
}

/* --- runs=auto ---------------------------------------------------------------------------- */

/* This boot's (process's) share of a count the run's replicas= boots share
 * out (lib/config.h): at least one. */
static uint32_t replica_share(const struct bench_ctx *ctx, uint32_t total)
{
    uint32_t k = ctx->cfg->replicas ? ctx->cfg->replicas : 1;
    uint32_t share = total / k + (total % k != 0);
    return share ? share : 1;
}

/* The most rounds a set may take in this boot: its share of runs=, or
 * under runs=auto of its budget in rounds (a budget in seconds:
 * CR_DEF_AUTO_MAX_RUNS, at which it stops anyway). */
static uint32_t max_rounds(const struct bench_ctx *ctx)
{
    if (ctx->runs != CFG_RUNS_AUTO)
        return replica_share(ctx, ctx->runs);
    uint32_t b = ctx->cfg->budget;
    return b & CFG_SECONDS ? CR_DEF_AUTO_MAX_RUNS : replica_share(ctx, b);
}

/* runs=auto's first decision: after this boot's share of
 * CR_DEF_AUTO_MIN_RUNS, but never on one round (one sample has no width)
 * where the budget allows two. */
static uint32_t min_rounds(const struct bench_ctx *ctx, uint32_t row)
{
    uint32_t min = replica_share(ctx, CR_DEF_AUTO_MIN_RUNS);
    if (min < 2)
        min = 2;
    return min < row ? min : row;
}

/* Whether an item's median is one of the set's key quantities: it is
 * measured against nothing and nothing is measured against it. */
static bool own_key(const struct bench_item items[], uint32_t n, uint32_t k)
{
    if (items[k].against)
        return false;
    for (uint32_t j = 0; j < n; j++)
        if (items[j].against == &items[k])
            return false;
    return true;
}

/* A set's samples: item k's in run order at mem + k * stride. */
struct set_samples {
    int64_t *mem;
    uint64_t stride;
    int64_t *scratch; /* a row for runs=auto's intervals */
};

static int64_t *samples_of(const struct set_samples *ss, uint32_t k)
{
    return ss->mem + k * ss->stride;
}

/* Whether every key quantity of the set is known to precision= after
 * `done` rounds: the 95 % interval of its per-round values (a difference
 * this - that, or the item's own samples; stats_median_interval) at most
 * precision= basis points of the larger of its median and, for a
 * difference, the median of what it is measured against (so a difference
 * near 0 is known to that share of its baseline). */
static bool set_converged(const struct bench_ctx *ctx, const struct bench_item items[], uint32_t n,
                          const struct set_samples *ss, uint32_t done)
{
    int64_t *scratch = ss->scratch;
    for (uint32_t k = 0; k < n; k++) {
        const struct bench_item *base = items[k].against;
        if (!base && !own_key(items, n, k))
            continue;
        uint64_t ref = 0;
        struct stats_interval iv;
        if (base) {
            const int64_t *b = samples_of(ss, (uint32_t)(base - items));
            for (uint32_t i = 0; i < done; i++)
                scratch[i] = b[i];
            stats_median_interval(scratch, done, &iv);
            ref = iv.med < 0 ? -(uint64_t)iv.med : (uint64_t)iv.med;
            for (uint32_t i = 0; i < done; i++)
                scratch[i] = samples_of(ss, k)[i] - b[i];
        } else {
            for (uint32_t i = 0; i < done; i++)
                scratch[i] = samples_of(ss, k)[i];
        }
        stats_median_interval(scratch, done, &iv);
        uint64_t mag = iv.med < 0 ? -(uint64_t)iv.med : (uint64_t)iv.med;
        if (!stats_within(&iv, mag > ref ? mag : ref, ctx->cfg->precision))
            return false;
    }
    return true;
}

/* Under runs=auto with a budget in seconds: TSC ticks of it (at 1 GHz
 * when the TSC's rate is unknown, as the heartbeat assumes). */
static uint64_t budget_ticks(const struct bench_ctx *ctx)
{
    uint64_t hz = tsc_info()->hz ? tsc_info()->hz : 1000000000u;
    uint32_t k = ctx->cfg->replicas ? ctx->cfg->replicas : 1;
    return (uint64_t)(ctx->cfg->budget & ~CFG_SECONDS) * hz / k;
}

/* Whether a set stops after `done` recorded rounds (that began at TSC
 * `start`); sets r->converged under runs=auto. */
static bool set_done(const struct bench_ctx *ctx, const struct bench_item items[], uint32_t n,
                     const struct set_samples *ss, uint64_t start, struct set_rounds *r)
{
    bool decide = r->autorun && r->n >= min_rounds(ctx, r->row);
    if (decide && r->n >= 2 && set_converged(ctx, items, n, ss, r->n)) { /* one sample has no width */
        r->converged = true;
        return true;
    }
    if (r->n >= r->row)
        return true;
    return decide && (ctx->cfg->budget & CFG_SECONDS) && rdtsc() - start >= budget_ticks(ctx);
}

void bench_measure_set(struct bench_ctx *ctx, const struct bench_item items[], uint32_t n)
{
    struct region_mark mark;
    memory_mark(&mark);
    enum counter_event ev[CTR_COUNT];
    uint32_t nev = open_events(ev);
    struct set_rounds r = { .row = max_rounds(ctx), .autorun = ctx->runs == CFG_RUNS_AUTO };
    /* per item: row samples, then nev x row counter differences; then a
     * scratch row for runs=auto's intervals */
    uint64_t stride = (uint64_t)r.row * (1 + nev);
    uint64_t bytes = (stride * n + r.row) * sizeof(int64_t);
    int64_t *mem = bytes < (1ull << 32) ? memory_alloc((uint32_t)bytes, 8) : 0;
    if (!mem) {
        for (uint32_t k = 0; k < n; k++)
            bench_skip(ctx, items[k].c->name, "no memory for the samples");
        memory_release(&mark);
        return;
    }
    const struct set_samples ss = { mem, stride, mem + n * stride };
    struct set_evidence evid = { .memtype = MEMTYPE_UNKNOWN };
    if (refuse_memory(ctx, items, n, &evid.memtype)) {
        memory_release(&mark);
        return;
    }
    /* numbered once measuring starts: a refused set consumes no numbers */
    uint32_t first_case_no = next_case_no;
    next_case_no += n;
    uint64_t last = rdtsc();
    for (uint32_t i = 0; i < ctx->warmup; i++) {
        layout_next_round(ctx);
        for (uint32_t k = 0; k < n; k++)
            call_item(ctx, &items[k], 0, 0, ev, 0);
        heartbeat(ctx, &last);
    }
    int64_t ctr_now[CTR_COUNT];
    perfstate_read(&evid.before); /* outside every timed region, as the heartbeat is */
    uint64_t start = rdtsc();
    while (!set_done(ctx, items, n, &ss, start, &r)) {
        uint32_t i = r.n;
        layout_next_round(ctx);
        for (uint32_t k = 0; k < n; k++) {
            int64_t *own = samples_of(&ss, k);
            const struct sample_id id = { first_case_no + k, i };
            int64_t s = call_item(ctx, &items[k], &id, nev ? ctr_now : 0, ev, nev);
            s -= overhead_of(items[k].c);
            own[i] = items[k].c->sums ? s : stats_per(s, per_of(items[k].c));
            for (uint32_t j = 0; j < nev; j++)
                own[r.row * (1 + j) + i] = ctr_now[j];
        }
        r.n++;
        heartbeat(ctx, &last);
    }
    perfstate_read(&evid.after);
    round_shift = 0;
    for (uint32_t k = 0; k < n; k++)
        emit(ctx, &items[k], first_case_no + k, samples_of(&ss, k), samples_of(&ss, k) + r.row, ev, nev, &evid,
             &r);
    memory_release(&mark);
}

void bench_measure(struct bench_ctx *ctx, const struct bench_case *c, bench_run_fn fn, void *arg)
{
    const struct bench_item item = { .c = c, .fn = fn, .arg = arg };
    bench_measure_set(ctx, &item, 1);
}

int64_t bench_time_fibers(const struct fiber_spec *specs, uint32_t n, uint64_t *switches)
{
    struct region_mark mark;
    memory_mark(&mark);
    if (round_shift) /* this round's layout: the stacks below move */
        memory_alloc(round_shift, 16);
    sched_init(SWITCH_CALLEE);
    uint32_t made = 0;
    while (made < n && fiber_create(specs[made].fiber, specs[made].name, specs[made].fn, specs[made].arg,
                                    specs[made].stack))
        made++;
    int64_t cycles = 0;
    if (made == n) {
        uint64_t t0 = tsc_begin();
        sched_run();
        cycles = (int64_t)(tsc_end() - t0);
    }
    if (switches)
        *switches = sched_switches();
    for (uint32_t i = 0; i < made; i++)
        fiber_release(specs[i].fiber);
    memory_release(&mark);
    return cycles;
}
