"""Report sections and locks.csv for the `locks`, `create` and `peers` benchmarks.

Every figure is a record's median (`med`, cycles per operation as the
kernel divided it); ratios are of medians. Tables have one column per paging
mode (`off`, `on/4k`, ... or `host`). docs/REPORT.md describes the tables,
the checks and locks.csv.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from . import text
from .derive import Interval, mode_of
from .protocol import Record
from .text import exact, number, table

LOCKS, CREATE, PEERS = "locks", "create", "peers"
LOCKS_CSV = "locks.csv"
LOCKS_HEADER = ["table", "paging", "row", "column", "unit", "value", "min", "max"]

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
PAPERS = ("papers, for context: Valchanov-Andreev, 5 threads x 1 000 000 lock/unlock: user-space mutex "
          "82 875 us vs NPTL 615 154 us (about 7.4x); LiteThreads: on one CPU the user time grows linearly "
          "with the unlock spin and is unaffected by the lock spin")
LITE_SLOPE_FROM = ((0, 0), (0, 200), (1000, 2000))
LITE_LOCK_ONLY = ((0, 0), (100, 0), (1000, 0))


@dataclass(frozen=True)
class Point:
    bench: str
    case: str
    mode: str
    params: dict[str, Any]
    value: Interval
    impl: str


def collect(records: Iterable[Record], bench: str) -> list[Point]:
    out = []
    for r in records:
        if r.get("t") != "result" or r.get("bench") != bench:
            continue
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        out.append(Point(bench, str(r.get("case")), mode_of(params), params, Interval.of(r),
                         str(params.get("impl", ""))))
    return out


def modes(points: list[Point]) -> list[str]:
    """Paging modes in the order the run measured them."""
    return list(dict.fromkeys(p.mode for p in points))


def find(points: list[Point], mode: str, case: str, **params: Any) -> Interval | None:
    for p in points:
        if p.mode == mode and p.case == case and all(p.params.get(k) == v for k, v in params.items()):
            return p.value
    return None


def _nan() -> Interval:
    return Interval(math.nan, math.nan, math.nan)


def _cell(v: Interval | None, digits: int = 0) -> str:
    if v is None or not v.ok:
        return ""
    text = number(v.mid, digits)
    if v.lo != v.hi and math.isfinite(v.lo) and math.isfinite(v.hi):
        text += f" ({number(v.lo, digits)}-{number(v.hi, digits)})"
    return text


def _ratio(a: Interval | None, b: Interval | None) -> float:
    """a / b of the medians; NaN when either is missing or b is 0."""
    if a is None or b is None or not a.ok or not b.ok or b.mid == 0:
        return math.nan
    return a.mid / b.mid


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
    slope_200: float    # (c(0,200) - c(0,0)) / 200
    slope_2000: float   # (c(1000,2000) - c(0,0)) / 2000
    lock_spread: float  # max/min over the lock-only settings (unlock_loops = 0)


def lite_checks(points: list[Point]) -> list[LiteCheck]:
    out = []
    for mode in modes(points):
        def c(lock: int, unlock: int) -> Interval | None:
            return find(points, mode, "litethreads", lock_loops=lock, unlock_loops=unlock)
        base, short, long_ = (c(*s) for s in LITE_SLOPE_FROM)
        if base is None:
            continue
        s1 = (short.mid - base.mid) / LITE_SLOPE_FROM[1][1] if short else math.nan
        s2 = (long_.mid - base.mid) / LITE_SLOPE_FROM[2][1] if long_ else math.nan
        only = [v.mid for v in (c(*s) for s in LITE_LOCK_ONLY) if v is not None and v.ok]
        spread = max(only) / min(only) if len(only) > 1 and min(only) > 0 else math.nan
        out.append(LiteCheck(mode, s1, s2, spread))
    return out


def section_locks(records: list[Record]) -> list[str]:
    points = collect(records, LOCKS)
    if not points:
        return []
    ms = modes(points)
    body = [[r.group, r.label, r.per] + [_cell(r.values.get(m)) for m in ms] for r in lock_rows(points)]
    out = ["locks: cycles per operation, median (min-max when they differ), per paging mode"]
    out += table(["test", "case/params", "per"] + [f"paging {m}" for m in ms], body, numeric=set(range(3, 3 + len(ms))))
    for chk in lite_checks(points):
        linear = chk.slope_2000 / chk.slope_200 if chk.slope_200 else math.nan
        out.append(f"litethreads, paging {chk.mode}: {number(chk.slope_200, 2)} cycles per item per unlock "
                   f"iteration from unlock 0..200, {number(chk.slope_2000, 2)} from 0..2000 (ratio "
                   f"{number(linear, 3)}; 1 = linear); lock spin alone (lock 0/100/1000, unlock 0): "
                   f"max/min {number(chk.lock_spread, 3)} (1 = no effect)")
    out.append(PAPERS)
    return out


# --- create ----------------------------------------------------------------

def create_rows(points: list[Point]) -> list[tuple[int, str, Interval | None, Interval | None, float]]:
    """(outstanding, mode, pool, firstfit, firstfit/pool)."""
    outs = sorted({int(p.params.get("outstanding", 0)) for p in points})
    rows = []
    for mode in modes(points):
        for n in outs:
            pool = find(points, mode, "pool", outstanding=n)
            ff = find(points, mode, "firstfit", outstanding=n)
            if pool or ff:
                rows.append((n, mode, pool, ff, _ratio(ff, pool)))
    return rows


def section_create(records: list[Record]) -> list[str]:
    points = collect(records, CREATE)
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
            pool, ff, r = by.get((n, m), (None, None, math.nan))
            row += [_cell(pool), _cell(ff), number(r, 2)]
        body.append(row)
    return ["create: cycles per fiber (create, run to exit, join), stack pool vs first-fit heap"] + table(
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
    def ratio(self) -> float:
        return _ratio(self.theirs.value if self.theirs else None, self.ours.value if self.ours else None)


def _skip_why(records: list[Record], case: str) -> str:
    for r in records:
        if r.get("t") == "skip" and case in str(r.get("what", "")):
            return str(r.get("why") or "skipped")
    return ""


def peer_rows(records: list[Record]) -> list[PeerRow]:
    points = collect(records, PEERS)
    rows = []
    for mode in modes(points):
        by = {p.case: p for p in points if p.mode == mode}
        for what, ours, theirs in COMPARISONS:
            if ours in by or theirs in by:
                rows.append(PeerRow(what, mode, by.get(ours), by.get(theirs),
                                    "" if theirs in by else _skip_why(records, theirs)))
    return rows


def section_peers(records: list[Record]) -> list[str]:
    rows = peer_rows(records)
    if not rows:
        return []
    many = len({r.mode for r in rows}) > 1
    body = []
    for r in rows:
        body.append([r.what + (f" ({r.mode})" if many else ""),
                     r.ours.impl if r.ours else "", _cell(r.ours.value) if r.ours else "",
                     (r.theirs.impl if r.theirs else "skipped: " + (r.skipped or "no record")),
                     _cell(r.theirs.value) if r.theirs else "", number(r.ratio, 1)])
    return (["peers: cleanroom vs glibc/NPTL on the same host, cycles per operation (median)"]
            + table(["comparison", "cleanroom", "cycles", "glibc/NPTL", "cycles", "NPTL/cleanroom"], body,
                    numeric={2, 4, 5}))


def sections(records: list[Record]) -> list[str]:
    out: list[str] = []
    for block in (section_locks(records), section_create(records), section_peers(records)):
        if block:
            out += ([""] if out else []) + block
    return out


# --- locks.csv -------------------------------------------------------------

def csv_rows(records: list[Record]) -> list[list[str]]:
    out: list[list[str]] = []

    def add(tbl: str, mode: str, row: str, column: str, unit: str, v: Interval | float | None) -> None:
        if v is None:
            v = _nan()
        if not isinstance(v, Interval):
            v = Interval(v, math.nan, math.nan)
        out.append([tbl, mode, row, column, unit, exact(v.mid), exact(v.lo), exact(v.hi)])

    lp = collect(records, LOCKS)
    for r in lock_rows(lp):
        for m, v in r.values.items():
            add(r.group, m, r.label, "med", f"cycles/{r.per}", v)
    for chk in lite_checks(lp):
        add("litethreads_check", chk.mode, "unlock 0..200", "slope", "cycles/item/unlock iteration", chk.slope_200)
        add("litethreads_check", chk.mode, "unlock 0..2000", "slope", "cycles/item/unlock iteration",
            chk.slope_2000)
        add("litethreads_check", chk.mode, "unlock 0", "lock max/min", "ratio", chk.lock_spread)
    for n, m, pool, ff, ratio in create_rows(collect(records, CREATE)):
        add("create", m, f"outstanding={n}", "pool", "cycles/fiber", pool)
        add("create", m, f"outstanding={n}", "firstfit", "cycles/fiber", ff)
        add("create", m, f"outstanding={n}", "firstfit/pool", "ratio", ratio)
    for r in peer_rows(records):
        add("peers", r.mode, r.what, "cleanroom", "cycles/op", r.ours.value if r.ours else None)
        add("peers", r.mode, r.what, "nptl", "cycles/op", r.theirs.value if r.theirs else None)
        add("peers", r.mode, r.what, "nptl/cleanroom", "ratio", r.ratio)
    return out


def write_csv(records: list[Record], path: Path) -> Path | None:
    """locks.csv (docs/REPORT.md); None when the set has no locks/create/peers results."""
    rows = csv_rows(records)
    if not rows:
        return None
    return text.write_csv(path, LOCKS_HEADER, rows)
