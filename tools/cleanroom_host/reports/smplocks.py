"""The family of the multi-CPU lock and address-space benchmarks `smplocks`, `shootdown`, `aslock` and
`linuxvm`: summary lines that answer the papers' questions, tables, smplocks.csv and figures. A family of
families.FAMILIES.

Every figure is a record's median (TSC ticks per operation as the kernel divided it) with its interval;
ratios of cases measured in one set (SETS) are paired round by round, others Hodges-Lehmann /
Mann-Whitney, records without samples interval arithmetic (stats/interval.py). Each answer leads with the
question, then this run's value, then the paper's number in square brackets (paper.py). Under an emulator
the CPUs are host threads (QEMU TCG) or take turns (-icount): the answers then say so, since what they time
is the emulator, not the papers' effects. docs/REPORT.md describes the tables and smplocks.csv.

The figures: each quantity against the number of CPUs (k), one line per lock, mode, space or kind of
worker, with the band of the runs; an emulator run carries its caveat at the bottom of every figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TYPE_CHECKING

from ..records.kinds import QEMU_ICOUNT
from ..records.text import number, table
from ..stats.interval import Interval, NOISE, band_text, cell, verdict
from . import paper
from .answers import Answer, Quote, Value, listed
from .cells import Cell, Point, SetOf, collect, make_cell, modes, ratio_cell, write_cells
from .context import Derived, Run, csv_and_plots
from .plotkit import DPI, FigureContext as Context, SIZE, band, draw, pyplot as _pyplot, save_figure


BENCHES = ("smplocks", "shootdown", "aslock", "linuxvm")
SMPLOCKS, SHOOTDOWN, ASLOCK, LINUXVM = BENCHES
CSV_NAME = "smplocks.csv"
HANDOFF, BARGE, STARVE = "spinblock_handoff", "spinblock_barge", "spinblock_starve"
GLIBC_DEFAULT, GLIBC_ADAPTIVE = "pthread_mutex", "pthread_adaptive"  # hosted only (bench/glibclocks.h)
LOCKS = ("tas", "tas_pause", "ttas", "ttas_pause", "ticket", "ticket_pause", "mcs", "mcs_pause", "mutex", HANDOFF,
         BARGE, STARVE, GLIBC_DEFAULT, GLIBC_ADAPTIVE)
SPINBLOCKS = (HANDOFF, BARGE, STARVE)
RULES = (HANDOFF, BARGE)  # the sweep's and litethreads'
SUMMARY_LOCKS = ("tas", "ticket", "mcs", "mutex", BARGE, GLIBC_ADAPTIVE)  # the summary's few
# A lock as a sentence names it
SAY = {"mutex": "NPTL's algorithm", HANDOFF: "handoff", BARGE: "barge", STARVE: "starve",
       GLIBC_DEFAULT: "glibc default", GLIBC_ADAPTIVE: "glibc adaptive"}
LITE_SETTINGS = ((0, 0), (100, 0), (0, 200), (100, 200))
SHOOT_MODES = ("ipi", "mailbox", "isolated")
SPACES = ("shared", "isolated")
AS_OPS = ("demand_fault", "map_unmap")
VM_OPS = ("fault", "mmap", "mprotect")
WORKERS = ("threads", "processes")
SIBLINGS = ("none", "threads", "processes")
CHECKS = ("lost", "stale", "unacked", "missing", "failed")  # params that must be 0

TCG_CAVEAT = ("emulator: under QEMU TCG every vCPU is a host thread, so cross-CPU timing is the host's "
              "scheduling, not hardware (emulator behaviour, not the papers' effects)")
ICOUNT_CAVEAT = ("emulator: under -icount QEMU runs the vCPUs in turn, never two at once, so nothing contends "
                 "and a handoff waits for a whole time slice (emulator behaviour, not the papers' effects)")


# The sets of cases each benchmark measures in turn (bench_measure_set), by case and params: smplocks
# every lock of one case at one k (the pause and the fibers on one CPU alone, each litethreads setting's two
# release rules together); shootdown every
# mode at one k; aslock both spaces of one op at one k; linuxvm threads and processes of one op at one k.
SETS: dict[str, SetOf] = {
    SMPLOCKS: lambda case, params: (case, params.get("cpus"), params.get("threads"),
                                    (params.get("lock_loops"), params.get("unlock_loops")) if case == "litethreads"
                                    else None),
    SHOOTDOWN: lambda case, params: (params.get("cpus"),),
    ASLOCK: lambda case, params: (case, params.get("cpus")),
    LINUXVM: lambda case, params: (case, params.get("op"), params.get("cpus")),
}


def points_of(run: Run, bench: str) -> list[Point]:
    """The bench's results in the run's first paging mode (the kernel may run it in two passes); cases of
    one set pair up round by round."""
    pts = collect(run.records, bench, SETS[bench])
    if not pts:
        return []
    first = modes(pts)[0]
    return [p for p in pts if p.mode == first]


def cpus(p: Point) -> int:
    v = p.params.get("cpus", 1)
    return v if isinstance(v, int) else 1


def ks(points: list[Point]) -> list[int]:
    return sorted({cpus(p) for p in points})


def grid(points: list[Point], case: str, row_key: str, rows: tuple[str, ...] = (),
         **match: Any) -> dict[str, dict[int, Interval]]:
    """{row: {k: value}} of one case, rows named by params[row_key], in `rows`' order first."""
    out: dict[str, dict[int, Interval]] = {r: {} for r in rows}
    for p in points:
        if p.case == case and all(p.params.get(k) == v for k, v in match.items()):
            out.setdefault(str(p.params.get(row_key)), {})[cpus(p)] = p.value
    return {r: v for r, v in out.items() if v}


def one(points: list[Point], case: str, **match: Any) -> Interval | None:
    for p in points:
        if p.case == case and all(p.params.get(k) == v for k, v in match.items()):
            return p.value
    return None


def ratio(a: Interval | None, b: Interval | None) -> Interval:
    return a.ratio(b) if a is not None and b is not None else Interval.none()


def x(label: str, v: Interval | None, where: str = "") -> Value:
    """A ratio for a sentence: '3.1x', '-' when missing; inside the noise '~1x' with the ratio's estimate and
    its interval beside it: across CPUs on a shared machine some runs are preempted, the interval then spans 1
    while most runs agree, and the estimate is worth reading."""
    if v is not None and v.ok and verdict(v, 1.0) == NOISE:
        estimate = f"estimate {number(v.mid, 2)}x"
        return Value(label, v, 2, 1.0, "x", after=f" ({estimate}, {band_text(v, 2)[1:-1]})",
                     where=f"{where}; {estimate}" if where else estimate)
    return Value(label, v, 2, 1.0, "x", where=where)


def median(label: str, p: Point, where: str = "") -> Value:
    """A point's median as the summary writes it (a number, no band: the page shows its interval)."""
    return Value(label, p.value, word=number(p.value.mid), where=where)


def caveat(run: Run) -> str | None:
    if run.machine.kind == QEMU_ICOUNT:
        return ICOUNT_CAVEAT
    return TCG_CAVEAT if run.machine.emulated else None


# --- smplocks ----------------------------------------------------------------------------------------

def loops_of(p: Point) -> tuple[Any, Any]:
    return p.params.get("lock_loops"), p.params.get("unlock_loops")


def pause_ticks(points: list[Point]) -> Interval | None:
    """One `pause` (the `pause` case): what a turn of lock_loops and unlock_loops costs."""
    return one(points, "pause")


def tsc_hz(run: Run) -> int | None:
    """The TSC rate where ticks are time on a real CPU (not an emulator's, not instructions)."""
    tsc = run.first("tsc")
    hz = tsc.get("hz") if tsc else None
    ok = isinstance(hz, int) and not isinstance(hz, bool) and hz > 0 and not run.machine.emulated
    return hz if ok else None


def ns(run: Run, v: Interval | None) -> Interval | None:
    hz = tsc_hz(run)
    return v.scale(1e9 / hz) if v is not None and hz else None


def loops_time(run: Run, pause: Interval | None, loops: int) -> str:
    """lock_loops as time: '2.4 us' (pauses at the measured cost), '' where ticks are no time."""
    t = ns(run, pause)
    if t is None or not t.ok:
        return ""
    us = t.mid * loops / 1000
    return f"{us:.{0 if us >= 100 or us == 0 else 1}f} us"


def per_1000(p: Point | None) -> str:
    """' (98/98)': parks/handoffs per 1000 operations from a spinblock's params, ' (127)' a mutex's parks."""
    vals = [str(p.params[key]) for key in ("parks_permille", "handoffs_permille") if p and key in p.params]
    return f" ({'/'.join(vals)})" if vals else ""


def per_1000_words(p: Point) -> str:
    """per_1000 in words, for the page: 'parks 98, handoffs 98 per 1000 operations'."""
    vals = [f"{key.split('_')[0]} {p.params[key]}" for key in ("parks_permille", "handoffs_permille") if key in p.params]
    return f"{', '.join(vals)} per 1000 operations" if vals else ""


def fairness(p: Point) -> str:
    """'4045..15955 of 10000': the fewest and most lock+unlocks one CPU completed per sample, of its fair
    share (reps)."""
    lo, hi, share = p.params.get("done_min"), p.params.get("done_max"), p.params.get("reps")
    return f"{lo}..{hi} of {share}" if isinstance(lo, int) and isinstance(hi, int) else ""


def point(points: list[Point], case: str, **match: Any) -> Point | None:
    return next((p for p in points if p.case == case and all(p.params.get(k) == v for k, v in match.items())),
                None)


def lite_rows(points: list[Point], lock: str) -> list[tuple[tuple[int, int], Interval, Interval, Point]]:
    """((lock_loops, unlock_loops), per item, / (0,0), the point) of one release rule in LITE_SETTINGS'
    order."""
    base = one(points, "litethreads", lock=lock, lock_loops=0, unlock_loops=0)
    out = []
    for s in LITE_SETTINGS:
        p = next((q for q in points if q.case == "litethreads" and q.params.get("lock") == lock
                  and loops_of(q) == s), None)
        if p is not None:
            out.append((s, p.value, ratio(p.value, base), p))
    return out


def valchanov(points: list[Point]) -> tuple[Interval | None, dict[str, Interval], int]:
    """(5 fibers on one CPU, {lock: across CPUs}, the CPUs of the latter)."""
    fiber = one(points, "valchanov", lock="fiber_mutex")
    across = {str(p.params.get("lock")): p.value for p in points if p.case == "valchanov" and cpus(p) > 1}
    n = max((cpus(p) for p in points if p.case == "valchanov"), default=1)
    return fiber, across, n


def sweep_rows(points: list[Point]) -> dict[tuple[str, Any, Any], dict[int, Point]]:
    """{(lock, lock_loops, unlock_loops): {k: point}} of the sweep, the release rules' settings first."""
    out: dict[tuple[str, Any, Any], dict[int, Point]] = {}
    for p in sorted((q for q in points if q.case == "sweep"),
                    key=lambda q: (q.params.get("lock") not in RULES, LOCKS.index(q.params["lock"])
                                   if q.params.get("lock") in LOCKS else 99, loops_of(q) == (None, None))):
        out.setdefault((str(p.params.get("lock")), *loops_of(p)), {})[cpus(p)] = p
    return out


def sweep_at(pts: list[Point], k: int) -> dict[tuple[str, Any, Any], Point]:
    """The release rules' settings of the sweep at k CPUs."""
    return {key: by_k[k] for key, by_k in sweep_rows(pts).items() if k in by_k and key[0] in RULES}


def parks_range(points: list[Point], key: str = "parks_permille") -> str:
    vals = [p.params[key] for p in points if isinstance(p.params.get(key), int)]
    return f"{min(vals)}..{max(vals)}" if vals else "-"


def sweep_text(run: Run, pts: list[Point], u: str) -> Answer | None:
    """The sweep at 2 CPUs in one sentence: each release rule's range over its settings."""
    rows = sweep_at(pts, 2)
    if not rows:
        return None
    pause = pause_ticks(pts)
    lock_loops = sorted({key[1] for key in rows})
    unlock_loops = sorted({key[2] for key in rows})
    span = f" ({loops_time(run, pause, lock_loops[0])}..{loops_time(run, pause, lock_loops[-1])})" \
        if loops_time(run, pause, 1) else ""
    parts, values = [], []
    for rule in RULES:
        mine = [p for key, p in rows.items() if key[0] == rule]
        if mine:
            mids = sorted(p.value.mid for p in mine)
            parks = f"parks {parks_range(mine)}"
            values.append(Value(f"{SAY[rule]}, medians over the sweep", None, word=f"{number(mids[0])}..{number(mids[-1])}",
                                where=parks))
            parts.append(f"{SAY[rule]} {values[-1].text} ({parks})")
    return Answer(f"sweep of lock_loops {'/'.join(map(str, lock_loops))}{span} x unlock_loops "
                  f"{'/'.join(map(str, unlock_loops))}, medians", ", ".join(parts), tuple(values), depth=2)


def spinblock_text(run: Run, pts: list[Point], u: str) -> Answer | None:
    """The spin-then-block locks at 2 CPUs (the contended set there): barging over glibc's adaptive
    mutex (and at the most CPUs, where the run had more), then each with parks and handoffs per 1000,
    NPTL's algorithm and glibc's beside."""
    here = {lock: point(pts, "contended", lock=lock, cpus=2) for lock in LOCKS}
    if not any(here[lock] for lock in SPINBLOCKS):
        return None
    p0 = next(here[lock] for lock in SPINBLOCKS if here[lock])
    loops = p0.params.get("lock_loops")
    spin = f"lock_loops {loops}" + (f" ({loops_time(run, pause_ticks(pts), loops)})"
                                    if isinstance(loops, int) and loops_time(run, pause_ticks(pts), loops) else "")
    barge, adaptive = here[BARGE], here[GLIBC_ADAPTIVE]
    values, ratios = [], ""
    if barge and adaptive:
        values.append(x("barge / glibc adaptive", ratio(barge.value, adaptive.value)))
        ratios = values[-1].labelled()
        most = max(ks([p for p in pts if p.case == "contended"]))
        far = {lock: point(pts, "contended", lock=lock, cpus=most) for lock in (BARGE, GLIBC_ADAPTIVE)}
        if most > 2 and far[BARGE] and far[GLIBC_ADAPTIVE]:  # the papers' scale, where the run has it
            values.append(x(f"barge / glibc adaptive, at {most} CPUs",
                            ratio(far[BARGE].value, far[GLIBC_ADAPTIVE].value)))
            ratios += f", at {most} CPUs {values[-1].text}"
    parts, medians = [], []
    for lock in (*SPINBLOCKS, "mutex", GLIBC_DEFAULT, GLIBC_ADAPTIVE):
        p = here[lock]
        if p:
            medians.append(median(f"{SAY[lock]}, median, {u}", p, per_1000_words(p)))
            parts.append(f"{SAY[lock]} {medians[-1].text}{per_1000(p)}")
    words = f"{u}, medians (parks/handoffs per 1000): " + ", ".join(parts)
    return Answer(f"spin-then-block at 2 CPUs, {spin}", f"{ratios}; {words}" if ratios else words,
                  (*values, *medians), sep=": " if ratios else "; ", depth=1)


def convoy_text(pts: list[Point], u: str) -> Answer | None:
    """Handoff against barging where waiters park at once (the sweep's lock_loops 0, unlock_loops 0)."""
    rows = sweep_at(pts, 2)
    hand, barge = rows.get((HANDOFF, 0, 0)), rows.get((BARGE, 0, 0))
    if hand is None or barge is None:
        return None
    both = x("handoff / barge", ratio(hand.value, barge.value))
    medians = (median(f"handoff, median, {u}", hand, per_1000_words(hand)),
               median(f"barge, median, {u}", barge, per_1000_words(barge)))
    why = "a handoff holds the lock through the sleeper's wake-up"
    return Answer("parking at once (lock_loops 0)", f"{both.labelled()}: {medians[0].text}{per_1000(hand)} / "
                  f"{medians[1].text}{per_1000(barge)} {u}; {why}", (both, *medians), depth=2, sep=", ", note=why)


def valchanov_ns_text(run: Run, pts: list[Point]) -> Answer | None:
    """Valchanov's shape in ns per lock+unlock beside the paper's, and how many threads it had."""
    _fiber, across, n = valchanov(pts)
    if not across or tsc_hz(run) is None:
        return None
    shape = f"{n} threads" + ("" if n >= paper.VALCHANOV_THREADS else ", fewer CPUs than the paper's 5")
    values = [Value(SAY.get(lock, lock), ns(run, across[lock])) for lock in ("mutex", BARGE, GLIBC_ADAPTIVE)
              if lock in across]
    return Answer(f"ns per lock+unlock ({shape})", listed(values), tuple(values), Quote(*paper.VALCHANOV_NS_TEXT),
                  depth=2)


def summary_smplocks(run: Run, u: str) -> list[Answer]:
    pts = points_of(run, SMPLOCKS)
    if not pts:
        return []
    out = []
    con = grid(pts, "contended", "lock", LOCKS)
    kk = ks([p for p in pts if p.case == "contended"])
    if con and len(kk) > 1:
        lo, hi = kk[0], kk[-1]
        pairs = [(lock, Value(f"{lock}, {lo} CPU{'s' if lo > 1 else ''}", v.get(lo)),
                  Value(f"{lock}, {hi} CPUs", v.get(hi))) for lock, v in con.items() if lock in SUMMARY_LOCKS]
        out.append(Answer(f"smplocks: what does a lock+unlock cost as CPUs contend? {u}, {lo} -> {hi} CPUs",
                          ", ".join(f"{lock} {a.text} -> {b.text}" for lock, a, b in pairs),
                          tuple(v for _lock, a, b in pairs for v in (a, b))))
    out += [a for a in (spinblock_text(run, pts, u), convoy_text(pts, u), sweep_text(run, pts, u)) if a]
    fiber, across, n = valchanov(pts)
    if fiber is not None and across:
        nptl = x("", ratio(across.get("mutex"), fiber))
        spin = x("", ratio(across.get("mutex"), across.get(BARGE)))
        out.append(Answer(f"valchanov: NPTL's mutex algorithm across {n} CPUs / 5 fibers on one CPU", nptl.text,
                          (nptl,), Quote(*paper.VALCHANOV_TEXT), depth=1, sep=" "))
        out.append(Answer("that mutex / barging spin-then-block", spin.text, (spin,), Quote(*paper.VALCHANOV_SPIN_TEXT),
                          depth=1, sep=" ", joined="; "))
    line = valchanov_ns_text(run, pts)
    if line:
        out.append(line)
    lite = lite_rows(pts, BARGE)
    if len(lite) > 1:
        ratios = [x(f"({a},{b})", r) for (a, b), _v, r, _p in lite[1:]]
        out.append(Answer("litethreads on two CPUs, barging (its rule), per item / loops (0,0)", listed(ratios),
                          tuple(ratios), Quote(*paper.LITE_TWO_CORES_TEXT), depth=1))
    return out


def section_smplocks(run: Run) -> list[str]:
    pts = points_of(run, SMPLOCKS)
    if not pts:
        return []
    u = run.units.short
    out: list[str] = []
    pause = pause_ticks(pts)
    if pause is not None:
        t = ns(run, pause)
        out.append(f"smplocks, pause: one `pause` {cell(pause)} {u}" + (f", {cell(t, 1)} ns" if t else "")
                   + ": a turn of lock_loops and unlock_loops")
    con = grid(pts, "contended", "lock", LOCKS)
    kk = ks([p for p in pts if p.case == "contended"])
    if con:
        out += section_grid(f"smplocks, contended: {u} per lock+unlock over all CPUs, median (lo..hi), by CPUs "
                            "contending", con, kk, "lock")
    blocking = [p for p in pts if p.case in ("contended", "sweep", "valchanov") and "parks_permille" in p.params]
    if blocking:
        out.append("smplocks, the locks that park: per 1000 lock+unlocks, and each CPU's share of a sample "
                   "(fewest..most of a fair share)")
        out += table(["case", "lock", "loops", "CPUs", f"{u} per lock+unlock", "parks", "handoffs", "per CPU"],
                     [[p.case, str(p.params.get("lock")), "/".join(str(v) for v in loops_of(p) if v is not None),
                       str(cpus(p)), cell(p.value), str(p.params.get("parks_permille", "")),
                       str(p.params.get("handoffs_permille", "")), fairness(p)] for p in blocking],
                     numeric={2, 3, 4, 5, 6})
    sweep = sweep_rows(pts)
    if sweep:
        sk = sorted({k for v in sweep.values() for k in v})
        out.append(f"smplocks, sweep: {u} per lock+unlock by CPUs contending; lock_loops as time at one pause each")
        out += table(["lock", "lock_loops", "unlock_loops", "spin"] + [f"{k} CPUs" for k in sk],
                     [[lock, str(a if a is not None else ""), str(b if b is not None else ""),
                       loops_time(run, pause, a) if isinstance(a, int) else ""]
                      + [cell(v[k].value) if k in v else "" for k in sk] for (lock, a, b), v in sweep.items()],
                     numeric=set(range(1, 4 + len(sk))))
    hand = grid(pts, "handoff", "lock", LOCKS)
    if hand:
        out.append(f"smplocks, handoff: {u} per handoff of the lock between CPU 0 and CPU 1 (taking turns)")
        out += table(["lock", "per handoff"], [[lock, cell(v.get(2))] for lock, v in hand.items()], numeric={1})
    lite = [(rule, row) for rule in RULES for row in lite_rows(pts, rule)]
    if lite:
        out.append(f"smplocks, litethreads: producer on CPU 0, consumer on CPU 1, {u} per item")
        out += table(["lock", "lock_loops", "unlock_loops", "per item", "/ (0,0)", "parks per 1000 items",
                      "handoffs"],
                     [[rule, str(a), str(b), cell(v), ratio_cell(r), str(p.params.get("parks_permille", "")),
                       str(p.params.get("handoffs_permille", ""))] for rule, ((a, b), v, r, p) in lite],
                     numeric={1, 2, 3, 4, 5, 6})
    fiber, across, n = valchanov(pts)
    if fiber is not None or across:
        out.append(f"smplocks, valchanov: {u} per lock+unlock; 5 fibers on one CPU vs min(5, CPUs) = {n} CPUs")
        rows = [["fiber_mutex", "1", cell(fiber), "", cell(ns(run, fiber), 1)]] if fiber is not None else []
        rows += [[lock, str(n), cell(v), ratio_cell(ratio(v, fiber)), cell(ns(run, v), 1)]
                 for lock, v in across.items()]
        out += table(["lock", "CPUs", "per lock+unlock", "/ fibers", "ns"], rows, numeric={1, 2, 3, 4})
    return out


# --- shootdown, aslock --------------------------------------------------------------------------------

def summary_shootdown(run: Run, u: str) -> list[Answer]:
    pts = points_of(run, SHOOTDOWN)
    g = grid(pts, "shootdown", "mode", SHOOT_MODES)
    kk = ks(pts)
    if not g or len(kk) < 2:
        return []
    top = kk[-1]
    modes_ = [Value(m, v.get(top)) for m, v in g.items()]
    one_cpu = Value("ipi, one CPU", g.get("ipi", {}).get(1))
    ipi = x(f"ipi {top} CPUs / 1", ratio(g.get("ipi", {}).get(top), g.get("ipi", {}).get(1)))
    return [Answer(f"shootdown: what does changing a page's entry that {top} CPUs use cost? {u} per change",
                   f"{listed(modes_)} (one CPU: {one_cpu.text}); {ipi.label}: {ipi.text}", (*modes_, one_cpu, ipi),
                   Quote(*paper.PATHREADS_SHOOT_TEXT))]


def as_ratio(g: dict[str, dict[int, Interval]], k: int) -> Interval:
    return ratio(g.get("shared", {}).get(k), g.get("isolated", {}).get(k))


def summary_aslock(run: Run, u: str) -> list[Answer]:
    pts = points_of(run, ASLOCK)
    kk = ks(pts)
    if not pts or len(kk) < 2:
        return []
    top = kk[-1]
    ratios = [x(op, as_ratio(grid(pts, op, "space", SPACES), top)) for op in AS_OPS]
    return [Answer(f"aslock: does one address-space lock hold back {top} CPUs? time per operation, one shared space / "
                   f"one space each", listed(ratios), tuple(ratios), Quote(*paper.PATHREADS_TEXT))]


def section_grid(title: str, g: dict[str, dict[int, Interval]], kk: list[int], first: str) -> list[str]:
    """Rows by k; a row named "a / b" is a ratio (two decimals, "~1" inside the noise)."""
    def fmt(row: str, v: Interval | None) -> str:
        return ratio_cell(v) if " / " in row else cell(v)
    return [title] + table([first] + [f"{k} CPU{'s' if k > 1 else ''}" for k in kk],
                           [[r] + [fmt(r, v.get(k)) for k in kk] for r, v in g.items()],
                           numeric=set(range(1, 1 + len(kk))))


def section_shootdown(run: Run) -> list[str]:
    pts = points_of(run, SHOOTDOWN)
    g = grid(pts, "shootdown", "mode", SHOOT_MODES)
    if not g:
        return []
    return section_grid(f"shootdown: {run.units.short} per change of the entry, from its write to the last "
                        f"acknowledgement, by CPUs using the page", g, ks(pts), "mode")


def section_aslock(run: Run) -> list[str]:
    pts = points_of(run, ASLOCK)
    if not pts:
        return []
    kk, out = ks(pts), []
    for op in AS_OPS:
        g = grid(pts, op, "space", SPACES)
        if g:
            g["shared / isolated"] = {k: as_ratio(g, k) for k in kk}
            out += section_grid(f"aslock, {op}: {run.units.short} per operation over all CPUs, by CPUs", g, kk,
                                "space")
    return out


# --- linuxvm ------------------------------------------------------------------------------------------

def vm_ratio(g: dict[str, dict[int, Interval]], k: int) -> Interval:
    """threads / processes time per operation: how much faster processes are."""
    return ratio(g.get("threads", {}).get(k), g.get("processes", {}).get(k))


def kernel_text(pts: list[Point]) -> str:
    p = next((q for q in pts if q.params.get("kernel")), None)
    if p is None:
        return ""
    lock = {"per_vma": "a fault locks its mapping alone (per-VMA locks, 6.4+)",
            "mmap_lock": "a fault takes mmap_lock to read"}.get(str(p.params.get("fault_lock")), "fault lock unknown")
    return f"Linux {p.params.get('kernel')}: {lock}"


def shoot_grid(pts: list[Point], op: str) -> dict[str, dict[int, Interval]]:
    return grid(pts, "tlb_shootdown", "siblings", SIBLINGS, op=op)


def summary_linuxvm(run: Run) -> list[Answer]:
    pts = points_of(run, LINUXVM)
    kk = ks([p for p in pts if p.case in VM_OPS])
    if not pts or len(kk) < 2:
        return []
    top = kk[-1]
    ratios = [x(op, vm_ratio(grid(pts, op, "workers", WORKERS), top)) for op in VM_OPS]
    out = [Answer(f"linuxvm: how much faster are {top} processes than {top} threads of one process?",
                  f"({kernel_text(pts)}) {listed(ratios)}", tuple(ratios), Quote(*paper.PATHREADS_TEXT), sep=" ",
                  note=kernel_text(pts))]
    parts, values = [], []
    for op in ("munmap", "mprotect"):
        g = shoot_grid(pts, op)
        alone = g.get("none", {}).get(1)
        pair = (x(f"{op}, with sibling threads", ratio(g.get("threads", {}).get(top), alone)),
                x(f"{op}, with sibling processes", ratio(g.get("processes", {}).get(top), alone)))
        values += pair
        parts.append(f"{op} {pair[0].text} with sibling threads, {pair[1].text} with sibling processes")
    out.append(Answer("a real TLB shootdown: time per op / alone", "; ".join(parts), tuple(values), depth=1))
    return out


def section_linuxvm(run: Run) -> list[str]:
    pts = points_of(run, LINUXVM)
    if not pts:
        return []
    u, out = run.units.short, [f"linuxvm: {kernel_text(pts)}"]
    kk = ks([p for p in pts if p.case in VM_OPS])
    for op in VM_OPS:
        g = grid(pts, op, "workers", WORKERS)
        if g:
            g["threads / processes"] = {k: vm_ratio(g, k) for k in kk}
            out += section_grid(f"linuxvm, {op}: {u} per operation over all workers, by CPUs", g, kk, "workers")
    for op in ("munmap", "mprotect"):
        g = shoot_grid(pts, op)
        if g:
            out += section_grid(f"linuxvm, tlb_shootdown {op}: {u} per operation of CPU 0 while the other CPUs spin "
                                f"as threads of its process or as processes", g, ks(pts), "siblings")
    return out


# --- checks, summary, sections --------------------------------------------------------------------------

def check_counts(run: Run) -> tuple[dict[str, int], int, int]:
    """({param: total} of the must-be-zero params, results that have them, results cut at the time limit)."""
    totals = {k: 0 for k in CHECKS}
    n = cut = 0
    for r in run.results(*BENCHES):
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        n += 1
        cut += bool(params.get("cut"))
        for k in CHECKS:
            if isinstance(params.get(k), int):
                totals[k] += params[k]
    return totals, n, cut


def checks_line(run: Run) -> str | None:
    totals, n, cut = check_counts(run)
    if not n:
        return None
    bad = {k: v for k, v in totals.items() if v}
    head = ("checks: FAILED " + ", ".join(f"{k} {v}" for k, v in bad.items()) if bad
            else "checks: no lost update, no stale translation, every change acknowledged, every fault arrived")
    return f"{head} ({n} results; {cut} cut at the time limit and scaled)"


def summary(run: Run) -> list[Answer]:
    u = run.units.short
    out = summary_smplocks(run, u) + summary_shootdown(run, u) + summary_aslock(run, u) + summary_linuxvm(run)
    if not out:
        return []
    note = caveat(run)
    line = checks_line(run)
    return out + ([Answer(note, depth=1)] if note else []) + ([Answer(line, depth=1)] if line else [])


def sections(run: Run) -> list[str]:
    out: list[str] = []
    for block in (section_smplocks(run), section_shootdown(run), section_aslock(run), section_linuxvm(run)):
        if block:
            out += ([""] if out else []) + block
    line, note = checks_line(run), caveat(run)
    if out and line:
        out.append(line.strip())
    if out and note:
        out.append(note)
    return out


# --- smplocks.csv ----------------------------------------------------------------------------------------

def cells(run: Run) -> list[Cell]:
    u = run.units.short
    out: list[Cell] = []

    def grid_cells(tbl: str, mode: str, g: dict[str, dict[int, Interval]], unit: str, derived: bool = False) -> None:
        for row, vals in g.items():
            for k, v in vals.items():
                out.append(make_cell(tbl, mode, row, f"cpus={k}", unit, v, 1.0 if derived else 0.0, derived))

    pts = points_of(run, SMPLOCKS)
    mode = pts[0].mode if pts else ""
    grid_cells("contended", mode, grid(pts, "contended", "lock", LOCKS), f"{u}/lock+unlock")
    grid_cells("handoff", mode, grid(pts, "handoff", "lock", LOCKS), f"{u}/handoff")
    for (lock, a, b), vals in sweep_rows(pts).items():
        row = lock + (f" lock_loops={a} unlock_loops={b}" if a is not None else "")
        grid_cells("sweep", mode, {row: {k: p.value for k, p in vals.items()}}, f"{u}/lock+unlock")
    for rule in RULES:
        for (a, b), v, r, _p in lite_rows(pts, rule):
            row = f"{rule} lock_loops={a} unlock_loops={b}"
            out.append(make_cell("litethreads_2cpu", mode, row, "med", f"{u}/item", v))
            out.append(make_cell("litethreads_2cpu", mode, row, "/(0,0)", "ratio", r, 1.0, True))
    fiber, across, n = valchanov(pts)
    for lock, v in across.items():
        out.append(make_cell("valchanov_cpus", mode, lock, f"cpus={n}", f"{u}/lock+unlock", v))
        out.append(make_cell("valchanov_cpus", mode, lock, "/fibers", "ratio", ratio(v, fiber), 1.0, True))
    pts = points_of(run, SHOOTDOWN)
    grid_cells("shootdown", pts[0].mode if pts else "", grid(pts, "shootdown", "mode", SHOOT_MODES), f"{u}/change")
    pts = points_of(run, ASLOCK)
    for op in AS_OPS:
        g = grid(pts, op, "space", SPACES)
        grid_cells(f"aslock_{op}", pts[0].mode if pts else "", g, f"{u}/op")
        grid_cells(f"aslock_{op}", pts[0].mode if pts else "", {"shared/isolated": {k: as_ratio(g, k) for k in ks(pts)
                                                                                 if g}}, "ratio", True)
    pts = points_of(run, LINUXVM)
    vm_mode = pts[0].mode if pts else ""
    for op in VM_OPS:
        g = grid(pts, op, "workers", WORKERS)
        grid_cells(f"linuxvm_{op}", vm_mode, g, f"{u}/op")
        grid_cells(f"linuxvm_{op}", vm_mode, {"threads/processes": {k: vm_ratio(g, k) for k in ks(pts) if g}},
                   "ratio", True)
    for op in ("munmap", "mprotect"):
        grid_cells(f"linuxvm_shootdown_{op}", vm_mode, shoot_grid(pts, op), f"{u}/op")
    return [c for c in out if c.value.ok]


def derived(run: Run) -> list[Derived]:
    def group(tbl: str) -> str:
        return next((b for b in BENCHES if tbl.startswith(b)), SMPLOCKS)
    return [c.as_derived(group(c.table)) for c in cells(run) if c.derived]


def write_csv(run: Run, path: Path) -> Path | None:
    return write_cells(cells(run), path)


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    write: Callable[[], Path | None] = lambda: write_csv(run, out / CSV_NAME)
    return csv_and_plots(run, out, plots, write, BENCHES, write_all)


# --- its figures ----------------------------------------------------------------------------------

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _new(ctx: Context, title: str, mode: str) -> tuple["Figure", "Axes"]:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(ctx.subtitle(mode), fontsize=9, color="dimgray")
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def _save(fig: "Figure", ctx: Context, path: Path) -> Path:
    note = caveat(ctx.run) or ctx.note or ""
    return save_figure(fig, path, note)


def _lines(ax: "Axes", g: dict[str, dict[int, Interval]], label: Callable[[str], str] = str) -> list[int]:
    """One line per row of g against k, its band shaded; returns every k drawn."""
    drawn: set[int] = set()
    for row, vals in g.items():
        kk = sorted(k for k, v in vals.items() if v.ok)
        if not kk:
            continue
        vs = [vals[k] for k in kk]
        (line,) = ax.plot(kk, [v.mid for v in vs], "-o", markersize=4, label=label(row))
        band(ax, kk, vs, line.get_color(), alpha=0.1)
        drawn.update(kk)
    return sorted(drawn)


def _axes_k(ax: "Axes", kk: list[int], ylabel: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(kk, [str(k) for k in kk])
    ax.set_xlabel("CPUs working (k), log2 scale")
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def _figure(ctx: Context, out: Path, name: str, title: str, mode: str, g: dict[str, dict[int, Interval]],
            ylabel: str, label: Callable[[str], str] = str, note: str = "") -> Path | None:
    """One quantity against k, a line per row of g (`note` in a corner); None when g is empty."""
    if not g:
        return None
    fig, ax = _new(ctx, title, mode)
    _axes_k(ax, _lines(ax, g, label), f"{ctx.units.short} {ylabel} (median), log scale")
    if note:
        ax.text(0.99, 0.01, note, transform=ax.transAxes, fontsize=8, color="dimgray", ha="right", va="bottom")
    return _save(fig, ctx, out / f"{name}.png")


def _mode(pts: list[Point]) -> str:
    return pts[0].mode if pts else ""


def contended(ctx: Context, out: Path) -> Path | None:
    pts = points_of(ctx.run, SMPLOCKS)
    return _figure(ctx, out, "smplocks-contended", "smplocks: a lock+unlock with k CPUs contending", _mode(pts),
                   grid(pts, "contended", "lock", LOCKS), "per lock+unlock over all CPUs")


def sweep(ctx: Context, out: Path) -> Path | None:
    """Per lock+unlock against lock_loops (evenly spaced, labelled with the spin as time), a line per release
    rule and unlock_loops at each k the sweep ran at, starve's one setting a cross, the references (NPTL's
    algorithm, glibc's mutexes) flat dotted lines."""
    pts = points_of(ctx.run, SMPLOCKS)
    rows = sweep_rows(pts)
    if not rows:
        return None
    loops = sorted({key[1] for key in rows if key[0] in RULES and isinstance(key[1], int)})
    pause = pause_ticks(pts)
    fig, ax = _new(ctx, "smplocks: spin-then-block, the release rule and the spin settings", _mode(pts))
    for (lock, a, b), by_k in rows.items():
        for k, p in sorted(by_k.items()):
            if not p.value.ok:
                continue
            if lock in RULES and a in loops:
                continue
            if lock in SPINBLOCKS and a in loops:  # starve, at one setting: a point
                ax.plot([loops.index(a)], [p.value.mid], "x", markersize=7,
                        label=f"{SAY[lock]}, unlock_loops {b}, {k} CPUs")
                continue
            ax.axhline(p.value.mid, linestyle=":", linewidth=1, color="gray")
            ax.text(len(loops) - 1, p.value.mid, f" {lock}, {k} CPUs", fontsize=7, color="dimgray", va="bottom",
                    ha="right")
    for rule in RULES:
        for b in sorted({key[2] for key in rows if key[0] == rule}):
            for k in sorted({k for key, by_k in rows.items() if key[0] == rule for k in by_k}):
                xs = [i for i, a in enumerate(loops) if k in rows.get((rule, a, b), {})]
                vs = [rows[(rule, loops[i], b)][k].value for i in xs]
                if xs:
                    ax.plot(xs, [v.mid for v in vs], "-o" if rule == BARGE else "--s", markersize=4,
                            label=f"{SAY[rule]}, unlock_loops {b}, {k} CPUs")
    ax.set_xticks(range(len(loops)), [f"{a}\n{loops_time(ctx.run, pause, a)}" for a in loops])
    ax.set_xlabel("lock_loops (pauses before parking; as time at one pause each)")
    ax.set_yscale("log")
    ax.set_ylabel(f"{ctx.units.short} per lock+unlock over all CPUs (median), log scale")
    ax.legend(fontsize=8)
    return _save(fig, ctx, out / "smplocks-sweep.png")


SHOOT_LABELS = {"ipi": "IPI, receivers invlpg and acknowledge", "mailbox": "polled mailbox",
                "isolated": "isolated address spaces (nothing remote)"}


def shootdown(ctx: Context, out: Path) -> Path | None:
    pts = points_of(ctx.run, SHOOTDOWN)
    return _figure(ctx, out, "shootdown", "shootdown: changing a page's entry that k CPUs use", _mode(pts),
                   grid(pts, "shootdown", "mode", SHOOT_MODES), "per change",
                   lambda m: SHOOT_LABELS.get(m, m))


def aslock(ctx: Context, out: Path) -> Path | None:
    pts = points_of(ctx.run, ASLOCK)
    g = {f"{op}, {space}": vals for op in AS_OPS for space, vals in grid(pts, op, "space", SPACES).items()}
    return _figure(ctx, out, "aslock", "aslock: one address-space lock for k CPUs vs one each", _mode(pts), g,
                   "per operation over all CPUs")


def linuxvm(ctx: Context, out: Path) -> Path | None:
    pts = points_of(ctx.run, LINUXVM)
    g = {f"{op}, {who}": vals for op in VM_OPS for who, vals in grid(pts, op, "workers", WORKERS).items()}
    path = _figure(ctx, out, "linuxvm", "linuxvm: k threads of one process vs k processes", _mode(pts), g,
                   "per operation over all workers", note=kernel_text(pts))
    return path


def tlb_shootdown(ctx: Context, out: Path) -> Path | None:
    pts = points_of(ctx.run, LINUXVM)
    g: dict[str, dict[int, Interval]] = {}
    for op in ("munmap", "mprotect"):
        rows = shoot_grid(pts, op)
        alone = rows.pop("none", {})  # k = 1: where both kinds of sibling start from
        g.update({f"{op}, sibling {who}": {**alone, **vals} for who, vals in rows.items()})
    return _figure(ctx, out, "linuxvm-shootdown", "linuxvm: munmap/mprotect while the other CPUs spin", _mode(pts), g,
                   "per operation of CPU 0 (k = 1: alone)")


FigureFn = Callable[[Context, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("smplocks-contended", contended), ("smplocks-sweep", sweep), ("shootdown", shootdown), ("aslock", aslock), ("linuxvm", linuxvm),
    ("linuxvm-shootdown", tlb_shootdown),
)


def write_all(run: Run, out: Path) -> list[Path]:
    return draw(FIGURES, BENCHES, run, out)


# report.html: what to look at in each figure (by the start of its file's name; html.figure)
CAPTIONS = {
    "smplocks-contended": "a lock+unlock's cost as CPUs contend, a line per lock: the flatter, the better the "
                          "lock scales",
    "smplocks-sweep": "the spin-then-block locks against how long they spin before parking, both release "
                      "rules: handoff pays a wake-up where waiters park, barging does not",
    "shootdown": "a TLB shootdown's cost against the CPUs that must answer it",
    "aslock": "a page fault's cost with the address-space lock shared or private, against the CPUs",
    "linuxvm-shootdown": "Linux's own shootdown: munmap and mprotect with sibling threads (who must be told) "
                         "against sibling processes (who need not)",
    "linuxvm": "threads of one process against processes: where threads climb, they wait on one address "
               "space's lock (PATHREADS' argument)",
}
