"""Figures for the `aspace` benchmark, as PNG files.

Same style as lockplots.py (matplotlib with the Agg backend, imported only
when a figure is drawn). Each figure draws the run's first paging mode; the
tables have every mode. The TLB refill figure's lines are tlb_refill's
`region` (4 KiB pages or one 4 MiB page) x `pge` within that mode.
"""

from __future__ import annotations

from pathlib import Path

from . import aspacereport as ar
from .cells import collect, modes
from .context import Run
from .interval import Interval
from .plotkit import OURS, THEIRS, FigureContext, FigureFn, draw, new_figure, pair_bars, save, size_axis
from .protocol import Record

PGE_STYLE = {"on": "-", "off": "--"}
REGION_COLORS = {"4k": "tab:orange", "4m": "tab:green"}
REGION_TEXT = {"4k": "4 KiB pages", "4m": "one 4 MiB page"}


def tlb_lines(records: list[Record]) -> tuple[str, list[tuple[str, str, dict[int, Interval]]]]:
    """The first mode's tlb_refill lines: (mode, [(region, pge, pages -> value)]), region then pge in the
    order the run measured them."""
    points = [p for p in collect(records, ar.ASPACE) if p.case == "tlb_refill"]
    if not points:
        return "", []
    mode = modes(points)[0]
    points = [p for p in points if p.mode == mode]
    lines: list[tuple[str, str, dict[int, Interval]]] = []
    for region, pge in dict.fromkeys((str(p.params.get("region", "")), str(p.params.get("pge"))) for p in points):
        by: dict[int, Interval] = {}
        for p in points:
            n = ar.as_int(p.params.get("pages"))
            if (str(p.params.get("region", "")), str(p.params.get("pge"))) == (region, pge) and n and n > 0:
                by.setdefault(n, p.value)  # a repeated point keeps the first
        if by:
            lines.append((region, pge, by))
    return mode, lines


def tlb_refill(ctx: FigureContext, out: Path) -> Path | None:
    """Cycles per refill against pages touched, one line per region x PGE (first mode)."""
    mode, lines = tlb_lines(ctx.records)
    if not lines:
        return None
    fig, ax = new_figure(ctx, "aspace: TLB refill after a CR3 reload", mode)
    pages: set[int] = set()
    for region, pge, by in lines:
        xs = sorted(by)
        pages.update(xs)
        color = REGION_COLORS.get(region, "tab:purple")
        ax.plot(xs, [by[n].mid for n in xs], PGE_STYLE.get(pge, ":"), marker="o", color=color,
                label=f"region {REGION_TEXT.get(region, region or '?')}, pge={pge}")
        if any(by[n].bounded and by[n].lo != by[n].hi for n in xs):
            ax.fill_between(xs, [by[n].lo if by[n].bounded else by[n].mid for n in xs],
                            [by[n].hi if by[n].bounded else by[n].mid for n in xs], color=color, alpha=0.18,
                            linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(pages), [str(n) for n in sorted(pages)])
    ax.set_xlabel("pages touched after the CR3 reload, log2 scale")
    ax.set_ylabel(f"{ctx.units.short} per refill (median; CR3 reload + touches, minus warm-TLB touches)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return save(fig, ctx, out / "aspace-tlb-refill.png")


def commit(ctx: FigureContext, out: Path) -> Path | None:
    """Cycles per page against the share of words changed; single writer and twin as reference lines."""
    rows = ar.commit_rows(collect(ctx.records, ar.ASPACE))
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode and r.pages == rows[0].pages]
    line = [r for r in rows if r.commit is not None and r.dirty is not None]
    single = next((r.reference for r in rows if r.reference is not None), None)
    twin = next((p for p in collect(ctx.records, ar.ASPACE) if p.case == "twin" and p.mode == mode), None)
    if not line and single is None:
        return None
    pages = f", {rows[0].pages} pages" if rows[0].pages else ""
    fig, ax = new_figure(ctx, f"aspace: commit cost per page{pages}", mode)
    tops: list[float] = []
    if line:
        xs = [float(r.dirty or 0) for r in line]
        vals = [r.commit for r in line if r.commit is not None]
        ax.plot(xs, [v.mid for v in vals], "-o", color=OURS, label="commit (word-by-word diff against the twin)")
        if any(v.bounded and v.lo != v.hi for v in vals):
            ax.fill_between(xs, [v.lo if v.bounded else v.mid for v in vals],
                            [v.hi if v.bounded else v.mid for v in vals], color=OURS, alpha=0.18, linewidth=0)
        tops += [v.hi if v.bounded else v.mid for v in vals]
    for value, text, color in ((single, "commit_single_writer (whole-page copy, no diff)", THEIRS),
                               (twin.value if twin else None, "twin (fault + private copy + twin)", "dimgray")):
        if value is None or not value.ok:
            continue
        ax.axhline(value.mid, linestyle="--", color=color, linewidth=1.2, label=text)
        ax.annotate(f"{text.split(' (')[0]}: {value.mid:.0f}", xy=(1.0, value.mid), xycoords=("axes fraction", "data"),
                    xytext=(-4, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8, color=color)
        tops.append(value.mid)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xticks([0, 1, 10, 100], ["0", "1", "10", "100"])
    ax.set_xlim(-0.1, 130)
    ax.set_xlabel("words changed since the twin [%], symlog scale")
    ax.set_ylabel(f"{ctx.units.short} per page (median)")
    ax.set_ylim(0, max(tops) * 1.15 if tops else 1)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, ctx, out / "aspace-commit.png")


def fibers_vs_threads(ctx: FigureContext, out: Path) -> Path | None:
    """Grouped bars of each comparison's two sides, log y, the ratio above each pair."""
    rows = ar.pair_rows(collect(ctx.records, ar.ASPACE))
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    fig, ax = new_figure(ctx, "aspace: fibers vs ring-3 threads in their own address spaces", mode)
    fibers = [r.fiber.value.mid if r.fiber else float("nan") for r in rows]
    threads = [r.thread.value.mid if r.thread else float("nan") for r in rows]
    xs, width = pair_bars(ax, fibers, threads, ("fiber side (malloc: subheap; system call: sysenter)",
                                                "thread side (malloc: shared lock; system call: int80)"),
                          [r.ratio for r in rows], ctx.units.short)
    for x, r in zip(xs, rows):
        for side, dx in ((r.fiber, -width / 2), (r.thread, width / 2)):
            if side is None:
                ax.annotate("no record", xy=(x + dx, 1), xycoords=("data", "data"), ha="center", va="bottom",
                            fontsize=8, rotation=90, color="dimgray")
    finite = [v for v in fibers + threads if v == v and v > 0]
    ax.set_ylim(1, max(finite) * 100 if finite else 10)
    ax.set_xticks(xs, [r.short for r in rows], fontsize=8)
    ax.set_xlabel("comparison (x: thread side / fiber side)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.93))
    return save(fig, ctx, out / "aspace-fibers-vs-threads.png")


def workset(ctx: FigureContext, out: Path) -> Path | None:
    """threads/multi and multi/single against the working-set size, with their bands; the caches only
    where they are real."""
    rows = [r for r in ar.workset_rows(ctx.records) if r.size > 0]
    if not rows:
        return None
    mode = rows[0].mode
    rows = [r for r in rows if r.mode == mode]
    series = list(dict.fromkeys(r.series for r in rows))
    lines: list[tuple[str, str, list[tuple[int, Interval]]]] = []  # (label, colour, (size, ratio) points)
    for s in series:
        mine = [r for r in rows if r.series == s]
        prefix = f"{s}: " if len(series) > 1 else ""
        for values, text, color in (([r.threads_multi for r in mine], "workset_threads / workset multi", THEIRS),
                                    ([r.multi_single for r in mine], "workset multi / single", OURS)):
            pts = [(r.size, v) for r, v in zip(mine, values) if v.ok]
            if pts:
                lines.append((prefix + text, color, pts))
    if not lines:
        return None
    fig, ax = new_figure(ctx, "aspace: working set, fibers vs isolated threads", mode)
    for text, color, pts in lines:
        ax.plot([x for x, _v in pts], [v.mid for _x, v in pts], "-o", color=color, markersize=4, label=text)
        banded = [(x, v) for x, v in pts if v.bounded and v.lo != v.hi]
        if banded:
            ax.fill_between([x for x, _v in banded], [v.lo for _x, v in banded], [v.hi for _x, v in banded],
                            color=color, alpha=0.18, linewidth=0)
    ax.axhline(1.0, color="black", linewidth=0.8)
    size_axis(ax, sorted({r.size for r in rows}), ctx.run.machine.plot_caches)
    ax.set_ylabel(f"ratio of {ctx.units.short} per series (shade: interval)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper right")
    return save(fig, ctx, out / "aspace-workset.png")


FIGURES: tuple[tuple[str, FigureFn], ...] = (
    ("aspace-tlb-refill", tlb_refill), ("aspace-commit", commit),
    ("aspace-fibers-vs-threads", fibers_vs_threads), ("aspace-workset", workset),
)


def write_all(run: Run, out: Path) -> list[Path]:
    return draw(FIGURES, ar.BENCHES, run, out)
