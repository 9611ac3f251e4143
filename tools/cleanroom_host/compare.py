"""Two result sets side by side: the same cases, their medians and ratios B/A with bands, and every
derived quantity (the report modules' `derived` hook) of both, with its band and whether the two
differ beyond the noise."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import report, text
from .context import Derived, Run
from .interval import EXACT, NO_SPREAD, NOISE, UNRESOLVED, Interval, cell, coverage_range, verdict
from .protocol import Record
from .results import ResultSet
from .text import exact, format_params, table

COMPARE_CSV = "compare.csv"
DERIVED_CSV = "compare-derived.csv"
CSV_HEADER = ["bench", "case", "params", "unit", "n_a", "med_a", "min_a", "max_a",
              "n_b", "med_b", "min_b", "max_b", "ratio_b_a", "in", "ratio_min", "ratio_max", "verdict"]
DERIVED_HEADER = ["table", "key", "unit", "value_a", "min_a", "max_a", "verdict_a", "value_b", "min_b", "max_b",
                  "verdict_b", "b_minus_a", "b_minus_a_min", "b_minus_a_max", "change"]
Key = tuple[str, str, str, int]  # bench, case, params as canonical JSON, occurrence


@dataclass
class Pair:
    """One case as each side measured it (None: absent from that side)."""

    key: Key
    a: Record | None
    b: Record | None

    @property
    def ratio(self) -> float:
        """med_b / med_a; NaN when a side lacks the case or med_a is 0."""
        if self.a is None or self.b is None:
            return math.nan
        ma, mb = _num(self.a.get("med")), _num(self.b.get("med"))
        return mb / ma if ma else math.nan

    @property
    def band(self) -> Interval:
        """B / A: the Hodges-Lehmann ratio of the two runs' samples with its Mann-Whitney interval (interval
        arithmetic without samples); "~1" when it holds 1."""
        if self.a is None or self.b is None:
            return Interval.none()
        return Interval.of(self.b).ratio(Interval.of(self.a))

    @property
    def where(self) -> str:
        return "both" if self.a is not None and self.b is not None else "a" if self.a is not None else "b"


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def keyed(records: list[Record]) -> dict[Key, Record]:
    """Result records by (bench, case, params); a repeated case gets the next occurrence number."""
    out: dict[Key, Record] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for r in records:
        if r.get("t") != "result":
            continue
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        base = (str(r.get("bench")), str(r.get("case")), json.dumps(params, sort_keys=True, separators=(",", ":")))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = r
    return out


def pair_up(a: ResultSet, b: ResultSet) -> list[Pair]:
    """Cases of both sides in a's order, then those only b has, in b's order."""
    ka, kb = keyed(a.records), keyed(b.records)
    pairs = [Pair(k, ra, kb.get(k)) for k, ra in ka.items()]
    pairs += [Pair(k, None, rb) for k, rb in kb.items() if k not in ka]
    return pairs


def _params_text(p: Pair) -> str:
    rec = p.a if p.a is not None else p.b
    text = format_params(rec.get("params") if rec else None)
    return text + (f" #{p.key[3] + 1}" if p.key[3] else "")


def _stat(rec: Record | None, field: str) -> str:
    return "" if rec is None else exact(_num(rec.get(field)))


@dataclass
class DerivedPair:
    """One derived value of both runs (None: that run lacks it)."""

    table: str
    key: str
    unit: str  # A's (B's when A lacks it)
    a: Interval | None
    b: Interval | None
    null: float
    unit_b: str = ""

    @property
    def same_unit(self) -> bool:
        """TSC ticks and instructions (or host time) are not one unit: their difference means nothing."""
        return not self.unit_b or self.unit_b == self.unit

    @property
    def change(self) -> Interval:
        """B - A, unpaired (two runs never pair): Hodges-Lehmann / Mann-Whitney of the two runs' per-round
        values where both have them, else interval arithmetic; it holds 0 when the runs do not differ beyond it."""
        if self.a is None or self.b is None or not self.same_unit:
            return Interval.none()
        return self.b - self.a

    @property
    def verdict(self) -> str:
        if self.a is not None and self.b is not None and not self.same_unit:
            return "units differ"
        c = self.change
        if not c.ok:
            return ""
        kind = verdict(c)
        if kind == EXACT:
            return "identical" if c.mid == 0 else "differs"
        return {NOISE: "same within noise", UNRESOLVED: "differs?", NO_SPREAD: "no spread"}.get(kind, "differs")


def digits(unit: str) -> int:
    """Decimals for a derived value: ratios 2, percentages and per-quantum figures 1, counts 0."""
    if unit == "ratio":
        return 2
    if unit == "%" or unit.endswith(("/quantum", "/refill", "/page", "/switch")) or "iteration" in unit:
        return 1
    return 0


def unit_names(a: ResultSet, b: ResultSet) -> tuple[str, str]:
    """What each run's TSC ticks are (docs/REPORT.md, Units): records say "cycles" for all of them."""
    return Run.of(a.records, a.doc).units.name, Run.of(b.records, b.doc).units.name


def _unit(p: Pair, units: tuple[str, str]) -> str:
    """The compare.csv unit of a case: the runs' own, "A ... / B ..." when they differ."""
    rec = p.a if p.a is not None else p.b
    unit = str((rec or {}).get("unit", ""))
    if unit != "cycles" or not all(units):
        return unit
    if p.where == "both" and units[0] != units[1]:
        return f"A {units[0]} / B {units[1]}"
    return units[1] if p.where == "b" else units[0]


def derived_of(rs: ResultSet) -> list[Derived]:
    run = Run.of(rs.records, rs.doc)
    return [d for module in report.REPORTS for d in module.derived(run)]


def pair_derived(a: ResultSet, b: ResultSet) -> list[DerivedPair]:
    """Derived values of either run, matched on (table, key), in A's order then B's."""
    da = {(d.table, d.key): d for d in derived_of(a)}
    db = {(d.table, d.key): d for d in derived_of(b)}
    out = []
    for k in list(da) + [k for k in db if k not in da]:
        x, y = da.get(k), db.get(k)
        d = x or y
        assert d is not None
        out.append(DerivedPair(d.table, d.key, d.unit, x.value if x else None, y.value if y else None, d.null,
                               y.unit if x and y else ""))
    return out


def render_derived(pairs: list[DerivedPair]) -> list[str]:
    both = [p for p in pairs if p.a is not None and p.b is not None]
    if not pairs:
        return []
    differ = sum(p.verdict == "differs" for p in both)
    cov = coverage_range(p.change for p in both)
    out = [f"derived quantities: {len(both)} in both ({differ} differ beyond their intervals: B - A's interval"
           f"{f' ({cov}, unpaired: two runs never pair)' if cov else ''} excludes 0 and resolves the change), "
           f"{sum(p.b is None for p in pairs)} only in A, {sum(p.a is None for p in pairs)} only in B; "
           "value (lo..hi): each run's interval, ~0/~1: inside the noise"]
    if any(not p.same_unit for p in both):
        out.append("  the runs count in different units (TSC ticks, host time, instructions): values in those units "
                   "get no B - A; percentages and ratios compare")
    if both:
        rows = [[p.table, p.key, p.unit if p.same_unit else f"{p.unit} / {p.unit_b}", cell(p.a, digits(p.unit), p.null),
                 cell(p.b, digits(p.unit), p.null), cell(p.change, digits(p.unit)), p.verdict] for p in both]
        out += table(["table", "quantity", "unit", "A", "B", "B - A", "change"], rows, numeric={3, 4, 5})
    return out


def render(a: ResultSet, b: ResultSet, pairs: list[Pair], derived: list[DerivedPair] | None = None) -> list[str]:
    both = [p for p in pairs if p.where == "both"]
    ua, ub = unit_names(a, b)
    cov = coverage_range(p.band for p in both)
    out = [f"compare: A = {a.path} ({ua})", f"         B = {b.path} ({ub})",
           f"{len(both)} cases in both, {sum(p.where == 'a' for p in pairs)} only in A, "
           f"{sum(p.where == 'b' for p in pairs)} only in B; B/A: the ratio of the two runs' samples (Hodges-Lehmann "
           f"on logs) with its interval{f' ({cov})' if cov else ''}, ~1: the runs do not differ beyond it"]
    if both:
        rows = [[p.key[0], p.key[1], _params_text(p), _stat(p.a, "med"), _stat(p.b, "med"),
                 cell(p.band, 3, null=1.0)] for p in both]
        out += [""] + table(["bench", "case", "params", "A med", "B med", "B/A"], rows, numeric={3, 4, 5})
    for side, name in (("a", "A"), ("b", "B")):
        only = [p for p in pairs if p.where == side]
        if only:
            out += ["", f"only in {name} ({len(only)})"]
            out += table(["bench", "case", "params", "med"],
                         [[p.key[0], p.key[1], _params_text(p), _stat(p.a if side == "a" else p.b, "med")]
                          for p in only], numeric={3})
    if derived:
        out += [""] + render_derived(derived)
    return out


def write_csv(pairs: list[Pair], path: Path, units: tuple[str, str] = ("", "")) -> Path:
    """compare.csv: one row per case of either side (docs/REPORT.md); units: each run's unit name."""
    rows = []
    for p in pairs:
        rec = p.a if p.a is not None else p.b
        rows.append([p.key[0], p.key[1], format_params(rec.get("params") if rec else None)
                     + (f" #{p.key[3] + 1}" if p.key[3] else ""),
                     _unit(p, units),
                     _stat(p.a, "n"), _stat(p.a, "med"), _stat(p.a, "min"), _stat(p.a, "max"),
                     _stat(p.b, "n"), _stat(p.b, "med"), _stat(p.b, "min"), _stat(p.b, "max"),
                     "" if math.isnan(p.ratio) else f"{p.ratio:.6g}", p.where,
                     exact(p.band.lo), exact(p.band.hi), verdict(p.band, 1.0)])
    return text.write_csv(path, CSV_HEADER, rows)


def write_derived_csv(pairs: list[DerivedPair], path: Path) -> Path:
    """compare-derived.csv: one row per derived value of either run (docs/REPORT.md)."""
    def side(v: Interval | None, null: float) -> list[str]:
        return ["", "", "", ""] if v is None else [exact(v.mid), exact(v.lo), exact(v.hi), verdict(v, null)]

    rows = [[p.table, p.key, p.unit] + side(p.a, p.null) + side(p.b, p.null)
            + [exact(p.change.mid), exact(p.change.lo), exact(p.change.hi), p.verdict] for p in pairs]
    return text.write_csv(path, DERIVED_HEADER, rows)
