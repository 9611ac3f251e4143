"""What the table-making family modules share (locks.py, aspace.py, smp.py, smplocks.py):
results as points, the cells of their CSV files, ratios with their intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable

from ..records.protocol import Record
from ..records.text import exact, write_csv
from ..stats.interval import Interval, cell, verdict
from .context import Derived
from .derive import mode_of

CELL_HEADER = ["table", "paging", "row", "column", "unit", "value", "min", "max", "verdict"]


@dataclass(frozen=True)
class Point:
    """One result record: its benchmark, case, paging mode and params, and its median with its runs' band."""

    bench: str
    case: str
    mode: str
    params: dict[str, Any]
    value: Interval
    impl: str


# Which set of cases measured in turn (bench_measure_set) a result belongs to, from its case and params
# (its paging mode aside): the report module knows its benchmark's sets.
SetOf = Callable[[str, dict[str, Any]], Hashable]


def collect(records: Iterable[Record], bench: str, set_of: SetOf | None = None) -> list[Point]:
    """The bench's results as points. With `set_of`, the results of one set (in one paging mode) pair up
    round by round (interval.py: their differences and ratios get the paired interval); without it, or
    across sets, two results with samples compare unpaired (Hodges-Lehmann / Mann-Whitney)."""
    token = object()  # one per collection: two runs' sets never pair
    out = []
    for r in records:
        if r.get("t") != "result" or r.get("bench") != bench:
            continue
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        case, mode = str(r.get("case")), mode_of(params)
        pair = (token, mode, set_of(case, params)) if set_of is not None else None
        out.append(Point(bench, case, mode, params, Interval.of(r, pair), str(params.get("impl", ""))))
    return out


def as_int(v: Any) -> int | None:
    """A param's value if it is an integer (not a bool), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def modes(points: list[Point]) -> list[str]:
    """Paging modes in the order the run measured them."""
    return list(dict.fromkeys(p.mode for p in points))


def find(points: list[Point], mode: str, case: str, **params: Any) -> Interval | None:
    for p in points:
        if p.mode == mode and p.case == case and all(p.params.get(k) == v for k, v in params.items()):
            return p.value
    return None


def ratio_of(a: Interval | None, b: Interval | None) -> Interval:
    """a / b with its interval (interval.py: paired by round within a set, else Hodges-Lehmann /
    Mann-Whitney, else interval arithmetic); NaN when either is missing or b is 0."""
    if a is None or b is None:
        return Interval.none()
    return a.ratio(b)


def ratio_digits(v: Interval) -> int:
    """Three significant figures or so: 0.31, 2.08, 35.6, 1577."""
    m = abs(v.mid) if v.ok else 0.0
    return 2 if m < 10 else 1 if m < 100 else 0


def ratio_cell(v: Interval | None, digits: int = 2) -> str:
    """A ratio with its band; "~1" when the band holds 1 (no difference)."""
    return cell(v, digits, null=1.0)


@dataclass(frozen=True)
class Cell:
    """One cell of a benchmark's table as its CSV (locks.csv, aspace.csv) writes it."""

    table: str
    mode: str  # the paging mode: 'off', 'on/4k', 'host'
    row: str
    column: str
    unit: str
    value: Any  # an Interval
    null: float = 0.0  # 1 for a ratio
    derived: bool = False  # computed from several records (a ratio, a difference), not one median

    def csv(self) -> list[str]:
        v = self.value
        return [self.table, self.mode, self.row, self.column, self.unit, exact(v.mid), exact(v.lo), exact(v.hi),
                verdict(v, self.null)]

    def as_derived(self, group: str) -> Derived:
        return Derived(group, f"{self.table} {self.mode} {self.row} {self.column}", self.unit, self.value, self.null)


def make_cell(tbl: str, mode: str, row: str, column: str, unit: str, v: Interval | None, null: float = 0.0,
              derived: bool = False) -> Cell:
    """A CSV cell; a value that could not be computed is NaN."""
    return Cell(tbl, mode, row, column, unit, v if v is not None else Interval.none(), null, derived)


def cell_adder(out: list[Cell]) -> Callable[..., None]:
    """add(table, mode, row, column, unit, value, ...): make_cell's Cell, appended to out."""
    return lambda *args, **kwargs: out.append(make_cell(*args, **kwargs))


def write_cells(cells: list[Cell], path: Path) -> Path | None:
    """A table module's CSV (locks.csv, aspace.csv: CELL_HEADER, one cell a row); None when it has no cells."""
    if not cells:
        return None
    return write_csv(path, CELL_HEADER, [c.csv() for c in cells])
