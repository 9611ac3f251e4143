"""How long the multi-CPU benchmarks take hosted on n CPUs (`suite=smp`, make run's `bench=coherence,falseshare
cpus=all`): a rough model, for the duration estimate and the silence limit of `run` (estimate.py).

Each benchmark is counted as cases x rounds (runs + warmup) x one sample, a sample being the benchmark's
operations times a cost per operation that grows with the CPUs sharing a line, plus the start line's and the
wake-ups' overhead; a sample with a time limit (bench/parallel.h's PARALLEL_SAMPLE_MS: coherence, smplocks,
linuxvm) is at most that. The cases mirror the C code's sets (bench/coherence.c, falseshare.c, isolation.c,
smplocks.c, linuxvm.c); tests/test_smp_scale.py checks the counts against a run's records. The costs are
round figures of two machines' records (docs/REPORT.md, "The duration estimate of run"): the 16-core Intel
Xeon guests lent on 2026-11-27 and -28 (TSC 2.1 GHz: a CAS round trip 213 ns, a locked add on one line
shared by k CPUs ~24 ns x k, a contended lock+unlock ~50 ns x k, an mmap with sibling threads ~17 us; suite=smp
60 s by this model, 70 s measured on -28) and the 2-vCPU AMD EPYC guests. Retries of disturbed samples
(up to 20 each, bench/parallel.h) are not counted: a loaded machine takes longer. Under an emulator the
CPUs are host threads and nothing here applies (no estimate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

SAMPLE_CAP_S = 0.050  # PARALLEL_SAMPLE_MS
SAMPLE_OVERHEAD_S = 50e-6  # a sample's start line, the workers' wake-ups and the caller's wait
TRIP_S = 220e-9  # coherence: one round trip of a line
SHARED_LINE_S = 24e-9  # a locked add (or an object's five) on a line k CPUs write: this x k
ATOMIC_S = 10e-9  # a locked add on a line of one's own
OBJECT_ATOMIC_S = 50e-9  # falseshare's object update, five locked adds, on lines of its own
PLAIN_S = 3e-9  # a plain increment (or an object's five: they overlap), on a line of one's own
PLAIN_SHARED_S = {"packed": 0.4e-9, "object@24": 1.8e-9}  # a plain update on a line k CPUs write: + this x k
COMMIT_S = 3e-6  # isolation: one twin/diff commit and its two barriers, + COMMIT_PER_CPU_S x k
COMMIT_PER_CPU_S = 0.3e-6
ISOLATION_COMMIT_EVERY = (100, 1000, 10000, 100000)  # bench/isolation.c COMMIT_EVERY, below reps, and reps
LOCK_S = 50e-9  # smplocks: a lock+unlock with k contending: this x k (k=1: LOCK_ALONE_S)
LOCK_ALONE_S = 20e-9
HANDOFF_S = 400e-9  # smplocks' handoff between two CPUs
LITE_ITEM_S = 25e-6  # the LiteThreads handshake, one item (parks and wake-ups: 2-vCPU EPYC guest)
VM_OP_S = 5e-6  # linuxvm: an mmap+munmap or two mprotects in an address space of one's own (2-7.5 us)
VM_SHARED_OP_S = 17e-6  # the same with sibling threads, per operation of all (one mmap_lock: 15-25 us, k >= 2)
FAULT_S = 0.3e-6  # linuxvm: a demand-zero fault
FORK_S = 1.5e-3  # linuxvm: a forked worker, its exit and its waitpid (both guests: this process's size)
FAULT_PAGES = 1024  # bench/linuxvm.c FAULT_PAGES
LINUXVM_PLANS = 5  # fault, mmap, mprotect, tlb_shootdown x 2
# bench/smplocks.c's sets: every lock at each k (contended) and at k=2 (handoff), the spin settings at k=2
# and k=n (sweep), LiteThreads' four settings under two release rules, Valchanov's locks, one pause case
SMPLOCKS_LOCKS = 14
SMPLOCKS_SWEEP = 20
# the cases whose samples reach the time limit wherever waiters park: spinblock_handoff (a convoy, one
# wake-up per acquisition) among the locks, and its eight spin settings in the sweep
SMPLOCKS_CONVOY = 1
SMPLOCKS_SWEEP_CONVOY = 8
CONVOY_S = 0.020  # such a sample (2-vCPU EPYC guest, k=2: 19 ms on average; some reach SAMPLE_CAP_S)
SMPLOCKS_LITE = 8
SMPLOCKS_VALCHANOV = 8
VALCHANOV_THREADS = 5
FALSESHARE_LAYOUTS = ("packed", "padded", "object@0", "object@24", "object@56")
FALSESHARE_SHARED = set(PLAIN_SHARED_S)  # the layouts whose workers write one line


@dataclass(frozen=True)
class SmpPlan:
    """What the estimate needs of a run: its CPUs, rounds and each benchmark's reps."""

    cpus: int
    rounds: int  # runs + warmup
    reps: dict[str, int]  # coherence, falseshare (its locked adds), falseshare_plain, isolation, smplocks, linuxvm


def worker_counts(n: int) -> list[int]:
    """bench/parallel.c parallel_counts: 1, 2, 4, ... below n, and n."""
    ks, k = [], 1
    while k < n:
        ks.append(k)
        k *= 2
    return ks + [n]


def _sample(work_s: float, capped: bool) -> float:
    return (min(work_s, SAMPLE_CAP_S) if capped else work_s) + SAMPLE_OVERHEAD_S


def coherence(p: SmpPlan) -> Iterator[float]:
    for _pair in range(p.cpus * (p.cpus - 1) // 2):
        yield _sample(p.reps["coherence"] * TRIP_S, True)


def falseshare(p: SmpPlan) -> Iterator[float]:
    reps = p.reps["falseshare"]
    for k in range(1, p.cpus + 1):
        shared = k if k > 1 else 0
        for layout in FALSESHARE_LAYOUTS:
            alone = OBJECT_ATOMIC_S if layout.startswith("object") else ATOMIC_S
            hit = layout in FALSESHARE_SHARED and shared
            yield _sample(reps * (SHARED_LINE_S * shared if hit else alone), False)
            yield _sample(p.reps["falseshare_plain"] * (PLAIN_S + PLAIN_SHARED_S.get(layout, 0.0) * shared), False)


def isolation(p: SmpPlan) -> Iterator[float]:
    reps = p.reps["isolation"]
    intervals = [m for m in ISOLATION_COMMIT_EVERY if m < reps] + [reps]
    for k in range(1, p.cpus + 1):
        for per_op in (ATOMIC_S, PLAIN_S):
            yield _sample(reps * per_op, False)  # padded
            yield _sample(reps * (SHARED_LINE_S * k if per_op == ATOMIC_S and k > 1 else per_op), False)  # shared
            for m in intervals:
                yield _sample(reps * per_op + reps // m * (COMMIT_S + COMMIT_PER_CPU_S * k), False)


def _contended(reps: int, k: int) -> float:
    return _sample(k * reps * (LOCK_S * k if k > 1 else LOCK_ALONE_S), True)


def smplocks(p: SmpPlan) -> Iterator[float]:
    reps, n = p.reps["smplocks"], p.cpus
    yield _sample(reps * 30e-9, False)  # the cost of one pause
    for k in worker_counts(n):
        for lock in range(SMPLOCKS_LOCKS):
            yield _sample(CONVOY_S, True) if k > 1 and lock < SMPLOCKS_CONVOY else _contended(reps, k)
    for k in ([2, n] if n > 2 else [2]):
        for setting in range(SMPLOCKS_SWEEP):
            yield _sample(CONVOY_S, True) if setting < SMPLOCKS_SWEEP_CONVOY else _contended(reps, k)
    for _lock in range(SMPLOCKS_LOCKS):
        yield _sample(reps * HANDOFF_S, True)
    for _setting in range(SMPLOCKS_LITE):
        yield _sample(max(reps // 10, 1) * LITE_ITEM_S, True)
    yield _sample(VALCHANOV_THREADS * reps * LOCK_ALONE_S, False)  # five fibers on one CPU
    for _lock in range(SMPLOCKS_VALCHANOV):
        yield _contended(reps, min(n, VALCHANOV_THREADS))


def linuxvm(p: SmpPlan) -> Iterator[float]:
    reps = p.reps["linuxvm"]
    for plan in range(LINUXVM_PLANS):
        for k in worker_counts(p.cpus):
            shoot = plan >= 3
            for processes in ((False,) if shoot and k == 1 else (False, True)):
                alone = processes or k == 1
                if plan == 0:
                    work = FAULT_PAGES * FAULT_S
                elif shoot:  # worker 0's loop alone; sibling threads' TLBs make each operation dearer
                    work = reps * (VM_OP_S if alone else VM_SHARED_OP_S)
                else:  # every worker's loop: in parallel as processes, one after another on one mmap_lock
                    work = reps * VM_OP_S if alone else k * reps * VM_SHARED_OP_S
                yield _sample(min(work, SAMPLE_CAP_S), False) + (k * FORK_S if processes else 0)


MODELS = {"coherence": coherence, "falseshare": falseshare, "isolation": isolation, "smplocks": smplocks,
          "linuxvm": linuxvm}
# bench/registry.def's multi-CPU benchmarks the hosted build runs; shootdown and aslock are kernel-only
BENCHES = tuple(MODELS)


def cases(bench: str, p: SmpPlan) -> int:
    """How many result records the model counts for one benchmark (tests compare them with a run's)."""
    return sum(1 for _ in MODELS[bench](p))


def seconds(p: SmpPlan, benches: tuple[str, ...]) -> dict[str, float]:
    """Each counted benchmark's seconds (all its cases, every round)."""
    return {b: p.rounds * sum(MODELS[b](p)) for b in benches if b in MODELS and p.cpus > 1}


def longest_case(p: SmpPlan, benches: tuple[str, ...]) -> dict[str, float]:
    """Each counted benchmark's longest case, all its rounds: the longest a healthy run is silent."""
    return {b: p.rounds * max(MODELS[b](p), default=0.0) for b in benches if b in MODELS and p.cpus > 1}
