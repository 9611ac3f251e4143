"""Report sections for the ctxsw and workset benchmarks, and derived.csv."""

from __future__ import annotations

import math
from pathlib import Path

from . import text
from . import paper
from .derive import OFF, QUANTITIES, Row, Series, collect_ctxsw, derive, vm_label
from .results import ResultSet
from .text import exact, number, table

DERIVED_CSV = "derived.csv"
DERIVED_HEADER = ["figure", "quantity", "unit", "series", "paging", "size", "value", "min", "max"]


def _pct(v: float) -> str:
    return number(v, 1)


def section_ctxsw(rs: ResultSet) -> list[str]:
    points = collect_ctxsw(rs.records)
    if not points:
        return []
    rows = [[p.case, str(p.n), p.mode, number(p.value.mid), number(p.value.lo), number(p.value.hi)]
            for p in points]
    return ["ctxsw: cycles per switch (loop cost subtracted)"] + table(
        ["variant", "fibers", "paging", "med", "min", "max"], rows, numeric={1, 3, 4, 5})


def _lookup(rows: list[Row]) -> dict[tuple[str, str, int], float]:
    return {(r.quantity, r.paging, r.size): r.value.mid for r in rows}


def _concurrency_table(s: Series, mode: str, values: dict[tuple[str, str, int], float]) -> list[str]:
    body = []
    for size in s.sizes(mode):
        single, multi = s.get(mode, size, "single"), s.get(mode, size, "multi")
        body.append([paper.size_text(size), str(s.reps.get(size, "")),
                     number(single.mid) if single else "", number(multi.mid) if multi else "",
                     number(values.get(("conc_abs", mode, size), math.nan)),
                     number(values.get(("conc_per_quantum", mode, size), math.nan), 1),
                     _pct(values.get(("conc_rel", mode, size), math.nan))])
    head = (f"workset {s.name}, paging {mode}: concurrency overhead (Figures 3, 4), cycles per series "
            f"(a series: 2 reps refills, 2 reps quanta in multi)")
    return [head] + table(["size", "reps", "single", "multi", "multi-single", "per quantum", "rel %"], body,
                          numeric={1, 2, 3, 4, 5, 6})


def _vm_table(s: Series, mode: str, values: dict[tuple[str, str, int], float]) -> list[str]:
    label = vm_label(mode)
    body = []
    for size in s.sizes(mode):
        def v(q: str, digits: int = 0) -> str:
            return number(values.get((q, label, size), math.nan), digits)
        body.append([paper.size_text(size), str(s.reps.get(size, "")), v("vm_abs_single"), v("vm_rel_single", 1),
                     v("vm_abs_multi"), v("vm_rel_multi", 1), v("vm_on_conc", 1), v("conc_on_vm", 1)])
    head = (f"workset {s.name}, paging {mode} vs {OFF}: virtual memory (Figures 5-8), cycles per series; "
            f"fig 5 = VM->conc, fig 8 = conc->VM")
    return [head] + table(["size", "reps", "VM single", "%", "VM multi", "%", "VM->conc %", "conc->VM %"], body,
                          numeric={1, 2, 3, 4, 5, 6, 7})


def section_workset(rs: ResultSet) -> list[str]:
    series, rows = derive(rs.records)
    if not series:
        return []
    values_by = {s.name: _lookup([r for r in rows if r.series == s.name]) for s in series}
    out: list[str] = []
    for s in series:
        values = values_by[s.name]
        for mode in s.modes():
            out += ([""] if out else []) + _concurrency_table(s, mode, values)
        for mode in s.modes():
            if mode != OFF and OFF in s.points:
                out += [""] + _vm_table(s, mode, values)
    out += [""] + paper.comparison(rows, rs.first("cpu"))
    return out


def section_platform(rs: ResultSet) -> list[str]:
    if not any(r.get("bench") in ("workset", "ctxsw") for r in rs.of_type("result")):
        return []
    note = paper.emulated(rs.records)
    return [f"note: {note}"] if note else []


def write_derived(rows: list[Row], path: Path) -> Path:
    """derived.csv: one row per series x paging x size x quantity (docs/REPORT.md)."""
    return text.write_csv(path, DERIVED_HEADER,
                          ([r.figure, r.quantity, r.unit, r.series, r.paging, r.size,
                            exact(r.value.mid), exact(r.value.lo), exact(r.value.hi)] for r in rows))


def quantity_help() -> str:
    return "\n".join(f"  fig {q.figure}  {q.key:25} {q.unit:14} {q.title}" for q in QUANTITIES)
