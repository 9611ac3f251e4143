"""`cleanroom check BASELINE RUN`: a regression gate over two result sets, with an exit status of its own.

Where the TSC counts instructions (qemu-icount, qemu-model, Bochs) a boot is a function of its kernel, its
command line and its machine: two boots of one build give the same bytes. There the gate has no noise to
allow for: any result whose figures moved, any case one set has and the other lacks, and any derived quantity
(the families' `derived` hook: switch costs, overheads, ratios) that moved fails, each named with its change
in its own unit (instructions for a count).

Where the clock is real, two runs differ by what the machine did between them: the gate judges only a
paired A/B (`cleanroom ab`'s a/ and b/, their processes or boots run in turn), and fails where a case's
B/A is resolved (its Wilcoxon signed-rank interval over the pairs excludes 1 and is narrow enough: the
report's verdict) and its estimate lies above 1 + threshold. A case resolved faster beyond the threshold is
named and does not fail. `moves` is also what `history` asks of two neighbouring commits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import replicas, results
from ..records.kinds import Units
from ..records.protocol import Record
from ..records.results import ResultSet
from ..records.text import WIDTH, exact, fit, format_params
from ..stats.interval import RESOLVED, Interval, band_text, cell, coverage_range, verdict
from .compare import CODE_LABEL, OUTCOME_PARAMS, DerivedMatch, Match, case_unit, digits, match_derived, match_up, side_units

# The gate's own exit status (records/results.py's EXIT_HELP lists it with the others): 0 nothing moved
# (exact) or nothing resolved slower beyond the threshold (real clock); 1-4 a set's own status (a run that
# did not end done ok, or a damaged one: nothing to judge); 5 bad arguments or sets that cannot be judged.
EXIT_MOVED = 6
# --threshold's default, as a fraction. On a 2-vCPU AMD EPYC guest (2026-12-07), `ab` of hosted bench=ctxsw at its
# 20 pairs, five times each idle, with one and with two `yes` on the vCPUs: the A/As resolved no case at all (0 of
# 330), every A/B with delay=2 (empty calls in each switch of the round robins) failed, naming 1 to 5 of the 5
# round robins at B/A 1.07-1.19 and nothing else (docs/REPORT.md, `check BASELINE RUN`)
DEFAULT_THRESHOLD = 0.05
EXIT_HELP = f"""exit status:
  0  nothing moved (exact clock); no case resolved slower beyond the threshold (real clock)
  1  a set's done status is fail      2  config      3  fault  (nothing judged)
  4  a set is incomplete, corrupt or missing records (nothing judged)
  5  bad arguments, a set that cannot be read, or two sets the gate cannot judge (a real clock
     without a paired A/B, two kinds of clock)
  {EXIT_MOVED}  a count moved (exact clock); a case resolved slower beyond the threshold, or one only
     one set has (real clock)"""
STATS = ("min", "med", "max", "mean")  # a result's figures the exact gate compares (n: the runs asked)


class CheckError(Exception):
    """Two sets the gate cannot judge; the message says why and what would do."""


@dataclass(frozen=True)
class Move:
    """One thing that moved between two sets: a case or a derived quantity, its figures before and after."""

    kind: str    # "case" or "derived"
    what: str    # its name: bench, case and params, or table and key
    before: str  # its figures in A ("absent" where A lacks it)
    after: str
    change: str  # B - A in its unit, "new" or "gone"
    delta: float = math.nan  # B - A of the median (value), NaN where a side lacks it

    def line(self) -> str:
        return f"  {self.what}: {self.before} -> {self.after} ({self.change})"


def case_name(rec: Record, occurrence: int = 0) -> str:
    """A result as a person names it: bench, case, the params that say what it measured."""
    params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
    own = {k: v for k, v in params.items() if k not in OUTCOME_PARAMS}
    name = f"{rec.get('bench')} {rec.get('case')}" + (f" {format_params(own)}" if own else "")
    return name + (f" #{occurrence + 1}" if occurrence else "")


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _same(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))


def _signed(v: float, unit: str, places: int = 0) -> str:
    text = f"{v:+.{places}f}" if places else f"{v:+.0f}" if v == int(v) else f"{v:+.4g}"
    return f"{text} {unit}".strip()


def _stats_text(rec: Record, moved: list[str]) -> str:
    """A result's median, and each other figure that moved and differs from it (under an exact clock the
    samples are mostly one count: then the median alone)."""
    med = _num(rec.get("med"))
    return " ".join([exact(med)] + [f"{f} {exact(_num(rec.get(f)))}" for f in moved
                                    if f != "med" and not _same(_num(rec.get(f)), med)])


def case_move(m: Match, units: list[Units]) -> Move | None:
    """What moved of one case between two sets (sides 0 and 1), or None: its figures, the params that say what
    happened in its run (lost, retried, ...), its presence."""
    a, b = m.sides
    rec = a if a is not None else b
    assert rec is not None
    name = case_name(rec, m.key[3])
    if a is None or b is None:
        unit = case_unit(rec, units[0] if a is not None else units[1])
        figures = f"{exact(_num(rec.get('med')))} {unit}"
        return Move("case", name, figures if a is not None else "absent", figures if b is not None else "absent",
                    "gone" if b is None else "new")
    moved = [f for f in STATS if not _same(_num(a.get(f)), _num(b.get(f)))]
    pa = a.get("params") if isinstance(a.get("params"), dict) else {}
    pb = b.get("params") if isinstance(b.get("params"), dict) else {}
    # what happened in the run, not the user's code's label (an A/B of two versions of it differs there by design)
    outcome = sorted(k for k in OUTCOME_PARAMS - {CODE_LABEL} if pa.get(k) != pb.get(k))
    if not moved and not outcome:
        return None
    unit = case_unit(a, units[0])
    delta = _num(b.get("med")) - _num(a.get("med"))
    before, after = _stats_text(a, moved), _stats_text(b, moved)
    if outcome:
        before += " " + " ".join(f"{k}={pa.get(k)}" for k in outcome)
        after += " " + " ".join(f"{k}={pb.get(k)}" for k in outcome)
    change = _signed(delta, unit) if delta else f"median unchanged, {', '.join(moved + outcome)} moved"
    return Move("case", name, before, after, change, delta)


def _value_text(v: Interval | None, places: int) -> str:
    if v is None:
        return "absent"
    return band_text(v, places) if v.known and v.width else f"{v.mid:.{places}f}"


def derived_move(d: DerivedMatch) -> Move | None:
    """What moved of one derived quantity between two sets, or None."""
    a, b = d.values
    name = f"{d.table}: {d.key}"
    unit = d.units[0] or d.units[1]
    places = digits(unit, d.values)
    if a is None or b is None:
        return Move("derived", name, _value_text(a, places), _value_text(b, places), "gone" if b is None else "new")
    if all(_same(x, y) for x, y in ((a.mid, b.mid), (a.lo, b.lo), (a.hi, b.hi))):
        return None
    delta = b.mid - a.mid
    return Move("derived", name, _value_text(a, places), _value_text(b, places),
                _signed(delta, unit, places if delta != int(delta) else 0), delta)


def moves(a: ResultSet, b: ResultSet) -> list[Move]:
    """Everything that moved from a to b, the cases first (a's order, then what b adds), then the derived
    quantities: what the exact gate fails on."""
    units = side_units(a, b)
    found = [case_move(m, units) for m in match_up([a, b])]
    found += [derived_move(d) for d in match_derived([a, b])]
    return [m for m in found if m is not None]


def set_problem(rs: ResultSet, name: str) -> tuple[int, str] | None:
    """A set that did not end done ok, whole: (its exit status, why), else None: nothing of it is judged."""
    status = results.doc_exit_status(rs.doc)
    if status == results.EXIT_OK:
        return None
    return status, (f"{name} ({rs.path}) did not end whole with done ok (status {rs.doc.get('status')!r}, "
                    f"complete {rs.doc.get('complete')}): its exit status {status} is check's")


@dataclass
class Verdict:
    """The gate's answer: its lines (at most text.WIDTH columns) and its exit status."""

    lines: list[str]
    status: int


def _cmdlines(sets: list[ResultSet]) -> list[str]:
    """Each set's command line after the kernel's path (hosted: the program's)."""
    out = []
    for rs in sets:
        hello = rs.first("hello") or {}
        line = str(hello.get("cmdline", ""))
        out.append(line.split(" ", 1)[1] if " " in line else "")
    return out


def _exact(a: ResultSet, b: ResultSet, unit: str) -> Verdict:
    found = moves(a, b)
    cases = sum(1 for m in match_up([a, b]) if None not in m.sides)
    derived = sum(1 for d in match_derived([a, b]) if None not in d.values)
    head = (f"check: exact clock ({unit}: every boot of a build gives the same bytes): {cases} cases and {derived} "
            f"derived quantities in both; any that moved fails")
    lines = [head]
    if not found:
        return Verdict(lines + [f"check: ok: nothing moved ({cases} cases, {derived} derived quantities identical)"],
                       results.EXIT_OK)
    for kind, title in (("case", "cases"), ("derived", "derived quantities")):
        mine = [m for m in found if m.kind == kind]
        if mine:
            lines += [f"{title} that moved ({len(mine)}), A -> B:"] + [m.line() for m in mine]
    n_case = sum(m.kind == "case" for m in found)
    lines.append(f"check: FAIL: {n_case} case{'s' if n_case != 1 else ''} and {len(found) - n_case} derived "
                 f"quantit{'ies' if len(found) - n_case != 1 else 'y'} moved")
    return Verdict(lines, EXIT_MOVED)


def _real(a: ResultSet, b: ResultSet, units: list[Units], threshold: float) -> Verdict:
    token = replicas.turns_token(a.doc)
    if token is None or token != replicas.turns_token(b.doc):
        raise CheckError("under a real clock check judges a paired A/B only: these two sets did not run in turn, and "
                         "two separate runs differ by what the machine did between them; `cleanroom ab` runs both "
                         "sides in turn and writes OUT/a and OUT/b (check OUT/a OUT/b, or check OUT)")
    for rs in (a, b):
        replicas.stamp_turns(rs.records, token)
    pairs, _level = replicas.count(a.records)
    both = [m for m in match_up([a, b]) if None not in m.sides]
    if any(not m.same_unit(units) for m in both):
        raise CheckError("the two sets count in different units (TSC ticks against instructions): no B/A is taken")
    bands = [(m, m.ratio_to(1, 0)) for m in both]
    limit = 1.0 + threshold
    slower = [(m, v) for m, v in bands if verdict(v, 1.0) == RESOLVED and v.mid > limit]
    faster = [(m, v) for m, v in bands if verdict(v, 1.0) == RESOLVED and v.mid < 1.0 / limit]
    within = sum(1 for _m, v in bands if verdict(v, 1.0) == RESOLVED) - len(slower) - len(faster)
    cov = coverage_range(v for _m, v in bands)
    lines = [f"check: real clock ({units[0].name}), a paired A/B of {pairs} pairs; B/A of each case by the "
             f"Wilcoxon signed-rank interval over the pairs{f' ({cov})' if cov else ''}; fails where B/A is resolved "
             f"above {limit:.3g} (--threshold {threshold * 100:g} %)"]
    gone = [m for m in match_up([a, b]) if None in m.sides]
    for title, picked in (("slower beyond the threshold", slower), ("faster beyond the threshold (not a failure)",
                                                                     faster)):
        if picked:
            lines.append(f"{title} ({len(picked)}):")
            lines += [f"  {case_name(m.sides[0] or {}, m.key[3])}: B/A {cell(v, 3, null=1.0)}" for m, v in picked]
    if gone:
        lines.append(f"cases only one side has ({len(gone)}):")
        lines += [f"  {case_name(m.sides[0] or m.sides[1] or {}, m.key[3])}: only in "
                  f"{'A' if m.sides[0] is not None else 'B'}" for m in gone]
    if slower or gone:
        lines.append(f"check: FAIL: {len(slower)} of {len(both)} cases slower beyond {threshold * 100:g} %"
                     + (f", {len(gone)} only in one set" if gone else ""))
        return Verdict(lines, EXIT_MOVED)
    lines.append(f"check: ok: none of {len(both)} cases resolved slower beyond {threshold * 100:g} % "
                 f"({within} resolved within it, {len(faster)} faster beyond it)")
    return Verdict(lines, results.EXIT_OK)


def sides_of(paths: list[Path]) -> list[Path]:
    """check's arguments as the two sets: BASELINE RUN, or one directory `cleanroom ab` wrote (its a/ and b/)."""
    if len(paths) == 1:
        ab = [paths[0] / side for side in ("a", "b")]
        if not all(p.is_dir() for p in ab):
            raise CheckError(f"{paths[0]}: one argument is an A/B's directory (`cleanroom ab --out`, holding a/ and "
                             "b/); else give BASELINE and RUN")
        return ab
    return paths


def check(paths: list[Path], threshold: float = DEFAULT_THRESHOLD) -> Verdict:
    """The gate over BASELINE and RUN (sides_of); CheckError for sets it cannot judge, OSError/ValueError for
    sets that cannot be read."""
    a, b = (results.load(p) for p in sides_of(paths))
    problems = [p for p in (set_problem(a, "BASELINE"), set_problem(b, "RUN")) if p is not None]
    if problems:
        return Verdict([f"check: {why}" for _status, why in problems], max(status for status, _why in problems))
    units = side_units(a, b)
    notes = []
    lines = _cmdlines([a, b])
    if lines[0] != lines[1]:
        notes.append(f"note: the command lines differ: A {lines[0]!r}, B {lines[1]!r}")
    if units[0].exact and units[1].exact:
        verdict_ = _exact(a, b, units[0].name)
    elif units[0].exact or units[1].exact:
        raise CheckError(f"one set counts instructions ({units[0].name if units[0].exact else units[1].name}), "
                         "the other time: the gate compares two runs of one kind of clock")
    else:
        verdict_ = _real(a, b, units, threshold)
    verdict_.lines = fit(verdict_.lines[:1] + notes + verdict_.lines[1:], WIDTH)
    return verdict_
