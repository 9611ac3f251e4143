"""How long a workset/ctxsw/locks/aspace run will take in an emulator: a rough model.

    seconds = boot + bytes / bytes_per_s + refills * refill_s + switches * switch_s
              + lock_reps * lock_rep_s + thread_switches * thread_switch_s
              + aspace_reps * aspace_rep_s

bytes, refills and switches are counted from the command line with the
kernel's own defaults, read from lib/defaults.h (defaults.py), which the
kernel and the hosted build compile: runs, warmup and maxsize per suite, the
sweep's reps, each benchmark's reps (CR_DEF_<BENCH>_REPS, _PAPER_REPS for
suite=paper):
  workset, per size S with R = reps(S), passes = 2 for paging=both, else 1:
    bytes    = 2 scenarios x 2 buffers x R x S x (runs + warmup) x passes
    refills  = 2 scenarios x 2 buffers x R     x (runs + warmup) x passes
    switches = 2 x R (multi only)              x (runs + warmup) x passes
  ctxsw with R reps: 38 R switch-sized steps per run (4 switch routines x 2
    shapes of 2R switches, each shape with its loop of 2R iterations; 5 round
    robins (CR_DEF_CTXSW_RR_NS) of about R switches and their loop of R) and
    5 R for the round robins' sizing pass.
  locks with R reps: lock_reps = R x (runs + warmup) x passes; lock_rep_s is
    the measured time of one rep of every locks case together. tsc and create
    take well under a second (NEGLIGIBLE).
  aspace (paging on only: one pass; every ring-3 case has a probe run, so
    rounds = runs + warmup + 1): workset_threads per size S (in the quick
    suite only CR_DEF_ASPACE_QUICK_SIZES), R = reps(S):
    bytes += 2 buffers x R x S x rounds, refills += 2 R x rounds,
    thread_switches += 2 R x rounds; the other cases with A reps:
    aspace_reps = A x rounds, aspace_rep_s being one rep of them all together.
With runs=auto a set takes from CR_DEF_AUTO_MIN_RUNS rounds (every set converged
at the first decision) to its budget (budget= rounds; a budget in seconds:
CR_DEF_AUTO_MAX_RUNS): the estimate gives both, the --yes limit and the
silence limit take the budget.
Sizes whose two buffers do not fit in guest memory are skipped, as the kernel
skips them. case_seconds gives the longest single case of each benchmark (a
run is silent for that long between two records): (runs + warmup) rounds, +1
for aspace, of one size's multi case, of 38 R ctxsw switches, of R locks reps.
A suite's benchmarks are the registry's (registry.py: bench/registry.def and each
benchmark's in_quick / in_smp); a benchmark with no cost model here (nor in
smpestimate.py, hosted) counts as 0 s, and the estimate names it (Plan.unmodelled).
The per-emulator constants (each row's `speed` in emulators.EMULATORS) were
measured here (docs/REPORT.md). The model is approximate: within a factor of
about 2 on another host.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, fields, replace
from typing import get_type_hints

from . import defaults, emulators, registry, smpestimate
from .emulators import Speed

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


def speed_of(emulator: str) -> Speed | None:
    """The emulator's measured costs (its row in emulators.EMULATORS); None for an unknown name."""
    row = emulators.find(emulator)
    return row.speed if row is not None else None


LIMIT_S = 600.0  # longer estimates need --yes (on the emulators whose row refuses_long)

TIMED = ("workset", "ctxsw", "locks", "aspace")  # the benchmarks the model counts
NEGLIGIBLE = ("tsc", "create")  # well under a second: counted as 0 s by design, not for want of a model
# Every benchmark a cost model counts (smpestimate's hosted only): a benchmark not here keeps its defaults
# where it likes until tuned (docs/LAYOUT.md, tests/test_defaults.py); the estimate names it (Plan.unmodelled)
MODELLED = TIMED + NEGLIGIBLE + smpestimate.BENCHES
SWEEP_SUITES = ("quick", "paper")  # suites with their own runs/warmup/paging/maxsize defaults
# bench/ctxsw.c: switch-sized steps per round, in units of R: every routine
# (pushad, callee, fxsave, jump) runs 2R switches in each of its 2 shapes and
# 2R loop iterations beside each; each round robin about R switches, and their
# loop R iterations. Plus R per round robin once per pass (sizing).
CTXSW_ROUTINES = 4
CTXSW_FIXED_STEPS = CTXSW_ROUTINES * 2 * 2 * 2 + 1  # the routines' switches and loops, and rr's loop


@dataclass(frozen=True)
class Figures:
    """One build's defaults, the kernel's or the hosted build's, from lib/defaults.h.

    Each field is CR_DEF_<FIELD>_HOSTED or _KERNEL where the header has that
    variant, else CR_DEF_<FIELD>; `names` says which for each field.
    """

    runs: int  # outside the quick and paper suites
    warmup: int
    maxsize: int
    quick_runs: int
    quick_warmup: int
    quick_maxsize: int
    paper_runs: int
    paper_warmup: int
    paper_maxsize: int
    sweep_paper_reps: int  # the workset sweep (workset and aspace's workset_threads)
    sweep_quick_bytes: int
    sweep_quick_min_reps: int
    sweep_quick_max_reps: int
    ctxsw_reps: int
    ctxsw_paper_reps: int
    ctxsw_rr_ns: tuple[int, ...]
    locks_reps: int
    locks_paper_reps: int
    aspace_reps: int
    aspace_paper_reps: int
    aspace_quick_sizes: tuple[int, ...]
    auto_min_runs: int  # runs=auto: the rounds before its first decision
    auto_max_runs: int  # and the most it takes (a budget in seconds stops there too)
    auto_budget: int  # budget='s default, in rounds
    quick_budget: int  # and the quick suite's
    auto_precision_bp: int  # precision='s default
    coherence_reps: int  # the multi-CPU benchmarks (suite=smp): their reps, read by smp_reps
    coherence_paper_reps: int
    falseshare_reps: int
    falseshare_paper_reps: int
    falseshare_plain_factor: int  # plain increments: this many times reps
    isolation_reps: int
    isolation_paper_reps: int
    smplocks_reps: int
    smplocks_paper_reps: int
    smplocks_spin_loops: int  # the spin-then-block locks' lock_loops outside the sweep
    smplocks_sweep_lock_loops: tuple[int, ...]  # the sweep's settings
    smplocks_sweep_unlock_loops: tuple[int, ...]
    smplocks_starve_us: int  # spinblock_starve's threshold
    smplocks_backoff_max: int  # the spinblocks' most pauses between two looks at the word
    aslock_reps: int  # map_unmap's rounds, in every suite
    linuxvm_reps: int  # mmap, mprotect, tlb_shootdown, in every suite
    names: dict[str, str] = field(compare=False, repr=False)


def figures(d: defaults.Defaults, hosted: bool) -> Figures:
    """The figures of one build (hosted or the kernel); DefaultsError names a missing default."""
    variant, other = ("_HOSTED", "_KERNEL") if hosted else ("_KERNEL", "_HOSTED")
    hints = get_type_hints(Figures)
    values: dict[str, int | tuple[int, ...]] = {}
    names: dict[str, str] = {}
    for f in fields(Figures):
        if f.name == "names":
            continue
        base = defaults.PREFIX + f.name.upper()
        # a figure the other build has a variant of needs this build's variant too
        name = base + variant if d.has(base + variant) or d.has(base + other) else base
        values[f.name] = d.numbers(name) if hints[f.name] != int else d.number(name)
        names[f.name] = name
    return Figures(**values, names=names)  # type: ignore[arg-type]


class CmdlineError(ValueError):
    """A token the model cannot read (the kernel would reject it too)."""


def parse_size(text: str) -> int:
    mult = {"K": KIB, "M": MIB, "G": GIB}.get(text[-1:].upper(), 1)
    digits = text[:-1] if mult > 1 else text
    if not digits.isdigit():
        raise CmdlineError(f"not a size: {text!r}")
    digits = digits.lstrip("0") or "0"  # the kernel reads any number of leading zeros
    if len(digits) > 20:  # past uint64 (and past Python's int() digit limit, 4300)
        raise CmdlineError(f"size out of range: {text[:40]!r}...")
    return int(digits) * mult


def default_sizes(maxsize: int) -> list[int]:
    """0, then 2^k and 3*2^(k-1): 1, 2, 3, 4, 6, 8, 12, ... up to maxsize."""
    out = [0]
    p = 1
    while p <= maxsize:
        out.append(p)
        if p >= 2 and p + p // 2 <= maxsize:
            out.append(p + p // 2)
        p <<= 1
    return out


@dataclass
class Plan:
    """What a command line makes the kernel measure (as far as the model goes)."""

    suite: str
    benches: tuple[str, ...]
    runs: int
    warmup: int
    passes: int
    sizes: list[int]
    reps: int | None  # reps= if given
    fig: Figures  # the build's defaults (the kernel's or the hosted build's)
    maxsize: int
    sizes_given: bool = False  # sizes= was on the command line
    hosted: bool = False  # the hosted build's figures and passes
    vm_passes: int = 1  # the workset's VM modes: paging off/on (kernel), pages 4k/2m (hosted)
    runs_max: int = 0  # runs=auto: the most rounds a set takes (budget=); 0: exactly `runs`
    cpus: int = 1  # the CPUs the multi-CPU benchmarks run on (hosted: smpestimate's model)

    def unmodelled(self) -> tuple[str, ...]:
        """The benchmarks the plan runs that no cost model counts (counted as 0 s): neither TIMED nor
        NEGLIGIBLE, nor (hosted) smpestimate's."""
        smp = smpestimate.BENCHES if self.hosted else ()
        return tuple(b for b in self.benches if b not in TIMED + NEGLIGIBLE + smp)

    def smp(self) -> smpestimate.SmpPlan:
        """The multi-CPU benchmarks' part of the plan."""
        reps = {b: self.smp_reps(b) for b in ("coherence", "falseshare", "isolation", "smplocks")}
        reps.update(linuxvm=self.fig.linuxvm_reps, falseshare_plain=self.smp_reps("falseshare", "plain"))
        return smpestimate.SmpPlan(self.cpus, self.runs + self.warmup, reps)

    @property
    def auto(self) -> bool:
        return self.runs_max > 0

    def at_most(self) -> "Plan":
        """The plan with every set taking its most rounds (runs=auto's budget)."""
        return replace(self, runs=self.runs_max, runs_max=0) if self.auto else self

    def workset_reps(self, size: int) -> int:
        """bench/sweep.c's sweep_reps."""
        if self.reps is not None:
            return self.reps
        if self.suite == "paper":
            return self.fig.sweep_paper_reps
        f = self.fig
        return max(f.sweep_quick_min_reps, min(f.sweep_quick_max_reps, f.sweep_quick_bytes // max(size, 1)))

    def _reps(self, quick: int, paper: int) -> int:
        return self.reps if self.reps is not None else paper if self.suite == "paper" else quick

    def ctxsw_reps(self) -> int:
        return self._reps(self.fig.ctxsw_reps, self.fig.ctxsw_paper_reps)

    def ctxsw_steps(self) -> int:
        """Switch-sized steps of one ctxsw round, in units of R."""
        return CTXSW_FIXED_STEPS + len(self.fig.ctxsw_rr_ns)

    def locks_reps(self) -> int:
        return self._reps(self.fig.locks_reps, self.fig.locks_paper_reps)

    def aspace_reps(self) -> int:
        return self._reps(self.fig.aspace_reps, self.fig.aspace_paper_reps)

    def smp_reps(self, bench: str, op: str | None = None) -> int:
        """A multi-CPU benchmark's reps (those without a paper figure use theirs in every suite); falseshare's
        plain increments (op) take falseshare_plain_factor times as many, as a word counts at most (the
        paper suite's own count as it is)."""
        quick = getattr(self.fig, f"{bench}_reps")
        reps = self._reps(quick, getattr(self.fig, f"{bench}_paper_reps", quick))
        paper_count = self.suite == "paper" and self.reps is None
        if bench == "falseshare" and op == "plain" and not paper_count:
            return min(reps * self.fig.falseshare_plain_factor, (1 << 32) - 1)
        return reps

    def aspace_sizes(self) -> list[int]:
        """workset_threads' sizes: the sweep's, or in the quick suite its own, those up to maxsize."""
        if self.suite != "quick" or self.sizes_given:
            return self.sizes
        return list(itertools.takewhile(lambda s: s <= self.maxsize, self.fig.aspace_quick_sizes))


def suite_figure(fig: Figures, suite: str, what: str) -> int:
    """runs, warmup or maxsize: the quick and paper suites' own, else the general default."""
    value: int = getattr(fig, f"{suite}_{what}" if suite in SWEEP_SUITES else what)
    return value


def plan(cmdline: str | None, hosted: bool = False, header: defaults.Defaults | None = None,
         cpus: int = 1, benches: tuple[registry.Bench, ...] | None = None) -> Plan:
    """What the kernel (or the hosted build) measures for this command line, with the
    defaults of lib/defaults.h (`header`: another copy of it, read by defaults.load);
    `cpus`: the CPUs the run will have (the multi-CPU benchmarks' k sweeps); a suite's
    benchmarks from the registry (`benches`: another tree's, read by registry.load; read
    only where the command line names no bench=)."""
    fig = figures(header if header is not None else defaults.load(), hosted)
    kv: dict[str, str] = {}
    for token in (cmdline or "").split():
        key, sep, value = token.partition("=")
        if sep:
            kv[key] = value
    suite = kv.get("suite", "quick")
    sweep = suite in SWEEP_SUITES
    if kv.get("bench"):
        names = tuple(b for b in kv["bench"].split(",") if b)
    else:
        names = registry.suite(benches if benches is not None else registry.load(), suite, hosted)
    try:
        runs_text = kv.get("runs", str(suite_figure(fig, suite, "runs")))
        auto = runs_text in ("auto", "0")  # a suite's default of 0 is runs=auto too
        runs_max = budget_rounds(kv.get("budget"), fig, suite) if auto else 0
        runs = min(fig.auto_min_runs, runs_max) if auto else int(runs_text)
        warmup = int(kv.get("warmup", suite_figure(fig, suite, "warmup")))
        reps = int(kv["reps"]) if "reps" in kv else None
    except ValueError as exc:
        raise CmdlineError(str(exc)) from exc
    paging = kv.get("paging", "both" if sweep else "off")
    maxsize = parse_size(kv["maxsize"]) if "maxsize" in kv else suite_figure(fig, suite, "maxsize")
    sizes = [parse_size(s) for s in kv["sizes"].split(",") if s] if "sizes" in kv else default_sizes(maxsize)
    # hosted: paging cannot be switched (one pass); the workset compares pages= instead
    passes = 1 if hosted else 2 if paging == "both" else 1
    vm_passes = (2 if kv.get("pages") == "both" else 1) if hosted else passes
    return Plan(suite, names, runs, warmup, passes, sizes, reps, fig, maxsize, "sizes" in kv, hosted, vm_passes,
                runs_max, cpus)


def budget_rounds(text: str | None, fig: Figures, suite: str) -> int:
    """budget= as the most rounds a set can take: N rounds (by default the quick suite's or the general
    one); a budget in seconds (Ns) stops at the harness's most (CR_DEF_AUTO_MAX_RUNS) anyway."""
    if text is None:
        return fig.quick_budget if suite == "quick" else fig.auto_budget
    return fig.auto_max_runs if text.endswith("s") else int(text)


@dataclass
class Estimate:
    seconds: float
    bytes: int
    refills: int
    switches: int
    lock_reps: int
    skipped_sizes: int
    thread_switches: int = 0
    aspace_reps: int = 0
    seconds_min: float | None = None  # runs=auto: when every set converges at its first decision
    rounds: tuple[int, int] | None = None  # runs=auto: the fewest and most recorded rounds per set
    smp: dict[str, float] = field(default_factory=dict)  # hosted: the multi-CPU benchmarks' seconds
    cpus: int = 1
    unmodelled: tuple[str, ...] = ()  # the benchmarks no cost model counts (Plan.unmodelled): 0 s each
    # runs=auto across processes (sweep.py): the seconds the processes added to decide open sets may bring
    # the run to (budget=Ns, or the first processes' time again); None: no processes are added
    sweep_limit: float | None = None

    def with_sweep(self, budget: float | None, added_share: float) -> "Estimate":
        """The estimate of a run whose open sets get processes added up to budget (None: added_share of
        what the first ones take)."""
        limit = budget if budget is not None else self.seconds * (1 + added_share)
        return replace(self, sweep_limit=limit, seconds=max(self.seconds, limit))

    def text(self, emulator: str) -> str:
        threads = (f", {self.thread_switches:,} thread switches, {self.aspace_reps:,} aspace reps"
                   if self.thread_switches or self.aspace_reps else "")
        took, most = duration_text(self.seconds), ""
        if self.seconds_min is not None and self.rounds is not None:
            took = f"{duration_text(self.seconds_min)} to {took}"
            most = f"runs=auto, {self.rounds[0]} to {self.rounds[1]} rounds per set; at most "
        smp = (f"{self.cpus} CPUs: " + ", ".join(f"{b} {duration_text(s)}" for b, s in self.smp.items())
               if self.smp else "")
        rest = ((f"; {unmodelled_text(self.unmodelled)}: counted as 0 s" if self.unmodelled else "")
                + (f"; with the processes added to decide the open sizes at most {duration_text(self.sweep_limit)}"
                   if self.sweep_limit is not None else "")
                + "; a rough model, see docs/REPORT.md)")
        if smp and not self.refills and not self.switches and not self.lock_reps:
            return f"estimated duration under {emulator}: {took} ({most}{smp}{rest}"
        return (f"estimated duration under {emulator}: {took} "
                f"({most}{self.bytes / 1e9:,.1f} GB zeroed, {self.refills:,} buffer refills, "
                f"{self.switches:,} fiber switches, {self.lock_reps:,} locks reps{threads}"
                + (f"; {smp}" if smp else "") + rest)


def unmodelled_text(benches: tuple[str, ...]) -> str:
    """'no cost model for xchg, asm'."""
    return f"no cost model for {', '.join(benches)}"


def duration_text(s: float) -> str:
    if s < 120:
        return f"~{s:.0f} s"
    if s < 2 * 3600:
        return f"~{s / 60:.0f} min"
    if s < 3 * 86400:
        return f"~{s / 3600:.1f} h"
    return f"~{s / 86400:.1f} days"


def estimate(p: Plan, emulator: str, memory_mb: int) -> Estimate | None:
    """None when the emulator has no measured speed or no benchmark the model counts runs (where the plan
    runs some it has no model for, Plan.unmodelled names them). runs=auto:
    every set at its budget, with the time if every set converged at its first decision beside it."""
    if p.auto:
        low, high = _estimate(p, emulator, memory_mb), _estimate(p.at_most(), emulator, memory_mb)
        if low is None or high is None:
            return None
        return replace(high, seconds_min=low.seconds, rounds=(p.runs, p.runs_max))
    return _estimate(p, emulator, memory_mb)


def _estimate(p: Plan, emulator: str, memory_mb: int) -> Estimate | None:
    speed = speed_of(emulator)
    smp = smpestimate.seconds(p.smp(), p.benches) if p.hosted else {}
    if speed is None or not (set(TIMED) & set(p.benches)) and not smp:
        return None
    passes = p.passes
    rounds = (p.runs + p.warmup) * passes
    vm_rounds = (p.runs + p.warmup) * p.vm_passes
    nbytes = refills = switches = skipped = 0
    room = memory_mb * MIB - 4 * MIB  # kernel, page tables, stacks: roughly
    if "workset" in p.benches:
        for size in p.sizes:
            if 2 * size > room:
                skipped += 1
                continue
            r = p.workset_reps(size)
            nbytes += 4 * r * size * vm_rounds
            refills += 4 * r * vm_rounds
            switches += 2 * r * vm_rounds
    if "ctxsw" in p.benches:
        r = p.ctxsw_reps()
        switches += p.ctxsw_steps() * r * rounds + len(p.fig.ctxsw_rr_ns) * r * passes
    lock_reps = p.locks_reps() * rounds if "locks" in p.benches else 0
    thread_switches = aspace_reps = 0
    if "aspace" in p.benches and speed.aspace_rep_s:
        aspace_rounds = p.runs + p.warmup + 1
        for size in p.aspace_sizes():
            if 2 * size > room:
                continue
            r = p.workset_reps(size)
            nbytes += 2 * r * size * aspace_rounds
            refills += 2 * r * aspace_rounds
            thread_switches += 2 * r * aspace_rounds
        aspace_reps = p.aspace_reps() * aspace_rounds
    seconds = (speed.boot_s + nbytes / speed.bytes_per_s + refills * speed.refill_s
               + switches * speed.switch_s + lock_reps * speed.lock_rep_s
               + thread_switches * speed.thread_switch_s + aspace_reps * speed.aspace_rep_s + sum(smp.values()))
    return Estimate(seconds, nbytes, refills, switches, lock_reps, skipped, thread_switches, aspace_reps,
                    smp=smp, cpus=p.cpus, unmodelled=p.unmodelled())


def _fits(size: int, memory_mb: int) -> bool:
    """Whether a size's two buffers fit in guest memory (the kernel skips those that do not)."""
    return 2 * size <= memory_mb * MIB - 4 * MIB


def _workset_round_s(speed: Speed, reps: int, size: int, switch_s: float) -> float:
    """One round of one workset-like case: 2 buffers x R refills of S bytes, 2R switches."""
    return 2 * reps * size / speed.bytes_per_s + 2 * reps * speed.refill_s + 2 * reps * switch_s


def case_seconds(p: Plan, emulator: str, memory_mb: int) -> dict[str, float]:
    """The longest single case of each benchmark the model counts, in seconds.

    A case runs all its rounds (runs + warmup; runs=auto: its budget) before its
    result and progress records go out, so this bounds the longest silence a
    healthy run can have (the workset measures a size's cases interleaved, with
    a progress record between rounds once a second has passed: its silence is
    shorter still). locks and ctxsw are bounded by one round of the whole benchmark.
    """
    p = p.at_most()
    speed = speed_of(emulator)
    if speed is None:
        return {}
    rounds = p.runs + p.warmup
    out: dict[str, float] = {}
    if "workset" in p.benches:
        # multi (the two buffers' fibers switching) is the longer of each size's two cases
        per_size = [_workset_round_s(speed, p.workset_reps(s), s, speed.switch_s)
                    for s in p.sizes if _fits(s, memory_mb)]
        out["workset"] = rounds * max(per_size, default=0.0)
    if "ctxsw" in p.benches:
        out["ctxsw"] = rounds * p.ctxsw_steps() * p.ctxsw_reps() * speed.switch_s
    if "locks" in p.benches:
        out["locks"] = rounds * p.locks_reps() * speed.lock_rep_s
    if "aspace" in p.benches and speed.aspace_rep_s:
        probed = rounds + 1  # every ring-3 case runs once more as a probe
        threads = [_workset_round_s(speed, p.workset_reps(s), s, speed.thread_switch_s)
                   for s in p.aspace_sizes() if _fits(s, memory_mb)]
        others = p.aspace_reps() * speed.aspace_rep_s  # all its other cases together: an upper bound
        out["aspace"] = probed * max([others, *threads])
    if p.hosted:
        out.update(smpestimate.longest_case(p.smp(), p.benches))
    return out


def longest_case(p: Plan, emulator: str, memory_mb: int) -> float | None:
    """Seconds of the longest single case; None without a measured speed or a counted benchmark."""
    cases = case_seconds(p, emulator, memory_mb)
    return max(cases.values()) if cases else None


# A healthy run may be silent for a whole case; the margin covers a slower
# host (the model is within a factor of about 2) and setup between cases.
SILENCE_FACTOR = 3
SILENCE_MARGIN_S = 30.0


def silence_for(case_s: float, default: float) -> float:
    """A silence limit that lets the longest case finish: 3x it + 30 s, at least the default."""
    return max(default, SILENCE_FACTOR * case_s + SILENCE_MARGIN_S)
