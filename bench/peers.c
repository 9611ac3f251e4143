/* bench peers (hosted build only): cleanroom's fibers and locks side by side
 * with what a Linux program would otherwise use, in one run:
 *   switch_fiber: cleanroom's callee switch between two fibers of
 *     runtime/pair.h (both in the same loop), total ticks per switch, the
 *     loop and its empty work calls included: a subtracted baseline would
 *     leave a few ticks of difference that rounds to 0;
 *   switch_ucontext: glibc swapcontext, in both shapes (bench/peerloops.h);
 *   handoff_pthread: a mutex+condvar handoff between two NPTL threads on one
 *     CPU, per handoff;
 *   switch_callee64, switch_jump64, switch_popjmp64, switch_boost,
 *     switch_ucontext64, handoff_pthread64: the same on x86-64, in the
 *     helper program cleanroom-peers64 (cleanroom's callee and jump switches
 *     ported, and the callee frame left by pop + jmp always, Boost.Context's
 *     jump_fcontext, swapcontext, NPTL), asked for one timed run per sample;
 *   pingpong_fiber / pingpong_pthread_1cpu / pingpong_pthread_2cpu: a
 *     mutex+condvar ping-pong, fibers vs NPTL threads on one CPU (as the
 *     LiteThreads report pinned with taskset) and on two;
 *   create_fiber / create_pthread: create + run + join, per thread;
 *   lock_*: uncontended lock+unlock of each cleanroom lock and of
 *     pthread_mutex and pthread_spin.
 * All in cycles per operation (switch, handoff, round trip, thread,
 * lock+unlock). The switch and handoff cases carry params bits (32 or 64),
 * shape (symmetric, asymmetric) and switches, and divide the ticks of the
 * whole timed loop by its switches: nothing subtracted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/tsc.h"
#include "bench/peerloops.h"
#include "bench/registry.h"
#include "kernel/counters.h"
#include "kernel/memory.h"
#include "lib/defaults.h"
#include "lib/record.h"
#include "lib/wire.h"
#include "runtime/fiber.h"
#include "runtime/pair.h"
#include "runtime/pingpong.h"
#include "runtime/spinlock.h"
#include "runtime/stackpool.h"
#include "runtime/sync.h"

#define CREATE_BATCH 64

/* --- switches ------------------------------------------------------------------ */

static void no_work(void *ctx, int which) { (void)ctx, (void)which; }

/* bench/peerloops.c times with the same clock as every other case. */
uint64_t peer_clock_begin(void) { return tsc_begin(); }
uint64_t peer_clock_end(void) { return tsc_end(); }

#define UC_STACK 65536

struct uc_run {
    enum peer_shape shape;
    uint64_t switches;
    uint8_t *stacks; /* two of UC_STACK */
};

static int64_t run_switch_ucontext(void *arg)
{
    struct uc_run *u = arg;
    return peer_ucontext(u->shape, u->switches, u->stacks, UC_STACK);
}

static int64_t run_handoff_pthread(void *arg) { return peer_pthread_handoff(*(uint64_t *)arg); }

/* --- mutex + condvar ping-pong ----------------------------------------------------------- */

static int64_t run_pingpong_fiber(void *arg)
{
    struct fiber_pingpong *p = arg;
    pingpong_init(p, p->rounds);
    const struct fiber_spec specs[] = { { &p->f[0], "ping", pingpong_body, p, 0 }, { &p->f[1], "pong", pingpong_body, p, 0 } };
    return bench_time_fibers(specs, 2, 0);
}

struct thread_pp {
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint32_t turn, rounds;
    int cpus[2];
};

struct thread_arg {
    struct thread_pp *p;
    uint32_t me;
};

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void *tpp_body(void *arg)
{
    struct thread_arg *a = arg;
    struct thread_pp *p = a->p;
    pin(p->cpus[a->me]);
    for (uint32_t i = 0; i < p->rounds; i++) {
        pthread_mutex_lock(&p->m);
        while (p->turn != a->me)
            pthread_cond_wait(&p->cv, &p->m);
        p->turn = !a->me;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->m);
    }
    return 0;
}

static int64_t run_pingpong_pthread(void *arg)
{
    struct thread_pp *p = arg;
    pthread_mutex_init(&p->m, 0);
    pthread_cond_init(&p->cv, 0);
    p->turn = 0;
    pthread_t t[2];
    struct thread_arg a[2] = { { p, 0 }, { p, 1 } };
    uint64_t t0 = tsc_begin();
    pthread_create(&t[0], 0, tpp_body, &a[0]);
    pthread_create(&t[1], 0, tpp_body, &a[1]);
    pthread_join(t[0], 0);
    pthread_join(t[1], 0);
    int64_t cycles = (int64_t)(tsc_end() - t0);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->m);
    return cycles;
}

/* --- create + run + join -------------------------------------------------------------------- */

struct creation {
    struct stackpool pool;
    struct fiber parent, children[CREATE_BATCH];
};

static void empty_fiber(void *arg) { (void)arg; }

static void creator(void *arg)
{
    struct creation *c = arg;
    for (int i = 0; i < CREATE_BATCH; i++) {
        struct fiber_stack s;
        if (!stackpool_take(&c->pool, &s))
            return;
        fiber_create_on(&c->children[i], "child", empty_fiber, 0, &s);
        fiber_join(&c->children[i]);
        stackpool_give(&c->pool, &s);
    }
}

static int64_t run_create_fiber(void *arg)
{
    struct creation *c = arg;
    const struct fiber_spec parent = { &c->parent, "parent", creator, c, 0 };
    return bench_time_fibers(&parent, 1, 0);
}

static void *empty_thread(void *arg) { return arg; }

static int64_t run_create_pthread(void *arg)
{
    (void)arg;
    uint64_t t0 = tsc_begin();
    for (int i = 0; i < CREATE_BATCH; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, empty_thread, 0) == 0)
            pthread_join(t, 0);
    }
    return (int64_t)(tsc_end() - t0);
}

/* --- uncontended locks ---------------------------------------------------------------------- */

enum peer_lock { PL_TAS, PL_TTAS, PL_TICKET, PL_MUTEX, PL_SPINBLOCK, PL_PTHREAD_MUTEX, PL_PTHREAD_SPIN, PL_COUNT };
static const char *const peer_lock_names[PL_COUNT] = {
    "lock_tas", "lock_ttas", "lock_ticket", "lock_mutex", "lock_spinblock", "lock_pthread_mutex", "lock_pthread_spin",
};

struct lock_run {
    enum peer_lock kind;
    uint32_t reps;
    struct spinlock spin;
    struct fmutex mutex;
    struct spinblock sb;
    pthread_mutex_t pm;
    pthread_spinlock_t ps;
};

static int64_t run_lock(void *arg)
{
    struct lock_run *l = arg;
    uint64_t t0 = tsc_begin();
    for (uint32_t i = 0; i < l->reps; i++) {
        switch (l->kind) {
        case PL_MUTEX: fmutex_lock(&l->mutex); fmutex_unlock(&l->mutex); break;
        case PL_SPINBLOCK: spinblock_lock(&l->sb); spinblock_unlock(&l->sb); break;
        case PL_PTHREAD_MUTEX: pthread_mutex_lock(&l->pm); pthread_mutex_unlock(&l->pm); break;
        case PL_PTHREAD_SPIN: pthread_spin_lock(&l->ps); pthread_spin_unlock(&l->ps); break;
        default: spin_lock(&l->spin); spin_unlock(&l->spin); break;
        }
    }
    return (int64_t)(tsc_end() - t0);
}

/* --- the 64-bit helper (hosted/peers64/peers64.c) --------------------------------------------- */

#define PEERS64_FILE "cleanroom-peers64"
#define PEERS64_GREETING "peers64 1 boost " /* the helper's first line: its protocol 1 */
#define PEERS64_BUILD "`make hosted` builds it beside cleanroom-hosted (with gcc and libboost-context-dev, " \
                      "which tools/setup.sh installs)"

/* The helper runs as a child on two pipes; one request, one reply line. */
struct helper {
    pid_t pid;        /* 0: not running */
    int to, from;     /* request and reply pipes */
    bool up;          /* greeted and not failed */
    const char *voided; /* the last case it failed in the middle of (error record written) */
    char why[512];    /* why the 64-bit cases are skipped, when !up */
    char boost[48];   /* "Boost.Context 1.74 jump_fcontext" */
    char line[160];   /* the last reply */
    struct sigaction old_pipe;
};
static struct helper helper;

/* The reason text may be cut short (a long path): it is a message. */
static void __attribute__((format(printf, 2, 3))) helper_down(struct helper *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->why, sizeof h->why, fmt, ap);
    va_end(ap);
    h->up = false;
}

/* Where the helper must be: beside this program's own executable. */
static bool helper_path(char *path, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", path, size - sizeof "/" PEERS64_FILE);
    if (n <= 0)
        return false;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    if (!slash)
        return false;
    strcpy(slash + 1, PEERS64_FILE);
    return true;
}

/* One line from the helper into h->line, without its newline; false at
 * end of file (it exited) or on a read error. */
static bool helper_read(struct helper *h)
{
    size_t n = 0;
    while (n + 1 < sizeof h->line) {
        ssize_t got = read(h->from, h->line + n, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        if (h->line[n] == '\n')
            break;
        n++;
    }
    h->line[n] = 0;
    return true;
}

static bool helper_write(struct helper *h, const char *text, size_t len)
{
    while (len) {
        ssize_t put = write(h->to, text, len);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        text += put;
        len -= (size_t)put;
    }
    return true;
}

/* How the child ended, for a reason text; reaps it. */
static const char *helper_reap(struct helper *h, char *text, size_t size)
{
    int status = 0;
    if (h->pid <= 0 || waitpid(h->pid, &status, 0) != h->pid)
        snprintf(text, size, "its end could not be read");
    else if (WIFEXITED(status))
        snprintf(text, size, "it exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(text, size, "it was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(text, size, "it stopped (wait status %#x)", (unsigned)status);
    h->pid = 0;
    return text;
}

static void helper_close(struct helper *h)
{
    if (h->to >= 0)
        close(h->to);
    if (h->from >= 0)
        close(h->from);
    h->to = h->from = -1;
}

/* Starts the helper and reads its greeting. Never fails the run: when it
 * is missing or does not start, h->why says why and how to build it. */
static void helper_start(struct helper *h)
{
    static char path[PATH_MAX];
    *h = (struct helper){ .to = -1, .from = -1 };
    /* a helper that dies must not take this process with it on the next write */
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &h->old_pipe);
    if (!helper_path(path, sizeof path)) {
        helper_down(h, "the 64-bit helper " PEERS64_FILE " was not looked for: /proc/self/exe unreadable (%s)",
                    strerror(errno));
        return;
    }
    if (access(path, X_OK) != 0) {
        helper_down(h, "the 64-bit helper %s is missing (%s): " PEERS64_BUILD, path, strerror(errno));
        return;
    }
    int req[2], rep[2];
    if (pipe2(req, O_CLOEXEC) != 0) {
        helper_down(h, "no pipe for the 64-bit helper (%s)", strerror(errno));
        return;
    }
    if (pipe2(rep, O_CLOEXEC) != 0) {
        close(req[0]), close(req[1]);
        helper_down(h, "no pipe for the 64-bit helper (%s)", strerror(errno));
        return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, req[0], 0); /* dup2 clears close-on-exec on 0 and 1 */
    posix_spawn_file_actions_adddup2(&fa, rep[1], 1);
    char *argv[] = { path, 0 };
    extern char **environ;
    int err = posix_spawn(&h->pid, path, &fa, 0, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(req[0]);
    close(rep[1]);
    h->to = req[1];
    h->from = rep[0];
    if (err) {
        h->pid = 0;
        helper_close(h);
        helper_down(h, "the 64-bit helper %s did not start (%s%s)", path, strerror(err),
                    err == ENOEXEC ? "; a 64-bit program needs an x86-64 kernel" : "");
        return;
    }
    if (!helper_read(h)) {
        char end[96];
        helper_close(h);
        helper_down(h, "the 64-bit helper %s ended before its greeting: %s", path, helper_reap(h, end, sizeof end));
        return;
    }
    const size_t g = sizeof PEERS64_GREETING - 1;
    if (strncmp(h->line, PEERS64_GREETING, g) != 0) {
        helper_down(h, "the 64-bit helper %s greeted with \"%s\", not protocol 1: rebuild it (make hosted)", path,
                    h->line);
        kill(h->pid, SIGKILL); /* our own child, of unknown kind: it may not end at end of input */
        helper_close(h);
        waitpid(h->pid, 0, 0);
        h->pid = 0;
        return;
    }
    /* "1_74" -> "1.74" */
    char version[16];
    snprintf(version, sizeof version, "%s", h->line + g);
    for (char *c = version; *c; c++)
        if (*c == '_')
            *c = '.';
    snprintf(h->boost, sizeof h->boost, "Boost.Context %s jump_fcontext", version);
    h->up = true;
}

/* One timed run in the helper: its ticks, or false with h->line holding
 * the helper's "error ..." reply, or h->why and !h->up when it is gone. */
static bool helper_run(struct helper *h, const char *system, enum peer_shape shape, uint64_t switches,
                       int64_t *ticks)
{
    char req[96];
    int len = snprintf(req, sizeof req, "run %s %s %llu\n", system, peer_shape_name(shape),
                       (unsigned long long)switches);
    long long got;
    if (!h->up)
        return false;
    if (helper_write(h, req, (size_t)len) && helper_read(h)) {
        if (sscanf(h->line, "ok %lld", &got) == 1) {
            *ticks = got;
            return true;
        }
        return false;
    }
    char end[96];
    helper_close(h);
    helper_down(h, "the 64-bit helper stopped answering: %s", helper_reap(h, end, sizeof end));
    return false;
}

/* Why the helper refused a request: its reply without the "error " word,
 * or why it is gone. */
static const char *helper_refusal(const struct helper *h)
{
    if (!h->up)
        return h->why;
    return strncmp(h->line, "error ", 6) == 0 ? h->line + 6 : h->line;
}

static void helper_stop(struct helper *h)
{
    if (h->to >= 0)
        helper_write(h, "quit\n", 5);
    helper_close(h); /* end of input ends it too */
    if (h->pid > 0)
        waitpid(h->pid, 0, 0);
    h->pid = 0;
    h->up = false;
    sigaction(SIGPIPE, &h->old_pipe, 0);
}

/* --- switch and handoff cases: both shapes of a system measured in turn ----------------- */

struct remote_run {
    const char *system; /* the helper's word for it */
    enum peer_shape shape;
    uint64_t switches;
    const char *case_name;
};

/* A sample of a 64-bit case: one round trip to the helper, untimed; the
 * ticks are what the helper measured around its loop. If the helper fails
 * in the middle of a set, the set's records are written all the same (the
 * harness writes them after its last round): an error record, written
 * when it happens, says that case's records are void, and its samples
 * from then on are 0. */
static int64_t run_remote(void *arg)
{
    struct remote_run *r = arg;
    int64_t ticks = 0;
    if (helper_run(&helper, r->system, r->shape, r->switches, &ticks))
        return ticks;
    if (helper.voided != r->case_name) {
        helper.voided = r->case_name;
        rec_begin(REC_ERROR);
        rec_str("code", "peers64");
        rec_str("bench", "peers");
        rec_str("what", r->case_name);
        rec_str("msg", helper_refusal(&helper));
        rec_end();
    }
    return 0;
}

struct remote_system {
    const char *name;   /* the record's case */
    const char *system; /* the helper's word for it */
    const char *impl;   /* params.impl; NULL: what the helper's greeting says (Boost's version) */
    bool handoff;       /* threads: one shape (both run the same loop), switches = handoffs */
};

static const struct remote_system remote_systems[] = {
    { "switch_callee64", "callee", "cleanroom callee, x86-64 port", false },
    { "switch_jump64", "jump", "cleanroom jump, x86-64 port", false },
    { "switch_popjmp64", "popjmp", "cleanroom callee frame, always pop + jmp, x86-64", false },
    { "switch_boost", "boost", 0, false },
    { "switch_ucontext64", "ucontext", "glibc swapcontext", false },
    { "handoff_pthread64", "pthread", "NPTL mutex+cond, one CPU", true },
};
#define REMOTE_SYSTEMS (sizeof remote_systems / sizeof remote_systems[0])

static void shaped_case(struct bench_case *c, const char *name, uint32_t bits, enum peer_shape shape,
                        uint64_t switches, const char *impl)
{
    *c = (struct bench_case){ .name = name, .per = switches };
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("bits", bits);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("shape", peer_shape_name(shape));
    c->params[c->nparams++] = (struct bench_param)PARAM_NUM("switches", switches);
    c->params[c->nparams++] = (struct bench_param)PARAM_STR("impl", impl);
}

/* The shapes of one 64-bit system, in turn. Each shape is tried once
 * first (2 switches): a shape the helper refuses is a skip with its reply. */
static void measure_remote(struct bench_ctx *ctx, const struct remote_system *s, uint64_t switches)
{
    static struct bench_case cases[PEER_SHAPES];
    static struct remote_run runs[PEER_SHAPES];
    struct bench_item items[PEER_SHAPES];
    uint32_t n = 0;
    if (!helper.up) {
        bench_skip(ctx, s->name, helper.why);
        return;
    }
    for (int k = 0; k < (s->handoff ? 1 : PEER_SHAPES); k++) {
        enum peer_shape shape = (enum peer_shape)k;
        int64_t ticks;
        if (!helper_run(&helper, s->system, shape, 2, &ticks)) {
            char why[sizeof helper.why + 16];
            snprintf(why, sizeof why, "%s: %s", peer_shape_name(shape), helper_refusal(&helper));
            bench_skip(ctx, s->name, why);
            continue;
        }
        runs[n] = (struct remote_run){ s->system, shape, switches, s->name };
        shaped_case(&cases[n], s->name, 64, shape, switches, s->impl ? s->impl : helper.boost);
        items[n] = (struct bench_item){ .c = &cases[n], .fn = run_remote, .arg = &runs[n] };
        n++;
    }
    if (!n)
        return;
    counters_pause(); /* another process: nothing of it would count here anyway */
    bench_measure_set(ctx, items, n);
    counters_resume();
}

/* --- the benchmark ------------------------------------------------------------------------------- */

static struct fiber_pingpong fpp;
static struct thread_pp tpp;
static struct creation creation;
static struct lock_run lr;

static void measure1(struct bench_ctx *ctx, const char *name, uint64_t per, bench_run_fn fn, void *arg,
                     const char *peer)
{
    struct bench_case c = { .name = name, .per = per };
    c.params[c.nparams++] = (struct bench_param)PARAM_NUM("ops", per);
    c.params[c.nparams++] = (struct bench_param)PARAM_STR("impl", peer);
    bench_measure(ctx, &c, fn, arg);
}

/* A case that runs more than one thread runs with the counters paused: in a
 * virtual machine, switching a thread with counters open traps to the
 * hypervisor, which saves and reloads the PMU (a pthread handoff rose from
 * ~15 k to ~860 k ticks on a KVM guest), so the sample would time the trap,
 * not the handoff. Its samples carry no counts. */
static void measure_threads(struct bench_ctx *ctx, const char *name, uint64_t per, bench_run_fn fn, void *arg,
                            const char *peer)
{
    counters_pause();
    measure1(ctx, name, per, fn, arg, peer);
    counters_resume();
}

static void measure_ucontext(struct bench_ctx *ctx, uint64_t switches, uint8_t *stacks)
{
    static struct uc_run runs[PEER_SHAPES];
    static struct bench_case cases[PEER_SHAPES];
    struct bench_item items[PEER_SHAPES];
    for (int k = 0; k < PEER_SHAPES; k++) {
        runs[k] = (struct uc_run){ (enum peer_shape)k, switches, stacks };
        shaped_case(&cases[k], "switch_ucontext", 32, (enum peer_shape)k, switches, "glibc swapcontext");
        items[k] = (struct bench_item){ .c = &cases[k], .fn = run_switch_ucontext, .arg = &runs[k] };
    }
    bench_measure_set(ctx, items, PEER_SHAPES);
}

static void measure_handoff(struct bench_ctx *ctx, uint64_t *handoffs)
{
    int64_t tried = peer_pthread_handoff(2);
    if (tried < 0) {
        char why[96];
        snprintf(why, sizeof why, "no second thread: %s", strerror((int)-tried));
        bench_skip(ctx, "handoff_pthread", why);
        return;
    }
    struct bench_case c;
    shaped_case(&c, "handoff_pthread", 32, PEER_SYMMETRIC, *handoffs, "NPTL mutex+cond, one CPU");
    counters_pause();
    bench_measure(ctx, &c, run_handoff_pthread, handoffs);
    counters_resume();
}

static void run(struct bench_ctx *ctx)
{
    uint32_t reps = bench_reps(ctx, CR_DEF_PEERS_REPS);
    uint32_t rounds = reps / 10 ? reps / 10 : 1;
    uint64_t switches = 2 * (uint64_t)reps;
    static uint64_t handoffs;
    handoffs = 2 * (uint64_t)rounds;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* One CPU for every case that does not ask for two, threads and the
     * helper included: they inherit it (tools/cleanroom pins the process
     * already; this covers a run by hand). */
    int here = sched_getcpu();
    here = here < 0 ? 0 : here;
    pin(here);
    helper_start(&helper);
    uint32_t remote = 0;
    for (uint32_t i = 0; i < REMOTE_SYSTEMS; i++)
        remote += helper.up ? (remote_systems[i].handoff ? 1 : PEER_SHAPES) : 1;
    bench_plan(ctx, 1 + PEER_SHAPES + 1 + remote + 3 + 2 + PL_COUNT);
    sched_init(SWITCH_CALLEE);
    struct region_mark mark;
    memory_mark(&mark);

    struct fiber_pair pair;
    if (pair_init(&pair, SWITCH_CALLEE, reps, no_work, 0))
        measure1(ctx, "switch_fiber", switches, pair_timed_symmetric, &pair, "cleanroom callee");
    else
        bench_skip(ctx, "switch_fiber", "no memory for two fiber stacks");
    uint8_t *uc_stacks = memory_alloc(2 * UC_STACK, 16);
    if (uc_stacks)
        measure_ucontext(ctx, switches, uc_stacks);
    else
        bench_skip(ctx, "switch_ucontext", "no memory for two stacks");
    for (uint32_t i = 0; i < REMOTE_SYSTEMS; i++)
        if (!remote_systems[i].handoff)
            measure_remote(ctx, &remote_systems[i], switches);
    measure_handoff(ctx, &handoffs);
    for (uint32_t i = 0; i < REMOTE_SYSTEMS; i++)
        if (remote_systems[i].handoff)
            measure_remote(ctx, &remote_systems[i], handoffs);
    helper_stop(&helper);

    fpp.rounds = rounds;
    measure1(ctx, "pingpong_fiber", rounds, run_pingpong_fiber, &fpp, "cleanroom fmutex+fcond");
    tpp.rounds = rounds;
    tpp.cpus[0] = tpp.cpus[1] = here;
    measure_threads(ctx, "pingpong_pthread_1cpu", rounds, run_pingpong_pthread, &tpp, "NPTL mutex+cond, one CPU");
    if (cpus >= 2) {
        tpp.cpus[1] = tpp.cpus[0] == 0 ? 1 : 0;
        measure_threads(ctx, "pingpong_pthread_2cpu", rounds, run_pingpong_pthread, &tpp, "NPTL mutex+cond, two CPUs");
        pin(tpp.cpus[0]);
    } else {
        bench_skip(ctx, "pingpong_pthread_2cpu", "this machine has one CPU online");
    }

    if (stackpool_init(&creation.pool, CREATE_BATCH, 16384))
        measure1(ctx, "create_fiber", CREATE_BATCH, run_create_fiber, &creation, "cleanroom stack pool");
    else
        bench_skip(ctx, "create_fiber", "no memory for the stack pool");
    measure_threads(ctx, "create_pthread", CREATE_BATCH, run_create_pthread, 0, "NPTL pthread_create/join");

    lr.reps = reps;
    for (int k = 0; k < PL_COUNT; k++) {
        lr.kind = (enum peer_lock)k;
        spin_init(&lr.spin, k == PL_TTAS ? SPIN_TTAS : k == PL_TICKET ? SPIN_TICKET : SPIN_TAS, false);
        fmutex_init(&lr.mutex);
        spinblock_init(&lr.sb, 0, 0);
        pthread_mutex_init(&lr.pm, 0);
        pthread_spin_init(&lr.ps, PTHREAD_PROCESS_PRIVATE);
        measure1(ctx, peer_lock_names[k], reps, run_lock, &lr, k >= PL_PTHREAD_MUTEX ? "NPTL" : "cleanroom");
    }
    pair_free(&pair);
    memory_release(&mark);
}

const struct bench bench_peers = {
    .name = "peers",
    .what = "hosted: fibers and locks vs glibc ucontext, NPTL pthreads and (64-bit) Boost.Context",
    .in_quick = true,
    .unavailable = 0,
    .run = run,
};
