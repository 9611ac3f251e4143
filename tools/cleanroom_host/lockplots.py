"""Figures for the locks, create and peers benchmarks, as PNG files.

Same style as plots.py (matplotlib with the Agg backend, imported only when a
figure is drawn). Each figure draws the run's first paging mode (`off` on a
kernel run, `host` on a hosted one); the tables have every mode.
"""

from __future__ import annotations

from pathlib import Path

from . import lockreport as lr
from .cells import collect, find, modes
from .context import Run
from .interval import Interval
from .plotkit import OURS, THEIRS, FigureContext, FigureFn, draw, errors_of, new_figure, pair_bars, save


def litethreads(ctx: FigureContext, out: Path) -> Path | None:
    points = [p for p in collect(ctx.records, lr.LOCKS) if p.case == "litethreads"]
    if not points:
        return None
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    fig, ax = new_figure(ctx, "litethreads: cost per item vs the unlock spin", mode)
    markers = "osD^v"
    for i, lock in enumerate(sorted({int(p.params.get("lock_loops", 0)) for p in points})):
        pts = sorted((p for p in points if int(p.params.get("lock_loops", 0)) == lock),
                     key=lambda p: int(p.params.get("unlock_loops", 0)))
        ax.plot([int(p.params.get("unlock_loops", 0)) for p in pts], [p.value.mid for p in pts],
                linestyle="none", marker=markers[i % len(markers)], markersize=10 - 2 * (i % 3),
                label=f"lock_loops = {lock}", alpha=0.85)
    chk = next((c for c in lr.lite_checks(points) if c.mode == mode), None)
    if chk is not None and chk.slope_2000.ok:
        base = find(points, mode, "litethreads", lock_loops=0, unlock_loops=0)
        if base is not None:
            slope = chk.slope_2000.mid
            xs = [0.0] + [10 ** (k / 20) for k in range(0, 67)]  # 1 .. about 2200, smooth on symlog
            ax.plot(xs, [base.mid + slope * x for x in xs], ":", color="gray", linewidth=1,
                    label=f"c(0,0) + {slope:.1f} x unlock_loops (fit from 0 and 2000)")
    ax.set_xscale("symlog", linthresh=100)
    ax.set_xticks([0, 100, 200, 1000, 2000], ["0", "100", "200", "1000", "2000"])
    ax.set_yscale("log")
    ax.set_xlabel("unlock_loops (spins in unlock waiting for a taker), symlog scale")
    ax.set_ylabel(f"{ctx.units.short} per item (median), log scale")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "litethreads.png")


def valchanov(ctx: FigureContext, out: Path) -> Path | None:
    points = [p for p in collect(ctx.records, lr.LOCKS) if p.case == "valchanov"]
    if not points:
        return None
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    labels = [f"{p.params.get('lock')}" for p in points]
    vals = [p.value for p in points]
    colors = [OURS] * len(vals)
    nptl = next((p for p in collect(ctx.records, lr.PEERS) if p.case == "lock_pthread_mutex"), None)
    if nptl is not None:
        labels.append("NPTL mutex\n(peers, 1 thread)")
        vals.append(nptl.value)
        colors.append(THEIRS)
    threads = points[0].params.get("threads")
    fig, ax = new_figure(ctx, f"valchanov: {threads} fibers taking turns on one lock", mode)
    bars = ax.bar(range(len(vals)), [v.mid for v in vals], 0.6, color=colors, yerr=errors_of(vals), capsize=3)
    ax.bar_label(bars, fmt="%.0f", fontsize=9, padding=2)
    ax.set_xticks(range(len(vals)), labels)
    ax.set_xlabel("lock kind (cleanroom" + (", and glibc's pthread mutex uncontended, from bench peers)"
                                            if nptl is not None else ")"))
    ax.set_ylabel(f"{ctx.units.short} per lock+unlock (median; bars: interval)")
    ax.set_ylim(0, max(v.hi if v.bounded else v.mid for v in vals) * 1.15)
    return save(fig, ctx, out / "valchanov.png")


def create(ctx: FigureContext, out: Path) -> Path | None:
    points = collect(ctx.records, lr.CREATE)
    if not points:
        return None
    mode = modes(points)[0]
    rows = [r for r in lr.create_rows(points) if r[1] == mode]
    fig, ax = new_figure(ctx, "create: cost of one fiber vs fibers outstanding", mode)
    for idx, name, color in ((2, "pool (stack pool)", OURS), (3, "firstfit (first-fit heap)", THEIRS)):
        pts = [(r[0], r[idx]) for r in rows if r[idx] is not None]
        xs, vs = [n for n, _v in pts], [v for _n, v in pts]
        ax.plot(xs, [v.mid for v in vs], "-o", color=color, label=name)
        if any(v.bounded and v.lo != v.hi for v in vs):
            ax.fill_between(xs, [v.lo if v.bounded else v.mid for v in vs], [v.hi if v.bounded else v.mid for v in vs],
                            color=color, alpha=0.18, linewidth=0)
    ns = [r[0] for r in rows]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("fibers outstanding (alive at once), log2 scale")
    ax.set_ylabel(f"{ctx.units.short} per fiber (create, run to exit, join; median)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, ctx, out / "create.png")


def peers(ctx: FigureContext, out: Path) -> Path | None:
    rows = lr.peer_rows(ctx.records)
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    fig, ax = new_figure(ctx, "peers: cleanroom vs glibc/NPTL on the same host", mode)
    ours = [r.ours.value.mid if r.ours else float("nan") for r in rows]
    theirs = [r.theirs.value.mid if r.theirs else float("nan") for r in rows]
    xs, width = pair_bars(ax, ours, theirs, ("cleanroom", "glibc / NPTL"),
                          [r.ratio if r.theirs is not None else Interval.none() for r in rows], ctx.units.short)
    for x, r in zip(xs, rows):
        if r.theirs is None:
            ax.annotate("skipped", xy=(x + width / 2, 1), xycoords=("data", "data"), ha="center",
                        va="bottom", fontsize=8, rotation=90, color="dimgray")
    top = max(v for v in ours + theirs if v == v)
    ax.set_ylim(1, top * 12)
    ax.set_xticks(xs, [r.what.replace(", ", "\n") for r in rows], fontsize=8)
    ax.set_xlabel("comparison (x: NPTL / cleanroom)")
    ax.legend(fontsize=8, loc="center right")
    return save(fig, ctx, out / "peers.png")


# (bits, shape) -> bar colour and hatch: blue 32-bit, orange 64-bit; the asymmetric shape hatched
SERIES_STYLE = {(32, "symmetric"): ("tab:blue", ""), (32, "asymmetric"): ("lightsteelblue", "//"),
                (64, "symmetric"): ("tab:orange", ""), (64, "asymmetric"): ("navajowhite", "//")}


def switches(ctx: FigureContext, out: Path) -> Path | None:
    """The peers' switch table as bars: per system, one bar per (bits, shape) the run has, log y."""
    rows = lr.switch_rows(ctx.records)
    if not rows:
        return None
    names = list(dict.fromkeys(r.name for r in rows))
    series = [(b, shape) for b in lr.switch_bits(rows) for shape in lr.SHAPES
              if any(r.shape == shape and b in r.values for r in rows)]
    mode = modes(collect(ctx.records, lr.PEERS))[0]
    fig, ax = new_figure(ctx, "peers: one switch, 32- and 64-bit, both shapes", mode)
    width = 0.8 / len(series)
    for i, (b, shape) in enumerate(series):
        vals = []
        for name in names:
            row = next((r for r in rows if r.name == name and r.shape == shape), None)
            vals.append(row.values[b] if row and b in row.values else Interval.none())
        xs = [x - 0.4 + width * (i + 0.5) for x in range(len(names))]
        color, hatch = SERIES_STYLE.get((b, shape), ("gray", ""))
        heights = [v.mid for v in vals]
        bars = ax.bar(xs, heights, width, color=color, hatch=hatch, edgecolor="dimgray", linewidth=0.5,
                      label=f"{b}-bit, {shape}", yerr=errors_of(vals), capsize=2)
        ax.bar_label(bars, labels=[f"{v.mid:.0f}" if v.ok else "" for v in vals], fontsize=7, padding=2)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("system (symmetric: both sides run one loop; asymmetric: a driver and a coroutine)")
    ax.set_ylabel(f"{ctx.units.short} per switch (median; bars: interval), log scale")
    top = max(v for r in rows for v in (x.mid for x in r.values.values()) if v == v)
    ax.set_ylim(1, top * 8)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "peers-switches.png")


FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("litethreads", litethreads), ("valchanov", valchanov), ("create", create), ("peers", peers),
    ("switches", switches),
)


def write_all(run: Run, out: Path) -> list[Path]:
    return draw(FIGURES, lr.BENCHES, run, out)
