/* cleanroom-peers64: the 64-bit side of bench=peers. The 32-bit hosted
 * build cannot link a 64-bit library, and Debian's i386 Boost needs an i386
 * C library next to the amd64 one; so the 64-bit peers run in this small
 * program, which the hosted build starts once, beside its own executable,
 * and asks for one timed run at a time (bench/peers.c). Warm-up, the runs,
 * their statistics and the records stay the harness's.
 *
 * What it runs, each a two-party switch in both shapes (bench/peerloops.h)
 * except the pthread handoff:
 *   callee    cleanroom's callee-saved switch, ported (hosted/peers64/switches64.asm)
 *   jump      cleanroom's jump switch, ported: ret where the return-stack
 *             buffer predicts it, else pop + jmp
 *   popjmp    the same frame, always pop + jmp (as jump_fcontext leaves)
 *   boost     Boost.Context's jump_fcontext (libboost_context, linked statically)
 *   ucontext  glibc swapcontext
 *   pthread   a mutex+condvar handoff between two threads (one CPU: the
 *             hosted build is pinned by taskset, and so is this child)
 *
 * Wire (stdin / stdout, one line each, ASCII):
 *   at start          -> "peers64 <PROTO> boost <version>\n"
 *   "run <system> <shape> <switches>\n" -> "ok <ticks>\n" | "error <why>\n"
 *   "quit\n" or end of input: exit 0
 * <ticks>: TSC ticks of the timed loop of <switches> switches (the same TSC
 * the 32-bit program reads: the same CPU), lfence on both sides of each
 * rdtsc. Run by hand: cleanroom-peers64 <system> <shape> <switches>
 * prints the ticks per switch. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/peerloops.h"

#define PROTO 1
#define STACK_BYTES (256u << 10)

#if defined(__has_include)
#if __has_include(<boost/version.hpp>)
#include <boost/version.hpp> /* macros only: readable from C */
#endif
#endif
#ifdef BOOST_LIB_VERSION
#define BOOST_NAME BOOST_LIB_VERSION
#else
#define BOOST_NAME "unknown"
#endif

/* Boost.Context's low-level API has C linkage
 * (boost/context/detail/fcontext.hpp declares it extern "C"). */
typedef void *fcontext_t;
typedef struct {
    fcontext_t fctx;
    void *data;
} transfer_t;
transfer_t jump_fcontext(fcontext_t const to, void *vp);
fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

/* hosted/peers64/switches64.asm */
typedef void (*switch64_fn)(uint64_t *state_word);
void switch64_callee(uint64_t *state_word);
void switch64_jump(uint64_t *state_word);
void switch64_popjmp(uint64_t *state_word);
void switch64_start(void);

static uint8_t stacks[2][STACK_BYTES] __attribute__((aligned(4096)));

static inline uint64_t tsc_fenced(void)
{
    uint32_t lo, hi;
    /* lfence before: earlier instructions have completed; after: later
     * ones have not started. The 32-bit build's tsc_begin does the same. */
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

uint64_t peer_clock_begin(void) { return tsc_fenced(); }
uint64_t peer_clock_end(void) { return tsc_fenced(); }

static uint8_t *stack_top(int which) { return stacks[which] + STACK_BYTES; }

/* --- cleanroom's switches, 64-bit ------------------------------------------------------ */

struct pair64 {
    switch64_fn sw;
    uint64_t word;      /* the suspended side's stack pointer */
    uint64_t main_word; /* the caller's, while a symmetric pair runs */
    uint64_t half;      /* switches each side makes */
};
static struct pair64 pair;

/* The frame switches64.asm restores: r15 r14 r13 r12 rbx rbp, resume
 * address. A new side resumes in switch64_start, which calls fn(arg) from
 * r12 and rbx with the stack 16-byte aligned. */
static uint64_t switch64_frame(uint8_t *top, void (*fn)(void *), void *arg)
{
    uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
    *--sp = (uint64_t)(uintptr_t)switch64_start;
    *--sp = 0;                        /* rbp: 0 ends frame walks */
    *--sp = (uint64_t)(uintptr_t)arg; /* rbx */
    *--sp = (uint64_t)(uintptr_t)fn;  /* r12 */
    *--sp = 0;                        /* r13 */
    *--sp = 0;                        /* r14 */
    *--sp = 0;                        /* r15 */
    return (uint64_t)(uintptr_t)sp;
}

/* The loops are runtime/pair.c's, noipa as there (no inlining, cloning or
 * merging): each exists once, so the symmetric shape's two sides share one
 * call site and the asymmetric shape's two loops keep one each. */

static void __attribute__((noipa)) pair_loop(struct pair64 *p, int which, switch64_fn sw, uint64_t *word)
{
    for (uint64_t i = 0; i < p->half; i++) {
        peer_work(0, which);
        sw(word);
    }
}

static void __attribute__((noipa)) driver_loop(struct pair64 *p, switch64_fn sw, uint64_t *word)
{
    for (uint64_t i = 0; i < p->half; i++) {
        peer_work(0, 0);
        sw(word);
    }
}

static void __attribute__((noipa)) coroutine_loop(switch64_fn sw, uint64_t *word)
{
    for (;;) {
        peer_work(0, 1);
        sw(word);
    }
}

/* Both sides of the symmetric pair, as runtime/pair.c's fibers: side 0 is
 * entered from the caller and leaves to it; side 1 ends suspended. */
static void pair_side0(void *arg)
{
    struct pair64 *p = arg;
    pair_loop(p, 0, p->sw, &p->word);
    p->sw(&p->main_word);
    __builtin_trap(); /* never resumed */
}

static void pair_side1(void *arg)
{
    struct pair64 *p = arg;
    pair_loop(p, 1, p->sw, &p->word);
    __builtin_trap(); /* never resumed: it ends suspended in its last switch */
}

static void pair_coroutine(void *arg)
{
    struct pair64 *p = arg;
    coroutine_loop(p->sw, &p->word);
}

static int64_t run_switch64(switch64_fn sw, enum peer_shape shape, uint64_t switches)
{
    struct pair64 *p = &pair;
    p->sw = sw;
    p->half = switches / 2;
    if (shape == PEER_SYMMETRIC) {
        p->main_word = switch64_frame(stack_top(0), pair_side0, p);
        p->word = switch64_frame(stack_top(1), pair_side1, p);
        uint64_t t0 = peer_clock_begin();
        p->sw(&p->main_word);
        return (int64_t)(peer_clock_end() - t0);
    }
    p->word = switch64_frame(stack_top(0), pair_coroutine, p);
    uint64_t t0 = peer_clock_begin();
    driver_loop(p, p->sw, &p->word);
    return (int64_t)(peer_clock_end() - t0);
}

/* --- Boost.Context ---------------------------------------------------------------------- */

struct boost_pair {
    fcontext_t main, second;
    uint64_t half;
};
static struct boost_pair bp;

/* Both sides of the symmetric shape. jump_fcontext hands each side the
 * context of the one that jumped to it, so the loop is the same for both;
 * only the first side, entered from the caller, learns its partner from
 * the pair and the way back from its first transfer. */
static void boost_side(transfer_t t)
{
    struct boost_pair *p = t.data;
    int which = p->main != 0; /* the side the caller enters is 0 */
    fcontext_t to = t.fctx;
    if (which == 0) {
        p->main = t.fctx;
        to = p->second;
    }
    for (uint64_t i = 0; i < p->half; i++) {
        peer_work(0, which);
        t = jump_fcontext(to, p);
        to = t.fctx;
    }
    jump_fcontext(p->main, p); /* only side 0 gets here; side 1 ends suspended */
    __builtin_trap();          /* never resumed */
}

static void boost_coroutine(transfer_t t)
{
    for (;;) {
        peer_work(0, 1);
        t = jump_fcontext(t.fctx, 0);
    }
}

static int64_t run_boost(enum peer_shape shape, uint64_t switches)
{
    bp.half = switches / 2;
    if (shape == PEER_SYMMETRIC) {
        bp.main = 0;
        fcontext_t first = make_fcontext(stack_top(0), STACK_BYTES, boost_side);
        bp.second = make_fcontext(stack_top(1), STACK_BYTES, boost_side);
        uint64_t t0 = peer_clock_begin();
        jump_fcontext(first, &bp);
        return (int64_t)(peer_clock_end() - t0);
    }
    fcontext_t co = make_fcontext(stack_top(0), STACK_BYTES, boost_coroutine);
    uint64_t t0 = peer_clock_begin();
    for (uint64_t i = 0; i < bp.half; i++) {
        peer_work(0, 0);
        co = jump_fcontext(co, 0).fctx;
    }
    return (int64_t)(peer_clock_end() - t0);
}

/* --- requests --------------------------------------------------------------------------- */

/* One timed run; false with *why set when the request names nothing runnable. */
static bool run_one(const char *system, const char *shape_word, uint64_t switches, int64_t *ticks,
                    const char **why)
{
    enum peer_shape shape;
    if (!peer_shape_parse(shape_word, &shape)) {
        *why = "unknown shape (symmetric, asymmetric)";
        return false;
    }
    if (switches < 2 || switches % 2) {
        *why = "switches must be even and at least 2";
        return false;
    }
    if (strcmp(system, "callee") == 0)
        *ticks = run_switch64(switch64_callee, shape, switches);
    else if (strcmp(system, "jump") == 0)
        *ticks = run_switch64(switch64_jump, shape, switches);
    else if (strcmp(system, "popjmp") == 0)
        *ticks = run_switch64(switch64_popjmp, shape, switches);
    else if (strcmp(system, "boost") == 0)
        *ticks = run_boost(shape, switches);
    else if (strcmp(system, "ucontext") == 0)
        *ticks = peer_ucontext(shape, switches, stacks, STACK_BYTES);
    else if (strcmp(system, "pthread") == 0) {
        if (shape != PEER_SYMMETRIC) {
            *why = "pthread has one shape: symmetric (both threads run the same loop)";
            return false;
        }
        *ticks = peer_pthread_handoff(switches);
        if (*ticks < 0) {
            *why = strerror((int)-*ticks);
            return false;
        }
    } else {
        *why = "unknown system (callee, jump, popjmp, boost, ucontext, pthread)";
        return false;
    }
    return true;
}

static int serve(void)
{
    char line[256];
    printf("peers64 %d boost %s\n", PROTO, BOOST_NAME);
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        char verb[16], system[16], shape[16];
        unsigned long long switches;
        int64_t ticks;
        const char *why = "cannot parse the request";
        int got = sscanf(line, "%15s %15s %15s %llu", verb, system, shape, &switches);
        if (got >= 1 && strcmp(verb, "quit") == 0)
            break;
        if (got == 4 && strcmp(verb, "run") == 0 && run_one(system, shape, switches, &ticks, &why))
            printf("ok %lld\n", (long long)ticks);
        else
            printf("error %s\n", why);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return serve();
    if (argc != 4) {
        fprintf(stderr, "usage: %s [<callee|jump|popjmp|boost|ucontext|pthread> <symmetric|asymmetric> <switches>]\n"
                        "  without arguments: serve the line protocol on stdin/stdout (bench/peers.c)\n",
                argv[0]);
        return 2;
    }
    int64_t ticks;
    const char *why = "";
    uint64_t switches = strtoull(argv[3], 0, 10);
    if (!run_one(argv[1], argv[2], switches, &ticks, &why)) {
        fprintf(stderr, "%s: %s\n", argv[0], why);
        return 1;
    }
    printf("%.2f ticks per switch (%lld ticks, %llu switches)\n", (double)ticks / (double)switches,
           (long long)ticks, (unsigned long long)switches);
    return 0;
}
