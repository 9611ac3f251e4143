"""The family of ctxsw and workset (Klimiankou 2018): summary lines, tables, derived.csv and Figures
3-8 with a ctxsw chart as PNG files. A family of families.FAMILIES.

matplotlib (Agg backend) is imported only when a figure is drawn, so the rest of the tool starts fast.
One function per figure; FIGURES lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, TYPE_CHECKING

from ..records import model, replicas, text
from ..records.kinds import Units
from ..records.text import exact, table
from ..stats import sequence
from ..stats.interval import FINDINGS, NO_SPREAD, NOISE, Interval, cell, legend, verdict
from . import decisions, paper
from .answers import Answer, Quote, Value, beside, listed
from .context import Derived, Run, Sweep, csv_and_plots
from .derive import (EVENT_SHORT, HOST_LARGE, MISS_EVENTS, OFF, QUANTITIES, RR, Row, SHAPES, Series, SwitchCost,
                     collect_ctxsw, conc_counter, derive, effect_name, pick, switch_costs, vm_counter, vm_label,
                     vm_pairs)
from .plotkit import DPI, new_axes, pyplot, save_figure, size_axis


BENCHES = ("ctxsw", "workset")
WORKSET = "workset"
DERIVED_CSV = "derived.csv"
MODEL_DERIVED_CSV = "derived-model.csv"  # the same quantities from modelled cycles (--figures model)
DERIVED_HEADER = ["figure", "quantity", "unit", "series", "paging", "size", "value", "min", "max", "verdict",
                  "decision", "decision_lo", "decision_hi"]
SUMMARY_SERIES = 2  # workset series the summary answers for; the rest are in report.txt


# --- ctxsw -----------------------------------------------------------------

SHAPE_TEXT = {"": "-", RR: "run queue"}  # how the table names a shape (the others as they are)
# The summary's switch alone where the whole run cost less than its loop (all of total - loop below 0)
BELOW_LOOP = "below its loop's noise"


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


def alone(label: str, v: Interval) -> Value:
    """A switch alone (total - its loop) for a sentence: a cost is never below 0, so one whose interval
    holds 0 is "~0" (short) and one whose whole interval is below 0 is BELOW_LOOP: the switch costs less
    than the two loops differ by. report.txt's table keeps the signed difference."""
    return Value(label, v, word=BELOW_LOOP if v.ok and v.mid < 0 and verdict(v) != NOISE else "")


ValueOf = Callable[[str, Interval], Value]


def _both_shapes(costs: list[SwitchCost], value: Callable[[SwitchCost], Interval],
                 of: ValueOf = Value) -> tuple[str, list[Value]]:
    """'pushad 17 / 17, callee 23 / 23, ...': each routine's symmetric / asymmetric value."""
    by = {(c.variant, c.shape): c for c in costs}
    parts, values = [], []
    for variant in dict.fromkeys(c.variant for c in costs if c.shape in SHAPES):
        shown = []
        for shape in SHAPES:
            if (variant, shape) in by:
                values.append(of(f"{variant}, {shape}", value(by[(variant, shape)])))
                shown.append(values[-1].text)
            else:
                shown.append("-")
        parts.append(f"{variant} {' / '.join(shown)}")
    return ", ".join(parts), values


def _round_robin(rr: list[SwitchCost], value: Callable[[SwitchCost], Interval],
                 of: ValueOf = Value) -> tuple[str, list[Value]]:
    rr = sorted(rr, key=lambda c: c.n)
    ends = [rr[0], rr[-1]] if len(rr) > 1 else rr
    values = [of(f"round robin n={c.n}", value(c)) for c in ends]
    return "round robin " + ", ".join(f"n={c.n}: {v.text}" for c, v in zip(ends, values)), values


def _summary_mode(run: Run, mine: list[SwitchCost], mode: str) -> list[Answer]:
    """One paging mode's switch costs: the whole run per switch and the switch alone."""
    pairs = [c for c in mine if c.variant != "rr"]
    rr = [c for c in mine if c.variant == "rr"]
    head = f"switch cost, {run.units.short} per switch, {paper.paging_text(mode)}"
    if any(c.shape in SHAPES for c in pairs):
        text_, values = _both_shapes(pairs, lambda c: c.total)
        alone_, alones = _both_shapes(pairs, lambda c: c.alone, alone)
        if rr:
            more, round_robin = _round_robin(rr, lambda c: c.total)
            text_, values = f"{text_}; {more}", values + round_robin
            more, round_robin = _round_robin(rr, lambda c: c.alone, alone)
            alone_, alones = f"{alone_}; {more}", alones + round_robin
        return [Answer(f"{head}, symmetric / asymmetric", text_, tuple(values)),
                Answer("the switch alone (total - its loop)", alone_, tuple(alones), depth=1)]
    # a log from before the shapes: one value per routine, its loop already subtracted
    values = [alone(c.variant, c.alone) for c in pairs]
    text_ = listed(values)
    if rr:
        more, round_robin = _round_robin(rr, lambda c: c.alone, alone)
        text_, values = f"{text_}; {more}", values + round_robin
    return [Answer(f"{head} (loop cost subtracted)", text_, tuple(values))]


def summary_ctxsw(run: Run) -> list[Answer]:
    """The first two paging modes' switch costs (modes that measured the same, once)."""
    costs = switch_costs(collect_ctxsw(run.records))
    modes = list(dict.fromkeys(c.mode for c in costs))[:2]
    out = paper.same_in_modes({m: _summary_mode(run, [c for c in costs if c.mode == m], m) for m in modes})
    return beside(out, Quote("paper", paper.PAPER_SWITCH)) if out else []


# --- workset tables ----------------------------------------------------------

def _lookup(rows: list[Row]) -> dict[tuple[str, str, int], Row]:
    return {(r.quantity, r.paging, r.size): r for r in rows}


# --- decisions (reports/decisions.py: runs=auto's sequential rule) ----------------------------------------

DECIDED = "sizes decided"  # the summary's line of the decisions' rule, above their counts
Marks = dict[tuple[str, str, int], str]  # (quantity, paging, size) -> its decision's kind


def _marks(found: list[decisions.Point]) -> Marks:
    return {(p.row.quantity, p.row.paging, p.row.size): p.decision.kind for p in found}


def decision_legend(margin: float) -> str:
    """What a decision column or count means: the rule, its margin and its coverage."""
    return (f"decision: effect (excludes 0), negligible (inside +-{margin:g} % of the baseline) or open, "
            f"{sequence.coverage_text()}; the first decision comes at the {sequence.first_decision()}th process")


def decision_counts(found: list[decisions.Point], unit: str = "process") -> dict[tuple[str, str], str]:
    """(quantity, paging) -> the summary's count of that series' decisions (decisions.Tally.text). Each
    point's sequence holds its coverage however often it was looked at; across a series' sizes nothing is
    corrected (docs/REPORT.md, Decisions, says how many effects chance may give)."""
    groups: dict[tuple[str, str], list[decisions.Point]] = {}
    for p in found:
        groups.setdefault((p.row.quantity, p.row.paging), []).append(p)
    return {key: decisions.tallies(points, unit)[0].text() for key, points in groups.items()}


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


def _decided(marks: Marks, q: str, paging: str) -> bool:
    return any(k[0] == q and k[1] == paging for k in marks)


def _concurrency_table(s: Series, mode: str, values: dict[tuple[str, str, int], Row], units: Units,
                       marks: Marks | None = None) -> list[str]:
    events = [e for e in s.events() if any(k[0] == conc_counter(e) and k[1] == mode for k in values)]
    marks = marks or {}
    decided = _decided(marks, "conc_rel", mode)
    body = []
    for size in s.sizes(mode):
        single, multi = s.get(mode, size, "single"), s.get(mode, size, "multi")
        body.append([paper.size_text(size), str(s.reps.get(size, "")),
                     text.number(single.mid) if single else "", text.number(multi.mid) if multi else "",
                     _get(values, "conc_abs", mode, size), _get(values, "conc_per_quantum", mode, size, 1),
                     _get(values, "conc_rel", mode, size, 1)]
                    + ([marks.get(("conc_rel", mode, size), "")] if decided else [])
                    + [_get(values, conc_counter(e), mode, size, 1) for e in events])
    head = (f"workset {s.name}, {paper.paging_text(mode)}: concurrency overhead (Figures 3, 4), {units.name} per "
            f"series (a series: 2 reps refills, 2 reps quanta in multi); single and multi are medians")
    columns = (["size", "reps", "single", "multi", "multi-single", "per quantum", "rel %"]
               + (["decision"] if decided else []) + [f"{EVENT_SHORT[e]}/quantum" for e in events])
    numeric = set(range(1, len(columns))) - ({7} if decided else set())
    return [head] + table(columns, body, numeric=numeric) + _got_note(s, mode)


def _vm_table(s: Series, mode: str, base: str, values: dict[tuple[str, str, int], Row], units: Units,
              marks: Marks | None = None) -> list[str]:
    label = vm_label(mode, base)
    events = [e for e in MISS_EVENTS if any(k[0] == vm_counter(e, "single") and k[1] == label for k in values)]
    marks = marks or {}
    decided = {q: _decided(marks, q, label) for q in ("vm_rel_single", "vm_rel_multi")}
    body = []
    for size in s.sizes(mode):
        def v(q: str, digits: int = 0) -> str:
            return _get(values, q, label, size, digits)

        def d(q: str) -> list[str]:
            return [marks.get((q, label, size), "")] if decided[q] else []
        body.append([paper.size_text(size), str(s.reps.get(size, "")), v("vm_abs_single"), v("vm_rel_single", 1)]
                    + d("vm_rel_single") + [v("vm_abs_multi"), v("vm_rel_multi", 1)] + d("vm_rel_multi")
                    + [v("vm_on_conc", 1), v("conc_on_vm", 1)]
                    + [v(vm_counter(e, case), 2) for e in events for case in ("single", "multi")])
    on, off = paper.paging_text(mode), paper.paging_text(base)
    head = (f"workset {s.name}, {on} vs {off}: {effect_name(base)} (Figures 5-8), {units.name} per series; "
            f"fig 5 = VM->conc, fig 8 = conc->VM")
    columns = (["size", "reps", "VM single", "%"] + (["decision"] if decided["vm_rel_single"] else [])
               + ["VM multi", "%"] + (["decision"] if decided["vm_rel_multi"] else []) + ["VM->conc %", "conc->VM %"]
               + [f"{EVENT_SHORT[e]}/refill {case}" for e in events for case in ("single", "multi")])
    return [head] + table(columns, body, numeric={i for i, c in enumerate(columns) if i and c != "decision"})


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
    margin = decisions.margin_points(run.records)
    found = []
    for s in series:
        mine = [r for r in rows if r.series == s.name]
        values = _lookup(mine)
        points = decisions.points(mine, margin)
        found += points
        marks = _marks(points)
        for mode in s.modes():
            out += ([""] if out else []) + _concurrency_table(s, mode, values, run.units, marks)
        for mode, base in vm_pairs(s.modes()):
            out += [""] + _vm_table(s, mode, base, values, run.units, marks)
    out += [legend(r.value for r in rows)] + ([decision_legend(margin)] if found else [])
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

def _extremes(rows: list[Row], want: str, units: Units, label: str, advise: bool = True,
              count: str = "") -> tuple[str, list[Value]]:
    """The extreme finding of some rows and how many sizes are resolved (or `count` in its place: the
    decisions' tally); 'at every size' when every point is the same exact value; 'none resolved' or 'none
    beyond chance' otherwise. advise: Tally.brief's. With the finding as a value (`label`: which extreme),
    where there is one."""
    points = [r for r in rows if r.size > 0]
    counts = paper.tally(points)
    count = count or counts.brief(advise)
    found = paper.findings(points)
    if not found:
        return f"none {'beyond chance' if counts.by_chance else 'resolved'} ({count})", []
    if len({r.value.mid for r in found}) == 1 and counts.findings == counts.total:
        value = paper.row_value(found[0], units, label=label, where="at every size")
        return f"{value.text} at every size", [value]
    top = paper.best(found, want)
    assert top is not None
    value = paper.row_value(top, units, label=label, where=f"at {paper.bytes_text(top.size)} ({count})")
    return f"{value.text} {value.where}", [value]


def _lowest(text_: str) -> str:
    return text_ if text_.startswith("none") or "every size" in text_ else f"lowest {text_}"


def _no_vm(modes: list[str]) -> Answer:
    """Why a run has no Figures 5-8, and how to get them."""
    if all(m.startswith("host") for m in modes):
        return Answer("page-size effect (the hosted analogue of Figures 5-8)", "not measured; a process cannot "
                      "switch paging off, pages=both compares 4 KiB with 2 MiB pages")
    return Answer("virtual memory (Figures 5-8)", "not measured; paging=both compares paging on with off")


PEAK_PAPER = Quote("paper", "352 % at 512K per buffer, = its L2 size; ~1.125 M CPU ticks per quantum")


def summary_workset(run: Run) -> list[Answer]:
    run = run.modelled(WORKSET)
    series, rows = derive(run.records)
    out: list[Answer] = [Answer(line) for line in model_lines(run)[:1]] if series else []
    units, machine = run.units, run.machine
    advise = not machine.no_answers
    margin = decisions.margin_points(run.records)
    shown = series[:SUMMARY_SERIES]
    if any(decisions.points([r for r in rows if r.series == s.name], margin) for s in shown):
        out.append(Answer(DECIDED, f"effect, negligible (+-{margin:g} %) or open, "
                                   f"{100 * (1 - sequence.ALPHA):.0f} % at every look (docs/REPORT.md, Decisions)"))
    for s in shown:
        mine = [r for r in rows if r.series == s.name]
        counts = decision_counts(decisions.points(mine, margin), replicas.level_of(run.records))
        name = f" ({s.name})" if len(series) > 1 and s.name else ""
        lead = f"concurrency overhead{name}, peak"
        conc = {paging: c for (q, paging), c in counts.items() if q == "conc_rel"}
        peaks = paper.same_in_modes({p.paging: paper.peak_lines([r for r in mine if r.paging == p.paging], machine,
                                                                units, full=False, lead=lead, counts=conc)
                                     for p in paper.peaks(mine, machine)})
        out += beside(peaks, PEAK_PAPER)
        if not vm_pairs(s.modes()) and s is series[0]:
            out.append(_no_vm(s.modes()))
        for mode, base in vm_pairs(s.modes()):
            label = vm_label(mode, base)
            other = sorted({size for m in (mode, base) for size in s.got.get(m, {})})
            got = f" (the host gave other pages than asked at {len(other)} sizes)" if other else ""
            if machine.emulated:
                got += " (the emulator's own cost of paging: it models no TLB)"
            out.append(Answer(f"{effect_name(base)}{name}, {paper.paging_text(mode)} vs {paper.paging_text(base)}{got}:"))
            for fig, quantity, quote in (("fig 7, single", "vm_rel_single", "-7.5 % at 3M"),
                                         ("fig 7, multi", "vm_rel_multi", "-39 % at 16K")):
                text_, values = _extremes(pick(mine, quantity, paging=label), "min", units, "lowest", advise,
                                          counts.get((quantity, label), ""))
                out.append(Answer(fig, _lowest(text_), tuple(values), Quote("paper", quote), depth=1))
            conc = pick(mine, "vm_on_conc", paging=label)
            (low, lows), (high, highs) = (_extremes(conc, "min", units, "lowest", advise),
                                          _extremes(conc, "max", units, "highest", advise))
            both = (low, lows) if low == high or low.startswith("none") else (f"lowest {low}; highest {high}",
                                                                              lows + highs)
            out.append(Answer("fig 5, on the concurrency overhead", both[0], tuple(both[1]),
                              Quote("paper", "-90 % at 16K, +44 % at 1.5K"), depth=1))
    if len(series) > SUMMARY_SERIES:
        out.append(Answer(f"({len(series) - SUMMARY_SERIES} more workset series in report.txt)", depth=1))
    return out


def summary(run: Run) -> list[Answer]:
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


def write_derived(rows: list[Row], path: Path, units: Units | None = None,
                  margin: float | None = None) -> Path:
    """derived.csv: one row per series x paging x size x quantity (docs/REPORT.md), with its decision
    (reports/decisions.py) where it has one."""
    decided = {(p.row.series, p.row.quantity, p.row.paging, p.row.size): p.decision
               for p in decisions.points(rows, margin if margin is not None else decisions.default_margin())}

    def decision(r: Row) -> list[str]:
        d = decided.get((r.series, r.quantity, r.paging, r.size))
        return [d.kind, exact(d.lo), exact(d.hi)] if d is not None else ["", "", ""]
    return text.write_csv(path, DERIVED_HEADER,
                          ([r.figure, r.quantity, r.unit(units), r.series, r.paging, r.size,
                            exact(r.value.mid), exact(r.value.lo), exact(r.value.hi), verdict(r.value)] + decision(r)
                           for r in rows))


def files(run: Run, out: Path, plots: bool) -> list[Path]:
    def table() -> Path | None:
        work = run.modelled(WORKSET)
        _series, rows = derive(work.records)
        name = MODEL_DERIVED_CSV if work.is_model else DERIVED_CSV
        return write_derived(rows, out / name, work.units, decisions.margin_points(work.records)) if rows else None

    return csv_and_plots(run, out, plots, table, BENCHES, write_all)


def quantity_help() -> str:
    return "\n".join(f"  fig {q.figure}  {q.key:34} {q.unit_text(None):18} {q.title}" for q in QUANTITIES)


# --- its figures ----------------------------------------------------------------------------------

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PAPER = "Klimiankou 2018"
MODE_COLORS = {"off": "tab:blue", "on/4k": "tab:orange", "on/4m": "tab:green", "host": "tab:blue",
               "host/2m": "tab:blue", "host/4k": "tab:orange"}
# Figures 6 and 7 draw single and multi for each paging mode: colour by case,
# line style by page size.
CASE_COLORS = {"single": "tab:blue", "multi": "tab:red"}
PAGESIZE_STYLE = {"on/4k": "-", "on/4m": "--", "host/4k": "-"}
EVENT_COLORS = {"l1d_read_misses": "tab:blue", "llc_misses": "tab:red", "dtlb_read_misses": "tab:green",
                "l1d_misses": "tab:blue", "l2_misses": "tab:red", "l3_misses": "tab:purple", "tlb_misses": "tab:green"}
# The workset figures drawn from the cache/TLB model: the same names with this before .png
MODEL_SUFFIX = "-model"


@dataclass
class PlotData:
    """Everything the figures need, derived once."""

    series: list[Series]
    rows: list[Row]
    switches: list[SwitchCost]
    caches: list[paper.Cache]  # the caches to draw: none for an emulator, which models none
    subtitle: str
    note: str | None
    units: Units
    suffix: str = ""  # put before .png in every file name (MODEL_SUFFIX for the model's figures)

    @classmethod
    def of(cls, run: Run) -> "PlotData":
        series, rows = derive(run.records)
        cpu, hello = run.first("cpu"), run.first("hello")
        where = (hello or {}).get("platform") or "bare"
        if cpu and cpu.get("platform") and cpu.get("platform") != where:
            where = f"{where}, {cpu.get('platform')}"
        subtitle = f"{paper.describe_cpu(cpu)} ({where}); unit: {run.units.name}"
        note = run.machine.trust if run.machine.emulated else None
        if run.is_model:
            info = run.model_info
            subtitle = (f"MODELLED: cache/TLB model, preset {(info or {}).get('preset', '?')}, on QEMU -icount; "
                        f"unit: modelled cycles")
            note = (f"MODELLED on preset {(info or {}).get('preset', '?')} of the cache/TLB model: not measured "
                    f"(docs/MODEL.md)")
            return cls(series, rows, [], run.machine.plot_caches, subtitle, note, run.units, MODEL_SUFFIX)
        return cls(series, rows, switch_costs(collect_ctxsw(run.records)), run.machine.plot_caches, subtitle, note,
                   run.units)

    def banded(self, series: str) -> bool:
        return any(s.runs > 1 for s in self.series if s.name == series)

    @property
    def hosted_vm(self) -> bool:
        """The VM figures compare page sizes (hosted), not paging on and off."""
        return any(r.base == HOST_LARGE for r in self.rows)


def _new(title: str, data: PlotData, series: Iterable[str]) -> tuple["Figure", "Axes"]:
    names = sorted(set(series))
    return new_axes(title, data.subtitle + (f"; {names[0]}" if len(names) == 1 and names[0] else ""))


def _y_scale(ax: "Axes", values: list[float], unit: str) -> None:
    """Linear, unless the values span orders of magnitude: then symlog."""
    finite = sorted(abs(v) for v in values if math.isfinite(v) and v != 0)
    if not finite:
        return
    top = finite[-1]
    typical = finite[len(finite) // 2]
    if top > 50 * typical and top > (1000 if unit == "%" else 1e4):
        # a power of ten: the linear band around 0 then ends on a labelled decade
        floor = 10.0 if unit == "%" else 100.0
        ax.set_yscale("symlog", linthresh=10.0 ** math.ceil(math.log10(max(typical, floor))))


def _linthresh(ax: "Axes") -> float:
    """The linear band of a symlog y axis."""
    return float(getattr(ax.yaxis.get_transform(), "linthresh", 1.0))


def _decade_ticks(ax: "Axes") -> None:
    """Symlog ticks at 0 and at the decades outside the linear band only (ticks
    inside the band crowd the zero line)."""
    from matplotlib.ticker import FixedLocator

    thresh = _linthresh(ax)
    lo, hi = ax.get_ylim()
    top = max(abs(lo), abs(hi), thresh)
    decades = [10.0 ** k for k in range(int(round(math.log10(thresh))), int(math.ceil(math.log10(top))) + 1)]
    ticks = [0.0] + [d for d in decades if d <= hi] + [-d for d in decades if -d >= lo]
    ax.yaxis.set_major_locator(FixedLocator(sorted(ticks)))


def _line(ax: "Axes", rows: list[Row], label: str, color: str, style: str, band: bool) -> list[float]:
    """The medians as a line, the band as a shade; findings as filled markers, points inside the
    noise or not resolved as hollow markers with their band as an error bar (never as a finding)."""
    pts = [r for r in rows if r.size > 0 and math.isfinite(r.value.mid)]
    if not pts:
        return []
    xs = [r.size for r in pts]
    vals = [r.value.mid for r in pts]
    good = [r for r in pts if verdict(r.value) in FINDINGS + (NO_SPREAD,)]
    # a curve made mostly of noise is drawn faint: its wiggles are not a shape
    ax.plot(xs, vals, style, color=color, linewidth=1.2, label=label, alpha=1.0 if 2 * len(good) >= len(pts) else 0.4)
    if band:
        ok = [r.value.bounded for r in pts]
        if any(ok):
            ax.fill_between(xs, [r.value.lo if o else r.value.mid for r, o in zip(pts, ok)],
                            [r.value.hi if o else r.value.mid for r, o in zip(pts, ok)],
                            where=ok, color=color, alpha=0.18, linewidth=0)
    weak = [r for r in pts if r not in good]
    if good:
        ax.plot([r.size for r in good], [r.value.mid for r in good], "o", color=color, markersize=3.5)
    if weak:
        bounded = [r for r in weak if r.value.bounded]
        if bounded:
            ax.errorbar([r.size for r in bounded], [r.value.mid for r in bounded],
                        yerr=[[r.value.mid - r.value.lo for r in bounded], [r.value.hi - r.value.mid for r in bounded]],
                        fmt="none", ecolor=color, elinewidth=0.8, capsize=2, alpha=0.7)
        hollow = [r for r in weak if r.value.bounded]
        undefined = [r for r in weak if not r.value.bounded]
        if hollow:
            ax.plot([r.size for r in hollow], [r.value.mid for r in hollow], "o", markerfacecolor="white",
                    markeredgecolor=color, markersize=4.5, linestyle="none")
        if undefined:  # a denominator inside the noise: the ratio can be anything
            ax.plot([r.size for r in undefined], [r.value.mid for r in undefined], "x", color=color, markersize=5,
                    linestyle="none")
    return vals


def _finish(fig: "Figure", ax: "Axes", data: PlotData, path: Path, values: list[float], unit: str,
            banded: bool, decorate: Callable[["Axes"], None] | None = None) -> Path:
    ax.axhline(0, color="black", linewidth=0.8)
    _y_scale(ax, values, unit)
    finite = [v for v in values if math.isfinite(v)]
    if finite:
        # the bands count too, but may not stretch the axis past half the medians' span
        lo, hi = min(finite), max(finite)
        span = (hi - lo) or abs(hi) or 1.0
        low = min(lo, max(ax.dataLim.y0, lo - span / 2))
        high = max(hi, min(ax.dataLim.y1, hi + span / 2))
        if high - low <= 1e-9 * max(1.0, abs(high)):
            # a flat curve (every point the same exact value, as under icount): a readable window
            # around it, not one scaled to floating-point dust
            ax.set_ylim(high - 1.0, high + 1.0)
        else:
            pad = 0.05 * (high - low or span)
            ax.set_ylim(0 if low >= 0 else low - pad, high + pad)
    if ax.get_yscale() == "symlog":
        _decade_ticks(ax)
    if decorate is not None:
        decorate(ax)  # after the scale and limits: a twin axis copies them
    if ax.get_legend_handles_labels()[0]:  # a figure with no labelled line gets no empty legend box
        ax.legend(fontsize=8, loc="best",
                  title=("line: median; shade: interval; filled: finding;\nhollow with bar: ~0 or not resolved; "
                         "x: denominator ~0" if banded else None), title_fontsize=8)
    return save_figure(fig, path.with_name(path.stem + data.suffix + path.suffix), data.note)


def _label(series: str, text: str, many: bool) -> str:
    return f"{series}: {text}" if many and series else text


def _quantity_figure(data: PlotData, out: Path, name: str, title: str, ylabel: str,
                     lines: list[tuple[str, str, str, str, str]], unit: str,
                     decorate: Callable[["Axes"], None] | None = None) -> Path | None:
    """lines: (quantity, series, paging label, legend text, case or "" when the line is one mode's)."""
    if not any(pick(data.rows, q, s, p) for q, s, p, _t, _c in lines):
        return None
    fig, ax = _new(title, data, (s for _q, s, _p, _t, _c in lines))
    many = len({s for _q, s, _p, _t, _c in lines}) > 1
    values: list[float] = []
    sizes: list[int] = []
    for q, s, p, legend_text, case in lines:
        rows = pick(data.rows, q, s, p)
        mode = rows[0].mode if rows else p
        if case in EVENT_COLORS:
            color, style = EVENT_COLORS[case], "-"
        elif case:
            color, style = CASE_COLORS[case], PAGESIZE_STYLE.get(mode, ":")
        else:
            color, style = MODE_COLORS.get(mode, "tab:purple"), "-"
        values += _line(ax, rows, _label(s, legend_text, many), color, style, data.banded(s))
        sizes += [r.size for r in rows if r.size > 0]
    size_axis(ax, sizes, data.caches)
    ax.set_ylabel(ylabel)
    banded = any(data.banded(s) for _q, s, *_ in lines)
    return _finish(fig, ax, data, out / name, values, unit, banded, decorate)


def _modes(data: PlotData, vm: bool) -> list[tuple[str, str, str]]:
    """(series, paging label, legend text) triples: per mode, or per VM comparison."""
    out = []
    for s in data.series:
        if not vm:
            out += [(s.name, m, paper.paging_text(m)) for m in s.modes()]
        else:
            out += [(s.name, vm_label(m, b), f"{paper.paging_text(m)} vs {paper.paging_text(b)}")
                    for m, b in vm_pairs(s.modes())]
    return out


def _series_axis(data: PlotData) -> Callable[["Axes"], None] | None:
    """A right axis per series, when every point has the same reps
    (a series is 2 reps quanta): the same scale times 2 reps, so it lines up."""
    reps = {s.fixed_reps() for s in data.series}
    if len(reps) != 1 or None in reps:
        return None
    quanta = 2 * (reps.pop() or 1)

    def decorate(ax: "Axes") -> None:
        twin = ax.twinx()
        if ax.get_yscale() == "symlog":
            twin.set_yscale("symlog", linthresh=_linthresh(ax) * quanta)
        lo, hi = ax.get_ylim()
        twin.set_ylim(lo * quanta, hi * quanta)
        twin.set_ylabel(f"per series [{data.units.short}] ({quanta} quanta)")

    return decorate


def _vm_words(data: PlotData) -> tuple[str, str, str]:
    """(figure prefix, what is compared, y label's on - off) for Figures 5-8: the hosted build compares
    page sizes, never paging off."""
    if data.hosted_vm:
        return "analogue", "the page size (4 KiB vs 2 MiB pages)", "4 KiB pages - 2 MiB pages"
    return "", "virtual memory", "paging on - paging off"


# Figures 5-8's titles: the paper's for paging on vs off; for the hosted page-size comparison, short
# enough to fit and never calling it paging.
VM_TITLES = {
    5: (f"Figure 5 ({PAPER}): impact of virtual memory on the concurrency overhead",
        "Figure 5 analogue: impact of the page size on the concurrency overhead"),
    6: (f"Figure 6 ({PAPER}): absolute overhead of virtual memory",
        "Figure 6 analogue: absolute cost of 4 KiB vs 2 MiB pages"),
    7: (f"Figure 7 ({PAPER}): relative overhead of virtual memory",
        "Figure 7 analogue: relative cost of 4 KiB vs 2 MiB pages"),
    8: (f"Figure 8 ({PAPER}): impact of concurrency on the virtual-memory overhead",
        "Figure 8 analogue: impact of concurrency on the page-size cost"),
}


def _vm_title(data: PlotData, figure: int) -> str:
    return VM_TITLES[figure][1 if data.hosted_vm else 0]


def fig3(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_per_quantum", s, m, text, "") for s, m, text in _modes(data, False)]
    return _quantity_figure(data, out, "fig3-concurrency-overhead-absolute.png",
                            f"Figure 3 ({PAPER}): absolute overhead of concurrency",
                            f"(multi - single) / (2 reps) [{data.units.short} per quantum]", lines, "ticks",
                            _series_axis(data))


def fig3_misses(data: PlotData, out: Path) -> Path | None:
    """Hardware counters: the misses per quantum of multi - single, what explains Figure 3's rise."""
    lines = []
    for s in data.series:
        modes = s.modes()
        if not modes:
            continue
        for e in MISS_EVENTS:
            if pick(data.rows, conc_counter(e), s.name, modes[0]):
                lines.append((conc_counter(e), s.name, modes[0], f"{EVENT_SHORT[e]}, {paper.paging_text(modes[0])}",
                              e))
    if not lines:
        return None
    return _quantity_figure(data, out, "fig3-misses-per-quantum.png",
                            ("model" if data.suffix else "counters")
                            + ": misses per quantum of multi - single (what Figure 3's rise is made of)",
                            "(multi - single) / (2 reps) [misses per quantum]", lines, "misses")


def fig4(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_rel", s, m, text, "") for s, m, text in _modes(data, False)]
    return _quantity_figure(data, out, "fig4-concurrency-overhead-relative.png",
                            f"Figure 4 ({PAPER}): relative overhead of concurrency",
                            "(multi - single) / single [%]", lines, "%")


def fig5(data: PlotData, out: Path) -> Path | None:
    _analogue, _what, diff = _vm_words(data)
    on, off = diff.split(" - ")
    lines = [("vm_on_conc", s, p, text, "") for s, p, text in _modes(data, True)]
    return _quantity_figure(data, out, "fig5-vm-impact-on-concurrency-overhead.png", _vm_title(data, 5),
                            f"(overhead with {on} - with {off}) / with {off} [%]", lines, "%")


def fig6(data: PlotData, out: Path) -> Path | None:
    _analogue, _what, diff = _vm_words(data)
    lines = [(f"vm_abs_{case}_per_quantum", s, p, f"{case}, {text}", case)
             for s, p, text in _modes(data, True) for case in ("single", "multi")]
    return _quantity_figure(data, out, "fig6-vm-overhead-absolute.png", _vm_title(data, 6),
                            f"({diff}) / (2 reps) [{data.units.short} per refill]", lines, "ticks",
                            _series_axis(data))


def fig7(data: PlotData, out: Path) -> Path | None:
    _analogue, _what, diff = _vm_words(data)
    lines = [(f"vm_rel_{case}", s, p, f"{case}, {text}", case)
             for s, p, text in _modes(data, True) for case in ("single", "multi")]
    return _quantity_figure(data, out, "fig7-vm-overhead-relative.png", _vm_title(data, 7),
                            f"({diff}) / {diff.split(' - ')[1]} [%]", lines, "%")


def fig8(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_on_vm", s, p, text, "") for s, p, text in _modes(data, True)]
    return _quantity_figure(data, out, "fig8-concurrency-impact-on-vm-overhead.png", _vm_title(data, 8),
                            "(overhead multi - overhead single) / overhead single [%]", lines, "%")


SHAPE_HATCH = {"symmetric": "", "asymmetric": "//", "": ""}


def ctxsw(data: PlotData, out: Path) -> Path | None:
    """Bars: TSC ticks (or instructions) per switch per routine, shape and paging mode, the whole run's
    per switch, with the loop measured beside it marked on each bar (the switch alone is the part
    above the mark); line: round robin against n, its loop dashed."""
    if not data.switches:
        return None
    plt = pyplot()
    pairs = [c for c in data.switches if c.variant != "rr"]
    rr = [c for c in data.switches if c.variant == "rr"]
    fig, axes = plt.subplots(1, 2 if rr else 1, figsize=(12.0 if rr else 8.0, 5.0), dpi=DPI, squeeze=False,
                             gridspec_kw={"width_ratios": [1.6, 1]} if rr else None)
    fig.suptitle("ctxsw: cost of one fiber switch", fontsize=13, fontweight="bold")
    modes = sorted({c.mode for c in data.switches}, key=lambda m: (m != OFF, m))
    ax = axes[0][0]
    variants = list(dict.fromkeys(c.variant for c in pairs))
    shapes = list(dict.fromkeys(c.shape for c in pairs))
    bars_per = max(1, len(modes) * len(shapes))
    width = 0.8 / bars_per
    slot = 0
    for mode in modes:
        for shape in shapes:
            by_case = {c.variant: c for c in pairs if c.mode == mode and c.shape == shape}
            offset = (slot - (bars_per - 1) / 2) * width
            slot += 1
            xs = [j + offset for j, v in enumerate(variants) if v in by_case]
            vals = [by_case[v] for v in variants if v in by_case]
            if not vals:
                continue
            # a log from before the shapes has only the switch alone
            mids = [(c.total if c.total.ok else c.alone) for c in vals]
            err = [[max(0.0, v.mid - v.lo) for v in mids], [max(0.0, v.hi - v.mid) for v in mids]]
            label = paper.paging_text(mode) + (f", {shape}" if shape else "")
            bars = ax.bar(xs, [v.mid for v in mids], width, color=MODE_COLORS.get(mode, "tab:purple"),
                          hatch=SHAPE_HATCH.get(shape, ""), edgecolor="white" if shape != "asymmetric" else "black",
                          linewidth=0.5, label=label,
                          yerr=err if any(c.runs > 1 and v.bounded for c, v in zip(vals, mids)) else None, capsize=3)
            ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
            for x, c in zip(xs, vals):
                if c.loop.ok:
                    ax.hlines(c.loop.mid, x - width / 2, x + width / 2, colors="black", linewidth=2)
    if any(c.loop.ok for c in pairs):
        ax.plot([], [], color="black", linewidth=2, label="its loop (empty call for the switch)")
    ax.set_xticks(range(len(variants)), variants)
    ax.set_xlabel("switch routine (two parties ping-ponging)")
    shaped = any(c.shape for c in pairs)
    ax.set_ylabel(f"{data.units.short} per switch, {'whole run' if shaped else 'loop subtracted'} "
                  f"(median; bars: interval)")
    ax.set_title(data.subtitle, fontsize=9, color="dimgray")
    if modes:
        ax.legend(fontsize=8)
    if rr:
        ax2 = axes[0][1]
        for mode in modes:
            pts = sorted((c for c in rr if c.mode == mode), key=lambda c: c.n)
            if not pts:
                continue
            color = MODE_COLORS.get(mode, "tab:purple")
            vals = [(c.total if c.total.ok else c.alone) for c in pts]
            ax2.plot([c.n for c in pts], [v.mid for v in vals], "-o", color=color, label=paper.paging_text(mode))
            if any(c.runs > 1 and v.bounded for c, v in zip(pts, vals)):
                ax2.fill_between([c.n for c in pts], [v.lo for v in vals], [v.hi for v in vals],
                                 color=color, alpha=0.18, linewidth=0)
            loops = [c.loop.mid for c in pts if c.loop.ok]
            if loops:
                ax2.axhline(loops[0], color=color, linestyle="--", linewidth=1,
                            label=f"{paper.paging_text(mode)}: its loop")
        ax2.set_xscale("log", base=2)
        ns = sorted({c.n for c in rr})
        ax2.set_xticks(ns, [str(n) for n in ns])
        ax2.set_xlabel("fibers in the run queue (round robin), log2 scale")
        ax2.set_ylabel(f"{data.units.short} per switch")
        ax2.set_title("round robin through the run queue (callee-saved switch)", fontsize=9, color="dimgray")
        ax2.set_ylim(bottom=0)
        ax2.grid(True, alpha=0.3)
        ax2.legend(fontsize=8)
    return save_figure(fig, out / "ctxsw.png", data.note)


FigureFn = Callable[[PlotData, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("fig3", fig3), ("fig3-misses", fig3_misses), ("fig4", fig4), ("fig5", fig5), ("fig6", fig6), ("fig7", fig7),
    ("fig8", fig8),
    ("ctxsw", ctxsw),
)


def write_all(run: Run, out: Path) -> list[Path]:
    """Draw every figure the run has data for; return the files written."""
    data = PlotData.of(run)
    work = run.modelled("workset")
    # the model's workset figures (files *-model.png); ctxsw stays the TSC's
    workset = PlotData.of(work) if work.is_model else data
    if not workset.rows and not data.switches:
        return []
    written: list[Path] = []
    for name, fn in FIGURES:
        path = fn(data if name == "ctxsw" else workset, out)
        if path is not None:
            written.append(path)
    return written


# report.html: what to look at in each figure (by the start of its file's name; html.figure)
CAPTIONS = {
    "fig3": "Figure 3: the cost of running the fibers concurrently (multi - single) against the working set; "
            "look where it jumps: the size at which the fibers' sets together stop fitting a cache level",
    "fig3-misses": "the same against the counted cache misses, where the machine has counters",
    "fig4": "Figure 4: that overhead relative to the single fiber's time (%); the paper's peak is at its L2 size",
    "fig5": "Figure 5: how much paging (or the page size) changes the concurrency overhead; near 0 means paging "
            "adds nothing to switching",
    "fig6": "Figure 6: paging's own overhead in time against the working set; look for the sizes where the TLB "
            "runs out",
    "fig7": "Figure 7: paging's overhead relative to running without it (%)",
    "fig8": "Figure 8: how concurrency changes paging's overhead",
    "ctxsw": "each switch routine's cost per switch, its empty loop beside it: the difference is the switch alone",
}
