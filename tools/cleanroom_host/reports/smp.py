"""The family of the multi-core sharing benchmarks: `coherence` (a cache line's round trip between two
CPUs, every pair: the core-to-core matrix), `falseshare` (Liu 2014 Fig. 1.3 and Predator's object
offset), `isolation` (the Dthreads / Sheriff / PATHREADS mechanism) and workset's `parallel` case:
summary lines, tables, smp.csv and figures. A family of families.FAMILIES.

Every figure is a record's median with its interval, per operation: the kernel records a whole run of
`reps` operations per sample (per 1), and this module divides by params.reps, so that an increment of
about one tick keeps its fractions. Ratios of cases measured in one set (SETS) are paired round by round,
others Hodges-Lehmann / Mann-Whitney, records without samples interval arithmetic (stats/interval.py). Each
benchmark's increment variants (`op`: plain, atomic) are reported apart, never averaged. Under an
emulator the CPUs are the host's threads: the numbers say how the emulator ran, not what a line costs,
and every answer says so. docs/REPORT.md describes the tables and smp.csv.

The figures (matplotlib with the Agg backend, imported only when a figure is drawn): the coherence
core-to-core matrix as a heat map, falseshare's time per update vs CPUs, isolation's speedup vs the
commit interval and vs CPUs, and workset's two-CPU case beside single and multi. Each draws the run's
first paging mode; the tables have every mode. An emulated run's figures carry its caveat at the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, TYPE_CHECKING

from ..records import text
from ..records.kinds import QEMU_ICOUNT
from ..records.protocol import Record
from ..stats.interval import Interval, cell
from . import paper
from .answers import Answer, Quote, Value, listed
from .cells import Cell, Point, SetOf, as_int as _int, collect, make_cell, ratio_of, write_cells
from .context import Derived, Run, csv_and_plots
from .paper import size_text
from .plotkit import DPI, FigureContext as Context, errors_of, pyplot as _pyplot, save_figure


BENCHES = ("coherence", "falseshare", "isolation")
COHERENCE, FALSESHARE, ISOLATION = BENCHES
WORKSET = "workset"
PARALLEL = "parallel"  # workset's case on two CPUs (workset.py draws single and multi)
SMP_CSV = "smp.csv"
OPS = ("atomic", "plain")  # the summary's order: the locked add first, where a line cannot hide
OFFSETS = (0, 24, 56)  # Predator's byte offsets of the object array in a line
FALSE_AT, CLEAN_AT = 24, (0, 56)
LINE, INT = 64, 4  # the line size the kernel takes (params.line), the bytes of an int
# falseshare's two figures (docs/REPORT.md): the headline is the steady state where the records have it
STEADY, WHOLE_RUN = "steady state", "start to last finish"
FIGURE_WORDS = {STEADY: "the first worker to finish, from its first quarter to its end, all k updating: its ticks "
                        "over the updates a worker did in them",
                WHOLE_RUN: "start to last finish over reps, start-up and tail included"}
# The params the kernel checks in every result: a count that must be 0
INVARIANTS = (("lost", "words a commit lost"), ("unfinished", "workers short of their count"),
              ("gave_up", "ping-pongs abandoned"))
EMULATOR_CAVEAT = ("emulator: its CPUs are host threads taking turns on the host's cores, so cross-CPU timings "
                   "show how the emulator ran, not a machine's caches")
ICOUNT_CAVEAT = ("qemu-icount runs the CPUs one after another in one thread: no two ever run at once, "
                 "so no sharing cost can show")


# The sets of cases each benchmark measures in turn (bench_measure_set), by case and params: coherence
# every CPU pair in one set; falseshare and isolation every layout of one op at one k; workset every
# case of one size (parallel beside single and multi).
SETS: dict[str, SetOf] = {
    COHERENCE: lambda case, params: (),
    FALSESHARE: lambda case, params: (params.get("cpus"), params.get("op")),
    ISOLATION: lambda case, params: (params.get("cpus"), params.get("op")),
    WORKSET: lambda case, params: (params.get("size"), params.get("fill"), params.get("switch")),
}


def points(records: list[Record], bench: str) -> list[Point]:
    """The bench's results, each value per operation: divided by params.reps where the record holds a whole
    run (per 1), as these benchmarks' records do. Cases of one set pair up round by round."""
    results = [r for r in records if r.get("t") == "result" and r.get("bench") == bench]
    out = []
    for r, p in zip(results, collect(results, bench, SETS.get(bench))):
        reps = _int(p.params.get("reps"))
        out.append(replace(p, value=p.value.scale(1.0 / reps)) if (_int(r.get("per")) or 1) <= 1 and reps else p)
    return out


def caveat(run: Run) -> str | None:
    """What the run's cross-CPU numbers are, when they are not a machine's."""
    if run.machine.kind == QEMU_ICOUNT:
        return ICOUNT_CAVEAT
    return EMULATOR_CAVEAT if run.machine.emulated else None


# --- coherence ---------------------------------------------------------------

@dataclass(frozen=True)
class Pair:
    mode: str
    a: int  # the CPUs by index in the run (0: the boot CPU)
    b: int
    a_id: int | None  # APIC ids (hosted: OS CPU numbers)
    b_id: int | None
    value: Interval  # per round trip


def coherence_pairs(records: list[Record]) -> list[Pair]:
    out = []
    for p in points(records, COHERENCE):
        a, b = _int(p.params.get("from")), _int(p.params.get("to"))
        if a is not None and b is not None:
            out.append(Pair(p.mode, a, b, _int(p.params.get("from_id")), _int(p.params.get("to_id")), p.value))
    return out


def matrix(pairs: list[Pair]) -> tuple[list[int], dict[tuple[int, int], Interval]]:
    """The CPUs (by index) and the round trip of each ordered pair (the matrix is symmetric: a to b is
    b to a), of the first mode."""
    if not pairs:
        return [], {}
    mode = pairs[0].mode
    cells: dict[tuple[int, int], Interval] = {}
    for p in pairs:
        if p.mode == mode:
            cells[(p.a, p.b)] = cells[(p.b, p.a)] = p.value
    cpus = sorted({c for a, b in cells for c in (a, b)})
    return cpus, cells


def cpu_label(pairs: list[Pair], cpu: int) -> str:
    """"1 (id 2)": the CPU's index in the run and its APIC id (hosted: the OS's number) when they differ."""
    ids = {p.a: p.a_id for p in pairs} | {p.b: p.b_id for p in pairs}
    cid = ids.get(cpu)
    return f"{cpu}" if cid is None or cid == cpu else f"{cpu} (id {cid})"


def coherence_summary(run: Run) -> list[Answer]:
    pairs = coherence_pairs(run.records)
    pairs = [p for p in pairs if pairs and p.mode == pairs[0].mode]
    if not pairs:
        return []
    cpus, _cells = matrix(pairs)
    ranked = sorted(pairs, key=lambda p: p.value.mid)
    lo, hi = ranked[0], ranked[-1]
    mid = Value("median pair", ranked[len(ranked) // 2].value)
    ends = [Value(f"fastest pair {lo.a}-{lo.b}", lo.value), Value(f"slowest {hi.a}-{hi.b}", hi.value)] \
        if len(pairs) > 1 else []
    spread = f"; {listed(ends)}" if ends else ""
    return [Answer(f"coherence, a line's round trip between two CPUs (CAS ping-pong), {len(cpus)} CPUs, "
                   f"{run.units.short}", f"{mid.labelled()}{spread} ({paper.COHERENCE_PAPERS})", (mid, *ends),
                   sep=": ", note=paper.COHERENCE_PAPERS)]


def section_coherence(run: Run) -> list[str]:
    pairs = coherence_pairs(run.records)
    if not pairs:
        return []
    cpus, cells = matrix(pairs)
    out = [f"coherence: {run.units.name} per round trip of one line between two CPUs (median (lo..hi)), "
           f"paging {pairs[0].mode}; CPUs by index (APIC id, hosted: OS CPU number)"]
    body = [[cpu_label(pairs, a)] + [("-" if a == b else cell(cells.get((a, b)))) for b in cpus] for a in cpus]
    out += text.table(["from \\ to"] + [str(c) for c in cpus], body, numeric=set(range(1, 1 + len(cpus))))
    return out


# --- falseshare --------------------------------------------------------------

def packed_lines(params: dict[str, Any]) -> int:
    """How many cache lines the k ints 4 bytes apart span (params.lines; records from before it was
    recorded: worked out from k, the stride and the line size, as the kernel does): one up to k=16."""
    lines = _int(params.get("lines"))
    if lines is not None:
        return lines
    k, stride, line = _int(params.get("cpus")) or 1, _int(params.get("stride")) or INT, _int(params.get("line")) or LINE
    return -(-k * stride // line)


def lines_text(lines: int) -> str:
    return "one line" if lines == 1 else f"{lines} lines"


def spread_note(rows: list[Any], case: str) -> str:
    """Where the one-line layout takes more than one line (k > 16): said in a table's head, so that no
    column of a packed or shared case reads as one line when it is not."""
    ks = sorted({r.k for r in rows if r.lines > 1})
    if not ks:
        return ""
    return (f"; {case} at k={ks[0]}..{ks[-1]} spans {max(r.lines for r in rows)} lines, not one "
            f"(16 ints to a {LINE}-byte line)")


@dataclass(frozen=True)
class ShareRow:
    """One (mode, op, k) of falseshare: ticks per update of each layout."""

    mode: str
    op: str
    k: int
    packed: Interval | None
    padded: Interval | None
    objects: dict[int, Interval] = field(default_factory=dict)  # offset -> per update (five sums)
    lines: int = 1  # the cache lines packed's k ints span (16 to a line)
    unsteady: int | None = None  # packed's and padded's samples timed start to last finish (None: all were)
    samples: int = 0  # packed's and padded's samples, together

    @property
    def kind(self) -> str:
        """Which figure packed and padded are: the steady state (each CPU's own window while all k update,
        bench/falseshare.c) or, in records from before it or where no sample had such a window, the time
        from the start to the last worker's finish, start-up and tail included."""
        whole = self.unsteady is None or (self.samples > 0 and self.unsteady >= self.samples)
        return WHOLE_RUN if whole else STEADY

    @property
    def figure(self) -> str:
        """kind, and how many samples were the other figure where some were."""
        mixed = self.kind == STEADY and self.unsteady
        return self.kind + (f" ({self.unsteady} of packed's and padded's {self.samples} samples {WHOLE_RUN})"
                            if mixed else "")

    @property
    def slowdown(self) -> Interval:
        """packed / padded: what sharing one line costs at this k (1: nothing)."""
        return ratio_of(self.packed, self.padded)

    def offset_ratio(self, offset: int) -> Interval:
        """The object array at `offset` / at byte 0 (Predator's comparison)."""
        return ratio_of(self.objects.get(offset), self.objects.get(0))


def share_rows(records: list[Record]) -> list[ShareRow]:
    by: dict[tuple[str, str, int], dict[str, Any]] = {}
    results = [r for r in records if r.get("t") == "result" and r.get("bench") == FALSESHARE]
    for r, p in zip(results, points(records, FALSESHARE)):
        k = _int(p.params.get("cpus"))
        if k is None:
            continue
        slot = by.setdefault((p.mode, str(p.params.get("op")), k), {"objects": {}, "samples": 0})
        unsteady = _int(p.params.get("unsteady"))
        if p.case in ("packed", "padded") and unsteady is not None:
            slot["unsteady"] = slot.get("unsteady", 0) + unsteady
            slot["samples"] += _int(r.get("n")) or 0
        if p.case == "object" and _int(p.params.get("offset")) is not None:
            slot["objects"][int(p.params["offset"])] = p.value
        elif p.case in ("packed", "padded"):
            slot[p.case] = p.value
        if p.case == "packed":
            slot["lines"] = packed_lines(p.params)
    return [ShareRow(m, op, k, s.get("packed"), s.get("padded"), s["objects"], s.get("lines", 1),
                     s.get("unsteady"), s["samples"]) for (m, op, k), s in by.items()]


def ops_of(rows: list[Any]) -> list[str]:
    seen = {r.op for r in rows}
    return [o for o in OPS if o in seen] + sorted(seen - set(OPS))


def top_row(rows: list[Any], op: str) -> Any:
    """The row of the most CPUs for op, in the first mode."""
    mine = [r for r in rows if r.op == op and r.mode == rows[0].mode]
    return max(mine, key=lambda r: r.k) if mine else None


def falseshare_summary(rows: list[ShareRow], units: str) -> list[Answer]:
    out = []
    for op in ops_of(rows):
        top = top_row(rows, op)
        if top is None or top.k < 2:
            continue
        pred = [Value(f"byte {o}", top.offset_ratio(o), 2, 1.0) for o in (FALSE_AT, CLEAN_AT[1]) if o in top.objects]
        slowdown = Value(f"{lines_text(top.lines)} / padded", top.slowdown, 2, 1.0)
        packed = Value(f"{units} per increment, {lines_text(top.lines)}", top.packed)
        padded = Value(f"{units} per increment, padded", top.padded)
        out.append(Answer(f"false sharing, {op} increments, k={top.k}, {top.figure}",
                          f"{slowdown.labelled()} (per increment: {packed.text} vs {padded.text} {units})",
                          (slowdown, packed, padded), Quote(*paper.LIU_FALSE_SHARING)))
        if pred:
            out.append(Answer(f"object offset, {op}, k={top.k}, / byte 0", listed(pred), tuple(pred),
                              Quote(*paper.PREDATOR_OFFSET), depth=1))
    return out


# A table row of one case or ratio against k: (name, the row's value of a (mode, op, k) row, null).
# null None: a time (no digits); 1.0: a ratio.
RowSpec = tuple[str, Callable[[Any], "Interval | None"], "float | None"]


def per_k_tables(rows: list[Any], head: str, specs: Callable[[list[Any]], list[RowSpec]]) -> list[str]:
    """head, then per paging mode and op a table with a column per k and a row per spec (specs gets the
    mode's and op's rows, one per k)."""
    ks = sorted({r.k for r in rows})
    out = [head]
    for mode in dict.fromkeys(r.mode for r in rows):
        for op in ops_of(rows):
            mine = {r.k: r for r in rows if r.mode == mode and r.op == op}
            body = [[name] + [cell(get(mine[k]), 2 if null else 0, null or 0.0) if k in mine else "" for k in ks]
                    for name, get, null in specs(list(mine.values()))]
            out.append(f"  {op}, paging {mode}")
            out += text.table(["case"] + [f"k={k}" for k in ks], body, numeric=set(range(1, 1 + len(ks))))
    return out


def section_falseshare(run: Run) -> list[str]:
    rows = share_rows(run.records)
    if not rows:
        return []

    def specs(_mine: list[ShareRow]) -> list[RowSpec]:
        return ([("packed", lambda r: r.packed, None), ("padded", lambda r: r.padded, None)]
                + [(f"object@{o}", lambda r, o=o: r.objects.get(o), None) for o in OFFSETS]
                + [("packed/padded", lambda r: r.slowdown, 1.0)]
                + [(f"object@{o}/object@0", lambda r, o=o: r.offset_ratio(o), 1.0) for o in OFFSETS[1:]])
    kinds = "; ".join(f"{kind}: {FIGURE_WORDS[kind]}" for kind in sorted({r.kind for r in rows}, reverse=True))
    mixed = [f"{r.op} k={r.k}" for r in rows if r.kind == STEADY and r.unsteady]
    mixed_text = f" (some samples {WHOLE_RUN}: {', '.join(mixed)})" if mixed else ""
    return per_k_tables(rows, f"falseshare: {run.units.name} per update (median (lo..hi)) vs CPUs k; "
                              f"{kinds}{mixed_text}; packed: "
                              f"ints 4 bytes apart (one line up to k=16), padded: 64 apart, object@N: Predator's "
                              f"64-byte objects from byte N of a line (an update = five sums)"
                              + spread_note(rows, "packed"), specs)


# --- isolation ---------------------------------------------------------------

@dataclass(frozen=True)
class IsoRow:
    """One (mode, op, k) of isolation: ticks per increment."""

    mode: str
    op: str
    k: int
    padded: Interval | None
    shared: Interval | None
    isolated: dict[int, Interval] = field(default_factory=dict)  # commit_every -> per increment
    lines: int = 1  # the cache lines the shared case's k ints span (16 to a line)

    def speedup(self, every: int) -> Interval:
        """shared / isolated: how much faster the isolated spaces ran (Dthreads' and PATHREADS' ratio)."""
        return ratio_of(self.shared, self.isolated.get(every))

    @property
    def bound(self) -> Interval:
        """shared / padded: the speedup removing the false sharing by hand gives."""
        return ratio_of(self.shared, self.padded)

    def removed(self, every: int) -> Interval:
        """(shared - isolated) / (shared - padded): the part of false sharing's cost isolation removed."""
        iso = self.isolated.get(every)
        if self.shared is None or self.padded is None or iso is None:
            return Interval.none()
        return (self.shared - iso).ratio(self.shared - self.padded)

    @property
    def best(self) -> int | None:
        """The commit interval with the highest speedup."""
        good = [m for m in self.isolated if self.speedup(m).ok]
        return max(good, key=lambda m: self.speedup(m).mid) if good else None


def iso_rows(records: list[Record]) -> list[IsoRow]:
    by: dict[tuple[str, str, int], dict[str, Any]] = {}
    for p in points(records, ISOLATION):
        k = _int(p.params.get("cpus"))
        if k is None:
            continue
        slot = by.setdefault((p.mode, str(p.params.get("op")), k), {"isolated": {}})
        every = _int(p.params.get("commit_every"))
        if p.case == "isolated" and every is not None:
            slot["isolated"][every] = p.value
        elif p.case in ("padded", "shared"):
            slot[p.case] = p.value
        if p.case == "shared":
            slot["lines"] = packed_lines(p.params)
    return [IsoRow(m, op, k, s.get("padded"), s.get("shared"), s["isolated"], s.get("lines", 1))
            for (m, op, k), s in by.items()]


def isolation_summary(rows: list[IsoRow], machine_timing: bool = True) -> list[Answer]:
    """machine_timing: False for an emulator, whose differences of a few instructions would make the share
    of the false-sharing cost removed a meaningless fraction."""
    out = []
    for op in ops_of(rows):
        top = top_row(rows, op)
        if top is None or top.k < 2 or not top.isolated:
            continue
        everies = sorted(top.isolated, reverse=True)
        picks = list(dict.fromkeys([everies[0], top.best or everies[0], everies[-1]]))
        commits = [Value(f"every {m}", top.speedup(m), 2, 1.0) for m in picks]
        bound = Value("padded by hand", top.bound, 2, 1.0)
        best = top.best
        shared_costs = machine_timing and top.bound.known and top.bound.lo > 1.0  # a cost there is to remove
        removed = ([Value("false-sharing cost removed", top.removed(best).scale(100.0), 0, unit=" %",
                          where=f"every {best}")] if best is not None and shared_costs else [])
        said = f"; removes {removed[0].text} of the false-sharing cost (every {best})" if removed else ""
        spread = f" (the ints in {top.lines} lines)" if top.lines > 1 else ""
        out.append(Answer(f"isolation, {op}, k={top.k}{spread}", f"shared space / isolated spaces, commits "
                          f"{listed(commits)}; {bound.labelled()}{said}", (*commits, bound, *removed),
                          Quote(*paper.ISOLATION_SPEEDUPS), note="shared space / isolated spaces, by commits"))
    return out


def section_isolation(run: Run) -> list[str]:
    rows = iso_rows(run.records)
    if not rows:
        return []

    def specs(mine: list[IsoRow]) -> list[RowSpec]:
        everies = sorted({m for r in mine for m in r.isolated})
        return ([("padded", lambda r: r.padded, None), ("shared", lambda r: r.shared, None)]
                + [(f"isolated, every {m}", lambda r, m=m: r.isolated.get(m), None) for m in everies]
                + [(f"shared/isolated, every {m}", lambda r, m=m: r.speedup(m), 1.0) for m in everies]
                + [("shared/padded", lambda r: r.bound, 1.0)])
    return per_k_tables(rows, f"isolation: {run.units.name} per increment (median (lo..hi)) vs CPUs k; shared: "
                              f"one address space, the ints 4 bytes apart (one line up to k=16); isolated: a page "
                              f"per CPU, twin/diff commit every M increments; padded: one space, a line per int"
                              + spread_note(rows, "shared"), specs)


# --- workset's parallel case ---------------------------------------------------

@dataclass(frozen=True)
class ParallelRow:
    mode: str
    size: int
    single: Interval | None
    multi: Interval | None
    parallel: Interval

    @property
    def speedup(self) -> Interval:
        """single / parallel: what the second CPU bought (2: all the work split; more: its caches too)."""
        return ratio_of(self.single, self.parallel)


def parallel_rows(records: list[Record]) -> list[ParallelRow]:
    ws = collect(records, WORKSET, SETS[WORKSET])
    out = []
    for p in ws:
        size = _int(p.params.get("size"))
        if p.case != PARALLEL or size is None:
            continue
        def get(case: str) -> Interval | None:
            return next((q.value for q in ws if q.case == case and q.mode == p.mode
                         and q.params.get("size") == size), None)
        out.append(ParallelRow(p.mode, size, get("single"), get("multi"), p.value))
    return out


def parallel_summary(rows: list[ParallelRow]) -> list[Answer]:
    rows = [r for r in rows if r.mode == rows[0].mode and r.size > 0] if rows else []
    if not rows:
        return []
    best = max(rows, key=lambda r: r.speedup.mid if r.speedup.ok else 0.0)
    largest = rows[-1]
    values = [Value(f"at {paper.bytes_text(best.size)}", best.speedup, 2, 1.0, where="the most")]
    parts = [f"{values[0].labelled()} (the most)"]
    if largest is not best:
        values.append(Value(f"at {paper.bytes_text(largest.size)}", largest.speedup, 2, 1.0))
        parts.append(values[-1].labelled())
    return [Answer(f"workset on two CPUs, single / parallel (Klimiankou's two workers each on a CPU), paging "
                   f"{rows[0].mode}", ", ".join(parts) + f"; {paper.PARALLEL_EXPECTED}", tuple(values),
                   Quote(*paper.PARALLEL_WORKSET), note=paper.PARALLEL_EXPECTED)]


def section_parallel(run: Run) -> list[str]:
    rows = parallel_rows(run.records)
    if not rows:
        return []
    body = [[r.mode, paper.size_text(r.size), cell(r.single), cell(r.multi), cell(r.parallel),
             cell(r.speedup, 2, 1.0), cell(ratio_of(r.multi, r.parallel), 2, 1.0)] for r in rows]
    return ([f"workset on two CPUs: {run.units.name} per series (median (lo..hi)); parallel: each buffer "
             f"refilled reps times by a worker of its own on its own CPU"]
            + text.table(["paging", "size", "single", "multi", "parallel", "single/parallel", "multi/parallel"],
                         body, numeric={2, 3, 4, 5, 6}))


# --- invariants --------------------------------------------------------------

def invariant_problems(records: list[Record]) -> list[str]:
    """Results whose checks failed: a count that must be 0 (params.lost, unfinished, gave_up) is not."""
    out = []
    for r in records:
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        if r.get("t") != "result" or r.get("bench") not in BENCHES:
            continue
        for key, what in INVARIANTS:
            n = _int(params.get(key))
            if n:
                out.append(f"{r.get('bench')}/{r.get('case')} k={params.get('cpus')}: {n} {what}")
    return out


def retries_text(records: list[Record]) -> str | None:
    """Hosted: how many samples were run again because the OS took a worker off its CPU, and how many were
    kept disturbed (every try was): the records' params.retried and params.disturbed."""
    retried = disturbed = 0
    for r in records:
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        if r.get("t") == "result" and (r.get("bench") in BENCHES or r.get("case") == PARALLEL):
            retried += _int(params.get("retried")) or 0
            disturbed += _int(params.get("disturbed")) or 0
    if not retried and not disturbed:
        return None
    return (f"{retried} samples run again because the OS took a worker off its CPU"
            + (f", {disturbed} kept although every try was disturbed" if disturbed else ""))


def invariants_line(records: list[Record]) -> str | None:
    checked = sum(1 for r in records if r.get("t") == "result" and r.get("bench") in BENCHES)
    if not checked:
        return None
    bad = invariant_problems(records)
    if bad:
        return f"CHECKS FAILED in {len(bad)} results: " + "; ".join(bad[:3]) + ("; ..." if len(bad) > 3 else "")
    return (f"checks: every commit merged every worker's words, every worker did all its updates, every "
            f"ping-pong ended ({checked} results)")


# --- the hooks ---------------------------------------------------------------

def summary(run: Run) -> list[Answer]:
    """The papers' multi-core questions, answered from this run's numbers."""
    records = run.records
    answers = (coherence_summary(run) + falseshare_summary(share_rows(records), run.units.short)
               + isolation_summary(iso_rows(records), caveat(run) is None) + parallel_summary(parallel_rows(records)))
    if not answers:
        return []
    check, retries, note = invariants_line(records), retries_text(records), caveat(run)
    return (([Answer(f"multi-core, {note}:")] if note else []) + answers
            + ([Answer(check, depth=1)] if check else []) + ([Answer(retries, depth=1)] if retries else []))


def sections(run: Run) -> list[str]:
    out: list[str] = []
    for block in (section_coherence(run), section_falseshare(run), section_isolation(run), section_parallel(run)):
        if block:
            out += ([""] if out else []) + block
    note, retries = caveat(run), retries_text(run.records)
    if out and retries:
        out.append(retries)
    if out and note:
        out.append(f"note: {note}")
    return out


def cells(run: Run) -> list[Cell]:
    out: list[Cell] = []
    u = run.units.short
    pairs = coherence_pairs(run.records)
    for p in pairs:
        out.append(make_cell("coherence", p.mode, f"from={p.a}", f"to={p.b}", f"{u}/round trip", p.value))
    for r in share_rows(run.records):
        col = f"k={r.k}"
        out.append(make_cell("falseshare", r.mode, f"{r.op} packed", col, f"{u}/update", r.packed))
        out.append(make_cell("falseshare", r.mode, f"{r.op} padded", col, f"{u}/update", r.padded))
        for o in OFFSETS:
            out.append(make_cell("falseshare", r.mode, f"{r.op} object@{o}", col, f"{u}/update", r.objects.get(o)))
        out.append(make_cell("falseshare", r.mode, f"{r.op} packed/padded", col, "ratio", r.slowdown, 1.0, True))
        for o in OFFSETS[1:]:
            out.append(make_cell("falseshare", r.mode, f"{r.op} object@{o}/object@0", col, "ratio",
                                 r.offset_ratio(o), 1.0, True))
    for i in iso_rows(run.records):
        col = f"k={i.k}"
        out.append(make_cell("isolation", i.mode, f"{i.op} padded", col, f"{u}/increment", i.padded))
        out.append(make_cell("isolation", i.mode, f"{i.op} shared", col, f"{u}/increment", i.shared))
        for m in sorted(i.isolated):
            out.append(make_cell("isolation", i.mode, f"{i.op} isolated every={m}", col, f"{u}/increment",
                                 i.isolated[m]))
            out.append(make_cell("isolation", i.mode, f"{i.op} shared/isolated every={m}", col, "ratio",
                                 i.speedup(m), 1.0, True))
        out.append(make_cell("isolation", i.mode, f"{i.op} shared/padded", col, "ratio", i.bound, 1.0, True))
    for w in parallel_rows(run.records):
        row = f"size={w.size}"
        out.append(make_cell("workset_parallel", w.mode, row, "parallel", f"{u}/series", w.parallel))
        out.append(make_cell("workset_parallel", w.mode, row, "single/parallel", "ratio", w.speedup, 1.0, True))
    return out


def derived(run: Run) -> list[Derived]:
    return [c.as_derived(c.table if c.table in BENCHES else WORKSET) for c in cells(run) if c.derived]


def write_csv(run: Run, path: Path) -> Path | None:
    """smp.csv (docs/REPORT.md); None when the set has none of these results."""
    return write_cells(cells(run), path)


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    return csv_and_plots(run, out, plots, lambda: write_csv(run, out / SMP_CSV), BENCHES + (WORKSET,),
                         write_all)


# --- its figures ----------------------------------------------------------------------------------

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDE = (11.0, 5.0)
CASE_COLORS = {"packed": "tab:red", "padded": "tab:blue", "object@0": "tab:green", "object@24": "tab:purple",
               "object@56": "tab:olive"}


def _note(run: Run) -> str:
    return caveat(run) or ""


def _panels(ctx: Context, title: str, mode: str, n: int) -> tuple["Figure", list["Axes"]]:
    plt = _pyplot()
    fig, axes = plt.subplots(1, n, figsize=WIDE if n > 1 else (9.0, 5.4), dpi=DPI, squeeze=False)
    fig.suptitle(f"{title}\n{ctx.subtitle(mode)}", fontsize=11)
    return fig, list(axes[0])


def _line(ax: "Axes", xs: list[Any], vals: list[Interval | None], label: str, color: str | None = None,
          style: str = "-o") -> None:
    pts = [(x, v) for x, v in zip(xs, vals) if v is not None and v.ok]
    if not pts:
        return
    px, pv = [x for x, _v in pts], [v for _x, v in pts]
    ax.errorbar(px, [v.mid for v in pv], yerr=errors_of(pv), fmt=style, color=color, label=label, capsize=3,
                markersize=4)


def coherence_matrix(ctx: Context, out: Path) -> Path | None:
    pairs = coherence_pairs(ctx.records)
    cpus, cells = matrix(pairs)
    if len(cpus) < 2:
        return None
    n = len(cpus)
    grid = [[cells[(a, b)].mid if (a, b) in cells else float("nan") for b in cpus] for a in cpus]
    fig, (ax,) = _panels(ctx, "coherence: one line's round trip between two CPUs (CAS ping-pong)", pairs[0].mode, 1)
    im = ax.imshow(grid, cmap="viridis")
    fig.colorbar(im, ax=ax, label=f"{ctx.units.short} per round trip (median)")
    labels = [cpu_label(pairs, c) for c in cpus]
    ax.set_xticks(range(n), labels, fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("CPU (index in the run, APIC id / OS CPU number)")
    ax.set_ylabel("CPU")
    if n <= 16:
        top = max(v for row in grid for v in row if v == v)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if v == v:
                    ax.text(j, i, f"{v:.4g}", ha="center", va="center", fontsize=7,
                            color="white" if v < 0.6 * top else "black")
    return save_figure(fig, out / "coherence_matrix.png", _note(ctx.run))


def falseshare(ctx: Context, out: Path) -> Path | None:
    rows = share_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    ops = ops_of(rows)
    fig, axes = _panels(ctx, "falseshare: time per update vs CPUs (Liu Fig. 1.3; Predator's object offsets)",
                        mode, len(ops))
    for ax, op in zip(axes, ops):
        mine = sorted((r for r in rows if r.mode == mode and r.op == op), key=lambda r: r.k)
        ks = [r.k for r in mine]
        series: list[tuple[str, Callable[[ShareRow], Interval | None]]] = [
            ("packed", lambda r: r.packed), ("padded", lambda r: r.padded)]
        series += [(f"object@{o}", lambda r, o=o: r.objects.get(o)) for o in OFFSETS]
        for name, get in series:
            _line(ax, ks, [get(r) for r in mine], name, CASE_COLORS.get(name))
        ax.set_title(f"{op} increments", fontsize=10)
        ax.set_xticks(ks)
        ax.set_xlabel("CPUs k (each updating its own data)")
        ax.set_ylabel(f"{ctx.units.short} per update (median; bars: interval), log scale")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, out / "falseshare.png", _note(ctx.run))


def _finish(ax: "Axes", op: str, xlabel: str, ylabel: str, legend: int = 8) -> None:
    """A speedup panel's common parts: the line at 1, log y, the op as title, labels, grid, legend."""
    ax.axhline(1.0, color="gray", linewidth=1)
    ax.set_yscale("log")
    ax.set_title(f"{op} increments", fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend)


def _iso_rows(ctx: Context) -> tuple[str, list[str], list[IsoRow]]:
    rows = iso_rows(ctx.records)
    mode = rows[0].mode if rows else ""
    return mode, ops_of(rows), [r for r in rows if r.mode == mode]


def shown_ks(ks: list[int]) -> set[int]:
    """The k a figure draws a line for: 1, 2, 4, 8, ... and the largest (32 lines and their legend would
    not fit; every k is in the tables and smp.csv)."""
    return {k for k in ks if k & (k - 1) == 0} | ({max(ks)} if ks else set())


def isolation_m(ctx: Context, out: Path) -> Path | None:
    mode, ops, rows = _iso_rows(ctx)
    if not any(r.isolated for r in rows):
        return None
    fig, axes = _panels(ctx, "isolation: shared space / isolated spaces vs the commit interval", mode, len(ops))
    colors = _pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = shown_ks([r.k for r in rows])
    for ax, op in zip(axes, ops):
        for i, r in enumerate(sorted((r for r in rows if r.op == op and r.k in drawn), key=lambda r: r.k)):
            ms = sorted(r.isolated)
            color = colors[i % len(colors)]
            _line(ax, ms, [r.speedup(m) for m in ms], f"k={r.k}", color)
            if r.bound.ok:
                ax.axhline(r.bound.mid, color=color, linestyle="--", linewidth=1,
                           label=f"k={r.k}: padded by hand")
        ax.set_xscale("log")
        _finish(ax, op, "increments between commits (M), log scale",
                "speedup: shared / isolated (log; >1: isolation faster)")
    return save_figure(fig, out / "isolation_commit.png", _note(ctx.run))


def isolation_k(ctx: Context, out: Path) -> Path | None:
    mode, ops, rows = _iso_rows(ctx)
    if not any(r.isolated for r in rows):
        return None
    fig, axes = _panels(ctx, "isolation: shared space / isolated spaces vs CPUs", mode, len(ops))
    for ax, op in zip(axes, ops):
        mine = sorted((r for r in rows if r.op == op), key=lambda r: r.k)
        ks = [r.k for r in mine]
        for m in sorted({m for r in mine for m in r.isolated}):
            _line(ax, ks, [r.speedup(m) if m in r.isolated else None for r in mine], f"commit every {m}")
        _line(ax, ks, [r.bound for r in mine], "padded by hand", "black", "--s")
        ax.set_xticks(ks)
        _finish(ax, op, "CPUs k", "speedup: shared / isolated (log)", legend=7)
    return save_figure(fig, out / "isolation_cpus.png", _note(ctx.run))


def workset_parallel(ctx: Context, out: Path) -> Path | None:
    rows = parallel_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode and r.size > 0]
    if not rows:
        return None
    fig, (ax,) = _panels(ctx, "workset: one CPU (single, multi) vs two CPUs (parallel)", mode, 1)
    sizes = [r.size for r in rows]
    for name, get, color in (("single (one CPU, one buffer after the other)", lambda r: r.single, "tab:blue"),
                             ("multi (one CPU, two fibers)", lambda r: r.multi, "tab:red"),
                             ("parallel (two CPUs, a buffer each)", lambda r: r.parallel, "tab:green")):
        _line(ax, sizes, [get(r) for r in rows], name, color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [size_text(s) for s in sizes], fontsize=7, rotation=45)
    ax.set_xlabel("working set: bytes per buffer (log2)")
    ax.set_ylabel(f"{ctx.units.short} per series (median)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, out / "workset_parallel.png", _note(ctx.run))


FigureFn = Callable[[Context, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("coherence_matrix", coherence_matrix), ("falseshare", falseshare), ("isolation_commit", isolation_m),
    ("isolation_cpus", isolation_k), ("workset_parallel", workset_parallel),
)


def write_all(run: Run, out: Path) -> list[Path]:
    """Every figure the run has data for; the files written."""
    ctx = Context(run)
    return [path for _name, fn in FIGURES if (path := fn(ctx, out)) is not None]


# report.html: what to look at in each figure (by the start of its file's name; html.figure)
CAPTIONS = {
    "coherence_matrix": "a line's round trip between every two CPUs (viridis: yellow is slowest, dark blue "
                        "fastest); blocks of one colour are CPUs that share a cache or a socket",
    "falseshare": "time per update against the CPUs updating: one line (packed) climbs with every CPU, padded "
                  "words stay flat; the gap is false sharing",
    "isolation_commit": "shared space over isolated spaces against how often the spaces commit: above 1 "
                        "isolation wins; committing often gives the gain back",
    "isolation_cpus": "the same against the number of CPUs, at the rarest commit",
    "workset_parallel": "the working set refilled on two CPUs at once beside one CPU and two fibers on one",
}
