"""The family of `aspace`: ring-0 fibers against ring-3 threads in address spaces of their own
(PATHREADS, Sheriff, Dthreads): summary lines, tables, aspace.csv and figures. A family of
families.FAMILIES.

Every figure is a record's median (`med`, TSC ticks or instructions per
operation as the kernel divided it) with its interval (stats/interval.py); ratios and
differences of two results (measured in different sets) carry the
Hodges-Lehmann / Mann-Whitney interval of their samples, or without samples
the interval-arithmetic band of their inputs.
Tables have one column per paging mode (`on/4k`, `on/4m`: the benchmark runs
with paging on only; the mode is the pass's `pagesize`, never tlb_refill's
`region`). docs/REPORT.md describes the tables and aspace.csv.

The figures (matplotlib with the Agg backend, imported only when a figure is
drawn) draw the run's first paging mode; the tables have every mode. The TLB
refill figure's lines are tlb_refill's `region` (4 KiB pages or one 4 MiB page)
x `pge` within that mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records.protocol import Record
from ..records.text import number, table
from ..stats.interval import Interval, cell
from . import paper
from .answers import Answer, Quote, Value, listed
from .cells import Cell, Point, as_int, cell_adder, collect, modes, ratio_cell, ratio_of, write_cells
from .context import Derived, Run, csv_and_plots
from .derive import series_of
from .plotkit import FigureContext, FigureFn, OURS, THEIRS, band, draw, new_figure, pair_bars, save, size_axis


BENCHES = ("aspace",)
ASPACE, WORKSET = "aspace", "workset"
ASPACE_CSV = "aspace.csv"
# Params that never name a row: the repetition count and the paging mode
# (the mode has its own column).
NOT_LABEL = ("reps", "paging", "pagesize")
# The kernel runs the thread side with one entry (sysenter where the CPU has
# it, int80 otherwise); should a set hold both, the rows take sysenter first.
PREFER = (("entry", "sysenter"),)
# workset: the fiber switch of Klimiankou's routine when several ran
WORKSET_SWITCH = "pushad"



@dataclass(frozen=True)
class Pair:
    """One comparison of the fibers-vs-threads table: thread side / fiber side."""

    what: str
    per: str  # what one operation is
    fiber: str  # the fiber-side case (malloc: subheap; system call: sysenter)
    thread: str  # the thread-side case
    want: tuple[tuple[str, Any], ...] = ()  # params the thread side must have
    pge_fallback: bool = False  # wants pge=on; takes pge=off when the CPU had no PGE
    pair_on: str = ""  # a param both sides share: one row per value
    short: str = ""  # the figure's label
    fiber_fallback: str = ""  # the fiber-side case taken when `fiber` was not measured
    fallback_caveat: str = ""  # what the fallback does not measure (the note below the table)


PAIRS: tuple[Pair, ...] = (
    Pair("switch, own address spaces", "switch", "switch_fiber", "switch_thread", (("pge", "on"),), True,
         short="switch\nown spaces"),
    Pair("switch, own address spaces, PGE off", "switch", "switch_fiber", "switch_thread", (("pge", "off"),),
         short="switch\nown spaces\nPGE off"),
    Pair("switch, one address space", "switch", "switch_fiber", "switch_thread_samecr3", (("pge", "on"),), True,
         short="switch\none space"),
    Pair("create+exit+join", "create+exit+join", "create_fiber", "create_thread", short="create\n+exit+join"),
    Pair("mutex, uncontended", "lock+unlock", "mutex_fiber", "mutex_thread_uncontended",
         short="mutex\nuncontended"),
    Pair("mutex, contended", "acquisition", "mutex_fiber_contended", "mutex_thread_contended",
         short="mutex\ncontended", fiber_fallback="mutex_fiber",
         fallback_caveat="one fiber: no contention, no yields, so the ratio comes out too high"),
    Pair("malloc+free: shared lock / subheap", "malloc+free", "malloc_subheap", "malloc_shared_lock",
         pair_on="size", short="malloc+free\nshared lock\n/ subheap"),
    Pair("system call: int80 / sysenter", "call", "syscall_sysenter", "syscall_int80",
         short="system call\nint80\n/ sysenter"),
)
# (case, what one operation is) of the TLB, faults and lock-model tables
TLB_CASES = (("invlpg", "instruction"), ("cr3_reload", "instruction"), ("tlb_refill", "refill"))
FAULT_CASES = (("pf_roundtrip", "fault"), ("demand_fault", "fault"), ("twin", "page"))
LOCK_CASES = (("map_unmap", "page"), ("demand_fault", "fault"))
LOCK_NOTE = ("one CPU: this shows the cost per operation and how the address-space lock traffic divides; "
             "it cannot show contention between cores (PATHREADS' mmap_sem finding needs many cores)")
PAPERS = ("papers, for context (not computed from this run): PATHREADS (Zhang & Chen): pthread_create "
          "through fork() costs more than clone(); synchronisation in isolated address spaces costs much more "
          "than with Pthreads (fluidanimate, Fig. 6b); hist 2.17x and dedup 3.19x faster on 32 cores from "
          "avoiding mmap_sem. Dthreads (Liu, thesis ch. 3): commit and twin costs dominate write-heavy "
          "programs (canneal, dedup, reverse_index: each dirtied page costs a protection fault, a private "
          "copy and a commit); the single-writer (version number) fast path skips the diff")
EMULATOR_NOTE = ("note: emulated run: QEMU and Bochs model no TLB timing, so tlb_refill, cr3_reload and the "
                 "CR3 reload of a thread switch show the emulator's costs, not a TLB's")


def label(params: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    """A row's params as text, without reps and the paging mode."""
    return " ".join(f"{k}={params[k]}" for k in params if k not in NOT_LABEL + skip)


def pick(points: list[Point], mode: str, case: str, **want: Any) -> Point | None:
    """The point of a case with these params; of several, entry=sysenter first, then the first recorded."""
    found = [p for p in points if p.mode == mode and p.case == case
             and all(p.params.get(k) == v for k, v in want.items())]
    for key, value in PREFER:
        found.sort(key=lambda p: p.params.get(key, value) != value)
    return found[0] if found else None


def skip_why(records: list[Record], case: str) -> str:
    """Why the kernel skipped (variants of) an aspace case: the distinct reasons of the skip records
    whose `what` is the case, joined by "; " ("" when it skipped none)."""
    whys = [str(r.get("why") or "skipped") for r in records
            if r.get("t") == "skip" and r.get("bench") == ASPACE and str(r.get("what", "")) == case]
    return "; ".join(dict.fromkeys(whys))


def _value_cell(v: Interval | None, digits: int = 0, null: float = 0.0) -> str:
    return cell(v, 2 if null == 1.0 else digits, null)


# --- fibers vs isolated threads --------------------------------------------

@dataclass(frozen=True)
class PairRow:
    pair: Pair
    what: str  # the comparison, with the shared param when it has several values
    mode: str
    fiber: Point | None
    thread: Point | None
    fallback: bool  # the thread side is pge=off because pge=on was not measured
    fiber_fallback: bool = False  # the fiber side is pair.fiber_fallback: pair.fiber was not measured

    @property
    def ratio(self) -> Interval:
        return ratio_of(self.thread.value if self.thread else None, self.fiber.value if self.fiber else None)

    @property
    def short(self) -> str:
        """The figure's label: the pair's, with the shared param and the fallbacks."""
        extra = self.what[len(self.pair.what):].lstrip(", ")
        return (self.pair.short + (f"\n{extra}" if extra else "") + ("\n(no PGE: pge=off)" if self.fallback else "")
                + (f"\n(fiber: {self.pair.fiber_fallback})" if self.fiber_fallback else ""))


def pair_rows(points: list[Point]) -> list[PairRow]:
    rows = []
    for pair in PAIRS:
        shared = sorted({p.params.get(pair.pair_on) for p in points if pair.pair_on
                         and p.case in (pair.fiber, pair.thread) and pair.pair_on in p.params}, key=str)
        for value in shared or [None]:
            key = {pair.pair_on: value} if value is not None else {}
            what = pair.what + (f", {pair.pair_on}={value}" if len(shared) > 1 else "")
            for mode in modes(points):
                fiber = pick(points, mode, pair.fiber, **key)
                fiber_fallback = False
                if fiber is None and pair.fiber_fallback:
                    fiber = pick(points, mode, pair.fiber_fallback, **key)
                    fiber_fallback = fiber is not None
                want = dict(pair.want, **key)
                thread = pick(points, mode, pair.thread, **want)
                fallback = False
                if thread is None and pair.pge_fallback:
                    thread = pick(points, mode, pair.thread, **dict(want, pge="off"))
                    fallback = thread is not None
                if fiber or thread:
                    rows.append(PairRow(pair, what, mode, fiber, thread, fallback, fiber_fallback))
    return rows


def shown(what: str, fallback: bool, fiber_fallback: bool = False, pair: Pair | None = None) -> str:
    """A comparison's name, marked when its thread side fell back to pge=off or its fiber side
    to the pair's fiber_fallback case."""
    out = what + (" (no PGE: pge=off)" if fallback else "")
    if fiber_fallback and pair is not None:
        out += f" (no {pair.fiber}: {pair.fiber_fallback})"
    return out


def row_name(r: PairRow) -> str:
    return shown(r.what, r.fallback, r.fiber_fallback, r.pair)


def _side(records: list[Record], rows: list[PairRow], thread: bool) -> str:
    """The case and params of one side (several when the modes differ), or why it was skipped."""
    chosen = [r.thread if thread else r.fiber for r in rows]
    labels = [f"{p.case} {label(p.params)}".strip() for p in chosen if p is not None]
    if labels:
        return " / ".join(dict.fromkeys(labels))
    case = rows[0].pair.thread if thread else rows[0].pair.fiber
    why = skip_why(records, case)
    return f"{case} (skipped: {why})" if why else case


def section_pairs(run: Run, points: list[Point]) -> list[str]:
    records = run.records
    rows = pair_rows(points)
    if not rows:
        return []
    ms = modes(points)
    body = []
    fallbacks = []
    fiber_fallbacks: list[PairRow] = []
    for what in dict.fromkeys(r.what for r in rows):
        mine = [r for r in rows if r.what == what]
        by = {r.mode: r for r in mine}
        fallback = any(r.fallback for r in mine)
        fiber_fallback = any(r.fiber_fallback for r in mine)
        if fallback:
            fallbacks.append(what)
        if fiber_fallback:
            fiber_fallbacks.append(mine[0])
        body.append([shown(what, fallback, fiber_fallback, mine[0].pair), _side(records, mine, False)]
                    + [cell(by[m].fiber.value) if m in by and by[m].fiber else "" for m in ms]
                    + [_side(records, mine, True)]
                    + [cell(by[m].thread.value) if m in by and by[m].thread else "" for m in ms]
                    + [ratio_cell(by[m].ratio) if m in by else "" for m in ms])
    n = len(ms)
    u = run.units.short
    head = (["comparison", "fiber side"] + [f"{u} {m}" for m in ms] + ["thread side"]
            + [f"{u} {m}" for m in ms] + [f"thread/fiber {m}" for m in ms])
    numeric = set(range(2, 2 + n)) | set(range(3 + n, 3 + 3 * n))
    out = [f"aspace: fibers vs isolated threads, {run.units.name} per operation, median (lo..hi); "
           "ratio = thread side / fiber side (malloc+free: shared lock / subheap; system call: int80 / sysenter)"]
    out += table(head, body, numeric=numeric)
    if fallbacks:
        why = skip_why(records, "switch_thread") or skip_why(records, "switch_thread_samecr3") or "not measured"
        out.append(f"no PGE ({why}): " + "; ".join(fallbacks) + ": the thread side ran with pge=off")
    for r in fiber_fallbacks:
        why = skip_why(records, r.pair.fiber)
        caveat = f" ({r.pair.fallback_caveat})" if r.pair.fallback_caveat else ""
        out.append(f"no {r.pair.fiber} ({'skipped: ' + why if why else 'not measured'}): {r.what}: "
                   f"the fiber side is {r.pair.fiber_fallback}{caveat}")
    return out


# --- workset: fibers vs isolated threads -----------------------------------

@dataclass(frozen=True)
class WorksetRow:
    series: str  # workset_threads params but size, reps and the mode
    mode: str
    size: int
    reps: int | None
    single: Interval | None
    multi: Interval | None
    threads: Interval | None
    switch: str  # the workset `switch` single and multi came from

    @property
    def threads_multi(self) -> Interval:
        return ratio_of(self.threads, self.multi)

    @property
    def multi_single(self) -> Interval:
        return ratio_of(self.multi, self.single)

    @property
    def extra_per_switch(self) -> Interval:
        """(threads - multi) / (2 reps): what an address-space switch adds to each of the 2 reps switches."""
        if self.threads is None or self.multi is None or not self.reps:
            return Interval.none()
        return (self.threads - self.multi).scale(1.0 / (2 * self.reps))


def _workset(points: list[Point], mode: str, case: str, size: int, reps: int | None,
             fill: Any) -> Point | None:
    """The bench-workset point at the same mode, size, reps and fill; switch=pushad first."""
    found = [p for p in points if p.mode == mode and p.case == case and p.params.get("size") == size
             and p.params.get("reps") == reps and (fill is None or p.params.get("fill") == fill)]
    found.sort(key=lambda p: p.params.get("switch") != WORKSET_SWITCH)
    return found[0] if found else None


def workset_rows(records: list[Record]) -> list[WorksetRow]:
    threads = [p for p in collect(records, ASPACE) if p.case == "workset_threads"]
    ws = collect(records, WORKSET)
    rows = []
    for p in threads:
        size, reps = as_int(p.params.get("size")), as_int(p.params.get("reps"))
        if size is None:
            continue
        fill = p.params.get("fill")
        single = _workset(ws, p.mode, "single", size, reps, fill)
        multi = _workset(ws, p.mode, "multi", size, reps, fill)
        switch = str((multi or single).params.get("switch", "")) if multi or single else ""
        rows.append(WorksetRow(series_of(p.params), p.mode, size, reps, single.value if single else None,
                               multi.value if multi else None, p.value, switch))
    seen: set[tuple[str, str, int]] = set()
    out = []
    for r in sorted(rows, key=lambda r: (r.series, r.mode, r.size)):  # a repeated point keeps the first
        if (r.series, r.mode, r.size) not in seen:
            seen.add((r.series, r.mode, r.size))
            out.append(r)
    return out


def section_workset(run: Run) -> list[str]:
    rows = workset_rows(run.records)
    out: list[str] = []
    for series, mode in dict.fromkeys((r.series, r.mode) for r in rows):
        mine = [r for r in rows if r.series == series and r.mode == mode]
        switches = sorted({r.switch for r in mine if r.switch})
        body = [[paper.size_text(r.size), str(r.reps or ""),
                 number(r.single.mid) if r.single else "", number(r.multi.mid) if r.multi else "",
                 number(r.threads.mid) if r.threads else "", ratio_cell(r.threads_multi, 3),
                 ratio_cell(r.multi_single, 3), cell(r.extra_per_switch, 1)] for r in mine]
        head = (f"workset: fibers vs isolated threads, paging {mode}"
                + (f", {series}" if series else "")
                + f": {run.units.name} per series (median); single and multi from bench workset"
                + (f" (switch={'/'.join(switches)})" if switches else " (none at these sizes and reps)")
                + ", threads from workset_threads; per switch = (threads - multi) / (2 reps)")
        out += ([""] if out else []) + [head] + table(
            ["size", "reps", "single", "multi", "threads", "threads/multi", "multi/single", "per switch"],
            body, numeric=set(range(1, 8)))
    return out


# --- TLB, faults, lock model -----------------------------------------------

@dataclass(frozen=True)
class CaseRow:
    """A case with its params (the row) and a value per mode."""

    table: str
    test: str
    label: str
    per: str  # what one operation is; "ratio" for a ratio row
    values: dict[str, Interval]  # by mode
    params: dict[str, Any]  # of the first point (locks, lock_max, pages)

    @property
    def pages(self) -> int | None:
        return as_int(self.params.get("pages"))

    @property
    def null(self) -> float:
        return 1.0 if self.per == "ratio" else 0.0

    def per_page(self, mode: str) -> Interval:
        """tlb_refill: TSC ticks (or instructions) per page touched."""
        v = self.values.get(mode)
        if v is None or not self.pages:
            return Interval.none()
        return v.scale(1.0 / self.pages)


def _case_rows(tbl: str, points: list[Point], cases: tuple[tuple[str, str], ...]) -> list[CaseRow]:
    """Rows by case and params; locks and lock_max are results, not part of the row's name."""
    rows: list[CaseRow] = []
    for case, per in cases:
        by: dict[str, tuple[dict[str, Interval], dict[str, Any]]] = {}
        for p in points:
            if p.case == case:
                vals, _params = by.setdefault(label(p.params, ("locks", "lock_max")), ({}, p.params))
                vals.setdefault(p.mode, p.value)
        rows += [CaseRow(tbl, case, lbl, per, vals, params) for lbl, (vals, params) in by.items()]
    return rows


def tlb_rows(points: list[Point]) -> list[CaseRow]:
    rows = _case_rows("tlb", points, TLB_CASES)
    refill = [r for r in rows if r.test == "tlb_refill"]
    refill.sort(key=lambda r: (str(r.params.get("region", "")), r.params.get("pge") != "on",
                               as_int(r.params.get("pages")) or 0))
    return [r for r in rows if r.test != "tlb_refill"] + refill


def fault_rows(points: list[Point]) -> list[CaseRow]:
    rows = _case_rows("faults", points, FAULT_CASES)
    pf = sorted((r for r in rows if r.test == "pf_roundtrip"),
                key=lambda r: (as_int(r.params.get("pages")) or 0, as_int(r.params.get("ring")) or 0))
    out: list[CaseRow] = []
    for pages in dict.fromkeys(r.params.get("pages") for r in pf):
        mine = [r for r in pf if r.params.get("pages") == pages]
        out += mine
        r0 = next((r for r in mine if r.params.get("ring") == 0), None)
        r3 = next((r for r in mine if r.params.get("ring") == 3), None)
        if r0 and r3:
            vals: dict[str, Interval] = {m: ratio_of(v, r0.values.get(m)) for m, v in r3.values.items()
                                         if r0.values.get(m) is not None}
            text_pages = f" pages={pages}" if pages is not None else ""
            out.append(CaseRow("faults", "pf_roundtrip", f"ring 3 / ring 0{text_pages}", "ratio", vals,
                               r3.params))
    return out + [r for r in rows if r.test != "pf_roundtrip"]


def lock_rows(points: list[Point]) -> list[CaseRow]:
    return _case_rows("lock_model", points, LOCK_CASES)


def _case_table(rows: list[CaseRow], ms: list[str], per_page: bool = False) -> list[str]:
    head = ["test", "params", "per"] + [f"paging {m}" for m in ms]
    if per_page:
        head += [f"per page {m}" for m in ms]
    body = []
    for r in rows:
        line = [r.test, r.label, r.per] + [_value_cell(r.values.get(m), null=r.null) for m in ms]
        if per_page:
            line += [cell(r.per_page(m), 1) if r.test == "tlb_refill" else "" for m in ms]
        body.append(line)
    return table(head, body, numeric=set(range(3, len(head))))


def section_tlb(run: Run, points: list[Point]) -> list[str]:
    rows = tlb_rows(points)
    if not rows:
        return []
    return ([f"aspace TLB: {run.units.name} per instruction (invlpg, cr3_reload) and per refill (tlb_refill: "
             "CR3 reload "
             "+ touching `pages` pages, minus touching them with a warm TLB; region=4k: 4 KiB pages, "
             "region=4m: all in one 4 MiB page), median (min-max)"]
            + _case_table(rows, modes(points), per_page=True))


def section_faults(run: Run, points: list[Point]) -> list[str]:
    rows = fault_rows(points)
    if not rows:
        return []
    return ([f"aspace faults: {run.units.name} per write-protect fault round trip (pf_roundtrip), "
             "per demand-zero fault, "
             "per page twinned (first write in commit mode: fault + private copy + twin), median (min-max)"]
            + _case_table(rows, modes(points)))


# --- commit ----------------------------------------------------------------

@dataclass(frozen=True)
class CommitRow:
    mode: str
    pages: int | None
    dirty: int | None
    commit: Interval | None
    single: Interval | None  # commit_single_writer at this dirty % (it runs at 100)
    reference: Interval | None  # commit_single_writer of the same pages: the ratio's denominator

    @property
    def ratio(self) -> Interval:
        return ratio_of(self.commit, self.reference)


def commit_rows(points: list[Point]) -> list[CommitRow]:
    rows = []
    mine = [p for p in points if p.case in ("commit", "commit_single_writer")]
    keys = sorted({(as_int(p.params.get("pages")) or 0, as_int(p.params.get("dirty")) or 0) for p in mine})
    for mode in modes(mine):
        for pages, dirty in keys:
            def get(case: str, d: int | None) -> Interval | None:
                found = [p for p in mine if p.mode == mode and p.case == case
                         and (as_int(p.params.get("pages")) or 0) == pages
                         and (d is None or (as_int(p.params.get("dirty")) or 0) == d)]
                return found[0].value if found else None
            commit, single = get("commit", dirty), get("commit_single_writer", dirty)
            if commit or single:
                rows.append(CommitRow(mode, pages or None, dirty, commit, single,
                                      get("commit_single_writer", None)))
    return rows


def section_commit(run: Run, points: list[Point]) -> list[str]:
    rows = commit_rows(points)
    if not rows:
        return []
    ms = modes(points)
    by = {(r.pages, r.dirty, r.mode): r for r in rows}
    keys = list(dict.fromkeys((r.pages, r.dirty) for r in rows))
    many = len({k[0] for k in keys}) > 1
    head = (["pages", "dirty %"] if many else ["dirty %"])
    for m in ms:
        head += [f"commit {m}", f"single writer {m}", "commit/single"]
    body = []
    for pages, dirty in keys:
        line = ([str(pages or "")] if many else []) + [str(dirty)]
        for m in ms:
            r = by.get((pages, dirty, m))
            line += [cell(r.commit) if r else "", cell(r.single) if r else "", ratio_cell(r.ratio) if r else ""]
        body.append(line)
    pages_text = f", {keys[0][0]} pages" if not many and keys[0][0] else ""
    return ([f"aspace commit: {run.units.name} per page{pages_text}, word-by-word diff against the twin with that "
             "share of words changed, vs the single-writer fast path (whole-page copy, no diff); "
             "commit/single: each row's commit over the single-writer copy"]
            + table(head, body, numeric=set(range(len(head)))))


# --- lock model ------------------------------------------------------------

def section_lock_model(run: Run, points: list[Point]) -> list[str]:
    rows = lock_rows(points)
    if not rows:
        return []
    ms = modes(points)
    body = [[r.test, str(r.params.get("space", "")), str(r.params.get("threads", "")),
             str(r.params.get("pages", "")), str(r.params.get("locks", "")), str(r.params.get("lock_max", "")),
             r.per] + [_value_cell(r.values.get(m)) for m in ms] for r in rows]
    head = ["test", "space", "threads", "pages", "locks", "lock_max", "per"] + [f"paging {m}" for m in ms]
    return ([f"aspace address-space lock model: {run.units.name} per page mapped and unmapped (map_unmap) and per "
             "demand-zero fault; locks = address-space locks involved, lock_max = acquisitions of the "
             "busiest one"]
            + table(head, body, numeric={2, 3, 4, 5} | set(range(7, len(head)))) + [LOCK_NOTE])


def sections(run: Run) -> list[str]:
    """Every aspace table, the notes; [] when the set has no aspace results."""
    points = collect(run.records, ASPACE)
    if not points:
        return []
    out: list[str] = []
    for block in (section_pairs(run, points), section_workset(run), section_tlb(run, points),
                  section_faults(run, points), section_commit(run, points), section_lock_model(run, points)):
        if block:
            out += ([""] if out else []) + block
    out += ([""] if out else []) + [PAPERS]
    if run.machine.emulated:
        out.append(EMULATOR_NOTE)
    return out


# --- summary ---------------------------------------------------------------

def summary(run: Run) -> list[Answer]:
    """The price list's headline: what isolating threads in address spaces costs against fibers, and
    what commit mode costs per page."""
    points = collect(run.records, ASPACE)
    if not points:
        return []
    mode = modes(points)[0]
    u = run.units.short
    out = []
    pairs = [r for r in pair_rows(points) if r.mode == mode and r.fiber and r.thread]
    if pairs:
        picks = [r for r in pairs if r.pair.what in ("switch, own address spaces", "create+exit+join",
                                                     "mutex, contended")]
        ratios = [Value(row_name(r), r.ratio, 2, 1.0) for r in picks or pairs[:3]]
        out.append(Answer(f"aspace, thread / fiber, paging {mode}", listed(ratios), tuple(ratios),
                          Quote("PATHREADS", "a fork()-like create costs more than clone(); isolated synchronisation "
                                "costs more")))
    parts, values = [], []
    twin = pick(points, mode, "twin")
    if twin:
        values.append(Value("twin", twin.value))
        parts.append(values[-1].labelled())
    commits = [r for r in commit_rows(points) if r.mode == mode and r.commit]
    if commits:
        lo, hi = commits[0], commits[-1]
        values += [Value(f"commit, {lo.dirty} % dirty", lo.commit), Value(f"commit, {hi.dirty} % dirty", hi.commit)]
        parts.append(f"commit {values[-2].text} ({lo.dirty} % dirty) .. {values[-1].text} ({hi.dirty} %)")
    single = next((r.reference for r in commits if r.reference is not None), None)
    if single is not None:
        values.append(Value("single writer", single))
        parts.append(values[-1].labelled())
    if parts:
        out.append(Answer(f"commit mode, {u} per page", ", ".join(parts), tuple(values),
                          Quote("Dthreads", "commit and twin costs dominate write-heavy programs"), depth=1))
    return out


# --- aspace.csv ------------------------------------------------------------

def cells(run: Run) -> list[Cell]:
    out: list[Cell] = []
    add, u, records = cell_adder(out), run.units.short, run.records
    points = collect(records, ASPACE)
    for r in pair_rows(points):
        unit, what = f"{u}/{r.pair.per}", row_name(r)
        add("fibers_vs_threads", r.mode, what, "fiber", unit, r.fiber.value if r.fiber else None)
        add("fibers_vs_threads", r.mode, what, "thread", unit, r.thread.value if r.thread else None)
        add("fibers_vs_threads", r.mode, what, "thread/fiber", "ratio", r.ratio, 1.0, True)
    for w in workset_rows(records):
        row = f"{w.series} size={w.size}".strip()
        add("workset", w.mode, row, "single", f"{u}/series", w.single)
        add("workset", w.mode, row, "multi", f"{u}/series", w.multi)
        add("workset", w.mode, row, "threads", f"{u}/series", w.threads)
        add("workset", w.mode, row, "threads/multi", "ratio", w.threads_multi, 1.0, True)
        add("workset", w.mode, row, "multi/single", "ratio", w.multi_single, 1.0, True)
        add("workset", w.mode, row, "per switch", f"{u}/switch", w.extra_per_switch, derived=True)
    for r in tlb_rows(points) + fault_rows(points):
        row = f"{r.test} {r.label}".strip()
        for m, v in r.values.items():
            ratio = r.per == "ratio"
            add(r.table, m, row, "ratio" if ratio else "med", "ratio" if ratio else f"{u}/{r.per}", v,
                r.null, ratio)
            if r.test == "tlb_refill":
                add(r.table, m, row, "per page", f"{u}/page", r.per_page(m), derived=True)
    for c in commit_rows(points):
        row = f"pages={c.pages} dirty={c.dirty}" if c.pages else f"dirty={c.dirty}"
        add("commit", c.mode, row, "commit", f"{u}/page", c.commit)
        add("commit", c.mode, row, "single_writer", f"{u}/page", c.single)
        add("commit", c.mode, row, "commit/single", "ratio", c.ratio, 1.0, True)
    for r in lock_rows(points):
        row = f"{r.test} {r.label}".strip()
        for m, v in r.values.items():
            add("lock_model", m, row, "med", f"{u}/{r.per}", v)
            for key in ("locks", "lock_max"):
                n = as_int(r.params.get(key))
                # a count the kernel reports, exact by construction
                add("lock_model", m, row, key, "locks" if key == "locks" else "acquisitions",
                    Interval.exact(float(n)) if n is not None else None)
    return out


def csv_rows(run: Run) -> list[list[str]]:
    return [c.csv() for c in cells(run)]


def derived(run: Run) -> list[Derived]:
    return [c.as_derived(ASPACE) for c in cells(run) if c.derived]


def write_csv(run: Run, path: Path) -> Path | None:
    """aspace.csv (docs/REPORT.md); None when the set has no aspace results."""
    return write_cells(cells(run), path)


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    return csv_and_plots(run, out, plots, lambda: write_csv(run, out / ASPACE_CSV), BENCHES, write_all)


# --- its figures ----------------------------------------------------------------------------------

PGE_STYLE = {"on": "-", "off": "--"}
REGION_COLORS = {"4k": "tab:orange", "4m": "tab:green"}
REGION_TEXT = {"4k": "4 KiB pages", "4m": "one 4 MiB page"}


def tlb_lines(records: list[Record]) -> tuple[str, list[tuple[str, str, dict[int, Interval]]]]:
    """The first mode's tlb_refill lines: (mode, [(region, pge, pages -> value)]), region then pge in the
    order the run measured them."""
    points = [p for p in collect(records, ASPACE) if p.case == "tlb_refill"]
    if not points:
        return "", []
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    lines: list[tuple[str, str, dict[int, Interval]]] = []
    for region, pge in dict.fromkeys((str(p.params.get("region", "")), str(p.params.get("pge"))) for p in points):
        by: dict[int, Interval] = {}
        for p in points:
            n = as_int(p.params.get("pages"))
            if (str(p.params.get("region", "")), str(p.params.get("pge"))) == (region, pge) and n and n > 0:
                by.setdefault(n, p.value)  # a repeated point keeps the first
        if by:
            lines.append((region, pge, by))
    return mode, lines


def tlb_refill(ctx: FigureContext, out: Path) -> Path | None:
    """Cycles per refill against pages touched, one line per region x PGE (first mode)."""
    mode, lines = tlb_lines(ctx.records)
    if not lines:
        return None
    fig, ax = new_figure(ctx, "aspace: TLB refill after a CR3 reload", mode)
    pages: set[int] = set()
    for region, pge, by in lines:
        xs = sorted(by)
        pages.update(xs)
        color = REGION_COLORS.get(region, "tab:purple")
        ax.plot(xs, [by[n].mid for n in xs], PGE_STYLE.get(pge, ":"), marker="o", color=color,
                label=f"region {REGION_TEXT.get(region, region or '?')}, pge={pge}")
        band(ax, xs, [by[n] for n in xs], color)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(pages), [str(n) for n in sorted(pages)])
    ax.set_xlabel("pages touched after the CR3 reload, log2 scale")
    ax.set_ylabel(f"{ctx.units.short} per refill (median; CR3 reload + touches, minus warm-TLB touches)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return save(fig, ctx, out / "aspace-tlb-refill.png")


def commit(ctx: FigureContext, out: Path) -> Path | None:
    """Cycles per page against the share of words changed; single writer and twin as reference lines."""
    rows = commit_rows(collect(ctx.records, ASPACE))
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode and r.pages == rows[0].pages]
    line = [r for r in rows if r.commit is not None and r.dirty is not None]
    single = next((r.reference for r in rows if r.reference is not None), None)
    twin = next((p for p in collect(ctx.records, ASPACE) if p.case == "twin" and p.mode == mode), None)
    if not line and single is None:
        return None
    pages = f", {rows[0].pages} pages" if rows[0].pages else ""
    fig, ax = new_figure(ctx, f"aspace: commit cost per page{pages}", mode)
    tops: list[float] = []
    if line:
        xs = [float(r.dirty or 0) for r in line]
        vals = [r.commit for r in line if r.commit is not None]
        ax.plot(xs, [v.mid for v in vals], "-o", color=OURS, label="commit (word-by-word diff against the twin)")
        band(ax, xs, vals, OURS)
        tops += [v.hi if v.bounded else v.mid for v in vals]
    for value, text, color in ((single, "commit_single_writer (whole-page copy, no diff)", THEIRS),
                               (twin.value if twin else None, "twin (fault + private copy + twin)", "dimgray")):
        if value is None or not value.ok:
            continue
        ax.axhline(value.mid, linestyle="--", color=color, linewidth=1.2, label=text)
        ax.annotate(f"{text.split(' (')[0]}: {value.mid:.0f}", xy=(1.0, value.mid), xycoords=("axes fraction", "data"),
                    xytext=(-4, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8, color=color)
        tops.append(value.mid)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xticks([0, 1, 10, 100], ["0", "1", "10", "100"])
    ax.set_xlim(-0.1, 130)
    ax.set_xlabel("words changed since the twin [%], symlog scale")
    ax.set_ylabel(f"{ctx.units.short} per page (median)")
    ax.set_ylim(0, max(tops) * 1.15 if tops else 1)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "aspace-commit.png")


def fibers_vs_threads(ctx: FigureContext, out: Path) -> Path | None:
    """Grouped bars of each comparison's two sides, log y, the ratio above each pair."""
    rows = pair_rows(collect(ctx.records, ASPACE))
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    fig, ax = new_figure(ctx, "aspace: fibers vs ring-3 threads in their own address spaces", mode)
    fibers = [r.fiber.value.mid if r.fiber else float("nan") for r in rows]
    threads = [r.thread.value.mid if r.thread else float("nan") for r in rows]
    xs, width = pair_bars(ax, fibers, threads, ("fiber side (malloc: subheap; system call: sysenter)",
                                                "thread side (malloc: shared lock; system call: int80)"),
                          [r.ratio for r in rows], ctx.units.short)
    for x, r in zip(xs, rows):
        for side, dx in ((r.fiber, -width / 2), (r.thread, width / 2)):
            if side is None:
                ax.annotate("no record", xy=(x + dx, 1), xycoords=("data", "data"), ha="center", va="bottom",
                            fontsize=8, rotation=90, color="dimgray")
    finite = [v for v in fibers + threads if v == v and v > 0]
    ax.set_ylim(1, max(finite) * 100 if finite else 10)
    ax.set_xticks(xs, [r.short for r in rows], fontsize=8)
    ax.set_xlabel("comparison (x: thread side / fiber side)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.93))
    return save(fig, ctx, out / "aspace-fibers-vs-threads.png")


def workset(ctx: FigureContext, out: Path) -> Path | None:
    """threads/multi and multi/single against the working-set size, with their bands; the caches only
    where they are real."""
    rows = [r for r in workset_rows(ctx.records) if r.size > 0]
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    series = list(dict.fromkeys(r.series for r in rows))
    lines: list[tuple[str, str, list[tuple[int, Interval]]]] = []  # (label, colour, (size, ratio) points)
    for s in series:
        mine = [r for r in rows if r.series == s]
        prefix = f"{s}: " if len(series) > 1 else ""
        for values, text, color in (([r.threads_multi for r in mine], "workset_threads / workset multi", THEIRS),
                                    ([r.multi_single for r in mine], "workset multi / single", OURS)):
            pts = [(r.size, v) for r, v in zip(mine, values) if v.ok]
            if pts:
                lines.append((prefix + text, color, pts))
    if not lines:
        return None
    fig, ax = new_figure(ctx, "aspace: working set, fibers vs isolated threads", mode)
    for text, color, pts in lines:
        ax.plot([x for x, _v in pts], [v.mid for _x, v in pts], "-o", color=color, markersize=4, label=text)
        banded = [(x, v) for x, v in pts if v.bounded and v.lo != v.hi]
        if banded:
            ax.fill_between([x for x, _v in banded], [v.lo for _x, v in banded], [v.hi for _x, v in banded],
                            color=color, alpha=0.18, linewidth=0)
    ax.axhline(1.0, color="black", linewidth=0.8)
    size_axis(ax, sorted({r.size for r in rows}), ctx.run.machine.plot_caches)
    ax.set_ylabel(f"ratio of {ctx.units.short} per series (shade: interval)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper right")
    return save(fig, ctx, out / "aspace-workset.png")


FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("aspace-tlb-refill", tlb_refill), ("aspace-commit", commit),
    ("aspace-fibers-vs-threads", fibers_vs_threads), ("aspace-workset", workset),
)


def write_all(run: Run, out: Path) -> list[Path]:
    return draw(FIGURES, BENCHES, run, out)


# report.html: what to look at in each figure (by the start of its file's name; html.figure)
CAPTIONS = {
    "aspace-tlb-refill": "the cost of refilling the TLB after an address-space switch against the pages "
                         "touched: 4 KiB pages or one 4 MiB page, with and without global pages",
    "aspace-commit": "Dthreads' commit: twin and diff per page, against the pages a thread dirtied",
    "aspace-fibers-vs-threads": "ring-0 fibers in one space against ring-3 threads in spaces of their own: "
                                "the gap is what isolation costs per switch",
    "aspace-workset": "the working set refilled by threads in their own spaces against fibers sharing one",
}
