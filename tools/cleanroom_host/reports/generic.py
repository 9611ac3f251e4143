"""The report of a benchmark no family claims (no module of families.FAMILIES names it in BENCHES): what one
file in bench/ and one line in bench/registry.def get with no report module of their own. The frame calls
it with the names of such benchmarks in the run (frame.unclaimed), each in the order the run measured it:

- summary: a line a benchmark, each case's median with its interval (stats.interval's cells), in the run's
  unit per operation (the record's median: a sample divided by its `per`), per paging mode (modes that
  measured the same are named once);
- sections: report.txt's table a benchmark, a row per case (the case's name and the params that tell its
  records apart), a column per paging mode, median (lo..hi);
- files: with plots, plots/bench-NAME.png, a bar per case (a bar per paging mode beside it), its interval
  as error bars.

A family module whose BENCHES names the benchmark replaces all three (docs/REPORT.md, "Benchmarks without a
report module"). This module knows no benchmark by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..records.protocol import DIVIDED
from ..records.text import compact, table
from ..stats.interval import Interval, cell, legend
from .answers import Answer, Value, listed
from .context import Run
from .derive import mode_of
from .paper import paging_text
from .plotkit import SIZE, FigureContext, OURS, errors_of, new_axes, save

# Params that name the paging mode (the table's columns), not the case
MODE_PARAMS = ("paging", "pagesize", "pages")
# The summary names at most this many cases of a benchmark in a paging mode, and no more than fit in this
# many characters (two lines or so), the first always; report.txt has them all
SUMMARY_CASES, SUMMARY_CHARS = 8, 160
SUMMARY_MODES = 2  # and the values of at most this many paging modes that measured differently
LABEL_CHARS = 40  # a case's label on the figure, at most (report.txt has it whole)
BAR_INCHES = 0.14  # the figure's height a bar, past the common size's
LOG_SPAN = 100  # the figure's axis is logarithmic where the largest median is this many times the smallest
FILE_PREFIX = "bench-"  # plots/bench-NAME.png

# report.html: what to look at in the figure (by the start of its file's name; html.figure)
CAPTIONS = {
    FILE_PREFIX: "each case's median per operation with its interval (error bars), a bar per paging mode: "
                 "the benchmark has no report module of its own, so nothing here is compared with a paper",
}


@dataclass
class Row:
    """One case of a benchmark (its name and the params that tell its records apart): its median with its
    interval, its sample count and what a sample was divided by, per paging mode."""

    label: str
    values: dict[str, Interval] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    per: set[int] = field(default_factory=set)
    divided: bool = False  # the host divided its sums (records/protocol.py's divided): a fraction of a tick kept


# Decimals of a row the host divided (bench asm's per copy: 1.00 instruction, 0.68 TSC ticks), else none
HOST_DIVIDED_DIGITS = 2


def digits(table_rows: list[Row]) -> int:
    return HOST_DIVIDED_DIGITS if any(r.divided for r in table_rows) else 0


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def rows(run: Run, bench: str) -> tuple[list[str], list[Row]]:
    """The benchmark's paging modes in the order measured, and its cases as rows in the order measured. A
    case whose records differ in their params (besides the mode) is a row for each, labelled by the params
    that differ."""
    recs = run.results(bench)
    params = [{k: v for k, v in (r.get("params") or {}).items() if k not in MODE_PARAMS}
              if isinstance(r.get("params"), dict) else {} for r in recs]
    differ: dict[str, list[str]] = {}
    for case in dict.fromkeys(str(r.get("case")) for r in recs):
        mine = [p for r, p in zip(recs, params) if str(r.get("case")) == case]
        keys = list(dict.fromkeys(k for p in mine for k in p))
        differ[case] = [k for k in keys if len({compact(p.get(k)) for p in mine}) > 1]
    modes: list[str] = []
    out: dict[str, Row] = {}
    for r, p in zip(recs, params):
        case = str(r.get("case"))
        mode = mode_of(r.get("params") if isinstance(r.get("params"), dict) else {})
        modes += [mode] if mode not in modes else []
        label = " ".join([case] + [f"{k}={compact(p.get(k))}" for k in differ[case]])
        row = out.setdefault(label, Row(label))
        row.values[mode] = Interval.of(r)
        n, per = _int(r.get("n")), _int(r.get("per"))
        if n is not None:
            row.n[mode] = n
        if per is not None:
            row.per.add(per)
        row.divided = row.divided or r.get(DIVIDED) is not None
    return modes, list(out.values())


def per_what(table_rows: list[Row]) -> str:
    """'per operation' where a sample was divided by a count of operations, else 'per sample'."""
    return "per operation" if any(p > 1 for r in table_rows for p in r.per) else "per sample"


# --- the summary ----------------------------------------------------------------

def modes_text(modes: list[str]) -> str:
    """'paging off', 'paging off and on/4k': the modes as paper.paging_text names them, together."""
    texts = [paging_text(m) for m in modes]
    lead = "paging "
    if all(t.startswith(lead) for t in texts):
        return lead + " and ".join(t[len(lead):] for t in texts)
    return " and ".join(texts)


def shown(values: list[Value]) -> tuple[Value, ...]:
    """The first values, as many as SUMMARY_CASES and SUMMARY_CHARS allow (one at least)."""
    out: list[Value] = []
    for v in values[:SUMMARY_CASES]:
        if out and len(listed(out + [v])) > SUMMARY_CHARS:
            break
        out.append(v)
    return tuple(out)


def _tables(run: Run, benches: list[str]) -> Iterator[tuple[str, Run, list[str], list[Row]]]:
    """Each benchmark that has rows: its name, its run as modelled, its paging modes and its rows."""
    for bench in benches:
        b = run.modelled(bench)
        modes, table_rows = rows(b, bench)
        if table_rows:
            yield bench, b, modes, table_rows


def summary(run: Run, benches: list[str]) -> list[Answer]:
    """A line a benchmark: each case's median with its interval in the first paging mode, and a line below
    it for the next mode that measured differently (modes that measured the same are named together; those
    past SUMMARY_MODES only named); past the cases SUMMARY_CASES and SUMMARY_CHARS allow, how many more
    report.txt has."""
    out: list[Answer] = []
    for bench, b, modes, table_rows in _tables(run, benches):
        same: dict[tuple[object, ...], tuple[list[str], list[Value]]] = {}
        for mode in modes:
            values = [Value(r.label, r.values[mode], digits(table_rows)) for r in table_rows if mode in r.values]
            same.setdefault(tuple((v.label, v.cells()) for v in values), ([], values))[0].append(mode)
        groups = list(same.values())
        mine: list[Answer] = []
        for i, (ms, values) in enumerate(groups[:SUMMARY_MODES]):
            some = shown(values)
            words = listed(some) + (f", {len(values) - len(some)} more in report.txt" if len(some) < len(values) else "")
            question = f"{bench}, {b.units.short} {per_what(table_rows)}, {modes_text(ms)}"
            mine.append(Answer(question, words, some) if i == 0 else Answer(modes_text(ms), words, some, depth=1))
        rest = [m for ms, _values in groups[SUMMARY_MODES:] for m in ms]
        if rest:
            mine[-1] = Answer(mine[-1].question, f"{mine[-1].words}; {modes_text(rest)} in report.txt",
                              mine[-1].values, depth=mine[-1].depth)
        out += mine
    return out


# --- report.txt ---------------------------------------------------------------------

def sections(run: Run, benches: list[str]) -> list[str]:
    """A table a benchmark: a row per case, median (lo..hi) per paging mode, the samples (n) and what a
    sample was divided by (per); one legend line after the last."""
    out: list[str] = []
    values: list[Interval] = []
    for bench, b, modes, table_rows in _tables(run, benches):
        body = []
        for r in table_rows:
            ns = sorted(set(r.n.values()))
            body.append([r.label, "/".join(str(p) for p in sorted(r.per)) or "-",
                         "/".join(str(n) for n in ns) or "-"] + [cell(r.values.get(m), digits(table_rows))
                                                                 for m in modes])
            values += r.values.values()
        out += ([""] if out else []) + [f"{bench}: {b.units.name} {per_what(table_rows)}, median (lo..hi), "
                                        f"per paging mode (no report module: docs/REPORT.md)"]
        out += table(["case", "per", "n"] + [paging_text(m) for m in modes], body,
                     numeric={1, 2} | set(range(3, 3 + len(modes))))
    return out + [legend(values)] if out else []


# --- the figure ----------------------------------------------------------------------

def short_label(label: str) -> str:
    """A label of at most LABEL_CHARS, its middle left out: a case's name begins it and the params that tell
    it from the others end it."""
    if len(label) <= LABEL_CHARS:
        return label
    keep = LABEL_CHARS - 3
    return label[:keep - keep // 2] + "..." + label[len(label) - keep // 2:]


def value_text(v: float) -> str:
    """A median written past its bar: 3 significant digits below 100, whole numbers above (no exponent)."""
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def figure(ctx: FigureContext, bench: str, out: Path) -> Path | None:
    """plots/bench-NAME.png: a horizontal bar per case, its median per operation with its interval as error
    bars, a bar per paging mode side by side; a log axis where the medians span LOG_SPAN or more."""
    modes, table_rows = rows(ctx.run, bench)
    if not table_rows:
        return None
    bars = len(table_rows) * len(modes)
    fig, ax = new_axes(f"{bench}: each case's median", f"{ctx.cpu} ({ctx.where}); unit: {ctx.units.name}",
                       max(SIZE[1], 1.6 + BAR_INCHES * bars))
    height = 0.8 / len(modes)
    colors = [OURS, "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:gray"]
    mids = [v.mid for r in table_rows for v in r.values.values() if v.ok]
    log = bool(mids) and min(mids) > 0 and max(mids) >= LOG_SPAN * min(mids)
    for i, mode in enumerate(modes):
        vals = [r.values.get(mode, Interval.none()) for r in table_rows]
        ys = [y - 0.4 + height * (i + 0.5) for y in range(len(table_rows))]
        ax.barh(ys, [v.mid if v.ok else 0.0 for v in vals], height, color=colors[i % len(colors)],
                label=paging_text(mode), xerr=errors_of(vals), capsize=2)
        for y, v in zip(ys, vals):  # the median, past its error bar
            if v.ok:
                ax.annotate(value_text(v.mid), xy=(max(v.mid, v.hi) if v.bounded else v.mid, y), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
    ax.set_yticks(range(len(table_rows)), [short_label(r.label) for r in table_rows],
                  fontsize=8 if bars <= 40 else 6)
    ax.invert_yaxis()  # the first case measured on top, as report.txt lists them
    if log:
        ax.set_xscale("log")
    # the medians and their bands' ends, with room past the longest for its label
    ends = mids + [e for r in table_rows for v in r.values.values() if v.ok and v.bounded for e in (v.lo, v.hi)]
    lo, hi = min(ends + [0.0]), max(ends + [0.0])
    if log:
        ax.set_xlim(min(e for e in ends if e > 0) / 2, hi * 4)
    elif hi > lo:
        ax.set_xlim(lo - 0.05 * (hi - lo) if lo < 0 else lo, hi + 0.15 * (hi - lo))
    ax.set_xlabel(f"{ctx.units.short} {per_what(table_rows)} (median; error bars: its interval)"
                  + (", log scale" if log else ""))
    ax.grid(True, which="major", axis="x", alpha=0.3)
    if len(modes) > 1:
        ax.legend(fontsize=8, loc="best")
    return save(fig, ctx, out / file_name(bench))


def file_name(bench: str) -> str:
    """bench-NAME.png, any character of NAME but letters, digits, '_', '-' and '.' made '_'."""
    return f"{FILE_PREFIX}{re.sub(r'[^A-Za-z0-9_.-]', '_', bench)}.png"


def files(run: Run, out: Path, plots: bool, benches: list[str]) -> list[Path]:
    """With plots, each benchmark's figure (matplotlib loads only then)."""
    if not plots:
        return []
    written = []
    for bench in benches:
        b = run.modelled(bench)
        if b.results(bench):
            path = figure(FigureContext(b), bench, out / "plots")
            written += [path] if path is not None else []
    return written
