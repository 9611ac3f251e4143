"""Figures for smplocks, shootdown, aslock and linuxvm, as PNG files: each quantity against the number of CPUs
(k), one line per lock, mode, space or kind of worker, with the band of the runs. Same style as lockplots.py;
an emulator run carries its caveat at the bottom of every figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import smplockreport as sr
from .interval import Interval
from .lockplots import Context, draw
from .plots import DPI, SIZE, _pyplot, save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _new(ctx: Context, title: str, mode: str) -> tuple["Figure", "Axes"]:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(ctx.subtitle(mode), fontsize=9, color="dimgray")
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def _save(fig: "Figure", ctx: Context, path: Path) -> Path:
    note = sr.caveat(ctx.run) or ctx.note or ""
    return save_figure(fig, path, note)


def _lines(ax: "Axes", g: dict[str, dict[int, Interval]], label: Callable[[str], str] = str) -> list[int]:
    """One line per row of g against k, its band shaded; returns every k drawn."""
    drawn: set[int] = set()
    for row, vals in g.items():
        kk = sorted(k for k, v in vals.items() if v.ok)
        if not kk:
            continue
        vs = [vals[k] for k in kk]
        (line,) = ax.plot(kk, [v.mid for v in vs], "-o", markersize=4, label=label(row))
        if any(v.bounded and v.lo != v.hi for v in vs):
            ax.fill_between(kk, [v.lo if v.bounded else v.mid for v in vs], [v.hi if v.bounded else v.mid for v in vs],
                            color=line.get_color(), alpha=0.15, linewidth=0)
        drawn.update(kk)
    return sorted(drawn)


def _axes_k(ax: "Axes", kk: list[int], ylabel: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(kk, [str(k) for k in kk])
    ax.set_xlabel("CPUs working (k), log2 scale")
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def contended(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.SMPLOCKS)
    g = sr.grid(pts, "contended", "lock", sr.LOCKS)
    if not g:
        return None
    fig, ax = _new(ctx, "smplocks: a lock+unlock with k CPUs contending", pts[0].mode)
    kk = _lines(ax, g)
    _axes_k(ax, kk, f"{ctx.units.short} per lock+unlock over all CPUs (median), log scale")
    return _save(fig, ctx, out / "smplocks-contended.png")


def shootdown(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.SHOOTDOWN)
    g = sr.grid(pts, "shootdown", "mode", sr.SHOOT_MODES)
    if not g:
        return None
    fig, ax = _new(ctx, "shootdown: changing a page's entry that k CPUs use", pts[0].mode)
    kk = _lines(ax, g, {"ipi": "IPI, receivers invlpg and acknowledge", "mailbox": "polled mailbox",
                        "isolated": "isolated address spaces (nothing remote)"}.get)
    _axes_k(ax, kk, f"{ctx.units.short} per change (median), log scale")
    return _save(fig, ctx, out / "shootdown.png")


def aslock(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.ASLOCK)
    if not pts:
        return None
    fig, ax = _new(ctx, "aslock: one address-space lock for k CPUs vs one each", pts[0].mode)
    g = {f"{op}, {space}": vals for op in sr.AS_OPS for space, vals in sr.grid(pts, op, "space", sr.SPACES).items()}
    kk = _lines(ax, g)
    _axes_k(ax, kk, f"{ctx.units.short} per operation over all CPUs (median), log scale")
    return _save(fig, ctx, out / "aslock.png")


def linuxvm(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.LINUXVM)
    g = {f"{op}, {who}": vals for op in sr.VM_OPS for who, vals in sr.grid(pts, op, "workers", sr.WORKERS).items()}
    if not g:
        return None
    fig, ax = _new(ctx, f"linuxvm: threads of one process vs processes ({sr.kernel_text(pts)})", pts[0].mode)
    kk = _lines(ax, g)
    _axes_k(ax, kk, f"{ctx.units.short} per operation over all workers (median), log scale")
    return _save(fig, ctx, out / "linuxvm.png")


def tlb_shootdown(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.LINUXVM)
    g = {f"{op}, siblings {who}": vals for op in ("munmap", "mprotect")
         for who, vals in sr.shoot_grid(pts, op).items()}
    if not g:
        return None
    fig, ax = _new(ctx, "linuxvm: munmap/mprotect while the other CPUs spin", pts[0].mode)
    kk = _lines(ax, g)
    _axes_k(ax, kk, f"{ctx.units.short} per operation of CPU 0 (median), log scale")
    return _save(fig, ctx, out / "linuxvm-shootdown.png")


FigureFn = Callable[[Context, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("smplocks-contended", contended), ("shootdown", shootdown), ("aslock", aslock), ("linuxvm", linuxvm),
    ("linuxvm-shootdown", tlb_shootdown),
)


def write_all(run: "sr.Run", out: Path) -> list[Path]:
    return draw(FIGURES, sr.BENCHES, run, out)
