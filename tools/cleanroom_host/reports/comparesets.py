"""Several result sets side by side (`compare A B C ...`): one table per answer with a column per set,
each set's median or derived value with its interval, and each set against one of them, the reference
(the first unless `--ref` says), by the unpaired interval: the ratio of the two runs' samples for a
case, the difference for a derived value. Never across units: a case timed in instructions under one
emulator and in TSC ticks on another machine gets compare.UNITS_DIFFER instead.

The sets are named A, B, C, ... (set_ids) and a key above the tables says what each ran on (its CPU,
emulator or hosted, the unit of its TSC). A table holds the sets that have any of its rows; one
that only a single set has is named, not printed (that set's own report has it). A table too wide
for text.WIDTH wraps into column groups, each with the rows' names again. Two sets without `--ref`
keep compare.py's layout of A, B and B/A; this is the layout of three sets or more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..records import text
from ..records.kinds import Units
from ..records.results import ResultSet
from ..records.text import WIDTH, exact, fit, format_params, table
from ..stats.interval import Interval, cell, coverage_range, verdict
from ..machines.machine import Machine
from . import clocks
from .compare import CYCLES, LEGEND, TICK_FIELDS, UNITS_DIFFER, DerivedMatch, Match, case_unit, change_word, common_prefix, digits, group_by, key_lines, one_run_lines, params_common, params_rest, ratio_source, stat_text, ticks_of
from .context import Run
from .paper import describe_cpu, size_text

CSV_HEADER = ["bench", "case", "params", "set", "machine", "unit", "n", "med", "lo", "hi", "min", "max", "ref",
              "ratio_ref", "ratio_lo", "ratio_hi", "verdict"]
DERIVED_HEADER = ["table", "key", "set", "machine", "unit", "value", "lo", "hi", "verdict", "ref", "minus_ref",
                  "minus_ref_lo", "minus_ref_hi", "change"]
ABSENT = "-"  # a set that lacks the row
LEAD_MOST = WIDTH // 2  # the rows' names get at most this much of a column group's width (wrapped beyond it)
SIZE_LABEL = "size"  # a sweep table's column of working-set sizes
APART = "modelled"  # a model's value against a measured one: never subtracted (DerivedMatch.apart)


def set_ids(n: int) -> list[str]:
    """A, B, ..., Z, then AA, AB, ...: the short names the columns are headed by."""
    out = []
    for i in range(n):
        name, k = "", i
        while True:
            name = chr(ord("A") + k % 26) + name
            k = k // 26 - 1
            if k < 0:
                break
        out.append(name)
    return out


@dataclass(frozen=True)
class Side:
    """One set as the comparison names it: its id, what was loaded, what it ran on."""

    id: str
    rs: ResultSet
    machine: Machine
    cpu: str

    @classmethod
    def of(cls, ident: str, rs: ResultSet) -> "Side":
        run = Run.of(rs.records, rs.doc)
        return cls(ident, rs, run.machine, describe_cpu(run.first("cpu")))

    @property
    def units(self) -> Units:
        return self.machine.units

    @property
    def platform(self) -> str:
        """'qemu-icount', 'hosted', 'qemu-icount with the cache/TLB model (prestonia)'."""
        return clocks.platform_of(self.rs, self.machine)

    @property
    def short(self) -> str:
        """For compare.csv's machine column: 'AMD EPYC (hosted)'."""
        return f"{self.cpu} ({self.platform})"


def sides_of(sets: list[ResultSet]) -> list[Side]:
    return [Side.of(i, rs) for i, rs in zip(set_ids(len(sets)), sets)]


# --- the tables' rows: which sets have them, their units ----------------------------------------


def having(rows: list[Any], values: Callable[[Any], list[Any]], n: int) -> list[int]:
    """The sets (by index) that have any of these rows."""
    return [i for i in range(n) if any(values(r)[i] is not None for r in rows)]


def _counts(rows: list[Any], values: Callable[[Any], list[Any]], sides: list[Side], present: list[int]) -> str:
    """'A 8, B 4; C none'."""
    have = ", ".join(f"{sides[i].id} {sum(values(r)[i] is not None for r in rows)}" for i in present)
    none = [s.id for i, s in enumerate(sides) if i not in present]
    return have + (f"; {', '.join(none)} none" if none else "")


def units_text(units: dict[int, set[str]], sides: list[Side]) -> str:
    """'in instructions' when every set counts in one unit, else 'A, C in instructions; B in TSC ticks'."""
    named = {i: " and ".join(sorted(u)) for i, u in units.items() if u}
    if len(set(named.values())) <= 1:
        return f"in {next(iter(named.values()))}" if named else ""
    by = group_by(list(named), lambda i: named[i])
    return "; ".join(f"{', '.join(sides[i].id for i in ids)} in {unit}" for unit, ids in by.items())


def case_units(rows: list[Match], sides: list[Side], present: list[int]) -> dict[int, set[str]]:
    return {i: {case_unit(rec, sides[i].units) for m in rows if (rec := m.sides[i]) is not None} for i in present}


def derived_units(rows: list[DerivedMatch], present: list[int]) -> dict[int, set[str]]:
    return {i: {m.units[i] for m in rows if m.units[i]} for i in present}


def in_some(groups: dict[Any, list[Any]], values: Callable[[Any], list[Any]],
            n: int) -> tuple[dict[Any, list[Any]], dict[Any, list[Any]]]:
    """The groups two sets or more have (they compare), and those only one has."""
    shared = {k: rows for k, rows in groups.items() if len(having(rows, values, n)) >= 2}
    return shared, {k: rows for k, rows in groups.items() if k not in shared}


def case_values(m: Match) -> list[Any]:
    return m.sides


def derived_values(m: DerivedMatch) -> list[Any]:
    return m.values


def case_groups(matches: list[Match]) -> dict[str, list[Match]]:
    """One table per benchmark, in the order the sets measured them."""
    return group_by(matches, lambda m: m.key[0])


def _tsc_free(unit: str, units: Units) -> str:
    """A derived unit with the set's TSC unit taken out ('instructions/switch' -> 'TSC/switch'), so that
    one quantity in two sets' units is one table."""
    return "TSC" + unit[len(units.short):] if units.short and unit.startswith(units.short) else unit


SWEEP = ""  # derived_groups' table word for a quantity of the working-set sweep, whichever table has it


def derived_groups(derived: list[DerivedMatch], sides: list[Side]) -> dict[tuple[str, str], list[DerivedMatch]]:
    """One table per derived quantity: on the working-set sweep, a quantity of a series, (SWEEP, 'series
    quantity'), a row per paging mode and size (sweep_rows); elsewhere a report table's values in one unit,
    its TSC's unit aside, (table, unit)."""
    def key(m: DerivedMatch) -> tuple[str, str]:
        if m.sweep is not None:
            return SWEEP, f"{m.sweep.series} {m.sweep.quantity}".strip()
        i = next(i for i, v in enumerate(m.values) if v is not None)
        return m.table, _tsc_free(m.units[i], sides[i].units)

    groups = group_by(derived, key)
    return {k: sweep_rows(rows, len(sides)) if k[0] == SWEEP else rows for k, rows in groups.items()}


def sweep_rows(rows: list[DerivedMatch], n: int) -> list[DerivedMatch]:
    """A sweep quantity's values a row per paging mode and size, each set's from whichever table has it
    (workset, or workset-model for a model's run): a model's value sits beside a measured one, never
    subtracted from it (DerivedMatch.apart)."""
    out = []
    for mine in group_by(rows, lambda m: (m.sweep.mode, m.sweep.size) if m.sweep else ("", 0)).values():
        values: list[Interval | None] = [None] * n
        units, tables = [""] * n, [""] * n
        for m in mine:
            for i, v in enumerate(m.values):
                if v is not None and values[i] is None:
                    values[i], units[i], tables[i] = v, m.units[i], m.table
        first = mine[0]
        out.append(DerivedMatch(", ".join(sweep_tables(mine)), first.key, first.null, values, units, first.sweep,
                                tables))
    return out


def sweep_tables(rows: list[DerivedMatch]) -> list[str]:
    """The report tables a sweep quantity's rows come from: 'workset', 'workset-model'."""
    return list(dict.fromkeys(t for m in rows for t in (m.tables or [m.table]) if t))


def group_title(group: tuple[str, str], rows: list[DerivedMatch]) -> str:
    table, what = group
    return f"{', '.join(sweep_tables(rows))} {what}" if table == SWEEP else f"{table} {what}"


# --- column groups ---------------------------------------------------------------------------------


@dataclass
class Block:
    """The columns one set adds to a table: its value, and against the reference."""

    headers: list[str]
    rows: list[list[str]]

    @property
    def width(self) -> int:
        return sum(max([len(h)] + [len(r[i]) for r in self.rows]) + 2 for i, h in enumerate(self.headers))


def column_groups(lead: list[str], lead_rows: list[list[str]], blocks: list[Block]) -> list[str]:
    """A table of the rows' names (`lead`) and each set's block of columns; when wider than WIDTH, as
    several tables of as many whole blocks as fit, each with the rows' names, headed 'part k of n'."""
    natural = Block(lead, lead_rows).width
    room = WIDTH - min(natural, LEAD_MOST)
    groups: list[list[Block]] = []
    used = 0
    for b in blocks:
        if not groups or used + b.width > room:
            groups.append([])
            used = 0
        groups[-1].append(b)
        used += b.width
    out: list[str] = []
    for k, group in enumerate(groups):
        heads = [h for b in group for h in b.headers]
        if len(groups) > 1:
            out.append(f"  part {k + 1} of {len(groups)}: {', '.join(heads)}")
        rows = [name + [c for b in group for c in b.rows[j]] for j, name in enumerate(lead_rows)]
        out += table(lead + heads, rows, numeric=set(range(len(lead), len(lead) + len(heads))), width=WIDTH)
    return out


def _blocks(present: list[int], ref: int, sides: list[Side], rows: list[Any], values: Callable[[Any], list[Any]],
            value: Callable[[Any, int], str], against: Callable[[Any, int], str], sign: str) -> list[Block]:
    """Each present set's value column and, where a row has both it and the reference, the column
    against the reference ('B/A', 'B - A')."""
    out = []
    for i in present:
        head, cells = [sides[i].id], [[value(r, i)] for r in rows]
        if i != ref and any(values(r)[i] is not None and values(r)[ref] is not None for r in rows):
            head.append(f"{sides[i].id}{sign}{sides[ref].id}")
            cells = [c + [against(r, i)] for c, r in zip(cells, rows)]
        out.append(Block(head, cells))
    return out


# --- the cases -------------------------------------------------------------------------------------


def median(rec: dict[str, Any] | None) -> Interval | None:
    return None if rec is None else Interval.of(rec)


def ratio_cell(m: Match, i: int, ref: int, units: list[Units]) -> str:
    """Set i over the reference with its interval; UNITS_DIFFER across units; empty when either lacks it."""
    if m.sides[i] is None or m.sides[ref] is None:
        return ""
    if not m.units_agree(i, ref, units):
        return UNITS_DIFFER
    return cell(m.ratio_to(i, ref), 3, null=1.0)


def case_table(bench: str, rows: list[Match], sides: list[Side], ref: int) -> list[str]:
    units = [s.units for s in sides]
    present = having(rows, case_values, len(sides))
    common = params_common(rows) if len(rows) > 1 else {}
    head = (f"{bench}: {len(rows)} case{'s' if len(rows) != 1 else ''} ({_counts(rows, case_values, sides, present)})"
            + (f", each with {format_params(common)}" if common else "")
            + f"; {units_text(case_units(rows, sides, present), sides)}")
    lead_rows = [[m.key[1], params_rest(m, common)] for m in rows]
    blocks = _blocks(present, ref, sides, rows, case_values, lambda m, i: cell(median(m.sides[i])) or ABSENT,
                     lambda m, i: ratio_cell(m, i, ref, units), "/")
    return ["", head] + column_groups(["case", "params"], lead_rows, blocks)


# --- the derived values ----------------------------------------------------------------------------


def minus_cell(m: DerivedMatch, i: int, ref: int) -> str:
    if m.values[i] is None or m.values[ref] is None:
        return ""
    if m.apart(i, ref):
        return APART
    if not m.units_agree(i, ref):
        return UNITS_DIFFER
    return cell(m.minus(i, ref), digits(m.units[i], m.values))


def value_cell(m: DerivedMatch, i: int) -> str:
    v = m.values[i]
    return ABSENT if v is None else cell(v, digits(m.units[i], m.values), m.null) or ABSENT


def derived_table(group: tuple[str, str], rows: list[DerivedMatch], sides: list[Side], ref: int) -> list[str]:
    present = having(rows, derived_values, len(sides))
    counts, units = _counts(rows, derived_values, sides, present), units_text(derived_units(rows, present), sides)
    out = [""]
    if group[0] == SWEEP:
        out.append(f"{group_title(group, rows)}, {units}: {len(rows)} values ({counts})")
        tables = {i: {m.tables[i] for m in rows if m.tables[i]} for i in present}
        if len(sweep_tables(rows)) > 1:
            out.append("  " + "; ".join(f"{sides[i].id} from {', '.join(sorted(t))}" for i, t in tables.items())
                       + f": values of two tables (a model's and a measurement's) are never subtracted ({APART})")
        lead, lead_rows = ["paging", SIZE_LABEL], [[m.sweep.mode, size_text(m.sweep.size)] for m in rows
                                                   if m.sweep is not None]
    else:
        name = group[0]
        prefix = common_prefix([m.key for m in rows])
        words = prefix.split(" ") if prefix else []
        named = " ".join(words[1:] if words[:1] == [name] else words)
        out.append(f"{name}{' ' + named if named else ''}, {units}: {len(rows)} quantities ({counts})")
        lead, lead_rows = ["quantity"], [[m.key[len(prefix):].strip()] for m in rows]
    blocks = _blocks(present, ref, sides, rows, derived_values, value_cell, lambda m, i: minus_cell(m, i, ref), " - ")
    return out + column_groups(lead, lead_rows, blocks)


def _only(groups: dict[Any, list[Any]], values: Callable[[Any], list[Any]], sides: list[Side], what: str,
          name: Callable[[Any], str]) -> list[str]:
    """The tables a single set has, named, one a line: 'only in B (its own report has them):', '  peers: 14 cases'."""
    by = group_by(list(groups), lambda k: tuple(having(groups[k], values, len(sides))))
    out = []
    for ids, keys in by.items():
        out += ["", f"only in {', '.join(sides[i].id for i in ids)} (its own report has them):"]
        out += [f"  {name(k)}: {len(groups[k])} {what}" for k in keys]
    return out


def render_derived(derived: list[DerivedMatch], sides: list[Side], ref: int) -> list[str]:
    if not derived:
        return []
    r = sides[ref].id
    diffs = [m.minus(i, ref) for m in derived for i in range(len(sides)) if i != ref]
    cov = coverage_range(diffs)
    groups = derived_groups(derived, sides)
    shared, single = in_some(groups, derived_values, len(sides))
    out = ["", f"derived quantities: {len(derived)} values in {len(groups)} tables, {len(shared)} of them of two "
           f"sets or more (below); value (lo..hi): each set's interval; X - {r}: Hodges-Lehmann / Mann-Whitney "
           f"of the two runs' per-round values{f' ({cov}, unpaired: two runs never pair)' if cov else ''}, "
           "min..max arithmetic without them; ~0: they do not differ beyond it"]
    for group, rows in shared.items():
        out += derived_table(group, rows, sides, ref)
    if single:
        out += _only(single, derived_values, sides, "values", lambda k: group_title(k, single[k]))
    return out


def render(sides: list[Side], matches: list[Match], derived: list[DerivedMatch], ref: int,
           t: clocks.Timing | None = None) -> list[str]:
    """The screen: the key (each set's machine and clock, and the unit its TSC-timed figures are taken
    in: t, clocks.py), the case tables, then the derived quantities' tables; every line at most WIDTH
    columns."""
    units = [s.units for s in sides]
    r = sides[ref].id
    counted = [sum(rec is not None for rec in m.sides) for m in matches]
    ratios = [m.ratio_to(i, ref) for m in matches for i in range(len(sides))
              if i != ref and m.sides[i] is not None and m.units_agree(i, ref, units)]
    cov, med_cov = coverage_range(ratios), coverage_range(median(rec) or Interval.none()
                                                          for m in matches for rec in m.sides)
    out = [f"compare: {len(sides)} result sets; {r} is the reference (--ref picks another)"]
    out += key_lines([s.rs for s in sides], [s.id for s in sides], t, head="", indent=1)
    out += [f"{len(matches)} cases: {sum(c == len(sides) for c in counted)} in every set, "
            f"{sum(1 < c < len(sides) for c in counted)} in some, {sum(c == 1 for c in counted)} in one; "
            f"each set's median (lo..hi): its interval{f' ({med_cov})' if med_cov else ''}; X/{r}: the ratio of "
            f"{ratio_source(ratios)} with its interval{f' ({cov})' if cov else ''}, "
            f"~1: they do not differ beyond it; {ABSENT}: the set lacks the case", LEGEND]
    out += one_run_lines([s.rs for s in sides], [s.id for s in sides])
    if any(not m.units_agree(i, ref, units) for m in matches for i in range(len(sides))
           if m.sides[i] is not None and m.sides[ref] is not None):
        out.append(f"  the sets count in different units: a case timed by the TSC gets no ratio to {r} across "
                   f"them ({UNITS_DIFFER})")
    shared, single = in_some(case_groups(matches), case_values, len(sides))
    for bench, rows in shared.items():
        out += case_table(bench, rows, sides, ref)
    if single:
        out += _only(single, case_values, sides, "cases", str)
    out += render_derived(derived, sides, ref)
    return fit(out, WIDTH)


# --- the files -------------------------------------------------------------------------------------


def _case_unit_name(rec: dict[str, Any], units: Units) -> str:
    """compare.csv's unit: a TSC tick named as its set's (with '(host time)' where it is)."""
    unit = str(rec.get("unit", ""))
    return units.name if unit == CYCLES else unit


def write_csv(matches: list[Match], sides: list[Side], ref: int, path: Path) -> Path:
    """compare.csv, long: one row per case and set that has it (docs/REPORT.md); compared in time
    (clocks.py), each row's ticks follow in columns of their own."""
    units = [s.units for s in sides]
    timed = any(ticks_of(rec) for m in matches for rec in m.sides)
    rows = []
    for m in matches:
        for i, rec in enumerate(m.sides):
            if rec is None:
                continue
            v = Interval.of(rec)
            agree = m.sides[ref] is None or m.units_agree(i, ref, units)
            band = m.ratio_to(i, ref) if i != ref and agree else Interval.none()
            word = "" if i == ref or m.sides[ref] is None else verdict(band, 1.0) if agree else UNITS_DIFFER
            params = format_params(rec.get("params")) + (f" #{m.key[3] + 1}" if m.key[3] else "")
            rows.append([m.key[0], m.key[1], params, sides[i].id, sides[i].short, _case_unit_name(rec, units[i]),
                         stat_text(rec, "n"), stat_text(rec, "med"), exact(v.lo), exact(v.hi), stat_text(rec, "min"),
                         stat_text(rec, "max"), sides[ref].id, exact(band.mid), exact(band.lo), exact(band.hi), word]
                        + ([stat_text(ticks_of(rec), f) for f in TICK_FIELDS] if timed else []))
    return text.write_csv(path, CSV_HEADER + ([f"ticks_{f}" for f in TICK_FIELDS] if timed else []), rows)


def write_derived_csv(derived: list[DerivedMatch], sides: list[Side], ref: int, path: Path) -> Path:
    """compare-derived.csv, long: one row per derived value and set that has it (docs/REPORT.md)."""
    rows = []
    for m in derived:
        for i, v in enumerate(m.values):
            if v is None:
                continue
            d = m.minus(i, ref) if i != ref else Interval.none()
            word = "" if i == ref or m.values[ref] is None else change_word(d, m.units_agree(i, ref))
            rows.append([m.table, m.key, sides[i].id, sides[i].short, m.units[i], exact(v.mid), exact(v.lo),
                         exact(v.hi), verdict(v, m.null), sides[ref].id, exact(d.mid), exact(d.lo), exact(d.hi), word])
    return text.write_csv(path, DERIVED_HEADER, rows)


def file_name(*words: str) -> str:
    """A figure's file name from its table and quantity: 'compare-workset-fill-stos-switch-pushad-conc_rel.png'."""
    return "compare-" + re.sub(r"[^A-Za-z0-9_.]+", "-", "-".join(words)).strip("-") + ".png"
