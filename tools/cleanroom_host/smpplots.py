"""Figures of the multi-core sharing benchmarks (smpreport.py), as PNG files: the coherence core-to-core
matrix as a heat map, falseshare's time per update vs CPUs, isolation's speedup vs the commit interval
and vs CPUs, and workset's two-CPU case beside single and multi.

Same style as plots.py and lockplots.py (matplotlib with the Agg backend, imported only when a figure is
drawn). Each figure draws the run's first paging mode; the tables have every mode. An emulated run's
figures carry smpreport's caveat at the bottom.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import smpreport as sr
from .context import Run
from .interval import Interval
from .paper import size_text
from .plotkit import DPI, FigureContext as Context, errors_of, pyplot as _pyplot, save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDE = (11.0, 5.0)
CASE_COLORS = {"packed": "tab:red", "padded": "tab:blue", "object@0": "tab:green", "object@24": "tab:purple",
               "object@56": "tab:olive"}


def _note(run: Run) -> str:
    return sr.caveat(run) or ""


def _panels(ctx: Context, title: str, mode: str, n: int) -> tuple["Figure", list["Axes"]]:
    plt = _pyplot()
    fig, axes = plt.subplots(1, n, figsize=WIDE if n > 1 else (9.0, 5.4), dpi=DPI, squeeze=False)
    fig.suptitle(f"{title}\n{ctx.subtitle(mode)}", fontsize=11)
    return fig, list(axes[0])


def _line(ax: "Axes", xs: list[Any], vals: list[Interval | None], label: str, color: str | None = None,
          style: str = "-o") -> None:
    pts = [(x, v) for x, v in zip(xs, vals) if v is not None and v.ok]
    if not pts:
        return
    px, pv = [x for x, _v in pts], [v for _x, v in pts]
    ax.errorbar(px, [v.mid for v in pv], yerr=errors_of(pv), fmt=style, color=color, label=label, capsize=3,
                markersize=4)


def coherence_matrix(ctx: Context, out: Path) -> Path | None:
    pairs = sr.coherence_pairs(ctx.records)
    cpus, cells = sr.matrix(pairs)
    if len(cpus) < 2:
        return None
    n = len(cpus)
    grid = [[cells[(a, b)].mid if (a, b) in cells else float("nan") for b in cpus] for a in cpus]
    fig, (ax,) = _panels(ctx, "coherence: one line's round trip between two CPUs (CAS ping-pong)", pairs[0].mode, 1)
    im = ax.imshow(grid, cmap="viridis")
    fig.colorbar(im, ax=ax, label=f"{ctx.units.short} per round trip (median)")
    labels = [sr.cpu_label(pairs, c) for c in cpus]
    ax.set_xticks(range(n), labels, fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("CPU (index in the run, APIC id / OS CPU number)")
    ax.set_ylabel("CPU")
    if n <= 16:
        top = max(v for row in grid for v in row if v == v)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if v == v:
                    ax.text(j, i, f"{v:.4g}", ha="center", va="center", fontsize=7,
                            color="white" if v < 0.6 * top else "black")
    return save_figure(fig, out / "coherence_matrix.png", _note(ctx.run))


def falseshare(ctx: Context, out: Path) -> Path | None:
    rows = sr.share_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    ops = sr.ops_of(rows)
    fig, axes = _panels(ctx, "falseshare: time per update vs CPUs (Liu Fig. 1.3; Predator's object offsets)",
                        mode, len(ops))
    for ax, op in zip(axes, ops):
        mine = sorted((r for r in rows if r.mode == mode and r.op == op), key=lambda r: r.k)
        ks = [r.k for r in mine]
        series: list[tuple[str, Callable[[sr.ShareRow], Interval | None]]] = [
            ("packed", lambda r: r.packed), ("padded", lambda r: r.padded)]
        series += [(f"object@{o}", lambda r, o=o: r.objects.get(o)) for o in sr.OFFSETS]
        for name, get in series:
            _line(ax, ks, [get(r) for r in mine], name, CASE_COLORS.get(name))
        ax.set_title(f"{op} increments", fontsize=10)
        ax.set_xticks(ks)
        ax.set_xlabel("CPUs k (each updating its own data)")
        ax.set_ylabel(f"{ctx.units.short} per update (median; bars: interval), log scale")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, out / "falseshare.png", _note(ctx.run))


def _finish(ax: "Axes", op: str, xlabel: str, ylabel: str, legend: int = 8) -> None:
    """A speedup panel's common parts: the line at 1, log y, the op as title, labels, grid, legend."""
    ax.axhline(1.0, color="gray", linewidth=1)
    ax.set_yscale("log")
    ax.set_title(f"{op} increments", fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend)


def _iso_rows(ctx: Context) -> tuple[str, list[str], list[sr.IsoRow]]:
    rows = sr.iso_rows(ctx.records)
    mode = rows[0].mode if rows else ""
    return mode, sr.ops_of(rows), [r for r in rows if r.mode == mode]


def shown_ks(ks: list[int]) -> set[int]:
    """The k a figure draws a line for: 1, 2, 4, 8, ... and the largest (32 lines and their legend would
    not fit; every k is in the tables and smp.csv)."""
    return {k for k in ks if k & (k - 1) == 0} | ({max(ks)} if ks else set())


def isolation_m(ctx: Context, out: Path) -> Path | None:
    mode, ops, rows = _iso_rows(ctx)
    if not any(r.isolated for r in rows):
        return None
    fig, axes = _panels(ctx, "isolation: shared space / isolated spaces vs the commit interval", mode, len(ops))
    colors = _pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = shown_ks([r.k for r in rows])
    for ax, op in zip(axes, ops):
        for i, r in enumerate(sorted((r for r in rows if r.op == op and r.k in drawn), key=lambda r: r.k)):
            ms = sorted(r.isolated)
            color = colors[i % len(colors)]
            _line(ax, ms, [r.speedup(m) for m in ms], f"k={r.k}", color)
            if r.bound.ok:
                ax.axhline(r.bound.mid, color=color, linestyle="--", linewidth=1,
                           label=f"k={r.k}: padded by hand")
        ax.set_xscale("log")
        _finish(ax, op, "increments between commits (M), log scale",
                "speedup: shared / isolated (log; >1: isolation faster)")
    return save_figure(fig, out / "isolation_commit.png", _note(ctx.run))


def isolation_k(ctx: Context, out: Path) -> Path | None:
    mode, ops, rows = _iso_rows(ctx)
    if not any(r.isolated for r in rows):
        return None
    fig, axes = _panels(ctx, "isolation: shared space / isolated spaces vs CPUs", mode, len(ops))
    for ax, op in zip(axes, ops):
        mine = sorted((r for r in rows if r.op == op), key=lambda r: r.k)
        ks = [r.k for r in mine]
        for m in sorted({m for r in mine for m in r.isolated}):
            _line(ax, ks, [r.speedup(m) if m in r.isolated else None for r in mine], f"commit every {m}")
        _line(ax, ks, [r.bound for r in mine], "padded by hand", "black", "--s")
        ax.set_xticks(ks)
        _finish(ax, op, "CPUs k", "speedup: shared / isolated (log)", legend=7)
    return save_figure(fig, out / "isolation_cpus.png", _note(ctx.run))


def workset_parallel(ctx: Context, out: Path) -> Path | None:
    rows = sr.parallel_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode and r.size > 0]
    if not rows:
        return None
    fig, (ax,) = _panels(ctx, "workset: one CPU (single, multi) vs two CPUs (parallel)", mode, 1)
    sizes = [r.size for r in rows]
    for name, get, color in (("single (one CPU, one buffer after the other)", lambda r: r.single, "tab:blue"),
                             ("multi (one CPU, two fibers)", lambda r: r.multi, "tab:red"),
                             ("parallel (two CPUs, a buffer each)", lambda r: r.parallel, "tab:green")):
        _line(ax, sizes, [get(r) for r in rows], name, color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [size_text(s) for s in sizes], fontsize=7, rotation=45)
    ax.set_xlabel("working set: bytes per buffer (log2)")
    ax.set_ylabel(f"{ctx.units.short} per series (median)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, out / "workset_parallel.png", _note(ctx.run))


FigureFn = Callable[[Context, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("coherence_matrix", coherence_matrix), ("falseshare", falseshare), ("isolation_commit", isolation_m),
    ("isolation_cpus", isolation_k), ("workset_parallel", workset_parallel),
)


def write_all(run: Run, out: Path) -> list[Path]:
    """Every figure the run has data for; the files written."""
    ctx = Context(run)
    return [path for _name, fn in FIGURES if (path := fn(ctx, out)) is not None]
