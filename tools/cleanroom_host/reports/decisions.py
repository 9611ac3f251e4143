"""A decision per point of the working-set sweep (stats/sequence.py): its effect is there, it is
negligible (inside margin=), or it is still open, from the processes' (boots') values of each point.

The quantities decided are the sweep's answers beside the paper: the relative concurrency overhead
(Figure 4) of every memory mode, and the relative VM overhead, single and multi (Figure 7: hosted, 4 KiB
against 2 MiB pages). All are percentages of their baseline, so margin= (basis points of the baseline,
default 100: 1 %) is a margin of that many points around 0. A point whose value has no per-process
values (one process, an exact clock, a record without samples) has no decision: exact counts need none,
one process cannot give one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from ..machines import defaults
from ..records.protocol import Record
from ..stats import sequence
from ..stats.sequence import Decision
from .derive import Row

# derive.py's quantities that are decided, and the series each is counted in
DECIDED_QUANTITIES = {"conc_rel": "concurrency overhead", "vm_rel_single": "fig 7, single",
                      "vm_rel_multi": "fig 7, multi"}
DECIDED_SET = "decided"  # results.csv: a set every quantity of which is decided


@dataclass(frozen=True)
class Point:
    row: Row
    decision: Decision

    @property
    def series(self) -> str:
        """The series it is counted in: the quantity's, with its mode ('concurrency overhead, host/4k')."""
        return f"{DECIDED_QUANTITIES[self.row.quantity]}, {self.row.paging}"


def default_margin() -> float:
    """margin='s default (lib/defaults.h CR_DEF_MARGIN_BP), in points of a percentage."""
    return defaults.load().number("CR_DEF_MARGIN_BP") / 100.0


def margin_points(records: Iterable[Record]) -> float:
    """margin= of the run (its config record), in points of a percentage; for a log from before the key,
    the default where its results come from several processes (none decides otherwise: NaN, and
    lib/defaults.h is not read)."""
    recs = list(records)
    cfg = next((r.get("cfg") for r in recs if r.get("t") == "config"), None)
    bp = cfg.get("margin") if isinstance(cfg, dict) else None
    if isinstance(bp, int) and not isinstance(bp, bool) and bp > 0:
        return bp / 100.0
    replicated = any(r.get("t") == "result" and isinstance(r.get("replicas"), list) for r in recs)
    return default_margin() if replicated else math.nan


def points(rows: Iterable[Row], margin: float) -> list[Point]:
    """Every decided quantity's point above size 0 (the report's sweep) that has per-process values."""
    out = []
    for r in rows:
        if r.quantity not in DECIDED_QUANTITIES or r.size <= 0:
            continue
        levels = r.value.levels()
        if levels is None or r.value.exact_clock:
            continue
        out.append(Point(r, sequence.decide(list(levels.values), 0.0, margin)))
    return out


@dataclass(frozen=True)
class Tally:
    """One series' decisions."""

    series: str
    effect: int
    negligible: int
    open: int
    more: int | None  # the most processes the open points that would decide still take (None: none would)
    never: int = 0  # open points no number of processes decides at the spread their values have
    unit: str = "process"  # what a value is: a process (hosted) or a boot

    @property
    def total(self) -> int:
        return self.effect + self.negligible + self.open

    def text(self) -> str:
        decided = self.effect + self.negligible
        out = f"{decided}/{self.total} sizes decided ({self.effect} effect, {self.negligible} negligible"
        if not self.open:
            return out + ")"
        parts = []  # what the data suggest
        if self.open > self.never:
            plural = "processes" if self.unit == "process" else f"{self.unit}s"
            parts.append(f"{self.open - self.never} in ~{self.more} more {plural}")
        if self.never:
            parts.append(f"{self.never} not at their spread")
        return out + f"; {self.open} open: {', '.join(parts)})"


def tallies(found: list[Point], unit: str = "process") -> list[Tally]:
    """Per series, in the order the points came; `unit`: what one value is (records/replicas.level_of)."""
    order: dict[str, list[Point]] = {}
    for p in found:
        order.setdefault(p.series, []).append(p)
    out = []
    for series, ps in order.items():
        kinds = [p.decision.kind for p in ps]
        opened = [p.decision.more for p in ps if p.decision.kind == sequence.OPEN]
        finite = [m for m in opened if m is not None]
        out.append(Tally(series, kinds.count(sequence.EFFECT), kinds.count(sequence.NEGLIGIBLE),
                         kinds.count(sequence.OPEN), max(finite) if finite else None, len(opened) - len(finite),
                         unit))
    return out


def set_decisions(found: list[Point]) -> dict[int, str]:
    """size -> its set's decision, as results.csv's `decision` column writes it for each case of the set
    (every mode's single and multi of one size are measured in one set): 'open' while a quantity of it
    is open, else 'decided'."""
    out: dict[int, str] = {}
    for p in found:
        if p.decision.kind == sequence.OPEN or out.get(p.row.size) == sequence.OPEN:
            out[p.row.size] = sequence.OPEN
        else:
            out[p.row.size] = DECIDED_SET
    return out
