"""Two result sets side by side: the same cases, their medians and ratios B/A with bands, and every
derived quantity (the report modules' `derived` hook) of both, with its band and whether the two
differ beyond the noise.

The sets are lettered A, B (LETTERS), A the baseline; a pair of cases or of derived values lists its
sides in that order (`sides`). The matching itself takes any number of sets (match_up, match_derived:
a Pair and a DerivedPair are a Match and a DerivedMatch of two); comparesets.py lays out three or more.
A ratio or a difference of two sides is taken only in one unit: a case timed in instructions under one
emulator and in TSC ticks under another is marked `units differ`, never divided. Every line the screen
gets is at most text.WIDTH columns.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..records import kinds, replicas, text
from ..records.kinds import Units
from ..records.protocol import Record
from ..records.results import ResultSet
from ..records.text import WIDTH, exact, fit, format_params, table
from ..stats.interval import EXACT, NO_SPREAD, NOISE, ONE_RUN, REPLICA_PAIRS, REPLICA_SHIFT, UNRESOLVED, Interval, cell, coverage_range, short, verdict
from ..machines.machine import Machine
from . import clocks
from .cells import ratio_digits
from .context import Derived, Run, Sweep
from .families import modules as families

COMPARE_CSV = "compare.csv"
DERIVED_CSV = "compare-derived.csv"
CSV_HEADER = ["bench", "case", "params", "unit", "n_a", "med_a", "min_a", "max_a",
              "n_b", "med_b", "min_b", "max_b", "ratio_b_a", "in", "ratio_min", "ratio_max", "verdict"]
TICK_FIELDS = ("med", "min", "max")
TICKS_HEADER = [f"ticks_{f}_{side}" for side in "ab" for f in TICK_FIELDS]  # compared in time: the ticks too
DERIVED_HEADER = ["table", "key", "unit", "value_a", "min_a", "max_a", "verdict_a", "value_b", "min_b", "max_b",
                  "verdict_b", "b_minus_a", "b_minus_a_min", "b_minus_a_max", "change"]
Key = tuple[str, str, str, int]  # bench, case, params as canonical JSON, occurrence
LETTERS = "AB"  # the result sets in order; A is the baseline every other side is divided by
UNITS_DIFFER = "units differ"  # a ratio or difference of two sides in different units: not taken
LEGEND = (f"legend: ~1, ~0: inside the runs' noise; 7?: not resolved; {UNITS_DIFFER}: in two units, "
          "not divided")
CYCLES = "cycles"  # a record's unit for TSC ticks; what a tick is, is its run's (docs/REPORT.md, Units)
# A result's params that say what happened in its run, not what it measured: its checks, its re-runs and
# cut samples, the CPUs and addresses it used, what the host gave; and `code`, the label of the user's code
# that ran (docs/USERCODE.md), so that an A/B of two versions of it, or of it against the built-in it stands
# in for, pairs them. Two runs of one case match whatever these say (they show in the tables beside the
# case's own params), never on them.
CODE_LABEL = "code"  # the user's code's label: the kernel's bench asm, ctxsw, locks and smplocks write it
OUTCOME_PARAMS = frozenset({
    "lost", "cut", "retried", "disturbed", "gave_up", "unfinished", "unsteady", "leaked", "stale", "unacked",
    "missing", "failed", "parks_permille", "handoffs_permille", "done_min", "done_max", "cpu_ids", "smt",
    "addrs", "lines", "pages_got", "kernel", "fault_lock", CODE_LABEL})


@dataclass
class Match:
    """One case as each of several sets measured it, in their order (None: absent from that set)."""

    key: Key
    sides: list[Record | None]

    def same_unit(self, units: list[Units]) -> bool:
        """Every side that has the case measured it in one unit (units: each set's, in order)."""
        return len({case_unit(rec, u) for rec, u in zip(self.sides, units) if rec is not None}) <= 1

    def units_agree(self, i: int, ref: int, units: list[Units]) -> bool:
        """Sides i and ref (where both have the case) measured it in one unit."""
        x, r = self.sides[i], self.sides[ref]
        return x is None or r is None or case_unit(x, units[i]) == case_unit(r, units[ref])

    def ratio_to(self, i: int, ref: int) -> Interval:
        """Side i over side ref: the Hodges-Lehmann ratio of the two runs' samples with its Mann-Whitney
        interval (interval arithmetic without samples); none when either lacks the case."""
        x, r = self.sides[i], self.sides[ref]
        if x is None or r is None:
            return Interval.none()
        return Interval.of(x).ratio(Interval.of(r)).compared()


@dataclass
class Pair(Match):
    """One case as A and B measured it (None: absent from that side)."""

    @property
    def a(self) -> Record | None:
        return self.sides[0]

    @property
    def b(self) -> Record | None:
        return self.sides[1]

    @property
    def ratio(self) -> float:
        """med_b / med_a; NaN when a side lacks the case or med_a is 0."""
        if self.a is None or self.b is None:
            return math.nan
        ma, mb = _num(self.a.get("med")), _num(self.b.get("med"))
        return mb / ma if ma else math.nan

    @property
    def band(self) -> Interval:
        """B / A with its interval; "~1" when it holds 1."""
        return self.ratio_to(1, 0)

    @property
    def where(self) -> str:
        return "both" if self.a is not None and self.b is not None else "a" if self.a is not None else "b"


def case_unit(rec: Record, units: Units) -> str:
    """What a record's values count: its own unit, a TSC tick named as its run's (instructions under
    icount and Bochs, TSC ticks elsewhere)."""
    unit = str(rec.get("unit", ""))
    return units.short if unit == CYCLES else unit


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def keyed(records: list[Record]) -> dict[Key, Record]:
    """Result records by (bench, case, params but OUTCOME_PARAMS); a repeated case gets the next occurrence
    number."""
    out: dict[Key, Record] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for r in records:
        if r.get("t") != "result":
            continue
        params = r.get("params") if isinstance(r.get("params"), dict) else {}
        own = {k: v for k, v in params.items() if k not in OUTCOME_PARAMS}
        base = (str(r.get("bench")), str(r.get("case")), json.dumps(own, sort_keys=True, separators=(",", ":")))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = r
    return out


def match_up(sets: list[ResultSet]) -> list[Match]:
    """Every case of any set, as each set measured it: the first set's in its order, then those the
    second adds in its order, and so on."""
    keyed_sets = [keyed(rs.records) for rs in sets]
    order = dict.fromkeys(k for ks in keyed_sets for k in ks)
    return [Match(k, [ks.get(k) for ks in keyed_sets]) for k in order]


def pair_up(a: ResultSet, b: ResultSet) -> list[Pair]:
    """Cases of both sides in a's order, then those only b has, in b's order."""
    return as_pairs(match_up([a, b]))


def as_pairs(matches: list[Match]) -> list[Pair]:
    """Two sets' matches as pairs of A and B."""
    return [Pair(m.key, m.sides) for m in matches]


def stat_text(rec: Record | None, field: str) -> str:
    return "" if rec is None else exact(_num(rec.get(field)))


def change_word(change: Interval, same_unit: bool = True) -> str:
    """What a difference of two runs' values says: identical, differs, differs?, same within noise, no
    spread, or UNITS_DIFFER (not taken)."""
    if not same_unit:
        return UNITS_DIFFER
    if not change.ok:
        return ""
    kind = verdict(change)
    if kind == EXACT:
        return "identical" if change.mid == 0 else "differs"
    return {NOISE: "same within noise", UNRESOLVED: "differs?", NO_SPREAD: "no spread",
            ONE_RUN: ONE_RUN}.get(kind, "differs")


@dataclass
class DerivedMatch:
    """One derived value as each of several sets derived it, in their order (None and "": absent)."""

    table: str
    key: str
    null: float
    values: list[Interval | None]
    units: list[str]
    sweep: Sweep | None = None  # where it lies on the working-set sweep (the first set's that has it)
    tables: list[str] = field(default_factory=list)  # each set's table where a row joins several (else: table)

    def units_agree(self, i: int, ref: int) -> bool:
        """TSC ticks and instructions (or host time) are not one unit: their difference means nothing."""
        return not self.units[i] or not self.units[ref] or self.units[i] == self.units[ref]

    def apart(self, i: int, ref: int) -> bool:
        """The two values come from different report tables (a model's and a measurement's): never
        subtracted, whatever their units."""
        return bool(self.tables and self.tables[i] and self.tables[ref] and self.tables[i] != self.tables[ref])

    def minus(self, i: int, ref: int) -> Interval:
        """Set i - set ref, unpaired (two runs never pair): Hodges-Lehmann / Mann-Whitney of the two runs'
        per-round values where both have them, else interval arithmetic; it holds 0 when the runs do not
        differ beyond it."""
        x, r = self.values[i], self.values[ref]
        if x is None or r is None or not self.units_agree(i, ref) or self.apart(i, ref):
            return Interval.none()
        return (x - r).compared()


@dataclass
class DerivedPair(DerivedMatch):
    """One derived value of both runs, A and B (None: that run lacks it)."""

    @property
    def a(self) -> Interval | None:
        return self.values[0]

    @property
    def b(self) -> Interval | None:
        return self.values[1]

    @property
    def sides(self) -> list[Interval | None]:
        """The value as each set derived it, in LETTERS' order."""
        return self.values

    @property
    def unit(self) -> str:
        """A's (B's when A lacks it)."""
        return self.units[0] or self.units[1]

    @property
    def unit_b(self) -> str:
        """B's when both have it, else empty."""
        return self.units[1] if self.a is not None and self.b is not None else ""

    @property
    def same_unit(self) -> bool:
        return self.units_agree(1, 0)

    @property
    def change(self) -> Interval:
        """B - A (DerivedMatch.minus)."""
        return self.minus(1, 0)

    @property
    def verdict(self) -> str:
        return change_word(self.change, self.same_unit)


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
    return [d for module in families() for d in module.derived(run)]


def match_derived(sets: list[ResultSet], t: clocks.Timing | None = None) -> list[DerivedMatch]:
    """Derived values of any set, matched on (table, key), in the first set's order, then the second's;
    those in TSC ticks in the comparison's unit of time (t: clocks.in_time's, of the sets as loaded)."""
    derived = []
    for i, rs in enumerate(sets):
        values = derived_of(rs)
        if t is not None:
            values = clocks.derived_in_time(t, i, values, Run.of(rs.records, rs.doc).machine.units.short)
        derived.append({(d.table, d.key): d for d in values})
    out = []
    for k in dict.fromkeys(k for ds in derived for k in ds):
        got = [ds.get(k) for ds in derived]
        d = next(x for x in got if x is not None)
        out.append(DerivedMatch(d.table, d.key, d.null, [x.value if x else None for x in got],
                                [x.unit if x else "" for x in got], d.sweep))
    return out


def pair_derived(a: ResultSet, b: ResultSet) -> list[DerivedPair]:
    """Derived values of either run, matched on (table, key), in A's order then B's."""
    return as_derived_pairs(match_derived([a, b]))


def as_derived_pairs(derived: list[DerivedMatch]) -> list[DerivedPair]:
    """Two sets' derived matches as pairs of A and B."""
    return [DerivedPair(m.table, m.key, m.null, m.values, m.units, m.sweep) for m in derived]


def common_prefix(keys: list[str]) -> str:
    """The words every key begins with (none when a key is nothing more than them)."""
    words = [k.split(" ") for k in keys]
    common: list[str] = []
    for column in zip(*words):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    common = common[:min(len(w) for w in words) - 1] if words else []
    return " ".join(common)


def params_common(pairs: list[Match]) -> dict[str, Any]:
    """The params every case of these pairs has, with one value."""
    params = [(rec.get("params") if isinstance(rec.get("params"), dict) else {})
              for p in pairs for rec in p.sides if rec is not None]
    if not params:
        return {}
    return {k: v for k, v in params[0].items() if all(k in q and q[k] == v for q in params[1:])}


def params_rest(p: Match, common: dict[str, Any]) -> str:
    rec = next(r for r in p.sides if r is not None)
    params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
    rest = {k: v for k, v in params.items() if k not in common}
    return (format_params(rest) if rest else "-") + (f" #{p.key[3] + 1}" if p.key[3] else "")


def group_by(items: list[Any], key: Any) -> dict[Any, list[Any]]:
    groups: dict[Any, list[Any]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def case_tables(pairs: list[Pair], head: list[str], cells: Callable[[Pair], list[str]],
                numeric: set[int]) -> list[str]:
    """One table per benchmark: its cases (the params every one of them has named once, above it),
    then the columns `cells(pair)` gives."""
    out: list[str] = []
    for bench, mine in group_by(pairs, lambda p: p.key[0]).items():
        common = params_common(mine) if len(mine) > 1 else {}
        out += ["", f"{bench}: {len(mine)} case{'s' if len(mine) != 1 else ''}"
                + (f", each with {format_params(common)}" if common else "")]
        rows = [[p.key[1], params_rest(p, common)] + cells(p) for p in mine]
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
    cov = coverage_range(p.change for p in both)
    in_turn = any(p.change.method == REPLICA_PAIRS for p in both)
    how = ("Wilcoxon signed-rank of the pairs of processes (boots) run in turn" if in_turn else
           "Hodges-Lehmann / Mann-Whitney of the two runs' per-round values (min..max arithmetic without them)")
    paired = "paired: run in turn" if in_turn else "unpaired: two runs never pair"
    out = [f"derived quantities: {len(both)} in both ({differ} differ beyond their intervals: B - A's interval"
           f"{f' ({cov}, {paired})' if cov else ''} excludes 0 and resolves the change), "
           f"{sum(p.b is None for p in pairs)} only in A, {sum(p.a is None for p in pairs)} only in B; "
           f"value (lo..hi): each run's interval (A's and B's left out when within 2 %), B - A: {how}"]
    if any(not p.same_unit for p in both):
        out.append("  the runs count in different units (TSC ticks, host time, instructions): values in those units "
                   f"get no B - A ({UNITS_DIFFER}); percentages and ratios compare")
    groups = group_by(both, lambda p: (p.table, p.unit, p.unit_b if not p.same_unit else p.unit))
    for (group, unit, unit_b), mine in sorted(groups.items(), key=lambda g: g[0][1] != g[0][2]):  # in one unit first
        prefix = common_prefix([p.key for p in mine])
        words = prefix.split(" ") if prefix else []
        named = " ".join(words[1:] if words[:1] == [group] else words)  # "create create off": the group once
        units = _in(unit) if unit == unit_b else f"A {_in(unit)}, B {_in(unit_b)}"
        out += ["", f"{group}{' ' + named if named else ''}, {units}: {len(mine)} quantities"]
        rows = [[p.key[len(prefix):].strip()] + [short(v, digits(p.unit, p.sides), p.null) for v in p.sides]
                + [cell(p.change, digits(p.unit, p.sides)) if p.same_unit else UNITS_DIFFER] for p in mine]
        out += table(["quantity", "A", "B", "B - A"], rows, numeric={1, 2, 3}, width=WIDTH)
    return out


def key_lines(sets: list[ResultSet], ids: str | list[str], t: clocks.Timing | None, head: str = "compare:",
              indent: int = 8) -> list[str]:
    """Each set's line of the key: what was loaded, the unit of its TSC-timed figures, then its machine and
    clock (CPU, platform, the TSC's rate and how it was known, caches); t: the comparison's Timing."""
    t = t or clocks.timing(list(ids), sets)
    out = []
    for i, (letter, rs) in enumerate(zip(ids, sets)):
        m = Run.of(rs.records, rs.doc).machine
        unit = t.unit_text(i, m.units.name) + (f": {m.no_answers}" if m.no_answers else "")
        out.append(f"{head if i == 0 else '':{indent}} {letter} = {rs.path} ({unit})")
        out.append(f"{'':{indent}}     {clocks.machine_text(rs, t.clocks[i])}")
    return out + t.note()


def ratio_source(bands: list[Interval]) -> str:
    """What compare's ratios are built over: the replicas' values where both sets have them, pair by pair
    where the two ran in turn."""
    if any(v.method == REPLICA_PAIRS for v in bands):
        return ("the pairs of processes (boots) run in turn, each pair's ratio (Hodges-Lehmann on logs, "
                "Wilcoxon signed-rank)")
    if any(v.method == REPLICA_SHIFT for v in bands):
        return "the two runs' processes' (boots') medians (Hodges-Lehmann on logs)"
    return "the two runs' samples (Hodges-Lehmann on logs)"


def one_run_lines(sets: list[ResultSet], ids: list[str]) -> list[str]:
    """A line for each set of one process or boot on a real clock: nothing compared with it is a finding."""
    out = []
    for rs, name in zip(sets, ids):
        n, _level = replicas.count(rs.records)
        if n < 2 and not kinds.counts_instructions(rs.records) and rs.of_type("result"):
            out.append(f"  {name}: {replicas.replication_text(rs.records)}: no difference from it is a finding "
                       f"({ONE_RUN})")
    return out


def render(a: ResultSet, b: ResultSet, pairs: list[Pair], derived: list[DerivedPair] | None = None,
           t: clocks.Timing | None = None) -> list[str]:
    both = [p for p in pairs if p.where == "both"]
    ms = machines(a, b)
    units = [m.units for m in ms]
    cov = coverage_range(p.band for p in both if p.same_unit(units))
    out = key_lines([a, b], LETTERS, t)
    out += [f"{len(both)} cases in both, {sum(p.where == 'a' for p in pairs)} only in A, "
            f"{sum(p.where == 'b' for p in pairs)} only in B; B/A: the ratio of "
            f"{ratio_source([p.band for p in both])} with its interval{f' ({cov})' if cov else ''}, ~1: the runs do not differ beyond it", LEGEND]
    out += one_run_lines([a, b], list(LETTERS[:2]))
    if any(not p.same_unit(units) for p in both):
        out.append(f"  the runs count in different units: the cases timed by the TSC get no B/A ({UNITS_DIFFER})")
    out += case_tables(both, ["A med", "B med", "B/A"],
                       lambda p: [stat_text(p.a, "med"), stat_text(p.b, "med")] + _ratio_cells(p, units), {0, 1, 2})
    for side, name in (("a", "A"), ("b", "B")):
        only = [p for p in pairs if p.where == side]
        if only:
            out += ["", f"only in {name} ({len(only)})"]
            out += case_tables(only, ["med"], lambda p: [stat_text(p.a if p.a is not None else p.b, "med")], {0})
    if derived:
        out += [""] + render_derived(derived)
    return fit(out, WIDTH)


def ticks_of(rec: Record | None) -> Record:
    """A result's figures in its TSC's ticks where the comparison took it in time (clocks.in_time keeps
    them), else nothing."""
    ticks = (rec or {}).get("ticks")
    return ticks if isinstance(ticks, dict) else {}


def write_csv(pairs: list[Pair], path: Path, units: list[Units] | None = None) -> Path:
    """compare.csv: one row per case of either side (docs/REPORT.md); units: each set's, in LETTERS'
    order (side_units). A case in different units gets no ratio: its verdict says UNITS_DIFFER. Where the
    sets were compared in time (clocks.py), each side's ticks follow in columns of their own."""
    timed = any(ticks_of(rec) for p in pairs for rec in p.sides)
    rows = []
    for p in pairs:
        rec = p.a if p.a is not None else p.b
        divided = not units or p.same_unit(units)
        band = p.band if divided else Interval.none()
        # B/A as the table shows it: its band's estimate (Hodges-Lehmann of the samples, of the processes'
        # medians or of the pairs run in turn), which its band holds; med_b / med_a where it has none
        ratio = (band.mid if band.ok else p.ratio) if divided else math.nan
        rows.append([p.key[0], p.key[1], format_params(rec.get("params") if rec else None)
                     + (f" #{p.key[3] + 1}" if p.key[3] else ""),
                     _unit(p, units or []),
                     stat_text(p.a, "n"), stat_text(p.a, "med"), stat_text(p.a, "min"), stat_text(p.a, "max"),
                     stat_text(p.b, "n"), stat_text(p.b, "med"), stat_text(p.b, "min"), stat_text(p.b, "max"),
                     "" if math.isnan(ratio) else f"{ratio:.6g}", p.where,
                     exact(band.lo), exact(band.hi), verdict(band, 1.0) if divided else UNITS_DIFFER]
                    + ([stat_text(ticks_of(rec), f) for rec in p.sides for f in TICK_FIELDS] if timed else []))
    return text.write_csv(path, CSV_HEADER + (TICKS_HEADER if timed else []), rows)


def write_derived_csv(pairs: list[DerivedPair], path: Path) -> Path:
    """compare-derived.csv: one row per derived value of either run (docs/REPORT.md)."""
    def side(v: Interval | None, null: float) -> list[str]:
        return ["", "", "", ""] if v is None else [exact(v.mid), exact(v.lo), exact(v.hi), verdict(v, null)]

    rows = [[p.table, p.key, p.unit] + side(p.a, p.null) + side(p.b, p.null)
            + [exact(p.change.mid), exact(p.change.lo), exact(p.change.hi), p.verdict] for p in pairs]
    return text.write_csv(path, DERIVED_HEADER, rows)
