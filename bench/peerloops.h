/* The peers' loops that both widths time from one source: the 32-bit
 * hosted build (bench/peers.c) and the 64-bit helper (hosted/peers64/peers64.c)
 * compile this same file, so a difference between their columns is the
 * ABI's and the C library's, not the code's.
 *
 * The two shapes of a two-party switch benchmark:
 *   symmetric  both sides run the same loop, so every switch is called from
 *              one call site and resumes the other side at that same site;
 *   asymmetric a driver (the caller) and a coroutine switch from two call
 *              sites: every switch resumes the other side at the other
 *              site, which a `ret`-based switch pays for in the return
 *              stack buffer.
 * `switches` counts the switches of the timed loop (even: half each way);
 * the two that enter and leave a symmetric pair are not counted.
 *
 * Every two-party loop, of every system in both programs, calls peer_work
 * (an empty function, through a pointer) before each switch, as the loops
 * of runtime/pair.c (bench ctxsw's 32-bit rows) call their work function:
 * the rows then differ in the switch alone. */
#ifndef BENCH_PEERLOOPS_H
#define BENCH_PEERLOOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum peer_shape { PEER_SYMMETRIC, PEER_ASYMMETRIC, PEER_SHAPES };

/* "symmetric", "asymmetric": the params.shape of a record and the word on the helper's wire. */
const char *peer_shape_name(enum peer_shape shape);
bool peer_shape_parse(const char *word, enum peer_shape *shape);

/* The empty work of each loop iteration: a pointer the compiler cannot see
 * through, so the call stays. */
extern void (*peer_work)(void *ctx, int which);

/* Each program supplies its TSC reads around the timed region. */
uint64_t peer_clock_begin(void);
uint64_t peer_clock_end(void);

/* glibc swapcontext between two contexts on the caller's stacks (two of
 * stack_bytes each, at stacks): ticks of the timed loop. */
int64_t peer_ucontext(enum peer_shape shape, uint64_t switches, void *stacks, size_t stack_bytes);

/* Two threads take turns through one pthread mutex and condition variable,
 * `handoffs` turns in all, each passing control to the other thread (on one
 * CPU, a futex wake, a futex wait and a kernel thread switch). Both run the
 * same loop. Ticks from the first turn to the moment the caller sees the
 * last one; thread creation and join are outside. Negative (-errno) when
 * the second thread could not be created. */
int64_t peer_pthread_handoff(uint64_t handoffs);

#endif
