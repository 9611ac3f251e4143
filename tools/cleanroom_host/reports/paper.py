"""What Klimiankou 2018 reports, and where a run's numbers sit beside it.

Only findings are set beside the paper's numbers: a point whose band holds 0
(inside the run-to-run noise) or is wider than its value (not resolved) is
counted, never quoted as this run's extreme.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..records.kinds import BOCHS, HOSTED, Units
from ..records.protocol import Record
from ..stats.interval import EXACT, FINDINGS, NO_SPREAD, NOISE, NOISE_ALONE, RANKED, RESOLVED, UNRESOLVED, chance_limit, false_rate, percent, runs_to_resolve, verdict
from ..machines.machine import Cache, Machine, data_caches
from .answers import Answer, Value, lines, listed
from .derive import MISS_EVENTS, EVENT_SHORT, OFF, Row, conc_counter, pick

__all__ = ["Cache", "data_caches", "cache_position", "comparison", "emulated", "size_text", "bytes_text"]

KIB = 1024
MIB = 1024 * 1024

PAPER_MACHINE = "Intel Xeon (NetBurst, Prestonia) 2.4 GHz, L1d 8 KiB, L2 512 KiB, 100000 reps"
PAPER_SWITCH = "the pushad routine of section 3.3 (6 instructions and the call); no cost stated"


@dataclass(frozen=True)
class Claim:
    """One number the paper states in section 4 (its figures have no tables)."""

    what: str
    quantity: str
    want: str  # which extreme of this run to set beside it: "max" or "min"
    paging: str  # 'any' (a mode) or 'vm' (a comparison against the baseline)
    paper: str


CLAIMS: tuple[Claim, ...] = (
    Claim("fig 4: worst concurrency overhead", "conc_rel", "max", "any", "352 % at 512K (= L2)"),
    Claim("fig 3: worst overhead per quantum", "conc_per_quantum", "max", "any", "~1.125 M ticks at 512K"),
    Claim("fig 5: VM on conc. overhead, lowest", "vm_on_conc", "min", "vm", "-90 % at 16K"),
    Claim("fig 5: VM on conc. overhead, highest", "vm_on_conc", "max", "vm", "+44 % at 1.5K"),
    Claim("fig 7: VM overhead, multi, lowest", "vm_rel_multi", "min", "vm", "-39 % at 16K"),
    Claim("fig 7: VM overhead, single, lowest", "vm_rel_single", "min", "vm", "-7.5 % at 3M"),
)


def size_text(n: int) -> str:
    """Bytes as the figures label them: 0, 512, 1K, 1.5K, 512K, 4M."""
    for unit, size in (("G", 1 << 30), ("M", MIB), ("K", KIB)):
        if n >= size:
            v = n / size
            return f"{v:g}{unit}"
    return str(n)


def bytes_text(n: int) -> str:
    """size_text with a B under 1 KiB, for prose: '4B', '1.5K'."""
    return size_text(n) + ("B" if n < KIB else "")


def cache_position(size: int, caches: list[Cache]) -> str:
    """Where one buffer of `size` bytes (two of them in the scenarios) sits among the caches."""
    if not caches:
        return "no cache sizes reported"
    for c in caches:
        if c.size == size:
            return f"= {c.name} size"
    for c in caches:
        if c.size == 2 * size:
            return f"both buffers = {c.name} size"
    below = [c for c in caches if c.size < size]
    above = [c for c in caches if c.size > size]
    if not below:
        return f"below {above[0].name} ({size_text(above[0].size)})"
    if not above:
        return f"above {below[-1].name} ({size_text(below[-1].size)})"
    return f"between {below[-1].name} ({size_text(below[-1].size)}) and {above[0].name} ({size_text(above[0].size)})"


def where(machine: Machine, size: int) -> str:
    """A size among the caches, or why there are none to place it among."""
    if machine.emulated:
        return "the emulator models no cache"
    return cache_position(size, machine.caches)


def paging_text(label: str, base: str = "") -> str:
    """'off' -> 'paging off'; 'on/4k-off' -> 'paging on/4k vs off'; hosted 'host/4k-2m' ->
    '4 KiB vs 2 MiB pages'; 'host/4k' -> '4 KiB pages'."""
    if label.startswith("host/"):
        if base or label.count("-"):
            return "4 KiB vs 2 MiB pages"
        return {"host/4k": "4 KiB pages", "host/2m": "2 MiB pages"}.get(label, f"pages {label[5:]}")
    if base or label.endswith(f"-{OFF}"):
        return f"paging {label[: -len(OFF) - 1]} vs {OFF}"
    return f"paging {label}"


def same_in_modes(blocks: dict[str, list[Answer]]) -> list[Answer]:
    """Answers per paging mode, each naming its mode as paging_text does: modes whose answers are the same
    but for that name (their lines and their values' cells on the page) are given once, naming them all
    ("paging off and paging on/4k: ...")."""
    groups: dict[tuple[object, ...], tuple[list[Answer], list[str]]] = {}
    for mode, answers in blocks.items():
        name = paging_text(mode)
        hidden = [a.mapped(lambda t: t.replace(name, "\0")) for a in answers]
        key = (tuple(lines(hidden)), tuple(v.cells() for a in hidden for v in a.values))
        groups.setdefault(key, (hidden, []))[1].append(mode)

    def named(modes: list[str]) -> str:
        texts = [paging_text(m) for m in modes]
        lead = "paging "
        if all(t.startswith(lead) for t in texts):  # "paging off and on/4k"
            return lead + " and ".join(t[len(lead):] for t in texts)
        return " and ".join(texts)

    return [a.mapped(lambda t: t.replace("\0", named(modes))) for hidden, modes in groups.values() for a in hidden]


def row_value(row: Row, units: Units | None, full: bool = False, label: str = "", where: str = "") -> Value:
    """A row's value with its unit: '88.3 %', '1075594 TSC ticks'; with full, its band however narrow
    ('88.3 % (80.1..95.0)'); an increase of a VM overhead with its '+'."""
    q = row.quantity
    pct = row.unit(units) == "%"
    digits = 1 if pct or "per_quantum" in q or "per_refill" in q else 0
    unit = " %" if pct else f" {row.unit(units).split('/')[0]}"
    plus = "+" if pct and row.is_vm and verdict(row.value) in FINDINGS and row.value.mid > 0 else ""
    return Value(label, row.value, digits, 0.0, unit, where=where, prefix=plus, banded=full)


def value_text(row: Row, units: Units | None, full: bool = True) -> str:
    """A row's value with its unit and band: '88.3 % (80.1..95.0)', '1075594 TSC ticks (..)'."""
    return row_value(row, units, full).text


@dataclass(frozen=True)
class Tally:
    """How the points of a quantity divide by verdict, and how many findings noise alone could give."""

    total: int
    findings: int  # exact or resolved
    exact: int
    noise: int
    unresolved: int
    no_spread: int
    banded: int  # points with a band of non-zero width: the ones noise can make look resolved
    runs: int
    rate: float = 0.0  # the most often noise alone makes one point's interval exclude the null
    coverage: float = 0.0  # the least coverage among the banded points (rank methods; 0: none)
    to_resolve: int = 0  # the runs after which the data suggest the unresolved points resolve (0: unknown)

    @property
    def chance_limit(self) -> int:
        """Resolved points below this many are what noise alone gives in 19 runs out of 20."""
        return chance_limit(self.banded, self.rate)

    @property
    def by_chance(self) -> bool:
        """Resolved points (no exact ones) no more than noise alone could give: none can be claimed."""
        resolved = self.findings - self.exact
        return self.exact == 0 and 0 < resolved < self.chance_limit

    def _chance_text(self) -> str:
        """How many findings noise alone gives, from the intervals' coverage: each excludes the null, with
        no effect, 1 - coverage of the time."""
        if self.findings > self.exact and self.chance_limit > 1:
            if self.coverage:
                return f"{NOISE_ALONE}: up to {self.chance_limit - 1} at {percent(self.coverage)} coverage"
            return f"{NOISE_ALONE}: up to {self.chance_limit - 1} with {self.runs} runs"
        return ""

    def _unresolved_text(self) -> str:
        """'4 not resolved (runs=12 would resolve them, the data suggest)': the runs after which every
        unresolved point's interval, narrowing as 1/sqrt(runs), would be narrow enough."""
        hint = f" (runs={self.to_resolve} would resolve them, the data suggest)" if self.to_resolve else ""
        return f"{self.unresolved} not resolved{hint}"

    def brief(self, advise: bool = True) -> str:
        """The summary's count; advise: with the runs that would resolve the unresolved points (not for a
        run with no answers, whose figures more runs would not make answers)."""
        if self.exact and self.exact == self.findings:
            return f"{self.findings}/{self.total} sizes exact (identical samples)"
        extra = self._chance_text()
        unresolved = f", {self._unresolved_text()}" if self.unresolved and self.to_resolve and advise else ""
        return f"{self.findings}/{self.total} sizes resolved{unresolved}" + (f"; {extra}" if extra else "")

    def text(self) -> str:
        parts = [f"{self.findings} of {self.total} sizes resolved"]
        if self.noise:
            parts.append(f"{self.noise} ~0 (inside noise)")
        if self.unresolved:
            parts.append(self._unresolved_text())
        if self.no_spread:
            parts.append(f"{self.no_spread} without spread (1 run)")
        extra = self._chance_text()
        return ", ".join(parts) + (f"; {extra}" if extra else "")


def tally(rows: Iterable[Row]) -> Tally:
    good = [r for r in rows if r.value.ok]
    kinds = [verdict(r.value) for r in good]
    runs = min((r.runs for r in good), default=0)
    banded = [r.value for r, k in zip(good, kinds) if k in (RESOLVED, NOISE, UNRESOLVED)]
    rate = max((false_rate(v, runs) for v in banded), default=0.0)
    ranked = [v.coverage for v in banded if v.method in RANKED]
    coverage = min(ranked) if ranked and len(ranked) == len(banded) else 0.0
    more = [runs_to_resolve(r.value) for r, k in zip(good, kinds) if k == UNRESOLVED]
    to_resolve = max((m for m in more if m is not None), default=0)
    return Tally(len(kinds), sum(k in FINDINGS for k in kinds), kinds.count(EXACT), kinds.count(NOISE),
                 kinds.count(UNRESOLVED), kinds.count(NO_SPREAD), len(banded), runs, rate, coverage, to_resolve)


def findings(rows: Iterable[Row]) -> list[Row]:
    """Rows whose band allows a claim (exact, or resolved); one run's points count too, flagged
    by their cell, since they have no band to judge. None when the resolved points are no more
    than noise alone would give."""
    rows = [r for r in rows if r.value.ok]
    if tally(rows).by_chance:
        return []
    return [r for r in rows if verdict(r.value) in FINDINGS + (NO_SPREAD,)]


def best(rows: Iterable[Row], want: str) -> Row | None:
    good = findings(rows)
    if not good:
        return None
    return (max if want == "max" else min)(good, key=lambda r: r.value.mid)


def claim_rows(rows: list[Row], claim: Claim) -> list[Row]:
    return [r for r in pick(rows, claim.quantity) if r.size > 0
            and (claim.paging == "any" or (claim.paging == "vm") == r.is_vm)]


def claim_answer(rows: list[Row], claim: Claim, units: Units | None, full: bool = True) -> str:
    """This run's side of a claim: its extreme finding and where, or why there is none."""
    candidates = claim_rows(rows, claim)
    if not candidates:
        return "-"
    top = best(candidates, claim.want)
    counts = tally(candidates)
    if top is None:
        return f"none resolved ({counts.text()})" if not counts.by_chance else f"none beyond chance ({counts.text()})"
    text = f"{value_text(top, units, full)} at {bytes_text(top.size)} ({paging_text(top.paging, top.base)})"
    return text + (f"; {counts.text()}" if counts.findings < counts.total else "")


def misses(rows: list[Row], series: str, mode: str, size: int, what: str) -> list[Value]:
    """The miss counters' multi - single per quantum at one point (what explains an overhead), each labelled
    by its event; `what` names them on the page ("multi - single per quantum at the peak")."""
    out = []
    for e in MISS_EVENTS:
        got = [r for r in pick(rows, conc_counter(e), series, mode) if r.size == size]
        if got:
            out.append(Value(EVENT_SHORT[e], got[0].value, 1, where=what))
    return out


@dataclass(frozen=True)
class Peak:
    """One paging mode's relative concurrency overhead at its largest, among its findings.

    Where the machine's caches are known (not an emulator's), `peak` is the CACHE PEAK: the largest from
    the smallest cache's size up, where the paper's effect is (a working set overflowing a cache), and
    `plateau` the largest below that size where it is larger still: at small sizes the switch itself
    outweighs the refill, a plateau of its own, not the paper's peak. Elsewhere `peak` is the largest at
    any size and `first` None."""

    paging: str
    points: list[Row]
    peak: Row | None
    plateau: Row | None = None
    first: Cache | None = None  # the smallest cache, where the caches are known


# The small sizes' line below the cache peak (after "below L1d"): there the fiber switch costs more than
# refilling the buffers
PLATEAU = "the switch outweighs the refill"


def peaks(rows: list[Row], machine: Machine, series: str | None = None) -> list[Peak]:
    out = []
    caches = machine.caches
    first = caches[0] if caches and not machine.emulated else None
    modes = {r.paging for r in rows if r.quantity == "conc_rel" and (series is None or r.series == series)}
    for paging in sorted(modes, key=lambda p: (p != OFF, p)):
        points = [r for r in pick(rows, "conc_rel", series, paging) if r.size > 0]
        top = best(points, "max")
        if first is None or top is None:
            out.append(Peak(paging, points, top))
            continue
        cache = best([r for r in points if r.size >= first.size], "max")
        plateau = top if top.size < first.size else None
        if plateau is not None and cache is not None and cache.value.mid >= plateau.value.mid:
            plateau = None
        out.append(Peak(paging, points, cache, plateau, first))
    return out


def overflow_text(size: int, caches: list[Cache]) -> str:
    """Which cache the working set of one buffer of `size` bytes (two of them in the scenarios) overflows:
    'both buffers = L3 size', '= L2 size' (as cache_position words a size at a cache's), else 'both > L2
    (2M)' (short: the summary's line then fits its count after it); cache_position where they overflow none."""
    place = cache_position(size, caches)
    over = [c for c in caches if c.size < 2 * size]
    if place.startswith(("both buffers", "=")) or not over:
        return place
    return f"both > {over[-1].name} ({size_text(over[-1].size)})"


def peak_lines(rows: list[Row], machine: Machine, units: Units | None, series: str | None = None,
               full: bool = True, lead: str = "peak relative concurrency overhead",
               counts: dict[str, str] | None = None) -> list[Answer]:
    """Per paging mode, the peak relative concurrency overhead among the findings (the cache peak where the
    caches are known, Peak), where it sits among the caches, and (with counters) the misses per quantum of
    multi - single that come with it; below it the small sizes' plateau where that is larger.
    counts: per paging mode, the count the summary gives (full=False) in place of the sizes resolved (the
    decisions' tally, reports/decisions.py)."""
    out: list[Answer] = []
    advise = not machine.no_answers
    for p in peaks(rows, machine, series):
        tallied = tally(p.points)
        count = (counts or {}).get(p.paging) or tallied.brief(advise)
        question = f"{lead}, {paging_text(p.paging)}"
        if p.peak is None:
            what = "none beyond chance" if tallied.by_chance else "none resolved"
            if p.plateau is not None and p.first is not None:
                what = f"none resolved from {p.first.name} size up"
            out.append(Answer(question, f"{what} ({count if not full else tallied.text()})"))
        else:
            place = overflow_text(p.peak.size, machine.caches) if p.first is not None else where(machine, p.peak.size)
            at = f"at {bytes_text(p.peak.size)} per buffer, {place}"
            peak = row_value(p.peak, units, full, where=at)
            brief = "" if full else f"; {count}"
            there = misses(rows, p.peak.series, p.paging, p.peak.size, "multi - single per quantum at the peak")
            said = f"; multi - single per quantum there: {listed(there)}" if there else ""
            out.append(Answer(question, f"{peak.text} {at}{brief}{said}", (peak, *there), note=brief[2:]))
        if p.plateau is not None and p.first is not None:
            small = p.plateau
            at = f"at {bytes_text(small.size)} per buffer"
            value = row_value(small, units, full, where=f"{at}, {cache_position(small.size, machine.caches)}")
            there = misses(rows, small.series, p.paging, small.size, "multi - single per quantum there")
            said = f"; misses per quantum there: {listed(there)}" if there else ""
            out.append(Answer(f"below {p.first.name}, {PLATEAU}", f"{value.text} {at}{said}", (value, *there),
                              depth=1))
    return out


def caches_line(machine: Machine) -> str | None:
    caches = machine.caches
    if not caches:
        return None
    text = ", ".join(f"{c.name} {size_text(c.size)}" for c in caches)
    if machine.emulated:
        return f"caches: {text}, as the emulated CPU reports them: the emulator models none, so none is drawn"
    return f"caches: {text}; the paper's peak was at one buffer = L2 (its two buffers overflow L2)"


def comparison(rows: list[Row], machine: Machine | Record | None, units: Units | None = None) -> list[str]:
    """The paper's numbers side by side with this run's findings, plus the peak's cache position."""
    if not rows:
        return []
    if not isinstance(machine, Machine):  # a cpu record
        machine = Machine.of([machine] if isinstance(machine, dict) else [])
    units = units or machine.units
    table = [(c.what, c.paper, claim_answer(rows, c, units)) for c in CLAIMS]
    w0 = max(len(t[0]) for t in table)
    w1 = max(len(t[1]) for t in table + [("", "paper", "")])
    out = [f"paper vs this run (paper: {PAPER_MACHINE}); this run: its extreme finding, noise and unresolved "
           f"points left out",
           f"  {'':{w0}}  {'paper':{w1}}  this run"]
    out += [f"  {a:{w0}}  {b:{w1}}  {c}" for a, b, c in table]
    if any(r.base.startswith("host/") for r in rows):
        out.append("  (the paper's fig 5 and 7 compare paging on with off; a hosted run compares 4 KiB with 2 MiB "
                   "pages: the page-size part of the VM overhead)")
    out += ["  " + line for line in lines(peak_lines(rows, machine, units))]
    caches = caches_line(machine)
    if caches:
        out.append("  " + caches)
    return out


def emulated(records: Iterable[Record]) -> str | None:
    """Why this run cannot show cache effects, or None when it ran on hardware."""
    m = Machine.of(list(records))
    if m.kind == HOSTED:
        return ("hosted run: a Linux process pinned to one CPU; interrupts, the scheduler and other cores "
                "still disturb it, and paging is always on (the kernel's paging cases are skipped)")
    if m.emulated:
        who = "bochs" if m.kind == BOCHS else "qemu"
        return (f"this run came from {who} (cpu.hypervisor {m.hypervisor or 'none'}): emulators model no caches, "
                f"so no cache effect is expected; the curves show the emulator's costs, not the paper's "
                f"cache pollution. Cache effects need real hardware (docs/HARDWARE.md).")
    return None


def describe_cpu(cpu: Any) -> str:
    if not isinstance(cpu, dict):
        return "unknown CPU"
    return str(cpu.get("brand") or cpu.get("vendor") or "unknown CPU")


# --- the multi-core papers (issue 20): what the SMP answers set beside this run's numbers ------------------
# Each is the paper's own framing, quoted in the summary's brackets (reports/smp.py); none is computed.

# (source, its numbers) as an answers.Quote sets them in square brackets; what no paper states stays outside them
LIU_FALSE_SHARING = ("Liu 2014", "threads incrementing their own ints of one array run ~13x slower than expected "
                                 "at 8 threads on 8 cores (Fig. 1.3-1.4)")
PREDATOR_OFFSET = ("Predator", "linear_regression ~15x slower with its objects at byte 24 of a line, no slowdown "
                               "at byte 0 or 56 (8 cores); the fix gave >12x (Liu 2014 Fig. 5.2)")
ISOLATION_SPEEDUPS = ("Dthreads, Sheriff, PATHREADS", "Dthreads >8x and Sheriff-Protect ~10x faster than pthreads "
                      "on linear_regression (8 cores); PATHREADS lr 8.15x on 16 cores (7.45x on Linux 4.10)")
COHERENCE_PAPERS = "no paper states it: the line transfer that false sharing repeats at every write"
PARALLEL_WORKSET = ("paper", "one CPU")
PARALLEL_EXPECTED = "two CPUs, each with its own caches, can take half the time or less"

# --- the multi-core papers' numbers that bench smplocks, shootdown, aslock and linuxvm answer ---------
# (reports/smplocks.py sets each beside this run's value, in square brackets: (source, its numbers) for answers.Quote)

VALCHANOV_NPTL_X = 7.4  # NPTL mutex on 8 logical CPUs (615 154 us) / user-space library on one CPU (82 875 us)
VALCHANOV_TEXT = ("Valchanov-Andreev", "5 threads x 1 000 000 lock/unlock, NPTL on 8 logical CPUs 615 154 us / "
                                        "user-space library on 1 CPU 82 875 us = 7.4x")
VALCHANOV_SPIN_X = 1.5  # their kernel-space library, spinning before it blocks, over NPTL across the cores
VALCHANOV_SPIN_TEXT = ("Valchanov-Andreev", "kernel-space library spinning before it blocks 1.5x faster than NPTL")
# Their test 3 as time per lock+unlock: 5 threads x 1 000 000 iterations, the whole run's time over the
# 5 000 000 lock+unlocks (as smplocks divides: over all threads). NPTL's 615 154 us is stated; the kernel-space
# library's only as "about 1.5 times faster" (~410 000 us). The 82 875 us beside them is the user-space
# library's (5 fibers on one CPU: 16.6 ns), not the kernel-space one's ~82 ns.
VALCHANOV_THREADS = 5
VALCHANOV_OPS = 5 * 1_000_000
VALCHANOV_NPTL_NS = 615_154e3 / VALCHANOV_OPS  # 123.0
VALCHANOV_KERNEL_NS = VALCHANOV_NPTL_NS / VALCHANOV_SPIN_X  # ~82
VALCHANOV_NS_TEXT = ("Valchanov-Andreev", f"NPTL 615 154 us / 5 000 000 = {VALCHANOV_NPTL_NS:.0f} ns, "
                                          f"kernel-space library ~1.5x faster ~{VALCHANOV_KERNEL_NS:.0f} ns")
LITE_TWO_CORES_TEXT = ("LiteThreads", "tables 14-17 (two cores): elapsed time unchanged by the loops, ~1.0x; "
                                      "tables 18-21 (two logical CPUs of one core): unlock spin 200 0.74x")
PATHREADS_HIST_X = 2.17  # hist on 32 cores: page faults contend on mmap_sem in read mode
PATHREADS_DEDUP_X = 3.19  # dedup on 32 cores: mmap/munmap/mprotect on mmap_sem in write mode (Linux 3.2)
PATHREADS_DEDUP_410_X = 2.99  # dedup on 32 cores under Linux 4.10
PATHREADS_TEXT = ("PATHREADS", "processes over threads on 32 cores: hist 2.17x, dedup 3.19x (Linux 4.10: dedup 2.99x)")
PATHREADS_SHOOT_TEXT = ("PATHREADS", "isolated address spaces leave nothing on other CPUs to invalidate")
