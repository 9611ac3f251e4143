"""Figures for smplocks, shootdown, aslock and linuxvm, as PNG files: each quantity against the number of CPUs
(k), one line per lock, mode, space or kind of worker, with the band of the runs. Same style as lockplots.py;
an emulator run carries its caveat at the bottom of every figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import smplockreport as sr
from .interval import Interval
from .plotkit import DPI, SIZE, FigureContext as Context, draw, pyplot as _pyplot, save_figure

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
                            color=line.get_color(), alpha=0.1, linewidth=0)
        drawn.update(kk)
    return sorted(drawn)


def _axes_k(ax: "Axes", kk: list[int], ylabel: str) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(kk, [str(k) for k in kk])
    ax.set_xlabel("CPUs working (k), log2 scale")
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def _figure(ctx: Context, out: Path, name: str, title: str, mode: str, g: dict[str, dict[int, Interval]],
            ylabel: str, label: Callable[[str], str] = str, note: str = "") -> Path | None:
    """One quantity against k, a line per row of g (`note` in a corner); None when g is empty."""
    if not g:
        return None
    fig, ax = _new(ctx, title, mode)
    _axes_k(ax, _lines(ax, g, label), f"{ctx.units.short} {ylabel} (median), log scale")
    if note:
        ax.text(0.99, 0.01, note, transform=ax.transAxes, fontsize=8, color="dimgray", ha="right", va="bottom")
    return _save(fig, ctx, out / f"{name}.png")


def _mode(pts: list[sr.Point]) -> str:
    return pts[0].mode if pts else ""


def contended(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.SMPLOCKS)
    return _figure(ctx, out, "smplocks-contended", "smplocks: a lock+unlock with k CPUs contending", _mode(pts),
                   sr.grid(pts, "contended", "lock", sr.LOCKS), "per lock+unlock over all CPUs")


def sweep(ctx: Context, out: Path) -> Path | None:
    """Per lock+unlock against lock_loops (evenly spaced, labelled with the spin as time), a line per release
    rule and unlock_loops at each k the sweep ran at, starve's one setting a cross, the references (NPTL's
    algorithm, glibc's mutexes) flat dotted lines."""
    pts = sr.points_of(ctx.run, sr.SMPLOCKS)
    rows = sr.sweep_rows(pts)
    if not rows:
        return None
    loops = sorted({key[1] for key in rows if key[0] in sr.RULES and isinstance(key[1], int)})
    pause = sr.pause_ticks(pts)
    fig, ax = _new(ctx, "smplocks: spin-then-block, the release rule and the spin settings", _mode(pts))
    for (lock, a, b), by_k in rows.items():
        for k, p in sorted(by_k.items()):
            if not p.value.ok:
                continue
            if lock in sr.RULES and a in loops:
                continue
            if lock in sr.SPINBLOCKS and a in loops:  # starve, at one setting: a point
                ax.plot([loops.index(a)], [p.value.mid], "x", markersize=7,
                        label=f"{sr.SAY[lock]}, unlock_loops {b}, {k} CPUs")
                continue
            ax.axhline(p.value.mid, linestyle=":", linewidth=1, color="gray")
            ax.text(len(loops) - 1, p.value.mid, f" {lock}, {k} CPUs", fontsize=7, color="dimgray", va="bottom",
                    ha="right")
    for rule in sr.RULES:
        for b in sorted({key[2] for key in rows if key[0] == rule}):
            for k in sorted({k for key, by_k in rows.items() if key[0] == rule for k in by_k}):
                xs = [i for i, a in enumerate(loops) if k in rows.get((rule, a, b), {})]
                vs = [rows[(rule, loops[i], b)][k].value for i in xs]
                if xs:
                    ax.plot(xs, [v.mid for v in vs], "-o" if rule == sr.BARGE else "--s", markersize=4,
                            label=f"{sr.SAY[rule]}, unlock_loops {b}, {k} CPUs")
    ax.set_xticks(range(len(loops)), [f"{a}\n{sr.loops_time(ctx.run, pause, a)}" for a in loops])
    ax.set_xlabel("lock_loops (pauses before parking; as time at one pause each)")
    ax.set_yscale("log")
    ax.set_ylabel(f"{ctx.units.short} per lock+unlock over all CPUs (median), log scale")
    ax.legend(fontsize=8)
    return _save(fig, ctx, out / "smplocks-sweep.png")


SHOOT_LABELS = {"ipi": "IPI, receivers invlpg and acknowledge", "mailbox": "polled mailbox",
                "isolated": "isolated address spaces (nothing remote)"}


def shootdown(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.SHOOTDOWN)
    return _figure(ctx, out, "shootdown", "shootdown: changing a page's entry that k CPUs use", _mode(pts),
                   sr.grid(pts, "shootdown", "mode", sr.SHOOT_MODES), "per change",
                   lambda m: SHOOT_LABELS.get(m, m))


def aslock(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.ASLOCK)
    g = {f"{op}, {space}": vals for op in sr.AS_OPS for space, vals in sr.grid(pts, op, "space", sr.SPACES).items()}
    return _figure(ctx, out, "aslock", "aslock: one address-space lock for k CPUs vs one each", _mode(pts), g,
                   "per operation over all CPUs")


def linuxvm(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.LINUXVM)
    g = {f"{op}, {who}": vals for op in sr.VM_OPS for who, vals in sr.grid(pts, op, "workers", sr.WORKERS).items()}
    path = _figure(ctx, out, "linuxvm", "linuxvm: k threads of one process vs k processes", _mode(pts), g,
                   "per operation over all workers", note=sr.kernel_text(pts))
    return path


def tlb_shootdown(ctx: Context, out: Path) -> Path | None:
    pts = sr.points_of(ctx.run, sr.LINUXVM)
    g: dict[str, dict[int, Interval]] = {}
    for op in ("munmap", "mprotect"):
        rows = sr.shoot_grid(pts, op)
        alone = rows.pop("none", {})  # k = 1: where both kinds of sibling start from
        g.update({f"{op}, sibling {who}": {**alone, **vals} for who, vals in rows.items()})
    return _figure(ctx, out, "linuxvm-shootdown", "linuxvm: munmap/mprotect while the other CPUs spin", _mode(pts), g,
                   "per operation of CPU 0 (k = 1: alone)")


FigureFn = Callable[[Context, Path], "Path | None"]
FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("smplocks-contended", contended), ("smplocks-sweep", sweep), ("shootdown", shootdown), ("aslock", aslock), ("linuxvm", linuxvm),
    ("linuxvm-shootdown", tlb_shootdown),
)


def write_all(run: "sr.Run", out: Path) -> list[Path]:
    return draw(FIGURES, sr.BENCHES, run, out)
