"""The family of `locks`, `create` and `peers` (LiteThreads, Valchanov-Andreev): summary lines, tables,
locks.csv and figures. A family of families.FAMILIES.

Every figure is a record's median (`med`, TSC ticks or instructions per
operation as the kernel divided it) with its interval (stats/interval.py: order
statistics of its samples); ratios of two results (measured in different
sets) carry the Hodges-Lehmann / Mann-Whitney interval of their samples,
slopes and records without samples the interval-arithmetic band of their
inputs. Tables have one column per paging mode (`off`, `on/4k`, ... or
`host`), except the peers' switch table: one column per width (32-bit, 64-bit)
with the ratio to Boost.Context beside each, the 32-bit rows of cleanroom's own
routines taken from the same run's ctxsw records. docs/REPORT.md describes the
tables, the checks and locks.csv.

The figures (matplotlib with the Agg backend, imported only when a figure is
drawn) draw the run's first paging mode (`off` on a kernel run, `host` on a
hosted one); the tables have every mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..records.protocol import Record
from ..records.text import table
from ..stats.interval import Interval, cell
from . import paper
from .answers import Answer, Quote, Value, listed
from .cells import Cell, Point, cell_adder, collect, find, modes, ratio_cell, ratio_digits, ratio_of, write_cells
from .context import Derived, Run, csv_and_plots
from .plotkit import FigureContext, FigureFn, OURS, THEIRS, band, draw, errors_of, new_figure, pair_bars, save


BENCHES = ("locks", "create", "peers")
LOCKS, CREATE, PEERS = BENCHES
LOCKS_CSV = "locks.csv"
SWITCHES_TABLE = "peers_switches"  # locks.csv's table of the switch rows

UNCONTENDED = ("tas", "ttas", "ticket", "tas_pause", "ttas_pause", "ticket_pause", "mutex", "spinblock", "sem")
# (group, the case, the params naming a row, what one operation is)
GROUPS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("uncontended", "", (), "lock+unlock"),
    ("contended", "contended", ("k", "lock"), "acquisition"),
    ("valchanov", "valchanov", ("lock", "threads"), "lock+unlock"),
    ("litethreads", "litethreads", ("lock_loops", "unlock_loops"), "item"),
    ("condvar", "condvar", ("rounds",), "round"),
    ("barrier", "barrier", ("n",), "generation"),
)
# peers: (comparison, cleanroom case, NPTL/glibc case), after the LiteThreads
# report's QuickThreads-vs-PosixThreads tables
COMPARISONS: tuple[tuple[str, str, str], ...] = (
    ("switch", "switch_fiber", "switch_ucontext"),
    ("ping-pong, 1 CPU", "pingpong_fiber", "pingpong_pthread_1cpu"),
    ("ping-pong, 2 CPUs", "pingpong_fiber", "pingpong_pthread_2cpu"),
    ("create+join", "create_fiber", "create_pthread"),
    ("lock+unlock, mutex", "lock_mutex", "lock_pthread_mutex"),
    ("lock+unlock, spinblock vs mutex", "lock_spinblock", "lock_pthread_mutex"),
    ("lock+unlock, tas vs spin", "lock_tas", "lock_pthread_spin"),
    ("lock+unlock, ttas vs spin", "lock_ttas", "lock_pthread_spin"),
    ("lock+unlock, ticket vs spin", "lock_ticket", "lock_pthread_spin"),
)
# peers, switches: (row, short name, its records as (bench, case)). The 32-bit rows of cleanroom's own
# routines come from bench ctxsw (params.shape, no params.bits: the kernel and the hosted build are 32-bit);
# the rest from peers, whose switch and handoff cases carry params.bits and params.shape. A system has a
# value per (bits, shape).
CTXSW = "ctxsw"
BOOST = "Boost.Context jump_fcontext"
SHAPES = ("symmetric", "asymmetric")
SWITCH_SYSTEMS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("cleanroom pushad", "pushad", ((CTXSW, "pushad"),)),
    ("cleanroom callee", "callee", ((CTXSW, "callee"), (PEERS, "switch_callee64"))),
    ("cleanroom fxsave", "fxsave", ((CTXSW, "fxsave"),)),
    ("cleanroom jump (ret or pop + jmp)", "jump", ((CTXSW, "jump"), (PEERS, "switch_jump64"))),
    ("callee frame, always pop + jmp", "pop+jmp", ((PEERS, "switch_popjmp64"),)),
    (BOOST, "Boost", ((PEERS, "switch_boost"),)),
    ("glibc swapcontext", "swapcontext", ((PEERS, "switch_ucontext"), (PEERS, "switch_ucontext64"))),
    ("pthread mutex+condvar, 1 CPU, per handoff", "pthread handoff",
     ((PEERS, "handoff_pthread"), (PEERS, "handoff_pthread64"))),
)
SHAPES_TEXT = ("symmetric: both sides run the same loop (every switch from one call site); asymmetric: a driver "
               "and a coroutine switch from two call sites (a ret-based switch then returns where the return "
               "stack buffer did not predict)")
PAPERS = ("papers, for context: Valchanov-Andreev, 5 threads x 1 000 000 lock/unlock: user-space mutex "
          "82 875 us vs NPTL 615 154 us (about 7.4x); LiteThreads: on one CPU the user time grows linearly "
          "with the unlock spin and is unaffected by the lock spin")
LITE_SLOPE_FROM = ((0, 0), (0, 200), (1000, 2000))
LITE_LOCK_ONLY = ((0, 0), (100, 0), (1000, 0))


def spread(values: list[Interval]) -> Interval:
    """max / min of the medians, with the band interval arithmetic gives max and min of intervals."""
    good = [v for v in values if v.ok]
    if len(good) < 2:
        return Interval.none()
    return Interval.bound(good, max).ratio(Interval.bound(good, min))


# --- locks -----------------------------------------------------------------

@dataclass(frozen=True)
class LockRow:
    group: str
    label: str
    per: str
    values: dict[str, Interval]  # by mode


def lock_rows(points: list[Point]) -> list[LockRow]:
    rows: list[LockRow] = []
    for group, case, keys, per in GROUPS:
        if group == "uncontended":
            for c in UNCONTENDED + tuple(sorted({p.case for p in points} - set(UNCONTENDED)
                                                - {g[1] for g in GROUPS})):
                vals = {p.mode: p.value for p in points if p.case == c}
                if vals:
                    rows.append(LockRow(group, c, per, vals))
            continue
        labels: dict[str, dict[str, Interval]] = {}
        for p in points:
            if p.case == case:
                label = " ".join(f"{k}={p.params.get(k)}" for k in keys)
                labels.setdefault(label, {})[p.mode] = p.value
        rows += [LockRow(group, label, per, vals) for label, vals in labels.items()]
    return rows


@dataclass(frozen=True)
class LiteCheck:
    mode: str
    slope_200: Interval    # (c(0,200) - c(0,0)) / 200
    slope_2000: Interval   # (c(1000,2000) - c(0,0)) / 2000
    lock_spread: Interval  # max/min over the lock-only settings (unlock_loops = 0)

    @property
    def linear(self) -> Interval:
        """slope_2000 / slope_200: 1 when the cost is linear in the unlock spin."""
        return self.slope_2000.ratio(self.slope_200)


def lite_checks(points: list[Point]) -> list[LiteCheck]:
    out = []
    for mode in modes(points):
        def c(lock: int, unlock: int) -> Interval | None:
            return find(points, mode, "litethreads", lock_loops=lock, unlock_loops=unlock)
        base, short_, long_ = (c(*s) for s in LITE_SLOPE_FROM)
        if base is None:
            continue
        s1 = (short_ - base).scale(1.0 / LITE_SLOPE_FROM[1][1]) if short_ else Interval.none()
        s2 = (long_ - base).scale(1.0 / LITE_SLOPE_FROM[2][1]) if long_ else Interval.none()
        only = [v for v in (c(*s) for s in LITE_LOCK_ONLY) if v is not None]
        out.append(LiteCheck(mode, s1, s2, spread(only)))
    return out


def lite_text(chk: LiteCheck, units_short: str) -> str:
    return (f"litethreads, paging {chk.mode}: {cell(chk.slope_200, 2)} {units_short} per item per unlock "
            f"iteration from unlock 0..200, {cell(chk.slope_2000, 2)} from 0..2000 (ratio "
            f"{cell(chk.linear, 3, null=1.0)}; 1 = linear); lock spin alone (lock 0/100/1000, unlock 0): "
            f"max/min {cell(chk.lock_spread, 3, null=1.0)} (1 = no effect)")


def section_locks(run: Run) -> list[str]:
    points = collect(run.records, LOCKS)
    if not points:
        return []
    ms = modes(points)
    body = [[r.group, r.label, r.per] + [cell(r.values.get(m)) for m in ms] for r in lock_rows(points)]
    out = [f"locks: {run.units.name} per operation, median (lo..hi), per paging mode"]
    out += table(["test", "case/params", "per"] + [f"paging {m}" for m in ms], body, numeric=set(range(3, 3 + len(ms))))
    out += [lite_text(chk, run.units.short) for chk in lite_checks(points)]
    out.append(PAPERS)
    return out


# --- create ----------------------------------------------------------------

def create_rows(points: list[Point]) -> list[tuple[int, str, Interval | None, Interval | None, Interval]]:
    """(outstanding, mode, pool, firstfit, firstfit/pool)."""
    outs = sorted({int(p.params.get("outstanding", 0)) for p in points})
    rows = []
    for mode in modes(points):
        for n in outs:
            pool = find(points, mode, "pool", outstanding=n)
            ff = find(points, mode, "firstfit", outstanding=n)
            if pool or ff:
                rows.append((n, mode, pool, ff, ratio_of(ff, pool)))
    return rows


def section_create(run: Run) -> list[str]:
    points = collect(run.records, CREATE)
    if not points:
        return []
    ms = modes(points)
    by = {(n, m): (pool, ff, r) for n, m, pool, ff, r in create_rows(points)}
    outs = sorted({n for n, _m in by})
    head = ["outstanding"]
    for m in ms:
        head += [f"pool {m}", f"firstfit {m}", "firstfit/pool"]
    body = []
    for n in outs:
        row = [str(n)]
        for m in ms:
            pool, ff, r = by.get((n, m), (None, None, Interval.none()))
            row += [cell(pool), cell(ff), ratio_cell(r)]
        body.append(row)
    return [f"create: {run.units.name} per fiber (create, run to exit, join), stack pool vs first-fit heap"] + table(
        head, body, numeric=set(range(len(head))))


# --- peers -----------------------------------------------------------------

@dataclass(frozen=True)
class PeerRow:
    what: str
    mode: str
    ours: Point | None
    theirs: Point | None
    skipped: str  # why the NPTL side was skipped, or ""

    @property
    def ratio(self) -> Interval:
        return ratio_of(self.theirs.value if self.theirs else None, self.ours.value if self.ours else None)


def _skip_why(records: list[Record], case: str) -> str:
    for r in records:
        if r.get("t") == "skip" and case in str(r.get("what", "")):
            return str(r.get("why") or "skipped")
    return ""


def _compared(p: Point) -> bool:
    """The comparisons are of the 32-bit program, switches in the shape of switch_fiber (one loop)."""
    return p.params.get("bits", 32) == 32 and p.params.get("shape", "symmetric") == "symmetric"


def peer_rows(records: list[Record]) -> list[PeerRow]:
    void = voided(records)
    points = [p for p in collect(records, PEERS) if p.case not in void]
    rows = []
    for mode in modes(points):
        by: dict[str, Point] = {}
        for p in points:
            if p.mode == mode and _compared(p):
                by.setdefault(p.case, p)
        for what, ours, theirs in COMPARISONS:
            if ours in by or theirs in by:
                rows.append(PeerRow(what, mode, by.get(ours), by.get(theirs),
                                    "" if theirs in by else _skip_why(records, theirs)))
    return rows


def section_peers(run: Run) -> list[str]:
    rows = peer_rows(run.records)
    if not rows:
        return []
    many = len({r.mode for r in rows}) > 1
    body = []
    for r in rows:
        body.append([r.what + (f" ({r.mode})" if many else ""),
                     r.ours.impl if r.ours else "", cell(r.ours.value) if r.ours else "",
                     (r.theirs.impl if r.theirs else "skipped: " + (r.skipped or "no record")),
                     cell(r.theirs.value) if r.theirs else "", ratio_cell(r.ratio, 1)])
    u = run.units.short
    return ([f"peers: cleanroom vs glibc/NPTL on the same host, {run.units.name} per operation, median (lo..hi)"]
            + table(["comparison", "cleanroom", u, "glibc/NPTL", u, "NPTL/cleanroom"], body,
                    numeric={2, 4, 5}))


# --- peers: switches in both shapes, 32- and 64-bit ----------------------------

def voided(records: list[Record]) -> set[str]:
    """Cases whose records an `error` record (code peers64: the 64-bit helper failed during their
    samples) declares void."""
    return {str(r.get("what")) for r in records if r.get("t") == "error" and r.get("code") == "peers64"}


@dataclass(frozen=True)
class SwitchRow:
    system: str
    name: str  # short, for the summary
    shape: str
    values: dict[int, Interval]  # by bits


def _switch_points(records: list[Record]) -> list[tuple[str, int, str, Point]]:
    """(system, bits, shape, point) of every record of SWITCH_SYSTEMS in the peers' first mode; ctxsw
    records without params.shape (an older ctxsw) have no place here."""
    peers = collect(records, PEERS)
    if not peers:
        return []
    mode = modes(peers)[0]
    void = voided(records)
    where = {(bench, case): system for system, _name, recs in SWITCH_SYSTEMS for bench, case in recs}
    out = []
    for p in peers + collect(records, CTXSW):
        system = where.get((p.bench, p.case))
        shape = p.params.get("shape")
        if system is None or p.mode != mode or shape not in SHAPES or (p.bench == PEERS and p.case in void):
            continue
        bits = p.params.get("bits", 32)
        out.append((system, bits if isinstance(bits, int) else 32, str(shape), p))
    return out


def switch_rows(records: list[Record]) -> list[SwitchRow]:
    """One row per system and shape that has a value, in SWITCH_SYSTEMS' order."""
    points = _switch_points(records)
    rows = []
    for system, name, _recs in SWITCH_SYSTEMS:
        for shape in SHAPES:
            values: dict[int, Interval] = {}
            for sys_, bits, shp, p in points:
                if sys_ == system and shp == shape and bits not in values:
                    values[bits] = p.value
            if values:
                rows.append(SwitchRow(system, name, shape, values))
    return rows


def switch_bits(rows: list[SwitchRow]) -> list[int]:
    return sorted({b for r in rows for b in r.values})


def boost_ref(rows: list[SwitchRow], bits: int) -> int | None:
    """The width whose Boost.Context row the `bits` column is divided by: its own, else the other."""
    have = sorted({b for r in rows if r.system == BOOST for b in r.values}, key=lambda b: (b != bits, -b))
    return have[0] if have else None


def boost_ratio(rows: list[SwitchRow], row: SwitchRow, bits: int) -> Interval:
    """row / Boost.Context in the same shape (at boost_ref's width), with the band of the two."""
    ref = boost_ref(rows, bits)
    boost = next((r for r in rows if r.system == BOOST and r.shape == row.shape), None)
    if ref is None or boost is None or ref not in boost.values or bits not in row.values:
        return Interval.none()
    return row.values[bits].ratio(boost.values[ref])


VOID = "void: the 64-bit helper failed during its samples (see the error record)"


def _switch_skips(records: list[Record]) -> list[str]:
    """"case, case: skipped: why" for the peers' switch and handoff cases that did not run, one line per
    reason; "case: void: ..." for those an error record voids."""
    cases = {case for _s, _n, recs in SWITCH_SYSTEMS for bench, case in recs if bench == PEERS}
    by_why: dict[str, list[str]] = {}
    for r in records:
        if r.get("t") == "skip" and r.get("bench") == PEERS and r.get("what") in cases:
            by_why.setdefault(str(r.get("why") or "skipped"), []).append(str(r.get("what")))
    for case in sorted(voided(records) & cases):
        by_why.setdefault(VOID, []).append(case)
    return [f"  {', '.join(dict.fromkeys(whats))}: {'' if why == VOID else 'skipped: '}{why}"
            for why, whats in by_why.items()]


def section_switches(run: Run) -> list[str]:
    rows = switch_rows(run.records)
    skips = _switch_skips(run.records)
    if not rows and not skips:
        return []
    widths = switch_bits(rows)
    head = ["system", "shape"]
    for b in widths:
        ref = boost_ref(rows, b)
        head += [f"{b}-bit", f"/ Boost {ref}-bit" if ref is not None else "/ Boost"]
    body = []
    for r in rows:
        line = [r.system, r.shape]
        for b in widths:
            ratio = boost_ratio(rows, r, b)
            own = r.system == BOOST and b == boost_ref(rows, b) and b in r.values  # itself: no ratio to show
            line += [cell(r.values.get(b)), "ref" if own else ratio_cell(ratio, ratio_digits(ratio))]
        body.append(line)
    out = [f"peers, switches: {run.units.name} per switch (the timed loop over its switches, nothing subtracted), "
           f"median (lo..hi); / Boost: over Boost.Context's jump_fcontext in the same shape"]
    if rows:
        out += table(head, body, numeric=set(range(2, len(head))))
    out.append("  " + SHAPES_TEXT)
    if rows and not any(p.bench == CTXSW for _s, _b, _sh, p in _switch_points(run.records)):
        out.append("  cleanroom's 32-bit pushad, callee, fxsave and jump rows come from bench ctxsw (with "
                   "params.shape): not in this run")
    return out + skips


def summary_switches(run: Run) -> list[Answer]:
    rows = switch_rows(run.records)
    boost = [r for r in rows if r.system == BOOST]
    if not boost:
        return []
    parts, values = [], []
    for system, name, _recs in SWITCH_SYSTEMS:
        if system == BOOST:
            continue
        mine = [r for r in rows if r.system == system]
        texts = []
        for b in switch_bits(mine):
            ratios = [Value(f"{name}, {b}-bit, {r.shape}", v, ratio_digits(v), 1.0)
                      for r in mine if b in r.values for v in [boost_ratio(rows, r, b)]]
            values += ratios
            texts.append(f"{b}-bit " + " / ".join(v.text for v in ratios))
        if texts:
            parts.append(f"{name} " + ", ".join(texts))
    ref = boost_ref(rows, 64)
    own = [Value(f"Boost.Context itself, {ref}-bit, {r.shape}", r.values[ref]) for r in boost if ref in r.values]
    base = " / ".join(v.text for v in own)
    shapes = " / ".join(r.shape for r in boost if ref in r.values)
    # Boost.Context's own figure is this run's: it goes with the line, never in a paper's square brackets
    return [Answer(f"peers, per switch over Boost.Context's ({shapes}), itself {base} {run.units.short} at {ref}-bit",
                   "; ".join(parts), tuple(own + values))]


def sections(run: Run) -> list[str]:
    out: list[str] = []
    for block in (section_locks(run), section_create(run), section_peers(run), section_switches(run)):
        if block:
            out += ([""] if out else []) + block
    return out


# --- summary ---------------------------------------------------------------

VALCHANOV_PAPER = "user-space mutex 7.4x faster than NPTL"  # report.txt's PAPERS says for what
LITE_PAPER = "time grows linearly with the unlock spin, not the lock spin (one CPU)"


def summary(run: Run) -> list[Answer]:
    """The answers to the papers' questions: what a lock costs, whether LiteThreads' finding holds, what
    the stack pool saves, how far NPTL is from fibers."""
    out: list[Answer] = []
    u = run.units.short
    lp = collect(run.records, LOCKS)
    if lp:
        mode = modes(lp)[0]
        unc = [Value(r.label, r.values[mode]) for r in lock_rows(lp) if r.group == "uncontended"
               and mode in r.values and not r.label.endswith("_pause")]
        if unc:
            out.append(Answer(f"locks, {u} per lock+unlock, uncontended, paging {mode}", listed(unc), tuple(unc)))
        val = [Value(r.label.split()[0].split("=")[1], r.values[mode]) for r in lock_rows(lp)
               if r.group == "valchanov" and mode in r.values]
        if val:
            out.append(Answer("valchanov, 5 fibers on one lock", listed(val), tuple(val),
                              Quote("Valchanov-Andreev", VALCHANOV_PAPER), depth=1))
        for chk in lite_checks(lp)[:1]:
            linear = Value("unlock spin 0..2000 / 0..200 slope", chk.linear, 3, 1.0, where="1 = linear")
            flat = Value("lock spin max/min", chk.lock_spread, 3, 1.0, where="1 = no effect")
            out.append(Answer("litethreads", f"{linear.labelled()} ({linear.where}), {flat.labelled()} ({flat.where})",
                              (linear, flat), Quote("LiteThreads", LITE_PAPER), depth=1))
    cp = collect(run.records, CREATE)
    if cp:
        rows = [r for r in create_rows(cp) if r[1] == modes(cp)[0] and r[2] and r[3]]
        if rows:
            n, mode, _pool, _ff, ratio = rows[-1]
            most = Value("", ratio, 2, 1.0)
            one = Value(f"at {rows[0][0]}", rows[0][4], 2, 1.0) if len(rows) > 1 else None
            out.append(Answer(f"create: first-fit / stack pool at {n} outstanding, paging {mode}",
                              most.text + (f" ({one.label}: {one.text})" if one else ""),
                              (most, one) if one else (most,), Quote("LiteThreads", "the pool is constant-time")))
    both = [r for r in peer_rows(run.records) if r.ours and r.theirs]
    peers = [Value(r.what, r.ratio, 1, 1.0) for r in both if r.mode == both[0].mode
             and not r.what.startswith(("lock+unlock, ttas", "lock+unlock, ticket", "lock+unlock, spinblock"))]
    if peers:
        out.append(Answer("peers, NPTL / cleanroom", listed(peers), tuple(peers),
                          Quote("LiteThreads", "user-level switching and creation beat NPTL's system calls")))
    return out + summary_switches(run)


# --- locks.csv -------------------------------------------------------------

def cells(run: Run) -> list[Cell]:
    out: list[Cell] = []
    add, u, records = cell_adder(out), run.units.short, run.records
    lp = collect(records, LOCKS)
    for r in lock_rows(lp):
        for m, v in r.values.items():
            add(r.group, m, r.label, "med", f"{u}/{r.per}", v)
    for chk in lite_checks(lp):
        add("litethreads_check", chk.mode, "unlock 0..200", "slope", f"{u}/item/unlock iteration", chk.slope_200,
            derived=True)
        add("litethreads_check", chk.mode, "unlock 0..2000", "slope", f"{u}/item/unlock iteration",
            chk.slope_2000, derived=True)
        add("litethreads_check", chk.mode, "unlock 0", "lock max/min", "ratio", chk.lock_spread, 1.0, True)
    for n, m, pool, ff, ratio in create_rows(collect(records, CREATE)):
        add("create", m, f"outstanding={n}", "pool", f"{u}/fiber", pool)
        add("create", m, f"outstanding={n}", "firstfit", f"{u}/fiber", ff)
        add("create", m, f"outstanding={n}", "firstfit/pool", "ratio", ratio, 1.0, True)
    for r in peer_rows(records):
        add("peers", r.mode, r.what, "cleanroom", f"{u}/op", r.ours.value if r.ours else None)
        add("peers", r.mode, r.what, "nptl", f"{u}/op", r.theirs.value if r.theirs else None)
        add("peers", r.mode, r.what, "nptl/cleanroom", "ratio", r.ratio, 1.0, True)
    rows = switch_rows(records)
    mode = modes(collect(records, PEERS))[0] if rows else ""
    for r in rows:
        for b in sorted(r.values):
            add(SWITCHES_TABLE, mode, f"{r.system} {r.shape}", f"{b}-bit", f"{u}/switch", r.values[b])
            add(SWITCHES_TABLE, mode, f"{r.system} {r.shape}", f"{b}-bit/boost", "ratio", boost_ratio(rows, r, b),
                1.0, True)
    return out


def derived(run: Run) -> list[Derived]:
    def group(tbl: str) -> str:
        return PEERS if tbl == SWITCHES_TABLE else tbl if tbl in BENCHES else LOCKS
    return [c.as_derived(group(c.table)) for c in cells(run) if c.derived]


def write_csv(run: Run, path: Path) -> Path | None:
    """locks.csv (docs/REPORT.md); None when the set has no locks/create/peers results."""
    return write_cells(cells(run), path)


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    return csv_and_plots(run, out, plots, lambda: write_csv(run, out / LOCKS_CSV), BENCHES, write_all)


# --- its figures ----------------------------------------------------------------------------------

def litethreads(ctx: FigureContext, out: Path) -> Path | None:
    points = [p for p in collect(ctx.records, LOCKS) if p.case == "litethreads"]
    if not points:
        return None
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    fig, ax = new_figure(ctx, "litethreads: cost per item vs the unlock spin", mode)
    markers = "osD^v"
    for i, lock in enumerate(sorted({int(p.params.get("lock_loops", 0)) for p in points})):
        pts = sorted((p for p in points if int(p.params.get("lock_loops", 0)) == lock),
                     key=lambda p: int(p.params.get("unlock_loops", 0)))
        ax.plot([int(p.params.get("unlock_loops", 0)) for p in pts], [p.value.mid for p in pts],
                linestyle="none", marker=markers[i % len(markers)], markersize=10 - 2 * (i % 3),
                label=f"lock_loops = {lock}", alpha=0.85)
    chk = next((c for c in lite_checks(points) if c.mode == mode), None)
    if chk is not None and chk.slope_2000.ok:
        base = find(points, mode, "litethreads", lock_loops=0, unlock_loops=0)
        if base is not None:
            slope = chk.slope_2000.mid
            xs = [0.0] + [10 ** (k / 20) for k in range(0, 67)]  # 1 .. about 2200, smooth on symlog
            ax.plot(xs, [base.mid + slope * x for x in xs], ":", color="gray", linewidth=1,
                    label=f"c(0,0) + {slope:.1f} x unlock_loops (fit from 0 and 2000)")
    ax.set_xscale("symlog", linthresh=100)
    ax.set_xticks([0, 100, 200, 1000, 2000], ["0", "100", "200", "1000", "2000"])
    ax.set_yscale("log")
    ax.set_xlabel("unlock_loops (spins in unlock waiting for a taker), symlog scale")
    ax.set_ylabel(f"{ctx.units.short} per item (median), log scale")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "litethreads.png")


def valchanov(ctx: FigureContext, out: Path) -> Path | None:
    points = [p for p in collect(ctx.records, LOCKS) if p.case == "valchanov"]
    if not points:
        return None
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    labels = [f"{p.params.get('lock')}" for p in points]
    vals = [p.value for p in points]
    colors = [OURS] * len(vals)
    nptl = next((p for p in collect(ctx.records, PEERS) if p.case == "lock_pthread_mutex"), None)
    if nptl is not None:
        labels.append("NPTL mutex\n(peers, 1 thread)")
        vals.append(nptl.value)
        colors.append(THEIRS)
    threads = points[0].params.get("threads")
    fig, ax = new_figure(ctx, f"valchanov: {threads} fibers taking turns on one lock", mode)
    bars = ax.bar(range(len(vals)), [v.mid for v in vals], 0.6, color=colors, yerr=errors_of(vals), capsize=3)
    ax.bar_label(bars, fmt="%.0f", fontsize=9, padding=2)
    ax.set_xticks(range(len(vals)), labels)
    ax.set_xlabel("lock kind (cleanroom" + (", and glibc's pthread mutex uncontended, from bench peers)"
                                            if nptl is not None else ")"))
    ax.set_ylabel(f"{ctx.units.short} per lock+unlock (median; bars: interval)")
    ax.set_ylim(0, max(v.hi if v.bounded else v.mid for v in vals) * 1.15)
    return save(fig, ctx, out / "valchanov.png")


def create(ctx: FigureContext, out: Path) -> Path | None:
    points = collect(ctx.records, CREATE)
    if not points:
        return None
    mode = modes(points)[0]
    rows = [r for r in create_rows(points) if r[1] == mode]
    fig, ax = new_figure(ctx, "create: cost of one fiber vs fibers outstanding", mode)
    for idx, name, color in ((2, "pool (stack pool)", OURS), (3, "firstfit (first-fit heap)", THEIRS)):
        pts = [(r[0], r[idx]) for r in rows if r[idx] is not None]
        xs, vs = [n for n, _v in pts], [v for _n, v in pts]
        ax.plot(xs, [v.mid for v in vs], "-o", color=color, label=name)
        band(ax, xs, vs, color)
    ns = [r[0] for r in rows]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("fibers outstanding (alive at once), log2 scale")
    ax.set_ylabel(f"{ctx.units.short} per fiber (create, run to exit, join; median)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, ctx, out / "create.png")


def peers(ctx: FigureContext, out: Path) -> Path | None:
    rows = peer_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    fig, ax = new_figure(ctx, "peers: cleanroom vs glibc/NPTL on the same host", mode)
    ours = [r.ours.value.mid if r.ours else float("nan") for r in rows]
    theirs = [r.theirs.value.mid if r.theirs else float("nan") for r in rows]
    xs, width = pair_bars(ax, ours, theirs, ("cleanroom", "glibc / NPTL"),
                          [r.ratio if r.theirs is not None else Interval.none() for r in rows], ctx.units.short)
    for x, r in zip(xs, rows):
        if r.theirs is None:
            ax.annotate("skipped", xy=(x + width / 2, 1), xycoords=("data", "data"), ha="center",
                        va="bottom", fontsize=8, rotation=90, color="dimgray")
    top = max(v for v in ours + theirs if v == v)
    ax.set_ylim(1, top * 12)
    ax.set_xticks(xs, [r.what.replace(", ", "\n") for r in rows], fontsize=8)
    ax.set_xlabel("comparison (x: NPTL / cleanroom)")
    ax.legend(fontsize=8, loc="center right")
    return save(fig, ctx, out / "peers.png")


# (bits, shape) -> bar colour and hatch: blue 32-bit, orange 64-bit; the asymmetric shape hatched
SERIES_STYLE = {(32, "symmetric"): ("tab:blue", ""), (32, "asymmetric"): ("lightsteelblue", "//"),
                (64, "symmetric"): ("tab:orange", ""), (64, "asymmetric"): ("navajowhite", "//")}


def switches(ctx: FigureContext, out: Path) -> Path | None:
    """The peers' switch table as bars: per system, one bar per (bits, shape) the run has, log y."""
    rows = switch_rows(ctx.records)
    if not rows:
        return None
    names = list(dict.fromkeys(r.name for r in rows))
    series = [(b, shape) for b in switch_bits(rows) for shape in SHAPES
              if any(r.shape == shape and b in r.values for r in rows)]
    mode = modes(collect(ctx.records, PEERS))[0]
    fig, ax = new_figure(ctx, "peers: one switch, 32- and 64-bit, both shapes", mode)
    width = 0.8 / len(series)
    for i, (b, shape) in enumerate(series):
        vals = []
        for name in names:
            row = next((r for r in rows if r.name == name and r.shape == shape), None)
            vals.append(row.values[b] if row and b in row.values else Interval.none())
        xs = [x - 0.4 + width * (i + 0.5) for x in range(len(names))]
        color, hatch = SERIES_STYLE.get((b, shape), ("gray", ""))
        heights = [v.mid for v in vals]
        bars = ax.bar(xs, heights, width, color=color, hatch=hatch, edgecolor="dimgray", linewidth=0.5,
                      label=f"{b}-bit, {shape}", yerr=errors_of(vals), capsize=2)
        ax.bar_label(bars, labels=[f"{v.mid:.0f}" if v.ok else "" for v in vals], fontsize=7, padding=2)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("system (symmetric: both sides run one loop; asymmetric: a driver and a coroutine)")
    ax.set_ylabel(f"{ctx.units.short} per switch (median; bars: interval), log scale")
    top = max(v for r in rows for v in (x.mid for x in r.values.values()) if v == v)
    ax.set_ylim(1, top * 8)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "peers-switches.png")


FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("litethreads", litethreads), ("valchanov", valchanov), ("create", create), ("peers", peers),
    ("switches", switches),
)


def write_all(run: Run, out: Path) -> list[Path]:
    return draw(FIGURES, BENCHES, run, out)


# report.html: what to look at in each figure (by the start of its file's name; html.figure)
CAPTIONS = {
    "litethreads": "LiteThreads' handshake per item against the unlock spin, a marker per lock spin: flat lines "
                   "mean the spins change nothing, as the paper's two-core tables found",
    "valchanov": "Valchanov-Andreev's 5 x lock/unlock: the kernel's mutex against fibers with the user-space "
                 "mutex; the taller the kernel's bar, the more the user-space library wins",
    "create": "per fiber created, run to its exit and joined, against how many are alive at once (log2): "
              "a rise marks where their stacks stop fitting a cache",
    "peers": "each operation's NPTL peer over cleanroom's own (x: NPTL / cleanroom): above 1, cleanroom is "
             "faster",
    "switches": "each peer's context switch beside cleanroom's routines, at 32 and 64 bits",
}
