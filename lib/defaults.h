/* Every default that sizes a benchmark or a suite (runs, warm-up, sweep
 * sizes, repetitions), in one place: the kernel and the hosted build
 * compile it, and the host tool reads it (tools/cleanroom_host/defaults.py)
 * to estimate how long a run takes, so the two cannot drift apart.
 * tests/test_defaults.py boots both and checks that what they used is what
 * the host predicts from this file.
 *
 * The host reads this file strictly and refuses any line it cannot read.
 * Besides the include guard, blank lines and comments (block comments
 * only), every line is
 *     #define CR_DEF_NAME VALUE
 * where VALUE is an integer constant expression of decimal literals (an
 * optional u suffix), *, << and parentheses, every intermediate result
 * below 2^31; or a brace list { VALUE, VALUE, ... } for an array's
 * initialiser. A kernel and a hosted figure get distinct names
 * (..._KERNEL, ..._HOSTED), with no #ifdef here: the C code picks.
 * Freestanding: no includes, since every layer includes it. */
#ifndef LIB_DEFAULTS_H
#define LIB_DEFAULTS_H

/* --- runs, warm-up and the sweep's largest size, per suite (lib/config.c,
 * app/suite.c) --- */

/* Outside the quick and paper suites (bench= with suite=selftest or all). */
#define CR_DEF_RUNS 11
#define CR_DEF_WARMUP 2
#define CR_DEF_MAXSIZE (24u << 20)

/* The quick suite. Hosted, on a real machine's caches, the sweep must reach
 * past the last-level cache (the L3 effect of the development machine is at
 * 8 MiB per buffer) and give a median with an interval; under an emulator,
 * which models no cache, the kernel's small sweep shows the same shapes in a
 * fraction of the time. */
#define CR_DEF_QUICK_RUNS_KERNEL 3
/* 0: runs=auto (bench/harness.c) with the quick budget below, shared out
 * among the replicas (below: 5 processes, one round each and its warm-up,
 * 10 rounds' time where one process's 8 + 1 took 9). Within one process
 * the rounds agree far more closely than processes do, so the budget buys
 * processes, not rounds. */
#define CR_DEF_QUICK_RUNS_HOSTED 0
#define CR_DEF_QUICK_BUDGET_KERNEL 20
#define CR_DEF_QUICK_BUDGET_HOSTED 5
#define CR_DEF_QUICK_WARMUP 1
#define CR_DEF_QUICK_MAXSIZE_KERNEL (4u << 20)
#define CR_DEF_QUICK_MAXSIZE_HOSTED (32u << 20)

/* The paper suite. */
#define CR_DEF_PAPER_RUNS 3
#define CR_DEF_PAPER_WARMUP 1
#define CR_DEF_PAPER_MAXSIZE (24u << 20)

/* --- runs=auto (bench/harness.c): rounds are added to a set until the
 * interval of its key quantity (docs/PROTOCOL.md) is narrower than
 * precision= basis points of its value, or budget= runs out. The first
 * decision comes after MIN_RUNS rounds (5: the fewest whose whole range
 * covers the median with more than 90 %); a budget in seconds still stops
 * at MAX_RUNS rounds, so that every record carries its samples. --- */
#define CR_DEF_AUTO_MIN_RUNS 5
#define CR_DEF_AUTO_MAX_RUNS 64
#define CR_DEF_AUTO_PRECISION_BP 100
#define CR_DEF_AUTO_BUDGET 20

/* --- replication: where the clock is real (hosted, QEMU's TCG, KVM, a
 * PC), a run is several processes or boots of one command line (`run
 * --boots N`, default 5: tools/cleanroom_host/machines/emulators.py's
 * DEFAULT_BOOTS; the host adds replicas=N), which the host merges into one
 * set: every interval is then built over the processes' or boots' medians
 * (docs/REPORT.md). A process's layout (ASLR, physical pages, the core's
 * state) moves its figures by up to 55 % while its own rounds agree to the
 * tick. runs= and runs=auto's minimum and budget are shared out among the
 * replicas, so the total rounds stay about what one process took: the
 * hosted quick suite's budget of 5 is 5 processes of one round each (and
 * its warm-up). replicas= at most: --- */
#define CR_DEF_REPLICAS_MAX 64
/* runs=auto across processes or boots (the host's sequential rule,
 * tools/cleanroom_host/stats/sequence.py): margin= by default, basis points
 * of a quantity's baseline inside which its effect is negligible; and the
 * most boots (processes) the host may add to decide open sets (added=) */
#define CR_DEF_MARGIN_BP 100
#define CR_DEF_ADDED_MAX 1000
/* layout= not given (bench/harness.c): the seed of every boot (under
 * -icount a boot repeats to the instruction); a hosted process takes one
 * from the TSC instead (app/startup.c) */
#define CR_DEF_LAYOUT_SEED 88675123

/* A result record carries its samples, in run order, whenever it has at
 * most this many (raw=1: always), so the host can compute any interval. */
#define CR_DEF_SAMPLES_MAX 64

/* --- the working-set sweep's refills per series (bench/sweep.c: workset
 * and aspace's workset_threads) --- */

#define CR_DEF_SWEEP_PAPER_REPS 100000
/* quick: QUICK_BYTES / size refills, clamped to [MIN, MAX]. An emulator
 * models no cache: a few MiB show every shape. Fewer refills would not do:
 * the concurrency overhead per quantum carries a series' fixed cost over
 * its refills (at 1 MiB, 256K read 8.25 instructions where 4 MiB reads 5.8). */
#define CR_DEF_SWEEP_QUICK_BYTES_KERNEL (4u << 20)
#define CR_DEF_SWEEP_QUICK_MIN_REPS_KERNEL 4
#define CR_DEF_SWEEP_QUICK_MAX_REPS_KERNEL 10000
/* Real caches: a series long enough (2-10 ms: a cached buffer fills at
 * 100-150 GB/s on the development machine, one from L3 or DRAM at 20-30)
 * that a timer tick is a small part of it, short enough that a disturbance
 * (another process) hits few of them, and enough refills (at least 16) that
 * each buffer is reused from the cache many times over. The cap keeps the
 * smallest sizes, where a refill costs ~10 ns, near 2 ms a series. Since
 * a run is five processes (replicas), each series is shorter than it was
 * (256 MiB): five processes of 192 MiB series keep make run's hosted part
 * within 1.03x of one process at 256 (docs/REPORT.md, Replicas). */
#define CR_DEF_SWEEP_QUICK_BYTES_HOSTED (192u << 20)
#define CR_DEF_SWEEP_QUICK_MIN_REPS_HOSTED 16
#define CR_DEF_SWEEP_QUICK_MAX_REPS_HOSTED 100000

/* --- per benchmark: repetitions inside one run when reps= is not given --- */

/* bench/ctxsw.c: switches per fiber; its round robins' fiber counts (each
 * at most RR_MAX, 64) */
#define CR_DEF_CTXSW_REPS 10000
#define CR_DEF_CTXSW_PAPER_REPS 100000
#define CR_DEF_CTXSW_RR_NS { 2, 4, 8, 16, 64 }

/* bench/locks.c: lock/unlock pairs per run */
#define CR_DEF_LOCKS_REPS 10000
#define CR_DEF_LOCKS_PAPER_REPS 1000000

/* bench/aspace.c: every case but workset_threads (which takes the sweep's)
 * and tlb_refill (a fixed count); the quick suite's workset_threads sizes,
 * one per region of the sweep (no buffer, a page, L1-sized, L2-sized) */
#define CR_DEF_ASPACE_REPS 1000
#define CR_DEF_ASPACE_PAPER_REPS 20000
#define CR_DEF_ASPACE_TLB_REPS 100
#define CR_DEF_ASPACE_QUICK_SIZES { 0, 4096, 65536, 1u << 20 }

/* bench/peers.c (hosted only): switches, lock pairs and handoffs per run */
#define CR_DEF_PEERS_REPS 10000

/* bench/asm.c (the user's snippet): copies= (n; each sample times n copies
 * and 2n, and keeps the difference), its most, the calls of each buffer per
 * sample (reps=), and the scratch buffer ESI, EDI and EBP point at */
#define CR_DEF_ASM_COPIES 100
#define CR_DEF_ASM_COPIES_MAX 10000
#define CR_DEF_ASM_REPS 10
#define CR_DEF_ASM_SCRATCH (64u << 10)

/* --- the multi-CPU benchmarks (suite=smp): repetitions per sample. A
 * kernel under an emulator runs each vCPU on a host thread that may wait
 * for the host's scheduler: a few repetitions show the records' shape, not
 * a line's cost; hosted, a sample is long enough (1-2 ms) to measure yet
 * inside one time slice. --- */

/* bench/coherence.c: round trips of one line between two CPUs (a round
 * trip ~100-300 ns on the development machine) */
#define CR_DEF_COHERENCE_REPS_KERNEL 32
#define CR_DEF_COHERENCE_REPS_HOSTED 5000
#define CR_DEF_COHERENCE_PAPER_REPS 100000

/* bench/falseshare.c: increments per CPU (a contended locked add ~50-100
 * ns); the paper suite Fig. 1.3's 1M increments per array entry. Hosted,
 * plain increments are PLAIN_FACTOR times as many (reps= too; the paper
 * suite runs its 1M of both), so that their samples last milliseconds as
 * the locked adds' do: one costs a twentieth of a locked add, and two CPUs
 * sharing a line switch between a faster and a slower way of passing it
 * (2 vCPUs of an AMD EPYC, k=2, packed/padded: samples of 200000 read 3.2
 * where samples of 2 and 20 million read ~4). The kernel, under an
 * emulator, runs few of both: its numbers are no line's cost anyway. */
#define CR_DEF_FALSESHARE_REPS_KERNEL 2000
#define CR_DEF_FALSESHARE_REPS_HOSTED 20000
#define CR_DEF_FALSESHARE_PAPER_REPS 1000000
#define CR_DEF_FALSESHARE_PLAIN_FACTOR_KERNEL 1
#define CR_DEF_FALSESHARE_PLAIN_FACTOR_HOSTED 100

/* bench/isolation.c: updates per CPU (every barrier under an emulator is
 * the host's threads taking turns) */
#define CR_DEF_ISOLATION_REPS_KERNEL 1000
#define CR_DEF_ISOLATION_REPS_HOSTED 20000
#define CR_DEF_ISOLATION_PAPER_REPS 1000000

/* bench/smplocks.c: lock+unlock pairs per worker per sample (a fair
 * share: the workers stop at k x reps between them); the litethreads case
 * moves reps / 10 items (each item two handshakes). The kernel's is
 * smaller: under QEMU a contended lock+unlock is ~400 ns of host time, and
 * the quick suite runs ~100 sets twice (paging off and on) */
#define CR_DEF_SMPLOCKS_REPS_KERNEL 1000
#define CR_DEF_SMPLOCKS_REPS_HOSTED 10000
#define CR_DEF_SMPLOCKS_PAPER_REPS 100000
/* The spin-then-block locks' lock_loops in every set but the sweep
 * (LiteThreads' 100; Valchanov-Andreev's "short active wait"), and the
 * sweep's settings (at k = 2 and all CPUs): lock_loops from none to one
 * that outlasts a futex wake-up (~6 us; 10000 pauses are 30 us where a
 * pause costs 3 ns, ~240 us on a Zen 5 guest's 24 ns), unlock_loops none
 * and LiteThreads' 200 */
#define CR_DEF_SMPLOCKS_SPIN_LOOPS 100
#define CR_DEF_SMPLOCKS_SWEEP_LOCK_LOOPS { 0, 100, 1000, 10000 }
#define CR_DEF_SMPLOCKS_SWEEP_UNLOCK_LOOPS { 0, 200 }
/* runtime/smplock.c's spinblock_starve: a waiter parked this long (us) is
 * handed the lock (Go's sync.Mutex starvation threshold, 1 ms) */
#define CR_DEF_SMPLOCKS_STARVE_US 1000
/* runtime/smplock.c's spinblocks: the most pauses between two looks at a
 * held word (binary exponential backoff from 1, with jitter: glibc 2.36's
 * adaptive mutex uses 16 on x86-64) */
#define CR_DEF_SMPLOCKS_BACKOFF_MAX 16

/* bench/aslock.c: map_unmap rounds per sample */
#define CR_DEF_ASLOCK_REPS 50

/* bench/linuxvm.c (hosted only): mmap, mprotect and tlb_shootdown loops
 * per worker */
#define CR_DEF_LINUXVM_REPS 300

#endif
