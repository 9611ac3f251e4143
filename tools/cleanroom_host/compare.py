"""Two result sets side by side: the same cases, their medians and ratios B/A with bands, and every
derived quantity (the report modules' `derived` hook) of both, with its band and whether the two
differ beyond the noise.

The sets are lettered A, B (LETTERS), A the baseline; a pair of cases or of derived values lists its
sides in that order (`sides`), and the screen's columns are made per side, so that more sets could be
set beside A. A ratio or a difference of two sides is taken only in one unit: a case timed in
instructions under one emulator and in TSC ticks under another is marked `units differ`, never divided.
Every line the screen gets is at most text.WIDTH columns.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import report, text
from .cells import ratio_digits
from .context import Derived, Run
from .interval import EXACT, NO_SPREAD, NOISE, UNRESOLVED, Interval, cell, short, verdict
from .kinds import Units
from .machine import EMULATOR_TIME, Machine
from .protocol import Record
from .results import ResultSet
from .text import WIDTH, exact, fit, format_params, table

COMPARE_CSV = "compare.csv"
DERIVED_CSV = "compare-derived.csv"
CSV_HEADER = ["bench", "case", "params", "unit", "n_a", "med_a", "min_a", "max_a",
              "n_b", "med_b", "min_b", "max_b", "ratio_b_a", "in", "ratio_min", "ratio_max", "verdict"]
DERIVED_HEADER = ["table", "key", "unit", "value_a", "min_a", "max_a", "verdict_a", "value_b", "min_b", "max_b",
                  "verdict_b", "b_minus_a", "b_minus_a_min", "b_minus_a_max", "change"]
Key = tuple[str, str, str, int]  # bench, case, params as canonical JSON, occurrence
LETTERS = "AB"  # the result sets in order; A is the baseline every other side is divided by
UNITS_DIFFER = "units differ"  # a ratio or difference of two sides in different units: not taken
LEGEND = (f"legend: ~1, ~0: inside the runs' noise; 7?: not resolved; {UNITS_DIFFER}: in two units, "
          "not divided")
CYCLES = "cycles"  # a record's unit for TSC ticks; what a tick is, is its run's (docs/REPORT.md, Units)


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
        """B / A with the band of both sides' runs; "~1" when it holds 1."""
        if self.a is None or self.b is None:
            return Interval.none()
        return Interval.of(self.b).ratio(Interval.of(self.a))

    @property
    def where(self) -> str:
        return "both" if self.a is not None and self.b is not None else "a" if self.a is not None else "b"

    @property
    def sides(self) -> list[Record | None]:
        """The case as each set measured it, in LETTERS' order."""
        return [self.a, self.b]

    def same_unit(self, units: list[Units]) -> bool:
        """Every side that has the case measured it in one unit (units: each set's, in LETTERS' order)."""
        return len({case_unit(rec, u) for rec, u in zip(self.sides, units) if rec is not None}) <= 1


def case_unit(rec: Record, units: Units) -> str:
    """What a record's values count: its own unit, a TSC tick named as its run's (instructions under
    icount and Bochs, TSC ticks elsewhere)."""
    unit = str(rec.get("unit", ""))
    return units.short if unit == CYCLES else unit


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
    def sides(self) -> list[Interval | None]:
        """The value as each set derived it, in LETTERS' order."""
        return [self.a, self.b]

    @property
    def same_unit(self) -> bool:
        """TSC ticks and instructions (or host time) are not one unit: their difference means nothing."""
        return not self.unit_b or self.unit_b == self.unit

    @property
    def change(self) -> Interval:
        """B - A with the band of both: it holds 0 when the runs do not differ beyond their noise."""
        if self.a is None or self.b is None or not self.same_unit:
            return Interval.none()
        return self.b - self.a

    @property
    def verdict(self) -> str:
        if self.a is not None and self.b is not None and not self.same_unit:
            return UNITS_DIFFER
        c = self.change
        if not c.ok:
            return ""
        kind = verdict(c)
        if kind == EXACT:
            return "identical" if c.mid == 0 else "differs"
        return {NOISE: "same within noise", UNRESOLVED: "differs?", NO_SPREAD: "no spread"}.get(kind, "differs")


def digits(unit: str, values: list[Interval | None] | None = None) -> int:
    """Decimals for a derived value: ratios three significant figures or so (2 without `values`, the
    sides'), percentages and per-quantum figures 1, counts 0."""
    if unit == "ratio":
        known = [v for v in values or [] if v is not None and v.ok]
        return ratio_digits(max(known, key=lambda v: abs(v.mid))) if known else 2
    if unit == "%" or unit.endswith(("/quantum", "/refill", "/page", "/switch")) or "iteration" in unit:
        return 1
    return 0


def machines(*sets: ResultSet) -> list[Machine]:
    """What each set ran on: its TSC's unit (docs/REPORT.md, Units: records say "cycles" for all of
    them) and whether its timing is an emulator's own."""
    return [Run.of(rs.records, rs.doc).machine for rs in sets]


def side_units(*sets: ResultSet) -> list[Units]:
    return [m.units for m in machines(*sets)]


def _unit(p: Pair, units: list[Units]) -> str:
    """The compare.csv unit of a case: the runs' own, "A ... / B ..." when they differ."""
    rec = p.a if p.a is not None else p.b
    unit = str((rec or {}).get("unit", ""))
    if unit != CYCLES or not units:
        return unit
    names = [u.name for rec, u in zip(p.sides, units) if rec is not None]
    if len(set(names)) > 1:
        return " / ".join(f"{letter} {u.name}" for letter, rec, u in zip(LETTERS, p.sides, units) if rec is not None)
    return names[0]


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


def _common_prefix(keys: list[str]) -> str:
    """The words every key begins with (none when a key is nothing more than them)."""
    words = [k.split(" ") for k in keys]
    common: list[str] = []
    for column in zip(*words):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    common = common[:min(len(w) for w in words) - 1] if words else []
    return " ".join(common)


def _params_common(pairs: list[Pair]) -> dict[str, Any]:
    """The params every case of these pairs has, with one value."""
    params = [(rec.get("params") if isinstance(rec.get("params"), dict) else {})
              for p in pairs for rec in p.sides if rec is not None]
    if not params:
        return {}
    return {k: v for k, v in params[0].items() if all(k in q and q[k] == v for q in params[1:])}


def _params_rest(p: Pair, common: dict[str, Any]) -> str:
    rec = next(r for r in p.sides if r is not None)
    params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
    rest = {k: v for k, v in params.items() if k not in common}
    return (format_params(rest) if rest else "-") + (f" #{p.key[3] + 1}" if p.key[3] else "")


def _by(items: list[Any], key: Any) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def case_tables(pairs: list[Pair], head: list[str], cells: Callable[[Pair], list[str]],
                numeric: set[int]) -> list[str]:
    """One table per benchmark: its cases (the params every one of them has named once, above it),
    then the columns `cells(pair)` gives."""
    out: list[str] = []
    for bench, mine in _by(pairs, lambda p: p.key[0]).items():
        common = _params_common(mine) if len(mine) > 1 else {}
        out += ["", f"{bench}: {len(mine)} case{'s' if len(mine) != 1 else ''}"
                + (f", each with {format_params(common)}" if common else "")]
        rows = [[p.key[1], _params_rest(p, common)] + cells(p) for p in mine]
        out += table(["case", "params"] + head, rows, numeric={i + 2 for i in numeric}, width=WIDTH)
    return out


def _ratio_cells(p: Pair, units: list[Units]) -> list[str]:
    """Each side over A with the band of both, or UNITS_DIFFER."""
    if not p.same_unit(units):
        return [UNITS_DIFFER]
    return [cell(p.band, 3, null=1.0)]


def _in(unit: str) -> str:
    return "ratios" if unit == "ratio" else f"in {unit}"


def render_derived(pairs: list[DerivedPair]) -> list[str]:
    both = [p for p in pairs if p.a is not None and p.b is not None]
    if not pairs:
        return []
    differ = sum(p.verdict == "differs" for p in both)
    out = [f"derived quantities: {len(both)} in both ({differ} differ beyond the noise: B - A's band excludes 0 and "
           f"is narrower than the change), {sum(p.b is None for p in pairs)} only in A, "
           f"{sum(p.a is None for p in pairs)} only in B; value (min..max) over each run's samples (A's and B's "
           "left out when within 2 %), B - A with the band of both"]
    if any(not p.same_unit for p in both):
        out.append("  the runs count in different units (TSC ticks, host time, instructions): values in those units "
                   f"get no B - A ({UNITS_DIFFER}); percentages and ratios compare")
    groups = _by(both, lambda p: (p.table, p.unit, p.unit_b if not p.same_unit else p.unit))
    for (group, unit, unit_b), mine in sorted(groups.items(), key=lambda g: g[0][1] != g[0][2]):  # in one unit first
        prefix = _common_prefix([p.key for p in mine])
        words = prefix.split(" ") if prefix else []
        named = " ".join(words[1:] if words[:1] == [group] else words)  # "create create off": the group once
        units = _in(unit) if unit == unit_b else f"A {_in(unit)}, B {_in(unit_b)}"
        out += ["", f"{group}{' ' + named if named else ''}, {units}: {len(mine)} quantities"]
        rows = [[p.key[len(prefix):].strip()] + [short(v, digits(p.unit, p.sides), p.null) for v in p.sides]
                + [cell(p.change, digits(p.unit, p.sides)) if p.same_unit else UNITS_DIFFER] for p in mine]
        out += table(["quantity", "A", "B", "B - A"], rows, numeric={1, 2, 3}, width=WIDTH)
    return out


def render(a: ResultSet, b: ResultSet, pairs: list[Pair], derived: list[DerivedPair] | None = None) -> list[str]:
    both = [p for p in pairs if p.where == "both"]
    ms = machines(a, b)
    units = [m.units for m in ms]
    out = [f"{'compare:' if letter == LETTERS[0] else '':8} {letter} = {rs.path} ({m.units.name}"
           + (f": {EMULATOR_TIME}" if m.emulator_time else "") + ")" for letter, rs, m in zip(LETTERS, (a, b), ms)]
    out += [f"{len(both)} cases in both, {sum(p.where == 'a' for p in pairs)} only in A, "
            f"{sum(p.where == 'b' for p in pairs)} only in B; B/A = B med / A med, with the band of both runs' "
            "samples", LEGEND]
    if any(not p.same_unit(units) for p in both):
        out.append(f"  the runs count in different units: the cases timed by the TSC get no B/A ({UNITS_DIFFER})")
    out += case_tables(both, ["A med", "B med", "B/A"],
                       lambda p: [_stat(p.a, "med"), _stat(p.b, "med")] + _ratio_cells(p, units), {0, 1, 2})
    for side, name in (("a", "A"), ("b", "B")):
        only = [p for p in pairs if p.where == side]
        if only:
            out += ["", f"only in {name} ({len(only)})"]
            out += case_tables(only, ["med"], lambda p: [_stat(p.a if p.a is not None else p.b, "med")], {0})
    if derived:
        out += [""] + render_derived(derived)
    return fit(out, WIDTH)


def write_csv(pairs: list[Pair], path: Path, units: list[Units] | None = None) -> Path:
    """compare.csv: one row per case of either side (docs/REPORT.md); units: each set's, in LETTERS'
    order (side_units). A case in different units gets no ratio: its verdict says UNITS_DIFFER."""
    rows = []
    for p in pairs:
        rec = p.a if p.a is not None else p.b
        divided = not units or p.same_unit(units)
        ratio = p.ratio if divided else math.nan
        band = p.band if divided else Interval.none()
        rows.append([p.key[0], p.key[1], format_params(rec.get("params") if rec else None)
                     + (f" #{p.key[3] + 1}" if p.key[3] else ""),
                     _unit(p, units or []),
                     _stat(p.a, "n"), _stat(p.a, "med"), _stat(p.a, "min"), _stat(p.a, "max"),
                     _stat(p.b, "n"), _stat(p.b, "med"), _stat(p.b, "min"), _stat(p.b, "max"),
                     "" if math.isnan(ratio) else f"{ratio:.6g}", p.where,
                     exact(band.lo), exact(band.hi), verdict(band, 1.0) if divided else UNITS_DIFFER])
    return text.write_csv(path, CSV_HEADER, rows)


def write_derived_csv(pairs: list[DerivedPair], path: Path) -> Path:
    """compare-derived.csv: one row per derived value of either run (docs/REPORT.md)."""
    def side(v: Interval | None, null: float) -> list[str]:
        return ["", "", "", ""] if v is None else [exact(v.mid), exact(v.lo), exact(v.hi), verdict(v, null)]

    rows = [[p.table, p.key, p.unit] + side(p.a, p.null) + side(p.b, p.null)
            + [exact(p.change.mid), exact(p.change.lo), exact(p.change.hi), p.verdict] for p in pairs]
    return text.write_csv(path, DERIVED_HEADER, rows)
