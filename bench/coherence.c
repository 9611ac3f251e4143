/* bench coherence: what moving one cache line between two CPUs costs, for
 * every pair of CPUs (the core-to-core matrix). CPU `from` and CPU `to`
 * take turns with one word on a line of its own: `from` waits until it
 * reads 2i and compare-and-swaps it to 2i+1, `to` waits for 2i+1 and
 * swaps it to 2i+2. Each swap needs the line in its CPU's cache, just
 * written by the other: a round trip is two transfers of the line. The
 * sample is `from`'s own TSC over `reps` round trips (one clock: no
 * comparison of two CPUs' TSCs); the host divides it by reps. The two
 * start together from a start line of their own (parallel_run_on); every
 * other CPU stays idle (hosted: asleep), so that nothing else running
 * changes the pair's clock speed or shares its cores.
 *
 * The waits read the word (no locked access until it has changed) and
 * pause every SPINS_PER_PAUSE reads: often enough that an emulator running
 * the CPUs in turn gets on, rarely enough that on a real machine the line
 * usually arrives while the reads are spinning. Every pair of one run is
 * measured as one set, sample by sample; from < to (the matrix is taken
 * as symmetric). params.from_id/to_id are the CPUs' APIC ids (hosted: the
 * OS's CPU numbers), for telling SMT siblings and sockets apart; params.smt
 * says whether the two are siblings (where the cores are known).
 * A hosted sample during which the OS took a worker off its CPU is run
 * again (parallel_undisturbed: params.retried, params.disturbed). */
#include "arch/tsc.h"
#include "arch/x86.h"
#include "bench/parallel.h"
#include "bench/registry.h"
#include "kernel/smp.h"
#include "kernel/smp_cores.h"
#include "lib/defaults.h"

#ifdef CLEANROOM_HOSTED
#define QUICK_REPS CR_DEF_COHERENCE_REPS_HOSTED
#else
#define QUICK_REPS CR_DEF_COHERENCE_REPS_KERNEL
#endif
#define SPINS_PER_PAUSE 256u
#define LINE 64u
#define MAX_PAIRS (SMP_MAX_CPUS * (SMP_MAX_CPUS - 1) / 2)

struct ball {
    volatile uint32_t word __attribute__((aligned(2 * LINE))); /* alone on its line (and its pair's) */
    uint8_t pad[2 * LINE - sizeof(uint32_t)];
};

struct pair {
    uint32_t from, to, reps;
    struct ball *ball;
    volatile uint32_t gave_up;
    volatile uint32_t stop;  /* ping is done (all reps, or its time limit): pong stops waiting */
    uint32_t rounds;         /* round trips ping timed in the last sample */
    int64_t cycles;
    uint32_t failed; /* samples in which a side gave up waiting */
    uint32_t cut;    /* samples stopped by the time limit (bench/parallel.h) and scaled to reps */
    struct parallel_tally tally;
};

static struct ball ball;

/* Until *w reads want; false when the other CPU never wrote it, or (pong)
 * when ping has stopped. */
static bool await(struct pair *p, uint32_t want, uint64_t deadline)
{
    for (uint32_t spins = 1; p->ball->word != want; spins++) {
        if (spins % SPINS_PER_PAUSE)
            continue;
        cpu_pause();
        if (p->stop || p->gave_up)
            return false;
        if (rdtsc() > deadline) {
            p->gave_up = 1;
            return false;
        }
    }
    return true;
}

static void pong(struct pair *p)
{
    uint64_t deadline = parallel_deadline();
    for (uint32_t i = 0; i < p->reps; i++) {
        if (!await(p, 2 * i + 1, deadline))
            return;
        cmpxchg32(&p->ball->word, 2 * i + 1, 2 * i + 2);
    }
}

/* reps round trips, or fewer when the sample's time limit comes first (CPUs
 * that are host threads, or workers sharing a CPU: a round trip may then
 * take a time slice). */
static void ping(struct pair *p)
{
    uint64_t deadline = parallel_deadline();
    struct parallel_budget b;
    parallel_budget_start(&b, PARALLEL_SAMPLE_MS);
    uint64_t t0 = tsc_begin();
    uint32_t i = 0;
    for (; i < p->reps && parallel_budget_left(&b, i); i++) {
        if (!await(p, 2 * i, deadline))
            return;
        cmpxchg32(&p->ball->word, 2 * i, 2 * i + 1);
    }
    p->cycles = (int64_t)(tsc_end() - t0);
    p->rounds = i;
    p->stop = 1;
}

/* Worker 0 on CPU `from` pings, worker 1 on CPU `to` pongs. */
static void player(uint32_t w, void *arg)
{
    struct pair *p = arg;
    if (w == 0)
        ping(p);
    else
        pong(p);
}

static int64_t once(void *arg)
{
    struct pair *p = arg;
    const uint32_t cpus[2] = { p->from, p->to };
    p->ball->word = 0;
    p->gave_up = p->stop = 0;
    p->cycles = 0;
    p->rounds = p->reps;
    parallel_run_on(cpus, 2, player, p);
    p->cut += p->rounds < p->reps;
    return parallel_scaled(p->cycles, p->reps, p->rounds);
}

static int64_t run_pair(void *arg)
{
    struct pair *p = arg;
    int64_t t = parallel_undisturbed(once, p, &p->tally);
    p->failed += p->gave_up != 0;
    return t;
}

static void late_params(struct bench_case *c, void *arg)
{
    const struct pair *p = arg;
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("gave_up", p->failed);
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("cut", p->cut);
    parallel_tally_params(c, &p->tally);
}

static void run(struct bench_ctx *ctx)
{
    static struct pair pairs[MAX_PAIRS];
    static struct bench_case cases[MAX_PAIRS];
    static struct bench_item items[MAX_PAIRS];
    const struct smp_summary *s = smp_summary();
    uint32_t n = smp_cpus(), np = 0;
    uint32_t reps = bench_reps(ctx, ctx->cfg->suite == SUITE_PAPER ? CR_DEF_COHERENCE_PAPER_REPS : QUICK_REPS);
    bench_plan(ctx, n * (n - 1) / 2);
    for (uint32_t from = 0; from < n; from++) {
        for (uint32_t to = from + 1; to < n; to++, np++) {
            pairs[np] = (struct pair){ .from = from, .to = to, .reps = reps, .ball = &ball };
            struct bench_case *c = &cases[np];
            *c = (struct bench_case){ .name = "roundtrip", .subtract_overhead = true };
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("cpus", 2);
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("from", from);
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("to", to);
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("from_id", s->used_ids[from]);
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("to_id", s->used_ids[to]);
            if (s->cores)
                c->params[c->nparams++] = (struct bench_param)PARAM_NUM("smt", smp_siblings(from, to));
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("of", n);
            c->params[c->nparams++] = (struct bench_param)PARAM_NUM("reps", reps);
            items[np] = (struct bench_item){ .c = c, .fn = run_pair, .arg = &pairs[np], .late_params = late_params,
                                             .hook_arg = &pairs[np] };
        }
    }
    bench_measure_set(ctx, items, np);
}

const struct bench bench_coherence = {
    .name = "coherence",
    .what = "one cache line bounced between two CPUs by compare-and-swap: round trip, every pair",
    .in_smp = true,
    .unavailable = parallel_needs_two,
    .run = run,
};
