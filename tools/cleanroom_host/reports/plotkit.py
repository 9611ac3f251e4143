"""What every family's figures share (workset.py, locks.py, aspace.py, smp.py, smplocks.py): matplotlib
with the Agg backend, imported only when a figure is drawn, so the rest of the
tool starts fast; the figure size, the subtitle and the run's note; saving, with
every word inside the canvas; the working-set axis; paired bars; drawing a
module's list of figures.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..stats.interval import NOISE, Interval, verdict
from . import paper
from .context import Run

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.text import Text

DPI = 110
SIZE = (9.0, 5.4)
OURS, THEIRS = "tab:blue", "tab:red"  # cleanroom's bars and lines; the other side's (a paper, NPTL, ...)


def pyplot() -> Any:
    """matplotlib.pyplot with the Agg backend, imported only now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


EDGE_PX = 3  # what a text keeps clear of the canvas's edge
NARROWEST = 12  # characters a wrapped line keeps at the least


def save_figure(fig: "Figure", path: Path, note: str) -> Path:
    """Writes a figure as PNG, with the run's note (e.g. "emulated: no caches") at the bottom, wrapped to
    the figure's width. A title, subtitle or note wider than the canvas, or an axis label longer than its
    axis, is wrapped at its spaces (fit_text), and the axes are laid out again to make room for its lines.
    The note is the figure's x label (supxlabel), which tight_layout keeps room for in one pass: room kept
    with its rect= costs a second pass, and the passes were half of a figure's time. Laid out, the figure
    keeps no layout engine: tight_layout leaves a placeholder behind, for which savefig would first draw
    the whole figure without rendering it (the same pixels; 10 % of a report's time)."""
    renderer = fig.canvas.get_renderer()
    if note:
        text = fig.supxlabel(note, x=0.01, y=0.01, fontsize=8, color="firebrick", ha="left", va="bottom")
        fit_text(text, renderer, EDGE_PX, fig.bbox.width - EDGE_PX)
    fig.tight_layout()
    if fit_texts(fig, renderer):
        fig.tight_layout()
    fig.set_layout_engine(None)  # nothing left to lay out
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    pyplot().close(fig)
    return path


def fit_texts(fig: "Figure", renderer: "RendererBase") -> bool:
    """Wraps the figure's own texts (its title, the note) and each axes' title to the canvas's width and each
    axis label to its axis' length; whether any changed."""
    width = fig.bbox.width
    spans: list[tuple["Text", float, float]] = [(t, EDGE_PX, width - EDGE_PX) for t in fig.texts]
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        spans += [(ax.title, EDGE_PX, width - EDGE_PX), (ax.xaxis.label, box.x0, box.x1),
                  (ax.yaxis.label, box.y0, box.y1)]
    return any([fit_text(text, renderer, lo, hi) for text, lo, hi in spans])  # each, not up to the first


def fit_text(text: "Text", renderer: "RendererBase", lo: float, hi: float) -> bool:
    """Wraps a text at its spaces into the fewest lines that lie within lo..hi pixels along its direction (x,
    or y for a text turned upright); whether it changed. Mathtext ($...$) stays whole."""
    words = text.get_text()
    if not text.get_visible() or not words.strip() or "$" in words:
        return False
    upright = text.get_rotation() % 180 == 90

    def span() -> tuple[float, float]:
        box = text.get_window_extent(renderer)
        return (box.y0, box.y1) if upright else (box.x0, box.x1)

    a, b = span()
    if lo <= a and b <= hi:
        return False
    lines = words.split("\n")

    def wrapped(chars: int) -> list[str]:
        return [part for line in lines for part in textwrap.wrap(line, chars) or [""]]

    longest = max(len(line) for line in lines)
    # from the widest that may fit (characters in proportion to the room) down to the first that does
    for chars in range(max(NARROWEST, min(longest - 1, int(longest * (hi - lo) / (b - a)))), NARROWEST - 1, -1):
        text.set_text("\n".join(wrapped(chars)))
        a, b = span()
        if lo <= a and b <= hi:
            break
    if text.get_horizontalalignment() == "center":
        # a centred text's lines as narrow as their number allows: even lines, never a last word alone (a
        # left-aligned note fills its lines like a paragraph)
        count = len(wrapped(chars))
        while chars > NARROWEST and len(wrapped(chars - 1)) == count:
            chars -= 1
        text.set_text("\n".join(wrapped(chars)))
    return True


def new_axes(title: str, subtitle: str, height: float = SIZE[1]) -> tuple["Figure", "Axes"]:
    """A figure of the common width (and size, unless a height in inches is given) with its title and a grey
    subtitle."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(SIZE[0], height), dpi=DPI)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(subtitle, fontsize=9, color="dimgray")
    return fig, ax


def size_axis(ax: "Axes", sizes: list[int], caches: list[paper.Cache]) -> None:
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



class FigureContext:
    """The subtitle, the unit and the emulator note shared by the figures."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.records = run.records
        self.units = run.units
        cpu, hello = run.first("cpu"), run.first("hello")
        self.where = str((hello or {}).get("platform") or "bare")
        if cpu and cpu.get("platform") and cpu.get("platform") != self.where:
            self.where = f"{self.where}, {cpu.get('platform')}"
        self.cpu = paper.describe_cpu(cpu)
        self.note = run.machine.trust if run.machine.emulated else None

    def subtitle(self, mode: str) -> str:
        return f"{self.cpu} ({self.where}); paging {mode}; unit: {self.units.name}"


def new_figure(ctx: FigureContext, title: str, mode: str) -> tuple["Figure", "Axes"]:
    """A figure of one paging mode, with a horizontal grid."""
    fig, ax = new_axes(title, ctx.subtitle(mode))
    ax.grid(True, which="major", axis="y", alpha=0.3)
    return fig, ax


def save(fig: "Figure", ctx: FigureContext, path: Path) -> Path:
    return save_figure(fig, path, ctx.note)


def ratio_label(v: Interval) -> str:
    """"x3.1", or "~x1" when the ratio's band holds 1."""
    if not v.ok:
        return ""
    if verdict(v, 1.0) == NOISE:
        return "~x1"
    text = f"x{v.mid:.3g}"
    if v.bounded and v.width > 0.1 * abs(v.mid):  # a wide band is part of the answer
        text += f"\n({v.lo:.3g}..{v.hi:.3g})"
    return text


def pair_bars(ax: "Axes", left: list[float], right: list[float], labels: tuple[str, str],
              ratios: list[Interval], unit: str) -> tuple[list[int], float]:
    """Two bars a comparison (left ours, right theirs) with their values, the
    ratio above each pair ("~x1" inside the noise), log y. Returns the x positions and the bar width."""
    width = 0.38
    xs = list(range(len(left)))
    for vals, dx, color, label in ((left, -width / 2, OURS, labels[0]), (right, width / 2, THEIRS, labels[1])):
        bars = ax.bar([x + dx for x in xs], vals, width, color=color, label=label)
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
    for x, ratio in zip(xs, ratios):
        if ratio.ok:
            ax.annotate(ratio_label(ratio), xy=(x, 1.0), xycoords=("data", "axes fraction"), xytext=(0, -12),
                        textcoords="offset points", ha="center", fontsize=8, color="black")
    ax.set_yscale("log")
    ax.set_ylabel(f"{unit} per operation (median), log scale")
    return xs, width


FigureFn = Callable[[FigureContext, Path], "Path | None"]


def draw(figures: tuple[tuple[str, FigureFn], ...], benches: tuple[str, ...], run: Run, out: Path) -> list[Path]:
    """Draw every figure the run has data for (when it has results of
    one of these benchmarks); return the files written."""
    if not run.results(*benches):
        return []
    ctx = FigureContext(run)
    return [path for _name, fn in figures if (path := fn(ctx, out)) is not None]


def errors_of(vals: list[Any]) -> list[list[float]] | None:
    """Error bars from Intervals (lo..hi), or None when no band is known and wider than nothing."""
    if all(not v.bounded or v.lo == v.hi for v in vals):
        return None
    return [[max(0.0, v.mid - v.lo) if v.bounded else 0.0 for v in vals],
            [max(0.0, v.hi - v.mid) if v.bounded else 0.0 for v in vals]]


def band(ax: "Axes", xs: list[Any], vals: list[Interval], color: Any, alpha: float = 0.18) -> None:
    """A line's interval as a shaded band (each point's lo..hi, its median where no band is known), drawn
    only where some point has a band wider than nothing."""
    if any(v.bounded and v.lo != v.hi for v in vals):
        ax.fill_between(xs, [v.lo if v.bounded else v.mid for v in vals], [v.hi if v.bounded else v.mid for v in vals],
                        color=color, alpha=alpha, linewidth=0)
