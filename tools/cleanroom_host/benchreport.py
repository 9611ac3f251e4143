"""The report of the ctxsw and workset benchmarks (Klimiankou 2018): summary lines, tables,
derived.csv and Figures 3-8 (plots.py). A module of the report registry (report.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import model, paper, text
from .context import Derived, Run, Sweep, csv_and_plots
from .derive import (EVENT_SHORT, MISS_EVENTS, QUANTITIES, RR, SHAPES, Row, Series, SwitchCost, collect_ctxsw,
                     conc_counter, derive, effect_name, pick, switch_costs, vm_counter, vm_label, vm_pairs)
from .interval import Interval, cell, legend, short, verdict
from .kinds import Units
from .plots import write_all as write_plots
from .text import exact, table

BENCHES = ("ctxsw", "workset")
WORKSET = "workset"
DERIVED_CSV = "derived.csv"
MODEL_DERIVED_CSV = "derived-model.csv"  # the same quantities from modelled cycles (--figures model)
DERIVED_HEADER = ["figure", "quantity", "unit", "series", "paging", "size", "value", "min", "max", "verdict"]
SUMMARY_SERIES = 2  # workset series the summary answers for; the rest are in report.txt


# --- ctxsw -----------------------------------------------------------------

SHAPE_TEXT = {"": "-", RR: "run queue"}  # how the table names a shape (the others as they are)


def section_ctxsw(run: Run) -> list[str]:
    costs = switch_costs(collect_ctxsw(run.records))
    if not costs:
        return []
    rows = [[c.variant, SHAPE_TEXT.get(c.shape, c.shape), str(c.n), c.mode, cell(c.total), cell(c.loop), cell(c.alone)]
            for c in costs]
    return ([f"ctxsw: {run.units.name} per switch, median (lo..hi): total = the whole run / its switches; loop = "
             "the same loop with an empty call for the switch, measured in turn with it; alone = total - loop, "
             "round by round"]
            + table(["variant", "shape", "fibers", "paging", "total", "loop", "alone"], rows, numeric={2, 4, 5, 6}))


def _both_shapes(costs: list[SwitchCost], value: Callable[[SwitchCost], Interval]) -> str:
    """'pushad 17 / 17, callee 23 / 23, ...': each routine's symmetric / asymmetric value."""
    by = {(c.variant, c.shape): c for c in costs}
    parts = []
    for variant in dict.fromkeys(c.variant for c in costs if c.shape in SHAPES):
        shown = [short(value(by[(variant, shape)])) if (variant, shape) in by else "-" for shape in SHAPES]
        parts.append(f"{variant} {' / '.join(shown)}")
    return ", ".join(parts)


def _round_robin(rr: list[SwitchCost], value: Callable[[SwitchCost], Interval]) -> str:
    rr = sorted(rr, key=lambda c: c.n)
    ends = [rr[0], rr[-1]] if len(rr) > 1 else rr
    return "round robin " + ", ".join(f"n={c.n}: {short(value(c))}" for c in ends)


def _summary_mode(run: Run, mine: list[SwitchCost], mode: str) -> list[str]:
    """One paging mode's switch costs: the whole run per switch and the switch alone."""
    pairs = [c for c in mine if c.variant != "rr"]
    rr = [c for c in mine if c.variant == "rr"]
    head = f"switch cost, {run.units.short} per switch, {paper.paging_text(mode)}"
    if any(c.shape in SHAPES for c in pairs):
        text_ = f"{head}, symmetric / asymmetric: {_both_shapes(pairs, lambda c: c.total)}"
        alone = f"  the switch alone (total - its loop): {_both_shapes(pairs, lambda c: c.alone)}"
        if rr:
            text_ += f"; {_round_robin(rr, lambda c: c.total)}"
            alone += f"; {_round_robin(rr, lambda c: c.alone)}"
        return [text_, alone]
    # a log from before the shapes: one value per routine, its loop already subtracted
    text_ = ", ".join(f"{c.variant} {short(c.alone)}" for c in pairs)
    if rr:
        text_ += f"; {_round_robin(rr, lambda c: c.alone)}"
    return [f"{head} (loop cost subtracted): {text_}"]


def summary_ctxsw(run: Run) -> list[str]:
    """The first two paging modes' switch costs (modes that measured the same, once)."""
    costs = switch_costs(collect_ctxsw(run.records))
    modes = list(dict.fromkeys(c.mode for c in costs))[:2]
    out = paper.same_in_modes({m: _summary_mode(run, [c for c in costs if c.mode == m], m) for m in modes})
    if out:
        out.append(paper.quoted("paper", paper.PAPER_SWITCH))
    return out


# --- workset tables ----------------------------------------------------------

def _lookup(rows: list[Row]) -> dict[tuple[str, str, int], Row]:
    return {(r.quantity, r.paging, r.size): r for r in rows}


def _get(values: dict[tuple[str, str, int], Row], q: str, paging: str, size: int, digits: int = 0) -> str:
    row = values.get((q, paging, size))
    return cell(row.value, digits) if row else ""


def _got_note(s: Series, mode: str) -> list[str]:
    """Hosted: the sizes where the host did not give the pages that were asked for."""
    got = s.got.get(mode, {})
    if not got:
        return []
    items = [f"{paper.size_text(size)} {'/'.join(sorted(set(cases.values())))}" for size, cases in sorted(got.items())]
    return [f"  pages asked {mode.split('/')[-1]}, the host gave otherwise at: " + ", ".join(items)]


def _concurrency_table(s: Series, mode: str, values: dict[tuple[str, str, int], Row], units: Units) -> list[str]:
    events = [e for e in s.events() if any(k[0] == conc_counter(e) and k[1] == mode for k in values)]
    body = []
    for size in s.sizes(mode):
        single, multi = s.get(mode, size, "single"), s.get(mode, size, "multi")
        body.append([paper.size_text(size), str(s.reps.get(size, "")),
                     text.number(single.mid) if single else "", text.number(multi.mid) if multi else "",
                     _get(values, "conc_abs", mode, size), _get(values, "conc_per_quantum", mode, size, 1),
                     _get(values, "conc_rel", mode, size, 1)]
                    + [_get(values, conc_counter(e), mode, size, 1) for e in events])
    head = (f"workset {s.name}, {paper.paging_text(mode)}: concurrency overhead (Figures 3, 4), {units.name} per "
            f"series (a series: 2 reps refills, 2 reps quanta in multi); single and multi are medians")
    columns = (["size", "reps", "single", "multi", "multi-single", "per quantum", "rel %"]
               + [f"{EVENT_SHORT[e]}/quantum" for e in events])
    return [head] + table(columns, body, numeric=set(range(1, len(columns)))) + _got_note(s, mode)


def _vm_table(s: Series, mode: str, base: str, values: dict[tuple[str, str, int], Row], units: Units) -> list[str]:
    label = vm_label(mode, base)
    events = [e for e in MISS_EVENTS if any(k[0] == vm_counter(e, "single") and k[1] == label for k in values)]
    body = []
    for size in s.sizes(mode):
        def v(q: str, digits: int = 0) -> str:
            return _get(values, q, label, size, digits)
        body.append([paper.size_text(size), str(s.reps.get(size, "")), v("vm_abs_single"), v("vm_rel_single", 1),
                     v("vm_abs_multi"), v("vm_rel_multi", 1), v("vm_on_conc", 1), v("conc_on_vm", 1)]
                    + [v(vm_counter(e, case), 2) for e in events for case in ("single", "multi")])
    on, off = paper.paging_text(mode), paper.paging_text(base)
    head = (f"workset {s.name}, {on} vs {off}: {effect_name(base)} (Figures 5-8), {units.name} per series; "
            f"fig 5 = VM->conc, fig 8 = conc->VM")
    columns = (["size", "reps", "VM single", "%", "VM multi", "%", "VM->conc %", "conc->VM %"]
               + [f"{EVENT_SHORT[e]}/refill {case}" for e in events for case in ("single", "multi")])
    return [head] + table(columns, body, numeric=set(range(1, len(columns))))


def model_lines(run: Run) -> list[str]:
    """The header of workset figures drawn from the model: modelled, on which preset, not measured."""
    if not run.is_model:
        return []
    return [model.header_line(run.model_info),
            "  (the TSC's own figures, instructions under qemu-model: `report --figures tsc`)"]


def section_workset(run: Run) -> list[str]:
    run = run.modelled(WORKSET)
    series, rows = derive(run.records)
    if not series:
        return []
    out: list[str] = model_lines(run)
    for s in series:
        values = _lookup([r for r in rows if r.series == s.name])
        for mode in s.modes():
            out += ([""] if out else []) + _concurrency_table(s, mode, values, run.units)
        for mode, base in vm_pairs(s.modes()):
            out += [""] + _vm_table(s, mode, base, values, run.units)
    out += [legend(r.value for r in rows)]
    out += [""] + paper.comparison(rows, run.machine, run.units)
    return out


def section_platform(run: Run) -> list[str]:
    if not run.results(*BENCHES):
        return []
    note = paper.emulated(run.records)
    if note and run.modelled(WORKSET).is_model:
        note = ("the workset's figures are the cache/TLB model's (above); the ctxsw figures are the emulator's "
                "TSC, which counts instructions and models no cache")
    return [f"note: {note}"] if note else []


def sections(run: Run) -> list[str]:
    out: list[str] = []
    for block in (section_ctxsw(run), section_workset(run), section_platform(run)):
        if block:
            out += ([""] if out else []) + block
    return out


# --- summary -----------------------------------------------------------------

def _extremes(rows: list[Row], want: str, units: Units) -> str:
    """The extreme finding of some rows and how many sizes are resolved; 'at every size' when every
    point is the same exact value; 'none resolved' or 'none beyond chance' otherwise."""
    points = [r for r in rows if r.size > 0]
    counts = paper.tally(points)
    found = paper.findings(points)
    if not found:
        return f"none {'beyond chance' if counts.by_chance else 'resolved'} ({counts.brief()})"
    if len({r.value.mid for r in found}) == 1 and counts.findings == counts.total:
        return f"{paper.value_text(found[0], units, False)} at every size"
    top = paper.best(found, want)
    assert top is not None
    return f"{paper.value_text(top, units, False)} at {paper.bytes_text(top.size)} ({counts.brief()})"


def _lowest(text_: str) -> str:
    return text_ if text_.startswith("none") or "every size" in text_ else f"lowest {text_}"


def _no_vm(modes: list[str]) -> str:
    """Why a run has no Figures 5-8, and how to get them."""
    if all(m.startswith("host") for m in modes):
        return ("page-size effect (the hosted analogue of Figures 5-8): not measured; a process cannot switch "
                "paging off, pages=both compares 4 KiB with 2 MiB pages")
    return "virtual memory (Figures 5-8): not measured; paging=both compares paging on with off"


def summary_workset(run: Run) -> list[str]:
    run = run.modelled(WORKSET)
    series, rows = derive(run.records)
    out: list[str] = model_lines(run)[:1] if series else []
    units, machine = run.units, run.machine
    for s in series[:SUMMARY_SERIES]:
        mine = [r for r in rows if r.series == s.name]
        name = f" ({s.name})" if len(series) > 1 and s.name else ""
        lead = f"concurrency overhead{name}, peak"
        peaks = paper.same_in_modes({p.paging: paper.peak_lines([r for r in mine if r.paging == p.paging], machine,
                                                                units, full=False, lead=lead)
                                     for p in paper.peaks(mine, machine)})
        if peaks:
            out += peaks + [paper.quoted("paper", "352 % at 512K per buffer, = its L2 size; ~1.125 M CPU ticks per "
                                                  "quantum")]
        if not vm_pairs(s.modes()) and s is series[0]:
            out.append(_no_vm(s.modes()))
        for mode, base in vm_pairs(s.modes()):
            label = vm_label(mode, base)
            other = sorted({size for m in (mode, base) for size in s.got.get(m, {})})
            got = f" (the host gave other pages than asked at {len(other)} sizes)" if other else ""
            if machine.emulated:
                got += " (the emulator's own cost of paging: it models no TLB)"
            out.append(f"{effect_name(base)}{name}, {paper.paging_text(mode)} vs {paper.paging_text(base)}{got}:")
            single = _extremes(pick(mine, "vm_rel_single", paging=label), "min", units)
            multi = _extremes(pick(mine, "vm_rel_multi", paging=label), "min", units)
            out.append(f"  fig 7, single: {_lowest(single)}" + paper.quoted("paper", "-7.5 % at 3M"))
            out.append(f"  fig 7, multi: {_lowest(multi)}" + paper.quoted("paper", "-39 % at 16K"))
            conc = pick(mine, "vm_on_conc", paging=label)
            low, high = _extremes(conc, "min", units), _extremes(conc, "max", units)
            both = low if low == high or low.startswith("none") else f"lowest {low}; highest {high}"
            out.append(f"  fig 5, on the concurrency overhead: {both}"
                       + paper.quoted("paper", "-90 % at 16K, +44 % at 1.5K"))
    if len(series) > SUMMARY_SERIES:
        out.append(f"  ({len(series) - SUMMARY_SERIES} more workset series in report.txt)")
    return out


def summary(run: Run) -> list[str]:
    return summary_ctxsw(run) + summary_workset(run)


# --- files -------------------------------------------------------------------

def derived(run: Run) -> list[Derived]:
    work = run.modelled(WORKSET)
    _series, rows = derive(work.records)
    # modelled values never pair with measured ones in `compare`: their own table
    group = "workset-model" if work.is_model else "workset"
    out = [Derived(group, f"{r.series} {r.paging} size={r.size} {r.quantity}".strip(), r.unit(work.units),
                   r.value, sweep=Sweep(r.series, r.quantity, r.paging, r.size)) for r in rows]
    unit = run.units.per("switch")
    for c in switch_costs(collect_ctxsw(run.records)):
        where = f"{c.variant} {c.shape} n={c.n} {c.mode}" if c.shape else f"{c.variant} n={c.n} {c.mode}"
        out.append(Derived("ctxsw", f"{where} alone", unit, c.alone))
    return out


def write_derived(rows: list[Row], path: Path, units: Units | None = None) -> Path:
    """derived.csv: one row per series x paging x size x quantity (docs/REPORT.md)."""
    return text.write_csv(path, DERIVED_HEADER,
                          ([r.figure, r.quantity, r.unit(units), r.series, r.paging, r.size,
                            exact(r.value.mid), exact(r.value.lo), exact(r.value.hi), verdict(r.value)]
                           for r in rows))


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    def table() -> Path | None:
        work = run.modelled(WORKSET)
        _series, rows = derive(work.records)
        name = MODEL_DERIVED_CSV if work.is_model else DERIVED_CSV
        return write_derived(rows, out / name, work.units) if rows else None

    return csv_and_plots(run, out, plots, table, BENCHES, write_plots)


def quantity_help() -> str:
    return "\n".join(f"  fig {q.figure}  {q.key:34} {q.unit_text(None):18} {q.title}" for q in QUANTITIES)

