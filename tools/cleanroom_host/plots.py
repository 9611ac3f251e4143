"""Figures 3-8 of Klimiankou 2018 and a ctxsw chart, as PNG files.

matplotlib (Agg backend) is imported only when a figure is drawn, so the
rest of the tool starts fast. One function per figure; FIGURES lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import paper
from .derive import OFF, Row, Series, SwitchPoint, collect_ctxsw, derive, pick
from .protocol import Record

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PAPER = "Klimiankou 2018"
DPI = 110
SIZE = (9.0, 5.4)
MODE_COLORS = {"off": "tab:blue", "on/4k": "tab:orange", "on/4m": "tab:green"}
# Figures 6 and 7 draw single and multi for each paging mode: colour by case,
# line style by page size.
CASE_COLORS = {"single": "tab:blue", "multi": "tab:red"}
PAGESIZE_STYLE = {"on/4k": "-", "on/4m": "--"}


@dataclass
class PlotData:
    """Everything the figures need, derived once."""

    series: list[Series]
    rows: list[Row]
    switches: list[SwitchPoint]
    caches: list[paper.Cache]
    subtitle: str
    note: str | None

    @classmethod
    def of(cls, records: list[Record]) -> "PlotData":
        series, rows = derive(records)
        cpu = next((r for r in records if r.get("t") == "cpu"), None)
        hello = next((r for r in records if r.get("t") == "hello"), None)
        where = (hello or {}).get("platform") or "bare"
        if cpu and cpu.get("platform") and cpu.get("platform") != where:
            where = f"{where}, {cpu.get('platform')}"
        subtitle = f"{paper.describe_cpu(cpu)} ({where})"
        note = paper.emulated(records)
        return cls(series, rows, collect_ctxsw(records), paper.data_caches(cpu), subtitle,
                   "emulated: no caches modelled, no cache effect expected" if note and "emulator" in note
                   else None)

    def banded(self, series: str) -> bool:
        return any(s.runs > 1 for s in self.series if s.name == series)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: "Figure", path: Path, note: str) -> Path:
    """Writes a figure as PNG, with the run's note (e.g. "emulated: no caches") at the bottom."""
    if note:
        fig.text(0.01, 0.01, note, fontsize=8, color="firebrick", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03 if note else 0, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    _pyplot().close(fig)
    return path


def _new(title: str, data: PlotData, series: Iterable[str]) -> tuple["Figure", "Axes"]:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
    names = sorted(set(series))
    sub = data.subtitle + (f"; {names[0]}" if len(names) == 1 and names[0] else "")
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(sub, fontsize=9, color="dimgray")
    return fig, ax


def _size_axis(ax: "Axes", sizes: list[int], caches: list[paper.Cache]) -> None:
    """log2 working-set axis with byte labels and the caches as labelled lines."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log", base=2)
    lo = min(sizes) if sizes else 1
    hi = max(sizes) if sizes else 1 << 20
    k0, k1 = int(math.floor(math.log2(lo))), int(math.ceil(math.log2(hi)))
    step = 1 if k1 - k0 <= 12 else 2
    major = [2.0 ** k for k in range(k0 - (k0 % step), k1 + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(major))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: paper.size_text(int(round(x)))))
    ax.xaxis.set_minor_locator(FixedLocator([2.0 ** k for k in range(k0, k1 + 1)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(2.0 ** k0 / 1.3, 2.0 ** k1 * 1.3)
    ax.set_xlabel("working set: bytes per buffer (two buffers per scenario), log2 scale")
    ax.grid(True, which="major", alpha=0.3)
    for c in caches:
        if not lo / 2 <= c.size <= hi * 2:
            continue
        ax.axvline(c.size, color="gray", linestyle=":", linewidth=1.2)
        ax.annotate(f"{c.name} {paper.size_text(c.size)}", xy=(c.size, 0.0), xycoords=("data", "axes fraction"),
                    xytext=(-2, 4), textcoords="offset points", rotation=90, va="bottom", ha="right",
                    fontsize=8, color="dimgray",
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})


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
    pts = [r for r in rows if r.size > 0 and math.isfinite(r.value.mid)]
    if not pts:
        return []
    xs = [r.size for r in pts]
    ax.plot(xs, [r.value.mid for r in pts], style, color=color, marker="o", markersize=3, linewidth=1.5,
            label=label)
    vals = [r.value.mid for r in pts]
    if band:
        ok = [math.isfinite(r.value.lo) and math.isfinite(r.value.hi) for r in pts]
        if any(ok):
            ax.fill_between(xs, [r.value.lo if o else r.value.mid for r, o in zip(pts, ok)],
                            [r.value.hi if o else r.value.mid for r, o in zip(pts, ok)],
                            where=ok, color=color, alpha=0.18, linewidth=0)
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
        pad = 0.05 * (high - low or span)
        ax.set_ylim(0 if low >= 0 else low - pad, high + pad)
    if ax.get_yscale() == "symlog":
        _decade_ticks(ax)
    if decorate is not None:
        decorate(ax)  # after the scale and limits: a twin axis copies them
    ax.legend(fontsize=8, loc="best", title="line: median; shade: min-max" if banded else None,
              title_fontsize=8)
    return save_figure(fig, path, data.note)


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
    for q, s, p, text, case in lines:
        rows = pick(data.rows, q, s, p)
        mode = p[: -len(OFF) - 1] if p.endswith(f"-{OFF}") else p
        if case:
            color, style = CASE_COLORS[case], PAGESIZE_STYLE.get(mode, ":")
        else:
            color, style = MODE_COLORS.get(mode, "tab:purple"), "-"
        values += _line(ax, rows, _label(s, text, many), color, style, data.banded(s))
        sizes += [r.size for r in rows if r.size > 0]
    _size_axis(ax, sizes, data.caches)
    ax.set_ylabel(ylabel)
    banded = any(data.banded(s) for _q, s, *_ in lines)
    return _finish(fig, ax, data, out / name, values, unit, banded, decorate)


def _modes(data: PlotData, vm: bool) -> list[tuple[str, str]]:
    """(series, paging label) pairs: per mode, or per on-vs-off comparison."""
    out = []
    for s in data.series:
        for m in s.modes():
            if not vm:
                out.append((s.name, m))
            elif m != OFF and OFF in s.points:
                out.append((s.name, f"{m}-{OFF}"))
    return out


def _series_axis(data: PlotData) -> Callable[["Axes"], None] | None:
    """A right axis in cycles per series, when every point has the same reps
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
        twin.set_ylabel(f"per series [cycles] ({quanta} quanta)")

    return decorate


def fig3(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_per_quantum", s, m, f"paging {m}", "") for s, m in _modes(data, False)]
    return _quantity_figure(data, out, "fig3-concurrency-overhead-absolute.png",
                            f"Figure 3 ({PAPER}): absolute overhead of concurrency",
                            "(multi - single) / (2 reps) [cycles per quantum]", lines, "cycles",
                            _series_axis(data))


def fig4(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_rel", s, m, f"paging {m}", "") for s, m in _modes(data, False)]
    return _quantity_figure(data, out, "fig4-concurrency-overhead-relative.png",
                            f"Figure 4 ({PAPER}): relative overhead of concurrency",
                            "(multi - single) / single [%]", lines, "%")


def fig5(data: PlotData, out: Path) -> Path | None:
    lines = [("vm_on_conc", s, p, f"paging {p.replace('-', ' vs ')}", "") for s, p in _modes(data, True)]
    return _quantity_figure(data, out, "fig5-vm-impact-on-concurrency-overhead.png",
                            f"Figure 5 ({PAPER}): impact of virtual memory on the concurrency overhead",
                            "(overhead on - overhead off) / overhead off [%]", lines, "%")


def fig6(data: PlotData, out: Path) -> Path | None:
    lines = [(f"vm_abs_{case}_per_quantum", s, p, f"{case}, paging {p.replace('-', ' vs ')}", case)
             for s, p in _modes(data, True) for case in ("single", "multi")]
    return _quantity_figure(data, out, "fig6-vm-overhead-absolute.png",
                            f"Figure 6 ({PAPER}): absolute overhead of virtual memory",
                            "(paging on - paging off) / (2 reps) [cycles per refill]", lines, "cycles",
                            _series_axis(data))


def fig7(data: PlotData, out: Path) -> Path | None:
    lines = [(f"vm_rel_{case}", s, p, f"{case}, paging {p.replace('-', ' vs ')}", case)
             for s, p in _modes(data, True) for case in ("single", "multi")]
    return _quantity_figure(data, out, "fig7-vm-overhead-relative.png",
                            f"Figure 7 ({PAPER}): relative overhead of virtual memory",
                            "(on - off) / off [%]", lines, "%")


def fig8(data: PlotData, out: Path) -> Path | None:
    lines = [("conc_on_vm", s, p, f"paging {p.replace('-', ' vs ')}", "") for s, p in _modes(data, True)]
    return _quantity_figure(data, out, "fig8-concurrency-impact-on-vm-overhead.png",
                            f"Figure 8 ({PAPER}): impact of concurrency on the virtual-memory overhead",
                            "(VM ovh. multi - VM ovh. single) / VM ovh. single [%]", lines, "%")


def ctxsw(data: PlotData, out: Path) -> Path | None:
    """Bars: cycles per switch per variant and paging mode; line: round robin vs n."""
    if not data.switches:
        return None
    plt = _pyplot()
    pairs = [p for p in data.switches if p.case != "rr"]
    rr = [p for p in data.switches if p.case == "rr"]
    fig, axes = plt.subplots(1, 2 if rr else 1, figsize=(11.0 if rr else 7.0, 5.0), dpi=DPI, squeeze=False)
    fig.suptitle("ctxsw: cost of one fiber switch", fontsize=13, fontweight="bold")
    modes = sorted({p.mode for p in data.switches}, key=lambda m: (m != OFF, m))
    ax = axes[0][0]
    variants = list(dict.fromkeys(p.case for p in pairs))
    width = 0.8 / max(1, len(modes))
    for i, mode in enumerate(modes):
        by_case = {p.case: p for p in pairs if p.mode == mode}
        xs = [j + (i - (len(modes) - 1) / 2) * width for j, v in enumerate(variants) if v in by_case]
        vals = [by_case[v] for v in variants if v in by_case]
        if not vals:
            continue
        err = [[max(0.0, p.value.mid - p.value.lo) for p in vals], [max(0.0, p.value.hi - p.value.mid) for p in vals]]
        bars = ax.bar(xs, [p.value.mid for p in vals], width, color=MODE_COLORS.get(mode, "tab:purple"),
                      label=f"paging {mode}", yerr=err if any(p.runs > 1 for p in vals) else None, capsize=3)
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
    ax.set_xticks(range(len(variants)), variants)
    ax.set_xlabel("switch variant (two fibers ping-ponging)")
    ax.set_ylabel("cycles per switch (median; bars: min-max)")
    ax.set_title(data.subtitle, fontsize=9, color="dimgray")
    if modes:
        ax.legend(fontsize=8)
    if rr:
        ax2 = axes[0][1]
        for mode in modes:
            pts = sorted((p for p in rr if p.mode == mode), key=lambda p: p.n)
            if not pts:
                continue
            color = MODE_COLORS.get(mode, "tab:purple")
            ax2.plot([p.n for p in pts], [p.value.mid for p in pts], "-o", color=color, label=f"paging {mode}")
            if any(p.runs > 1 for p in pts):
                ax2.fill_between([p.n for p in pts], [p.value.lo for p in pts], [p.value.hi for p in pts],
                                 color=color, alpha=0.18, linewidth=0)
        ax2.set_xscale("log", base=2)
        ns = sorted({p.n for p in rr})
        ax2.set_xticks(ns, [str(n) for n in ns])
        ax2.set_xlabel("fibers in the run queue (round robin), log2 scale")
        ax2.set_ylabel("cycles per switch")
        ax2.set_title("round robin through the run queue (callee-saved switch)", fontsize=9, color="dimgray")
        ax2.set_ylim(bottom=0)
        ax2.grid(True, alpha=0.3)
        ax2.legend(fontsize=8)
    return save_figure(fig, out / "ctxsw.png", data.note)


FigureFn = Callable[[PlotData, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("fig3", fig3), ("fig4", fig4), ("fig5", fig5), ("fig6", fig6), ("fig7", fig7), ("fig8", fig8),
    ("ctxsw", ctxsw),
)


def write_all(records: list[Record], out: Path) -> list[Path]:
    """Draw every figure the records have data for; return the files written."""
    data = PlotData.of(records)
    if not data.rows and not data.switches:
        return []
    written: list[Path] = []
    for _name, fn in FIGURES:
        path = fn(data, out)
        if path is not None:
            written.append(path)
    return written
